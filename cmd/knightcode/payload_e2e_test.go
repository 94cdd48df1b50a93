package main

// End-to-end tests of payload references over the built binary (spec:
// "History, listings, and large values", "Limits and client reference"):
// values over 64 KiB travel as references that payload/read returns byte
// for byte, history and list responses stay within 1 MiB, and the spool
// is removed when the server exits.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
	"github.com/knightcode/knightcode/threads/session"
)

// savedTurn is one turn written straight into a session file: a user
// message, then either a text reply or a bash call whose result is output.
type savedTurn struct {
	id, user, reply string
	output          *string
}

// writeTranscript saves a session in cwd's session directory under home
// holding turns (with session_info name when not ""), as a server would
// have written it, and returns its header id.
func writeTranscript(t testing.TB, home, cwd, name string, turns []savedTurn) string {
	t.Helper()
	s, err := session.Create(filepath.Join(home, "agent", "sessions", session.ProjectDirName(cwd)), session.CreateOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := func(e session.Entry) {
		t.Helper()
		if _, err := s.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	msg := func(v map[string]any) session.Entry {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		e, err := session.NewMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	if name != "" {
		add(session.NewSessionInfo(name))
	}
	for i, tr := range turns {
		ts := int64(1_700_000_000_000 + i*1000)
		add(session.NewTurnStart(tr.id, ts))
		add(msg(map[string]any{"role": "user", "content": text(tr.user), "timestamp": ts + 1}))
		if tr.output != nil {
			call := "call-" + tr.id
			add(msg(map[string]any{"role": "assistant", "timestamp": ts + 2, "stopReason": "toolUse", "api": "scripted", "provider": "scripted", "model": "m",
				"content": []any{map[string]any{"type": "toolCall", "id": call, "name": "bash", "arguments": map[string]any{"command": "dump"}}}}))
			add(msg(map[string]any{"role": "toolResult", "toolCallId": call, "toolName": "bash", "content": text(*tr.output), "timestamp": ts + 3}))
		}
		add(msg(map[string]any{"role": "assistant", "timestamp": ts + 4, "stopReason": "stop", "api": "scripted", "provider": "scripted", "model": "m", "content": text(tr.reply)}))
		add(session.NewTurnEnd(session.TurnEnd{TurnID: tr.id, Status: protocol.TurnCompleted, CompletedAt: ts + 5}))
	}
	return s.ID()
}

// rawCall sends a request and returns its raw result, so its size on the
// wire can be checked.
func (s *diffServer) rawCall(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*rpctest.DefaultTimeout)
	defer cancel()
	var raw json.RawMessage
	if err := s.c.Request(ctx, method, params, &raw); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return raw
}

// withinResponseLimit fails when a result with its JSON-RPC envelope
// would exceed 1 MiB.
func withinResponseLimit(t *testing.T, method string, raw json.RawMessage) {
	t.Helper()
	if n := len(raw) + len(`{"id":1000000,"result":}`); n > protocol.MaxHistoryResponseBytes {
		t.Errorf("%s response of %d bytes, over %d", method, n, protocol.MaxHistoryResponseBytes)
	}
}

// bigOutput is n bytes of tool output with escapes, multi-byte runes and
// line structure, different on every line.
func bigOutput(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%08d \"quoted\" \\ tab\t é 日本 <tag> &amp;\n", i)
	}
	return b.String()[:n]
}

// spoolEnv is testEnv with the server's temporary directory, where it makes
// its payload spool, in spoolParent.
func spoolEnv(t *testing.T) (env []string, home, spoolParent string) {
	t.Helper()
	env, home = testEnv(t)
	spoolParent = t.TempDir()
	return append(env, "TMPDIR="+spoolParent), home, spoolParent
}

