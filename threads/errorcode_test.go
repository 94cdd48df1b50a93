package threads

import (
	"errors"
	"fmt"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestErrorCode checks the wire code of a queued input's error
// notification: Config.ErrorCode when the wiring sets it, else the minimal
// default mapping.
func TestErrorCode(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"wire error", wrap(protocol.InvalidParams("model", "unknown")), protocol.CodeInvalidParams},
		{"not found", wrap(ErrThreadNotFound), protocol.CodeThreadNotFound},
		{"in progress", wrap(ErrTurnInProgress), protocol.CodeTurnInProgress},
		{"mismatch", wrap(ErrTurnMismatch), protocol.CodeTurnMismatch},
		{"file changed is unknown without the wiring", wrap(ErrFileChanged), protocol.CodeInternal},
		{"anything else", errors.New("disk on fire"), protocol.CodeInternal},
	}
	m := &Manager{}
	for _, tt := range tests {
		if got := m.errorCode(tt.err); got != tt.want {
			t.Errorf("%s: default errorCode = %q, want %q", tt.name, got, tt.want)
		}
	}
	var seen error
	m = &Manager{cfg: Config{ErrorCode: func(err error) string { seen = err; return "injected" }}}
	err := wrap(ErrFileChanged)
	if got := m.errorCode(err); got != "injected" || seen != err {
		t.Errorf("errorCode with Config.ErrorCode = %q (saw %v), want the injected code for %v", got, seen, err)
	}
}
