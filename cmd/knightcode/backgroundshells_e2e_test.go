package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EBackgroundShells runs bash calls with run_in_background over the
// binary (spec, thread/backgroundShells/*): the calls return at once with
// their shell ids (live and read back), list shows them oldest first,
// updated notifications carry the whole list on every start and end,
// output keeps the terminal escapes after the end, stop answers true then
// false, unknown ids are invalidParams, the model is told how the commands
// ended with its next turn (an extensionMessage of extension
// background_shell, read back too), and archiving the thread leaves no
// process of a running background shell alive.
func TestE2EBackgroundShells(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	tmp := t.TempDir()
	pidA, pidB, pidC := filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), filepath.Join(tmp, "c")
	gate := filepath.Join(tmp, "go")
	cmdA := "echo $$ > " + pidA + "; while [ ! -e " + gate + " ]; do sleep 0.02; done; printf 'line1\\n\\033[32mgreen\\033[0m\\n'; exit 4"
	cmdB := "echo $$ > " + pidB + "; echo waiting; sleep 100"
	cmdC := "echo $$ > " + pidC + "; sleep 100 & sleep 100"
	bg := func(id, command string) map[string]any {
		return call(id, "bash", map[string]any{"command": command, "run_in_background": true})
	}
	s := startDiffServer(t, map[string]string{"bgs": script(
		map[string]any{"toolCalls": []any{bg("ca", cmdA), bg("cb", cmdB)}},
		map[string]any{"text": "started"},
		map[string]any{"text": "noted"},
		map[string]any{"toolCalls": []any{bg("cc", cmdC)}},
		map[string]any{"text": "started again"},
	)})
	thread := s.startThread(t, repo, "bgs")
	from := s.mark()
	s.runTurn(t, thread, "start two commands")
	for _, f := range []string{pidA, pidB} {
		pid := waitPIDFile(t, f)
		t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) }) // should the test fail
	}

	// The calls carry their shell ids, live.
	ids := map[string]string{}
	for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		if it.Type == protocol.ItemToolCall {
			if it.BackgroundShellID == "" || it.Status != protocol.ToolCompleted || !strings.Contains(*it.Output, it.BackgroundShellID) {
				t.Errorf("call %s: backgroundShellId %q, status %s, output %q", it.ID, it.BackgroundShellID, it.Status, *it.Output)
			}
			ids[it.ID] = it.BackgroundShellID
		}
	}
	idA, idB := ids["ca"], ids["cb"]
	if idA == "" || idB == "" || idA == idB {
		t.Fatalf("shell ids %v", ids)
	}

	list := mustCall(t, s, protocol.ThreadBackgroundShellsList, protocol.BackgroundShellsListParams{ThreadID: thread})
	if len(list.Shells) != 2 || list.Shells[0].ID != idA || list.Shells[1].ID != idB {
		t.Fatalf("list = %+v, want %s then %s", list.Shells, idA, idB)
	}
	for i, sh := range list.Shells {
		want := []string{cmdA, cmdB}[i]
		if sh.Status != protocol.BackgroundShellRunning || sh.Command != want || sh.Cwd != repo || sh.StartedAt == 0 || sh.EndedAt != 0 || sh.ExitCode != nil {
			t.Errorf("shell %d = %+v, want running %q in %s", i, sh, want, repo)
		}
	}
	// Two starts, two updates (the second with both shells).
	upd := from
	first := decode[protocol.BackgroundShellsUpdatedParams](t, s.waitNote(t, &upd, protocol.ThreadBackgroundShellsUpdated.Name, nil))
	second := decode[protocol.BackgroundShellsUpdatedParams](t, s.waitNote(t, &upd, protocol.ThreadBackgroundShellsUpdated.Name, nil))
	if first.ThreadID != thread || len(first.Shells) != 1 || len(second.Shells) != 2 {
		t.Errorf("updates at the starts: %+v, %+v", first, second)
	}

	// A ends by itself (exit 4) once the gate exists.
	mark := s.mark()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ended := waitShells(t, s, &mark, func(sh []protocol.BackgroundShell) bool { return sh[0].Status != protocol.BackgroundShellRunning })
	if a := ended[0]; a.Status != protocol.BackgroundShellFailed || a.ExitCode == nil || *a.ExitCode != 4 || a.EndedAt < a.StartedAt ||
		ended[1].Status != protocol.BackgroundShellRunning {
		t.Errorf("after A ended: %+v", ended)
	}
	out := mustCall(t, s, protocol.ThreadBackgroundShellsOutput, protocol.BackgroundShellsOutputParams{ThreadID: thread, ID: idA})
	if out.Output != "line1\n\x1b[32mgreen\x1b[0m\n" {
		t.Errorf("output of A = %q", out.Output)
	}

	// The user stops B: true, then false; it ends stopped.
	if r := mustCall(t, s, protocol.ThreadBackgroundShellsStop, protocol.BackgroundShellsStopParams{ThreadID: thread, ID: idB}); !r.Stopped {
		t.Error("stop B answered stopped false")
	}
	if r := mustCall(t, s, protocol.ThreadBackgroundShellsStop, protocol.BackgroundShellsStopParams{ThreadID: thread, ID: idB}); r.Stopped {
		t.Error("second stop of B answered stopped true")
	}
	ended = waitShells(t, s, &mark, func(sh []protocol.BackgroundShell) bool { return sh[1].Status != protocol.BackgroundShellRunning })
	if b := ended[1]; b.Status != protocol.BackgroundShellStopped || b.ExitCode != nil || b.Error == "" {
		t.Errorf("B after stop: %+v", b)
	}
	if r := mustCall(t, s, protocol.ThreadBackgroundShellsStop, protocol.BackgroundShellsStopParams{ThreadID: thread, ID: idA}); r.Stopped {
		t.Error("stop of the ended A answered stopped true")
	}
	if live := proctest.GroupMembers(proctest.ReadPID(t, pidB)); len(live) > 0 {
		t.Errorf("B's process group still alive after its end: %q", live)
	}
	invalid := wireErr{Code: protocol.CodeInvalidParams, Field: "id"}
	s.wantErr(t, protocol.ThreadBackgroundShellsStop.Name, protocol.BackgroundShellsStopParams{ThreadID: thread, ID: "nope"}, invalid)
	s.wantErr(t, protocol.ThreadBackgroundShellsOutput.Name, protocol.BackgroundShellsOutputParams{ThreadID: thread, ID: ""}, invalid)
	s.wantErr(t, protocol.ThreadBackgroundShellsList.Name, protocol.BackgroundShellsListParams{ThreadID: "nope"}, wireErr{Code: protocol.CodeThreadNotFound})

	// The next turn tells the model: an extensionMessage after the user's
	// message, live and read back.
	from = s.mark()
	s.runTurn(t, thread, "anything new?")
	var live []protocol.Item
	for _, it := range completedItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name)) {
		live = append(live, it)
	}
	// The ends started no turn of their own: two turns so far.
	read := s.readThread(t, thread)
	if len(read.Turns) != 2 {
		t.Fatalf("read back %d turns, want 2", len(read.Turns))
	}
	for _, it := range read.Turns[0].Items {
		if it.Type == protocol.ItemToolCall && it.BackgroundShellID != ids[it.ID] {
			t.Errorf("read-back call %s: backgroundShellId %q, want %q", it.ID, it.BackgroundShellID, ids[it.ID])
		}
	}
	for name, items := range map[string][]protocol.Item{"live": live, "read back": read.Turns[1].Items} {
		if len(items) != 3 || items[0].Type != protocol.ItemUserMessage || items[1].Type != protocol.ItemExtensionMessage || items[2].Type != protocol.ItemAgentMessage {
			t.Errorf("%s items: %s", name, mustJSON(items))
			continue
		}
		n := items[1]
		if n.Extension != protocol.ExtensionBackgroundShell || len(n.BackgroundShells) != 2 {
			t.Errorf("%s notice: %s", name, mustJSON(n))
			continue
		}
		a, b := n.BackgroundShells[0], n.BackgroundShells[1]
		if a.ID != idA || a.Status != protocol.BackgroundShellFailed || a.ExitCode == nil || *a.ExitCode != 4 || a.Command != cmdA ||
			!strings.Contains(a.OutputTail, "\x1b[32mgreen") {
			t.Errorf("%s notice of A: %+v", name, a)
		}
		if b.ID != idB || b.Status != protocol.BackgroundShellStopped || b.Error == "" || !strings.Contains(b.OutputTail, "waiting") {
			t.Errorf("%s notice of B: %+v", name, b)
		}
		for _, want := range []string{idA, idB, "exit code 4", "green", "waiting"} {
			if !strings.Contains(n.Text, want) {
				t.Errorf("%s notice text %q lacks %q", name, n.Text, want)
			}
		}
	}

	// A background shell running when the thread is archived ends with it.
	s.runTurn(t, thread, "start another")
	pid := waitPIDFile(t, pidC)
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	if live := proctest.GroupMembers(pid); len(live) == 0 {
		t.Fatal("C is not running")
	}
	s.must(t, protocol.ThreadArchive.Name, protocol.ThreadArchiveParams{ThreadID: thread}, nil)
	if live := proctest.GroupMembers(pid); len(live) > 0 {
		t.Errorf("C's process group still alive after the thread unloaded: %q", live)
	}
	s.wantErr(t, protocol.ThreadBackgroundShellsList.Name, protocol.BackgroundShellsListParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadNotFound})
}

// waitShells waits for a thread/backgroundShells/updated from *from on
// whose list satisfies ok and returns that list.
func waitShells(t *testing.T, s *diffServer, from *int, ok func([]protocol.BackgroundShell) bool) []protocol.BackgroundShell {
	t.Helper()
	raw := s.waitNote(t, from, protocol.ThreadBackgroundShellsUpdated.Name, func(r json.RawMessage) bool {
		var p protocol.BackgroundShellsUpdatedParams
		return json.Unmarshal(r, &p) == nil && len(p.Shells) >= 2 && ok(p.Shells)
	})
	return decode[protocol.BackgroundShellsUpdatedParams](t, raw).Shells
}

// waitPIDFile waits until path holds a pid and a newline, and returns it.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return proctest.ReadPID(t, path)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