// TestE2EPayloadHistory reads back a saved thread holding a 10 MB tool
// output, a 40,000-byte output of NUL bytes and turns that together exceed
// 1 MiB: every response stays within 1 MiB, the values come back byte for
// byte through payload/read, and bad ids are refused.
func TestE2EPayloadHistory(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home, spoolParent := spoolEnv(t)

	huge := bigOutput(10 << 20)
	nul := strings.Repeat("\x00", 40_000)
	turns := []savedTurn{
		{id: "t-huge", user: "dump it", reply: "dumped", output: &huge},
		{id: "t-nul", user: "zeros", reply: "zeroed", output: &nul},
	}
	// 30 turns of ~60 KB of text each: every item fits inline, the page
	// (about 1.8 MB) does not.
	for i := range 30 {
		turns = append(turns, savedTurn{id: fmt.Sprintf("t-%02d", i), user: "talk", reply: strings.Repeat(fmt.Sprintf("%02d ", i), 20_000)})
	}
	thread := writeTranscript(t, home, repo, "", turns)

	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	// hugeRefs are the references of the 10 MB turn as thread/read sent
	// them: thread/resume must send the same ones (a value is spooled once).
	var hugeRefs string
	check := func(method string, page []protocol.Turn) {
		t.Helper()
		// Reading 10 MB back in 48 KiB chunks under the race detector on a
		// loaded machine takes minutes, not seconds.
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout*15)
		defer cancel()
		if len(page) != len(turns) {
			t.Fatalf("%s: %d turns, want %d (the page's turns do not depend on their size)", method, len(page), len(turns))
		}
		refs := 0
		for i, tr := range page {
			if tr.ID != turns[i].id {
				t.Fatalf("%s: turn %d is %s, want %s", method, i, tr.ID, turns[i].id)
			}
			if tr.Ref != nil {
				refs++
			}
			if tr.ID == "t-huge" {
				got := mustJSON(tr)
				if hugeRefs != "" {
					if got != hugeRefs {
						t.Errorf("%s: the 10 MB turn travels as %s, thread/read sent %s", method, got, hugeRefs)
					}
					continue
				}
				hugeRefs = got
			}
			full, err := s.c.ResolveTurn(ctx, tr)
			if err != nil {
				t.Fatalf("%s: resolve %s: %v", method, tr.ID, err)
			}
			want := turns[i]
			var reply, output string
			var haveOutput bool
			for _, it := range full.Items {
				switch it.Type {
				case protocol.ItemAgentMessage:
					reply = it.Text
				case protocol.ItemToolCall:
					if it.Output != nil {
						output, haveOutput = *it.Output, true
					}
				}
			}
			if reply != want.reply {
				t.Errorf("%s: %s reply of %d bytes, want %d", method, tr.ID, len(reply), len(want.reply))
			}
			if want.output != nil && (!haveOutput || output != *want.output) {
				t.Errorf("%s: %s output of %d bytes (equal: %v), want %d", method, tr.ID, len(output), output == *want.output, len(*want.output))
			}
		}
		if refs == 0 {
			t.Errorf("%s: no turn sent as a reference in a page of about 2 MB", method)
		}
		// The NUL output is 40,000 bytes, 240,000 as JSON: a reference
		// (inline, or inside its turn's payload), never cut.
		for _, it := range page[1].Items {
			if it.Type == protocol.ItemToolCall && page[1].Ref == nil && (it.OutputRef == nil || it.OutputRef.Bytes != int64(len(nul))) {
				t.Errorf("%s: the NUL output travels as %s", method, mustJSON(it))
			}
		}
	}

	raw := s.rawCall(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: thread})
	withinResponseLimit(t, protocol.ThreadRead.Name, raw)
	var read protocol.ThreadReadResult
	if err := json.Unmarshal(raw, &read); err != nil {
		t.Fatal(err)
	}
	check("thread/read", read.Turns)

	raw = s.rawCall(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread})
	withinResponseLimit(t, protocol.ThreadResume.Name, raw)
	var resumed protocol.ThreadResumeResult
	if err := json.Unmarshal(raw, &resumed); err != nil {
		t.Fatal(err)
	}
	check("thread/resume", resumed.Turns)

	raw = s.rawCall(t, protocol.ThreadList.Name, protocol.ThreadListParams{})
	withinResponseLimit(t, protocol.ThreadList.Name, raw)

	diag := mustCall(t, s, protocol.ServerDiagnostics, protocol.ServerDiagnosticsParams{})
	if diag.PayloadFiles == 0 || diag.PayloadBytes < int64(len(huge)) {
		t.Errorf("diagnostics: %d payload files, %d bytes; want the 10 MB output among them", diag.PayloadFiles, diag.PayloadBytes)
	}

	// Refusals: ids that are not references of this process, paths
	// included, and offsets outside the payload.
	var ref *protocol.PayloadRef
	for _, it := range read.Turns[0].Items {
		if it.OutputRef != nil {
			ref = it.OutputRef
		}
	}
	if read.Turns[0].Ref != nil {
		ref = read.Turns[0].Ref
	}
	if ref == nil {
		t.Fatalf("no reference for the 10 MB output in %s", mustJSON(read.Turns[0]))
	}
	sessionFile := read.Thread.SessionFile
	for _, c := range []struct {
		name string
		p    protocol.PayloadReadParams
		want wireErr
	}{
		{"unknown", protocol.PayloadReadParams{ID: strings.Repeat("0", 32)}, wireErr{Code: protocol.CodeInvalidParams, Field: "id", Reason: protocol.PayloadUnknown}},
		// "" is no id at all: refused by the params check, like every empty id.
		{"empty", protocol.PayloadReadParams{}, wireErr{Code: protocol.CodeInvalidParams, Field: "id"}},
		{"absolute path", protocol.PayloadReadParams{ID: sessionFile}, wireErr{Code: protocol.CodeInvalidParams, Field: "id", Reason: protocol.PayloadUnknown}},
		{"relative path", protocol.PayloadReadParams{ID: "../../../../etc/passwd"}, wireErr{Code: protocol.CodeInvalidParams, Field: "id", Reason: protocol.PayloadUnknown}},
		{"the id as a path", protocol.PayloadReadParams{ID: "./" + ref.ID}, wireErr{Code: protocol.CodeInvalidParams, Field: "id", Reason: protocol.PayloadUnknown}},
		{"offset past the end", protocol.PayloadReadParams{ID: ref.ID, Offset: ref.Bytes + 1}, wireErr{Code: protocol.CodeInvalidParams, Field: "offset"}},
		{"negative offset", protocol.PayloadReadParams{ID: ref.ID, Offset: -1}, wireErr{Code: protocol.CodeInvalidParams, Field: "offset"}},
	} {
		s.wantErr(t, protocol.PayloadRead.Name, c.p, c.want)
	}
	var unknownField json.RawMessage
	if err := s.call(t, protocol.PayloadRead.Name, map[string]any{"id": ref.ID, "offset": 0, "path": "/etc/passwd"}, &unknownField); toWireErr(t, err).Code != protocol.CodeInvalidParams {
		t.Errorf("payload/read with an unknown field: %v", err)
	}
	// A chunk is at most 48 KiB before encoding; nextOffset counts bytes.
	chunk := mustCall(t, s, protocol.PayloadRead, protocol.PayloadReadParams{ID: ref.ID, Offset: 3})
	if chunk.EOF || chunk.NextOffset == nil || *chunk.NextOffset != 3+protocol.MaxPayloadChunk {
		t.Errorf("chunk at 3: eof %v, nextOffset %v", chunk.EOF, chunk.NextOffset)
	}

	// The spool lives in the server's temporary directory until it exits.
	if ents, _ := filepath.Glob(filepath.Join(spoolParent, "knightcode-payload-*")); len(ents) != 1 {
		t.Errorf("spool directories while running: %v", ents)
	}
	if err := s.c.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := filepath.Glob(filepath.Join(spoolParent, "knightcode-payload-*")); len(ents) != 0 {
		t.Errorf("spool directories left after exit: %v", ents)
	}
}

