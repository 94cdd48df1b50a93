package extensions

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/proctest"
)

// TestChildProcessContained: a child an extension spawned, the grandchild
// it left in its process group and an escapee in a session of its own
// all end when the thread load is disposed (the runtime's own process
// groups here; a thread's are the thread's: cmd/knightcode's
// TestE2EExtensionChildrenEndWithTheirThread).
func TestChildProcessContained(t *testing.T) {
	for _, tool := range []string{"sh", "sleep", "setsid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	a, b := proctest.UniqueSleep(t, 3141), proctest.UniqueSleep(t, 3142)
	r, h, w, _ := loadRunner(t, 0, t.TempDir(), fixture(t, "spawns.ts"))
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	r.RunCommand(context.Background(), "/spawn "+a+" "+b)
	h.wait(t, "started", func() bool { return len(h.notices) > 0 || len(h.warnings) > 0 })
	if len(h.warnings) > 0 || !strings.HasPrefix(h.notices[0], "info: started ") {
		t.Fatalf("notices %q warnings %+v", h.notices, h.warnings)
	}
	proctest.WaitSleeping(t, a, b)
	r.Dispose()
	if left := proctest.Survivors(a, b); len(left) > 0 {
		t.Errorf("processes the extension started outlived its thread load: %q", left)
	}
}
