package config

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func strptr(s string) *string { return &s }

func TestMain(m *testing.M) {
	if os.Getenv("CONFIG_TEST_WRITER") != "" {
		os.Exit(writerProcess())
	}
	os.Exit(m.Run())
}

func TestWriteRoundTripKeepsOrderAndUnknownKeys(t *testing.T) {
	e := newSettingsEnv(t)
	original := "{\n  \"zeta\": 1,\n  \"unknown\": {\"deep\": [1, 2, {\"x\": null}]},\n  \"alpha\": \"a\",\n  \"retry\": {\"maxDelayMs\": 5}\n}\n"
	writeFile(t, e.store.GlobalPath(), original)
	v0 := version([]byte(original))

	steps := []struct {
		key     string
		value   string // "" or "null": delete
		want    string
		expect  *string
		wantErr string
	}{
		{
			key: "compaction.reserveTokens", value: "100", expect: strptr(v0),
			// The migration of retry.maxDelayMs ran before the edit.
			want: `{"zeta":1,"unknown":{"deep":[1,2,{"x":null}]},"alpha":"a","retry":{"provider":{"maxRetryDelayMs":5}},"compaction":{"reserveTokens":100}}`,
		},
		{
			key: "zeta", value: `{"b": 1, "a": 2}`,
			want: `{"zeta":{"b":1,"a":2},"unknown":{"deep":[1,2,{"x":null}]},"alpha":"a","retry":{"provider":{"maxRetryDelayMs":5}},"compaction":{"reserveTokens":100}}`,
		},
		{
			// Deleting the canonical key does not resurrect the legacy alias.
			key: "retry.provider.maxRetryDelayMs", value: "null",
			want: `{"zeta":{"b":1,"a":2},"unknown":{"deep":[1,2,{"x":null}]},"alpha":"a","compaction":{"reserveTokens":100}}`,
		},
		{
			key: "missing.leaf", value: "null",
			want: `{"zeta":{"b":1,"a":2},"unknown":{"deep":[1,2,{"x":null}]},"alpha":"a","compaction":{"reserveTokens":100}}`,
		},
		{key: "alpha.sub", value: "1", wantErr: "key"},
		{key: "alpha", value: "2", expect: strptr(v0), wantErr: "conflict"},
		{key: "alpha", value: "2", expect: strptr(VersionNone), wantErr: "conflict"},
	}
	for i, st := range steps {
		before, _ := os.ReadFile(e.store.GlobalPath())
		ver, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: st.key, Value: json.RawMessage(st.value), ExpectedVersion: st.expect})
		after, _ := os.ReadFile(e.store.GlobalPath())
		if st.wantErr != "" {
			var pe *ParamError
			var ce *VersionConflictError
			switch {
			case st.wantErr == "conflict" && errors.As(err, &ce):
				if ce.Version != version(before) {
					t.Errorf("step %d: conflict version %s, want %s", i, ce.Version, version(before))
				}
			case errors.As(err, &pe) && pe.Field == st.wantErr:
			default:
				t.Errorf("step %d: err = %v, want %s", i, err, st.wantErr)
			}
			if string(after) != string(before) {
				t.Errorf("step %d: a refused write changed the file", i)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if ver != version(after) {
			t.Errorf("step %d: version %s is not the file's %s", i, ver, version(after))
		}
		if got := compactJSON(t, after); got != st.want {
			t.Errorf("step %d: file =\n%s\nwant %s", i, got, st.want)
		}
		if !strings.HasSuffix(string(after), "}\n") || !strings.Contains(string(after), "\n  \"") {
			t.Errorf("step %d: file is not indented:\n%s", i, after)
		}
	}
}

// compactJSON compacts a JSON document keeping its key order.
func compactJSON(t *testing.T, data []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, data); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return out.String()
}