// TestE2EPayloadLiveWrite runs a turn whose write call carries 70 KB:
// item/started sends the arguments as a reference, item/completed the
// whole item (its diff too large to travel inline); both resolve to the
// exact content, live and read back, and the file holds it.
func TestE2EPayloadLiveWrite(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	content := bigOutput(70_000)
	s := startDiffServer(t, map[string]string{
		"big": script(
			map[string]any{"toolCalls": []any{call("c-big", "write", map[string]any{"path": "big.txt", "content": content})}},
			map[string]any{"text": "Wrote it."},
		),
	})
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	thread := s.startThread(t, repo, "big")
	_, from := s.startTurn(t, thread, "write a big file")
	notes := s.threadNotes(t, from-1, thread, protocol.TurnCompletedNotification.Name)
	var started, completed *protocol.Item
	for _, n := range notes {
		switch n.Method {
		case protocol.ItemStarted.Name, protocol.ItemCompleted.Name:
			if len(n.Params) > protocol.MaxInlineBytes+1024 {
				t.Errorf("%s of %d bytes", n.Method, len(n.Params))
			}
			it := decode[protocol.ItemStartedParams](t, n.Params).Item
			if it.ID != "c-big" {
				continue
			}
			if n.Method == protocol.ItemStarted.Name {
				started = &it
			} else {
				completed = &it
			}
		}
	}
	if started == nil || completed == nil {
		t.Fatalf("no item/started or item/completed for c-big in %v", shape(notes))
	}
	if started.ArgumentsRef == nil || started.Arguments != nil || started.Status != protocol.ToolInProgress {
		t.Errorf("item/started of the write: %s", mustJSON(started))
	}
	if completed.Ref == nil || completed.Status != protocol.ToolCompleted || completed.Name != "write" {
		t.Errorf("item/completed of the write: %s", mustJSON(completed))
	}
	checkWrite := func(what string, it protocol.Item) {
		t.Helper()
		full, err := s.c.ResolveItem(ctx, it)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var args struct{ Path, Content string }
		if err := json.Unmarshal(full.Arguments, &args); err != nil {
			t.Fatalf("%s: arguments %.200s: %v", what, full.Arguments, err)
		}
		if args.Path != "big.txt" || args.Content != content {
			t.Errorf("%s: arguments for %s with %d bytes of content (equal: %v)", what, args.Path, len(args.Content), args.Content == content)
		}
		if it.Status == protocol.ToolCompleted && (len(full.FileChanges) != 1 || !strings.Contains(full.FileChanges[0].Diff, "+00000001 \"quoted\"")) {
			t.Errorf("%s: file changes %.300s", what, mustJSON(full.FileChanges))
		}
	}
	checkWrite("item/started", *started)
	checkWrite("item/completed", *completed)
	if got := readFile(t, repo, "big.txt"); got != content {
		t.Errorf("big.txt holds %d bytes, want %d", len(got), len(content))
	}
	read := s.readThread(t, thread)
	found := false
	for _, it := range read.Turns[len(read.Turns)-1].Items {
		if it.ID == "c-big" {
			found = true
			mustRef(t, it)
			checkWrite("thread/read", it)
		}
	}
	if !found {
		t.Errorf("c-big not read back")
	}
}

