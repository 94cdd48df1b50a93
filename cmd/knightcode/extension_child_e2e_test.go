//go:build linux

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EExtensionChildrenEndWithTheirThread: an extension's child
// process (child_process.spawn), the grandchild it leaves in its process
// group and an escapee in a session of its own without the thread's
// process tag end when the thread is archived, as the thread's bash
// commands' do (issue 25: "child_process escapees end with the thread").
func TestE2EExtensionChildrenEndWithTheirThread(t *testing.T) {
	t.Parallel()
	a, b := proctest.UniqueSleep(t, 3151), proctest.UniqueSleep(t, 3152)
	s := startDiffServer(t, map[string]string{"w": script(map[string]any{"text": "ok"})}, "-e", jsFixture(t, "spawns.ts"))
	thread := s.startThread(t, threadsRepo(t), "w")
	from := s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "/spawn " + a + " " + b + " untagged"}); res.Status != protocol.TurnStartHandled {
		t.Fatalf("turn/start /spawn: %+v", res)
	}
	raw := s.waitNote(t, &from, protocol.UINotify.Name, func(json.RawMessage) bool { return true })
	if n := decode[protocol.UINotifyParams](t, raw); !strings.HasPrefix(n.Message, "started ") {
		t.Fatalf("ui/notify %+v", n)
	}
	proctest.WaitSleeping(t, a, b)

	mustCall(t, s, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})

	if left := proctest.Survivors(a, b); len(left) > 0 {
		t.Errorf("processes the thread's extension started outlived the thread: %q", left)
	}
}
