package rpc

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// TestSharedErrorMappers checks the mappings of errors several methods
// share: a thread unloaded by shutdown is shuttingDown (never
// threadNotFound), a git lock held by another process is gitConflict
// concurrentChange with git's stderr, and notGitRepo names the directory
// instead of git's command line.
func TestSharedErrorMappers(t *testing.T) {
	t.Parallel()
	lockStderr := "fatal: Unable to create '/r/.git/index.lock': File exists."
	locked := &gitcli.Error{Args: []string{"update-index", "-z", "--index-info"}, Dir: "/r", ExitCode: 128, Stderr: lockStderr}
	notRepo := &gitcli.Error{Args: []string{"rev-parse", "--path-format=absolute", "--show-object-format"}, Dir: "/home/u/plain",
		ExitCode: 128, Stderr: "fatal: not a git repository (or any of the parent directories): .git"}
	type wire struct {
		Code, Message, Data string
	}
	tests := []struct {
		name string
		err  error
		want wire
	}{
		{"shutting down", fmt.Errorf("%w: thread t1 unloaded", threads.ErrShuttingDown),
			wire{protocol.CodeShuttingDown, "the server is shutting down: thread t1 unloaded", ""}},
		{"lock of a core action", &diffscope.ConflictError{Reason: diffscope.ReasonConcurrentChange, Paths: []string{"f.txt"}, Output: lockStderr},
			wire{protocol.CodeGitConflict, "conflict (concurrentChange): f.txt: " + lockStderr,
				`{"reason":"concurrentChange","paths":["f.txt"],"output":"fatal: Unable to create '/r/.git/index.lock': File exists."}`}},
		{"lock anywhere else", fmt.Errorf("pin: %w", locked),
			wire{protocol.CodeGitConflict, "another git process is changing the repository: pin: " + locked.Error(),
				`{"reason":"concurrentChange","paths":[],"output":"fatal: Unable to create '/r/.git/index.lock': File exists."}`}},
		{"not a repository, git said", fmt.Errorf("diffscope: %w", notRepo),
			wire{protocol.CodeNotGitRepo, "/home/u/plain is not a git repository", ""}},
		{"not a repository, our words", fmt.Errorf("diffscope: /gone is not a directory: %w", gitcli.ErrNotRepo),
			wire{protocol.CodeNotGitRepo, "diffscope: /gone is not a directory: not a git repository", ""}},
	}
	for _, tt := range tests {
		e := jsonrpc.ToWireError(tt.err, CoreErrorMappers()...)
		got := wire{Code: e.Code, Message: e.Message}
		if e.Data != nil {
			b, err := json.Marshal(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			got.Data = string(b)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
}