// mustRef returns an item's whole-item reference.
func mustRef(t *testing.T, it protocol.Item) *protocol.PayloadRef {
	t.Helper()
	if it.Ref == nil {
		t.Fatalf("item %s has no reference: %s", it.ID, mustJSON(it))
	}
	return it.Ref
}

// TestE2EPayloadSpoolIDsAreOpaque checks that references are random and
// opaque: no id is a path or names the spool's files by content.
func TestE2EPayloadSpoolIDsAreOpaque(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home := testEnv(t)
	out := bigOutput(100_000)
	thread := writeTranscript(t, home, repo, "", []savedTurn{{id: "t1", user: "u", reply: "r", output: &out}})
	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	read := s.readThread(t, thread)
	for _, it := range read.Turns[0].Items {
		if it.OutputRef == nil {
			continue
		}
		id := it.OutputRef.ID
		if strings.ContainsAny(id, `/\.`) || len(id) != 32 {
			t.Errorf("payload id %q is not an opaque 32-character id", id)
		}
		if _, err := os.Stat(id); err == nil {
			t.Errorf("payload id %q names a file", id)
		}
		return
	}
	t.Fatalf("no output reference in %s", mustJSON(read.Turns[0]))
}

// TestE2EPayloadSpoolFileChanged changes spool files behind the server's
// back between two chunks of a read: one renamed over with other bytes,
// one written to in place. The first read goes on with the payload's own
// bytes (the server keeps the file it wrote open across a sequential
// read); the second answers invalidParams id "expired", and reading the
// thread again gives a fresh reference holding the value. No chunk ever
// holds bytes the server did not write.
func TestE2EPayloadSpoolFileChanged(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	env, home, spoolParent := spoolEnv(t)
	outA, outB := bigOutput(300_000), strings.Repeat("b", 250_000)
	thread := writeTranscript(t, home, repo, "", []savedTurn{
		{id: "t-a", user: "a", reply: "r", output: &outA},
		{id: "t-b", user: "b", reply: "r", output: &outB},
	})
	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	outputRefs := func() []protocol.PayloadRef {
		var refs []protocol.PayloadRef
		for _, turn := range s.readThread(t, thread).Turns {
			for _, it := range turn.Items {
				if it.OutputRef != nil {
					refs = append(refs, *it.OutputRef)
				}
			}
		}
		if len(refs) != 2 {
			t.Fatalf("%d output references, want 2", len(refs))
		}
		return refs
	}
	refs := outputRefs()
	ctx := context.Background()
	var want [2][]byte
	for i, ref := range refs {
		b, err := s.c.ReadPayload(ctx, ref.ID)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	dirs, _ := filepath.Glob(filepath.Join(spoolParent, "knightcode-payload-*"))
	if len(dirs) != 1 {
		t.Fatalf("spool directories: %v", dirs)
	}
	// chunk reads one chunk (its bytes decoded) or fails.
	type chunkResult struct {
		Data       []byte `json:"data"`
		NextOffset *int64 `json:"nextOffset"`
		EOF        bool   `json:"eof"`
	}
	chunk := func(id string, off int64) (chunkResult, error) {
		var res chunkResult
		err := s.call(t, protocol.PayloadRead.Name, protocol.PayloadReadParams{ID: id, Offset: off}, &res)
		return res, err
	}
	other := func(n int64) []byte { return bytes.Repeat([]byte("X"), int(n)) }

	// Renamed over after the first chunk: the rest is still the payload.
	a := refs[0]
	first, err := chunk(a.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	pathA := filepath.Join(dirs[0], a.ID)
	if err := os.WriteFile(pathA+".new", other(a.Bytes), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pathA+".new", pathA); err != nil {
		t.Fatal(err)
	}
	got := first.Data
	for off := int64(len(first.Data)); off < a.Bytes; {
		c, err := chunk(a.ID, off)
		if err != nil {
			t.Fatalf("chunk at %d after the file was renamed over: %v", off, err)
		}
		got = append(got, c.Data...)
		off += int64(len(c.Data))
	}
	if !bytes.Equal(got, want[0]) {
		t.Errorf("read on after the file was renamed over: %d bytes, not the payload's %d", len(got), len(want[0]))
	}

	// Written to in place after the first chunk: the reference is gone.
	b := refs[1]
	if _, err := chunk(b.ID, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a modification time of its own
	if err := os.WriteFile(filepath.Join(dirs[0], b.ID), other(b.Bytes), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := chunk(b.ID, protocol.MaxPayloadChunk)
	if err == nil {
		t.Fatalf("chunk after the file was written to: no error, %q...", c.Data[:min(len(c.Data), 20)])
	}
	if diff := cmp.Diff(toWireErr(t, err), wireErr{Code: protocol.CodeInvalidParams, Field: "id", Reason: protocol.PayloadExpired}); diff != "" {
		t.Errorf("chunk after the file was written to: error (-got +want):\n%s", diff)
	}
	fresh := outputRefs()[1]
	if fresh.ID == b.ID {
		t.Fatal("reading the thread again gave the gone reference")
	}
	if got, err := s.c.ReadPayload(ctx, fresh.ID); err != nil || !bytes.Equal(got, want[1]) {
		t.Errorf("the fresh reference reads %d bytes (%v), want the payload's %d", len(got), err, len(want[1]))
	}
}

// BenchmarkPayloadRead100MB measures payload/read through the binary: a
// saved 100 MB tool output read back whole in 48 KiB chunks (base64 over
// stdio), one request at a time (sequential: client.ReadPayload) and with
// eight requests in flight (pipelined: client.ReadPayloadRef); it reports
// MB/s (issue 24's targets: 100 sequential, 200 pipelined).
func BenchmarkPayloadRead100MB(b *testing.B) {
	repo, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	out := bigOutput(100 << 20)
	thread := writeTranscript(b, home, repo, "", []savedTurn{{id: "t1", user: "u", reply: "r", output: &out}})
	cmd := exec.Command(binary, "app-server")
	cmd.Env = serverEnv(home)
	c, err := client.Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx, protocol.InitializeParams{}); err != nil {
		b.Fatal(err)
	}
	read, err := client.Call(ctx, c, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: thread})
	if err != nil {
		b.Fatal(err)
	}
	var ref *protocol.PayloadRef
	for _, it := range read.Turns[0].Items {
		if it.OutputRef != nil {
			ref = it.OutputRef
		}
	}
	if ref == nil {
		b.Fatalf("no output reference in %s", mustJSON(read.Turns[0]))
	}
	for _, bc := range []struct {
		name string
		read func() ([]byte, error)
	}{
		{"sequential", func() ([]byte, error) { return c.ReadPayload(ctx, ref.ID) }},
		{"pipelined", func() ([]byte, error) { return c.ReadPayloadRef(ctx, *ref) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(ref.Bytes)
			for b.Loop() {
				got, err := bc.read()
				if err != nil {
					b.Fatal(err)
				}
				if string(got) != out {
					b.Fatalf("read %d bytes, not the output's %d", len(got), len(out))
				}
			}
		})
	}
}