func TestWriteRefusals(t *testing.T) {
	e := newSettingsEnv(t)
	undecided := tempDir(t)
	if _, err := e.trust.Set(ctx, e.project, false); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		req        WriteRequest
		wantField  string
		wantReason string
	}{
		{"empty key", WriteRequest{Scope: ScopeGlobal, Key: "", Value: json.RawMessage(`1`)}, "key", ""},
		{"empty segment", WriteRequest{Scope: ScopeGlobal, Key: "a..b", Value: json.RawMessage(`1`)}, "key", ""},
		{"trailing dot", WriteRequest{Scope: ScopeGlobal, Key: "a.", Value: json.RawMessage(`1`)}, "key", ""},
		{"__proto__", WriteRequest{Scope: ScopeGlobal, Key: "__proto__.x", Value: json.RawMessage(`1`)}, "key", ""},
		{"constructor", WriteRequest{Scope: ScopeGlobal, Key: "a.constructor", Value: json.RawMessage(`1`)}, "key", ""},
		{"prototype", WriteRequest{Scope: ScopeGlobal, Key: "prototype", Value: json.RawMessage(`null`)}, "key", ""},
		{"control character", WriteRequest{Scope: ScopeGlobal, Key: "a\nb", Value: json.RawMessage(`1`)}, "key", ""},
		{"spaces", WriteRequest{Scope: ScopeGlobal, Key: " a", Value: json.RawMessage(`1`)}, "key", ""},
		{"__proto__ inside the value", WriteRequest{Scope: ScopeGlobal, Key: "a", Value: json.RawMessage(`{"b": {"__proto__": {"x": 1}}}`)}, "value", ""},
		{"__proto__ inside an array", WriteRequest{Scope: ScopeGlobal, Key: "a", Value: json.RawMessage(`[1, {"constructor": {}}]`)}, "value", ""},
		{"invalid value", WriteRequest{Scope: ScopeGlobal, Key: "a", Value: json.RawMessage(`{`)}, "value", ""},
		{"bad scope", WriteRequest{Scope: "user", Key: "a", Value: json.RawMessage(`1`)}, "scope", ""},
		{"project without cwd", WriteRequest{Scope: ScopeProject, Key: "a", Value: json.RawMessage(`1`)}, "cwd", ""},
		{"distrusted project", WriteRequest{Scope: ScopeProject, Cwd: e.project, Key: "a", Value: json.RawMessage(`1`)}, "", ReasonUntrusted},
		{"undecided project", WriteRequest{Scope: ScopeProject, Cwd: undecided, Key: "a", Value: json.RawMessage(`1`)}, "", ReasonUntrusted},
		{"missing cwd", WriteRequest{Scope: ScopeProject, Cwd: filepath.Join(undecided, "nope"), Key: "a", Value: json.RawMessage(`1`)}, "cwd", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.store.Write(ctx, tt.req)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != tt.wantField || pe.Reason != tt.wantReason {
				t.Fatalf("err = %#v, want ParamError field %q reason %q", err, tt.wantField, tt.wantReason)
			}
		})
	}
	for _, p := range []string{e.store.GlobalPath(), ProjectPath(e.project), ProjectPath(undecided)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written by a refused write", p)
		}
	}
}

func TestWriteCorruptFileIsNotOverwritten(t *testing.T) {
	e := newSettingsEnv(t)
	corrupt := "{\n  \"a\": 1,,\n}"
	writeFile(t, e.store.GlobalPath(), corrupt)
	_, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: "b", Value: json.RawMessage(`2`)})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Column != 10 {
		t.Fatalf("err = %v, want CorruptError at 2:10", err)
	}
	if b, _ := os.ReadFile(e.store.GlobalPath()); string(b) != corrupt {
		t.Errorf("corrupt file overwritten: %q", b)
	}
}

func TestWriteProjectScope(t *testing.T) {
	e := newSettingsEnv(t)
	e.setTrust(t, true)
	ver, err := e.store.Write(ctx, WriteRequest{Scope: ScopeProject, Cwd: e.project, Key: "compaction.reserveTokens", Value: json.RawMessage(`4`), ExpectedVersion: strptr(VersionNone)})
	if err != nil {
		t.Fatal(err)
	}
	// No lock file appears in the project's .knightcode folder.
	entries, _ := os.ReadDir(filepath.Join(e.project, ".knightcode"))
	if len(entries) != 1 || entries[0].Name() != "settings.json" {
		t.Errorf(".knightcode holds %v, want settings.json only", entries)
	}
	snap, err := e.store.Read(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Versions.Project != ver || snap.Origins["compaction.reserveTokens"] != ScopeProject {
		t.Errorf("after write: versions %+v origins %v, want project version %s", snap.Versions, snap.Origins, ver)
	}
	// Deleting the last key leaves an empty object, not a missing file.
	ver2, err := e.store.Write(ctx, WriteRequest{Scope: ScopeProject, Cwd: e.project, Key: "compaction.reserveTokens", ExpectedVersion: &ver})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ProjectPath(e.project)); string(b) != "{}\n" || ver2 != version(b) {
		t.Errorf("file = %q, version %s", b, ver2)
	}
	// Deleting from an absent global file creates nothing.
	if v, err := e.store.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: "x"}); err != nil || v != VersionNone {
		t.Errorf("delete from absent file = %q, %v", v, err)
	}
	if _, err := os.Stat(e.store.GlobalPath()); err == nil {
		t.Errorf("delete from an absent file created it")
	}
}

