package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

func TestValidateEnvironments(t *testing.T) {
	t.Parallel()
	many := make([]Environment, MaxEnvironments+1)
	for i := range many {
		many[i].Name = fmt.Sprintf("env%d", i)
	}
	tests := []struct {
		name      string
		envs      []Environment
		wantField string
		wantNames []string
	}{
		{"empty list", []Environment{}, "", []string{}},
		{"names trimmed", []Environment{{Name: " node "}, {Name: "go"}}, "", []string{"node", "go"}},
		{"empty name", []Environment{{Name: "a"}, {Name: "  "}}, "environments[1].name", nil},
		{"duplicate after trimming", []Environment{{Name: "a"}, {Name: "b"}, {Name: "a "}}, "environments[2].name", nil},
		{"at most 50", many[:MaxEnvironments], "", nil},
		{"51 is too many", many, "environments", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ValidateEnvironments(tt.envs)
			if tt.wantField != "" {
				if !isParam(tt.wantField)(err) {
					t.Fatalf("err = %v, want ParamError %s", err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNames != nil {
				names := []string{}
				for _, e := range got {
					names = append(names, e.Name)
				}
				if diff := cmp.Diff(names, tt.wantNames); diff != "" {
					t.Errorf("names (-got +want):\n%s", diff)
				}
			}
		})
	}
}

func TestSaveAndReadEnvironments(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if got, err := ReadEnvironments(root); err != nil || len(got) != 0 {
		t.Fatalf("ReadEnvironments without a file = %v, %v", got, err)
	}
	p := filepath.Join(root, EnvironmentsFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"comment":"kept","environments":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	envs := []Environment{
		{Name: "node", Setup: Script{Default: `cd "$KNIGHTCODE_WORKTREE_PATH" && npm ci`, Darwin: "brew bundle"}},
		{Name: "go", Setup: Script{Linux: "go mod download"}, Cleanup: &Script{Default: "go clean -cache"}},
	}
	if _, err := SaveEnvironments(root, envs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvironments(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, envs); diff != "" {
		t.Errorf("read back (-got +want):\n%s", diff)
	}
	raw, _ := os.ReadFile(p)
	if !strings.Contains(string(raw), `"comment": "kept"`) {
		t.Errorf("other keys lost:\n%s", raw)
	}
	if _, err := SaveEnvironments(root, []Environment{{Name: "a"}, {Name: "a"}}); !isParam("environments[1].name")(err) {
		t.Errorf("Save with duplicates: %v", err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(raw) {
		t.Errorf("a refused save changed the file")
	}
	if err := os.WriteFile(p, []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadEnvironments(root); err == nil {
		t.Errorf("ReadEnvironments of broken JSON succeeded")
	}
	if _, err := SaveEnvironments(root, envs); err == nil {
		t.Errorf("SaveEnvironments over broken JSON succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "{broken" {
		t.Errorf("broken file overwritten: %q", b)
	}
}

// TestSaveEnvironmentsLocks runs saves beside another writer of the same
// file that takes the same lock (atomicfile.Update on the .knightcode
// folder): no write of either is lost, and no lock file is left in the
// project.
func TestSaveEnvironmentsLocks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p := filepath.Join(root, EnvironmentsFile)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := SaveEnvironments(root, []Environment{{Name: fmt.Sprintf("env%d", i)}})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			errs <- atomicfile.Update(context.Background(), filepath.Dir(p), p, 0o644, func(old []byte) ([]byte, error) {
				doc := map[string]any{}
				if len(old) > 0 {
					if err := json.Unmarshal(old, &doc); err != nil {
						return nil, err
					}
				}
				count, _ := doc["count"].(float64)
				doc["count"] = count + 1
				return json.Marshal(doc)
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Count        int           `json:"count"`
		Environments []Environment `json:"environments"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Count != n || len(doc.Environments) != 1 {
		t.Errorf("count %d (want %d) and %d environments (want 1): a write was lost\n%s", doc.Count, n, len(doc.Environments), raw)
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil || len(entries) != 1 {
		t.Errorf(".knightcode holds %v (%v), want only %s", entries, err, filepath.Base(p))
	}
}

func TestScriptFor(t *testing.T) {
	t.Parallel()
	s := Script{Default: "d", Darwin: "mac", Win32: "win"}
	for goos, want := range map[string]string{"linux": "d", "darwin": "mac", "windows": "win", "freebsd": "d"} {
		if got := s.For(goos); got != want {
			t.Errorf("For(%s) = %q, want %q", goos, got, want)
		}
	}
}

func TestRunScript(t *testing.T) {
	wt := t.TempDir()
	cwd := filepath.Join(wt, "sub")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	env := Environment{
		Name: "demo",
		Setup: Script{Default: `echo "wt=$KNIGHTCODE_WORKTREE_PATH"; echo "pwd=$PWD"; echo "gitdir=${GIT_DIR-unset}"; ` +
			`printf 'caf\xc3'; printf '\xa9\n' >&2; touch "$KNIGHTCODE_WORKTREE_PATH/ran"`},
		Cleanup: &Script{Default: "echo cleaning; exit 3"},
	}
	var chunks []string
	progress := func(phase, out string) { chunks = append(chunks, phase+":"+out) }

	err := RunScript(ctx, ScriptRun{Environment: env, Phase: PhaseSetup, WorktreePath: wt, Cwd: cwd, Trusted: true, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, c := range chunks {
		phase, out, _ := strings.Cut(c, ":")
		if phase != PhaseSetup {
			t.Errorf("chunk phase %q", phase)
		}
		if !strings.HasPrefix(c, "setup:") || !utf8Valid(out) {
			t.Errorf("chunk %q is not valid UTF-8", out)
		}
		all.WriteString(out)
	}
	want := "wt=" + wt + "\npwd=" + cwd + "\ngitdir=unset\ncafé\n"
	if got := all.String(); got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(wt, "ran")); err != nil {
		t.Errorf("script did not run in the worktree: %v", err)
	}

	err = RunScript(ctx, ScriptRun{Environment: env, Phase: PhaseCleanup, WorktreePath: wt, Trusted: true})
	var se *ScriptError
	if !errors.As(err, &se) || se.ExitCode != 3 || se.Output != "cleaning\n" || se.Phase != PhaseCleanup {
		t.Errorf("failing cleanup: %#v", err)
	}

	// An untrusted project's script never runs.
	os.Remove(filepath.Join(wt, "ran"))
	chunks = nil
	err = RunScript(ctx, ScriptRun{Environment: env, Phase: PhaseSetup, WorktreePath: wt, Trusted: false, Progress: progress})
	if !errors.Is(err, ErrUntrusted) {
		t.Errorf("untrusted: %v, want ErrUntrusted", err)
	}
	if _, err := os.Stat(filepath.Join(wt, "ran")); !os.IsNotExist(err) || len(chunks) != 0 {
		t.Errorf("untrusted script ran (stat %v, output %q)", err, chunks)
	}

	// Cancelling kills the script and what it started.
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	slow := Environment{Name: "slow", Setup: Script{Default: "sleep 30 & sleep 30; wait"}}
	err = RunScript(cctx, ScriptRun{Environment: slow, Phase: PhaseSetup, WorktreePath: wt, Trusted: true})
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled script: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}

	// A background job holding the output open does not hold up the run.
	start = time.Now()
	bg := Environment{Name: "bg", Setup: Script{Default: "sleep 6 & echo started"}}
	if err := RunScript(ctx, ScriptRun{Environment: bg, Phase: PhaseSetup, WorktreePath: wt, Trusted: true}); err != nil {
		t.Errorf("script with a background job: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a background job held the run for %v", d)
	}

	if err := RunScript(ctx, ScriptRun{Environment: env, Phase: "teardown", Trusted: true}); !isParam("phase")(err) {
		t.Errorf("unknown phase: %v", err)
	}
	if err := RunScript(ctx, ScriptRun{Environment: Environment{Name: "none"}, Phase: PhaseCleanup, Trusted: false}); err != nil {
		t.Errorf("no cleanup script: %v, want nil", err)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestUTF8Prefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"caf\xc3", 3},
		{"caf\xc3\xa9", 5},
		{"\xe2\x82", 0},
		{"x\xe2\x82\xac", 4},
		{"x\xf0\x9f\x98", 1},
		{"\x80\x80\x80\x80", 4},
	}
	for _, tt := range tests {
		if got := utf8Prefix([]byte(tt.in)); got != tt.want {
			t.Errorf("utf8Prefix(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
