package threads

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestBackgroundShellBlocksIdleUnload: a thread without subscribers whose
// background shell runs arms no idle unload; once the shell ends it
// unloads (spec: a thread unloads "with no running work"). Unknown shell
// ids are invalidParams.
func TestBackgroundShellBlocksIdleUnload(t *testing.T) {
	e := newEnv(t, nil, time.Microsecond)
	ctx := context.Background()
	sub := newRecorder()
	dir := t.TempDir()
	id := e.start(t, sub, dir, "")
	th := e.loaded(t, id)
	bash := tools.NewBash(dir)
	bash.Groups = th.procs
	res := bash.Execute(ctx, json.RawMessage(`{"command":"sleep 100","run_in_background":true}`))
	shell := res.Details.BackgroundShellID
	if res.IsError || shell == "" {
		t.Fatalf("background start: %+v", res)
	}
	bfrom := e.bcast.mark()
	if _, err := e.m.Unsubscribe(ctx, sub.ID(), id); err != nil {
		t.Fatal(err)
	}
	err := th.call(ctx, func() error {
		if th.idleArmed {
			t.Error("idle unload armed while a background shell runs")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("thread gone while its background shell runs: %v", err)
	}
	var perr *coreerr.ParamError
	if _, err := e.m.BackgroundShellsStop(id, "nope"); !errors.As(err, &perr) || perr.Field != "id" {
		t.Errorf("stop of an unknown id: %v", err)
	}
	stopped, err := e.m.BackgroundShellsStop(id, shell)
	if err != nil || !stopped {
		t.Fatalf("stop = %v, %v", stopped, err)
	}
	from := bfrom
	e.bcast.wait(t, &from, protocol.ThreadStatusChanged.Name, statusIs(id, protocol.ThreadStatusNotLoaded))
}
