package threads

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// TestShutdownCutsTheCaptureAfterATurn makes the capture after a turn hang
// (a clean filter that never returns on the content the turn wrote) and
// shuts down with a deadline already past: the capture's git processes are
// killed, its temporary index files removed, and the turn still ends with
// its end entry, interrupted, without an after tree or file totals.
func TestShutdownCutsTheCaptureAfterATurn(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where captures put their temporary indexes
	flag := filepath.Join(t.TempDir(), "capturing")
	clean := filepath.Join(t.TempDir(), "clean.sh")
	script := "#!/bin/sh\ninput=$(cat; echo x)\ninput=${input%x}\ncase $input in\n*TURN*) touch '" + flag + "'; exec sleep 600 ;;\nesac\nprintf %s \"$input\"\n"
	if err := os.WriteFile(clean, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := gittest.Init(t)
	gittest.Git(t, repo, "config", "filter.slow.clean", clean)
	gittest.Write(t, repo, ".gitattributes", "*.slow filter=slow\n")
	gittest.Write(t, repo, "x.slow", "before\n")
	gittest.CommitAll(t, repo, "base")

	e := newEnv(t, map[string]string{"writer": scriptJSON(
		map[string]any{"toolCalls": []any{map[string]any{"id": "w1", "name": "write", "arguments": map[string]any{"path": "x.slow", "content": "TURN\n"}}}},
		map[string]any{"text": "done"},
	)}, 0)
	ctx := context.Background()
	sub := newRecorder()
	thread := e.start(t, sub, repo, "writer")
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "write"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(flag); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capture after the turn did not reach the filter within %v", waitLimit)
		}
	}

	from := e.bcast.mark()
	past, cancel := context.WithCancel(ctx)
	cancel()
	_ = e.m.Shutdown(past) // nil or past's error: the cut threads may need a moment more
	e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(thread, protocol.ThreadStatusNotLoaded))

	var done protocol.TurnCompletedParams
	sfrom := 0
	if err := json.Unmarshal(sub.wait(t, &sfrom, protocol.TurnCompletedNotification.Name, nil), &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnInterrupted || done.Turn.Files != nil {
		t.Errorf("turn/completed %+v, want interrupted without files", done.Turn)
	}
	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := session.Read(read.Thread.SessionFile)
	if err != nil {
		t.Fatal(err)
	}
	var ends []session.Entry
	for _, en := range tr.Branch() {
		if en.Type == session.TypeTurnEnd {
			ends = append(ends, en)
		}
	}
	if len(ends) != 1 || ends[0].Status != protocol.TurnInterrupted || ends[0].BeforeTree == "" || ends[0].AfterTree != "" || ends[0].Files != nil || ends[0].CompletedAt == 0 {
		t.Errorf("turn_end entries %+v, want one, interrupted, with a before tree and no after tree or files", ends)
	}
	left, err := filepath.Glob(filepath.Join(tmp, "knightcode-capture-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("capture files left behind: %v", left)
	}
	if got := strings.TrimSpace(gittest.Read(t, repo, "x.slow")); got != "TURN" {
		t.Errorf("x.slow = %q, want the turn's write", got)
	}
}