func TestWriteConcurrentGoroutinesNoLostUpdate(t *testing.T) {
	e := newSettingsEnv(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			// Separate stores: as separate managers in one process.
			_, err := NewStore(e.agent, e.trust).Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: fmt.Sprintf("k.g%d", i), Value: json.RawMessage(strconv.Itoa(i))})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	snap, err := e.store.Read(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := snap.Settings["k"].(map[string]any); len(k) != n {
		t.Errorf("k = %v, want %d keys (lost update)", snap.Settings["k"], n)
	}
}

// writerProcess is the body of a re-executed test binary: it writes
// CONFIG_TEST_N keys "<id>.<i>" into the global settings of
// KNIGHTCODE_CODING_AGENT_DIR, each with the expectedVersion it just read,
// and prints one line per attempt: "landed <key> <version>" or
// "conflict <key>". It retries a conflicting key until it lands.
func writerProcess() int {
	agent := os.Getenv("KNIGHTCODE_CODING_AGENT_DIR")
	id := os.Getenv("CONFIG_TEST_WRITER")
	n, _ := strconv.Atoi(os.Getenv("CONFIG_TEST_N"))
	s := NewStore(agent, nil)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for i := 0; i < n; {
		snap, err := s.Read(ctx, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		key := fmt.Sprintf("%s.k%d", id, i)
		v, err := s.Write(ctx, WriteRequest{Scope: ScopeGlobal, Key: key, Value: json.RawMessage(`true`), ExpectedVersion: &snap.Versions.Global})
		var ce *VersionConflictError
		switch {
		case errors.As(err, &ce):
			fmt.Fprintf(out, "conflict %s\n", key)
		case err != nil:
			fmt.Fprintln(os.Stderr, err)
			return 1
		default:
			fmt.Fprintf(out, "landed %s %s\n", key, v)
			i++
		}
	}
	return 0
}

func TestWriteTwoProcessesNoLostUpdate(t *testing.T) {
	agent := tempDir(t)
	const n = 25
	ids := []string{"p1", "p2"}
	outs := make([]*bytes.Buffer, len(ids))
	cmds := make([]*exec.Cmd, len(ids))
	for i, id := range ids {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CONFIG_TEST_WRITER="+id, "CONFIG_TEST_N="+strconv.Itoa(n), "KNIGHTCODE_CODING_AGENT_DIR="+agent)
		cmd.Stderr = os.Stderr
		outs[i] = new(bytes.Buffer)
		cmd.Stdout = outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer %s: %v", ids[i], err)
		}
	}
	versions := map[string]string{}
	landed, conflicts := 0, 0
	for _, out := range outs {
		for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			f := strings.Fields(line)
			if f[0] != "landed" {
				conflicts++
				continue
			}
			landed++
			if prev, dup := versions[f[2]]; dup {
				t.Errorf("version %s returned to two writes (%s, %s): one overwrote the other", f[2], prev, f[1])
			}
			versions[f[2]] = f[1]
		}
	}
	t.Logf("%d writes landed, %d conflicts retried", landed, conflicts)
	if landed != 2*n {
		t.Errorf("%d writes landed, want %d", landed, 2*n)
	}
	snap, err := NewStore(agent, nil).Read(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		m, _ := snap.Settings[id].(map[string]any)
		if len(m) != n {
			t.Errorf("%s has %d keys, want %d (lost update): %v", id, len(m), n, m)
		}
	}
}

func TestSplitKey(t *testing.T) {
	got, err := SplitKey("retry.provider.maxRetryDelayMs")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, []string{"retry", "provider", "maxRetryDelayMs"}); diff != "" {
		t.Error(diff)
	}
}
