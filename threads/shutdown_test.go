package threads

import (
	"context"
	"errors"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestRequestsAfterShutdownAnswerShuttingDown checks that a request that
// reaches the manager after Shutdown unloaded its thread fails with
// ErrShuttingDown, never ErrThreadNotFound (spec, "Ownership, unloading,
// and shutdown": work that cannot finish returns shuttingDown), while an
// unknown thread before Shutdown is still ErrThreadNotFound.
func TestRequestsAfterShutdownAnswerShuttingDown(t *testing.T) {
	e := newEnv(t, map[string]string{"quick": scriptJSON()}, 0)
	ctx := context.Background()
	thread := e.start(t, newRecorder(), t.TempDir(), "quick")
	if _, err := e.m.Checkout("no-such-thread"); !errors.Is(err, ErrThreadNotFound) {
		t.Fatalf("Checkout of an unknown thread before Shutdown: %v, want ErrThreadNotFound", err)
	}
	if err := e.m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"Checkout", func() error {
			_, err := e.m.Checkout(thread)
			return err
		}},
		{"UpdateSettings", func() error {
			err := e.m.UpdateSettings(ctx, thread, SettingsUpdate{ApprovalMode: protocol.ApprovalAsk})
			return err
		}},
		{"StartTurn", func() error {
			_, _, err := e.m.StartTurn(ctx, newRecorder(), thread, Input{Text: "hi"}, TurnOptions{})
			return err
		}},
		{"WithCheckout", func() error {
			return e.m.WithCheckout(ctx, thread, "test action", func(string) error {
				t.Error("WithCheckout ran fn after Shutdown")
				return nil
			})
		}},
	}
	for _, c := range calls {
		err := c.call()
		if !errors.Is(err, ErrShuttingDown) || errors.Is(err, ErrThreadNotFound) {
			t.Errorf("%s after Shutdown: %v, want ErrShuttingDown", c.name, err)
		}
	}
}
