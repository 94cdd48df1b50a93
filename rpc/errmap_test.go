package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/filesearch"
	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/mcp"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// TestCoreErrorMappers maps each core error the thread, archive, worktree,
// environment and trust methods return and compares code and data as a
// client decodes them.
func TestCoreErrorMappers(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	tests := []struct {
		name     string
		err      error
		code     string
		wantData string // JSON; "" for none
	}{
		{"not archived", wrap(threads.ErrThreadNotArchived), protocol.CodeThreadNotArchived, ""},
		{"not found", wrap(threads.ErrThreadNotFound), protocol.CodeThreadNotFound, ""},
		{"MCP Apps: thread not loaded", wrap(mcp.ErrThreadNotLoaded), protocol.CodeThreadNotFound, ""},
		{"MCP Apps: server unavailable", wrap(&mcp.UnavailableError{Server: "docs", State: mcp.AppStateSignInRequired}), protocol.CodeMCPUnavailable,
			`{"server":"docs","state":"signInRequired"}`},
		{"MCP Apps: approval required", wrap(&mcp.ApprovalRequiredError{Server: "counter", Tool: "increment"}), protocol.CodeApprovalRequired,
			`{"server":"counter","tool":"increment"}`},
		{"MCP Apps: not app-visible", wrap(coreerr.ParamReason("name", mcp.ReasonNotAppVisible, "no")), protocol.CodeInvalidParams,
			`{"field":"name","reason":"notAppVisible"}`},
		{"turn in progress", wrap(threads.ErrTurnInProgress), protocol.CodeTurnInProgress, ""},
		{"another thread's turn", wrap(&threads.BusyError{ThreadID: "t2", TurnID: "u1", Checkout: "/r"}), protocol.CodeTurnInProgress,
			`{"threadId":"t2","turnId":"u1","checkout":"/r"}`},
		{"another thread's queued inputs", wrap(&threads.BusyError{ThreadID: "t2", Queued: 2, Checkout: "/r"}), protocol.CodeTurnInProgress,
			`{"threadId":"t2","queued":2,"checkout":"/r"}`},
		{"file changed", wrap(workspace.ErrFileChanged), protocol.CodeFileChanged, ""},
		{"locked elsewhere", wrap(&session.LockedError{Path: "/s/a.jsonl"}), protocol.CodeThreadLockedElsewhere, ""},
		{"hard link", wrap(&session.HardLinkError{Path: "/s/a.jsonl", Links: 2}), protocol.CodeArchiveConflict,
			`{"path":"/s/a.jsonl","links":2,"surviving":["/s/a.jsonl"]}`},
		{"destination exists", wrap(&session.ExistsError{Source: "/s/a.jsonl", Destination: "/s/archive/a.jsonl"}), protocol.CodeArchiveConflict,
			`{"path":"/s/a.jsonl","destination":"/s/archive/a.jsonl","surviving":["/s/a.jsonl","/s/archive/a.jsonl"]}`},
		{"workspace conflict", &workspace.ConflictError{Reason: workspace.ReasonSubmodules, Paths: []string{"inner"}, Output: "nested"}, protocol.CodeGitConflict,
			`{"reason":"submodules","paths":["inner"],"output":"nested"}`},
		{"workspace conflict without paths", &workspace.ConflictError{Reason: workspace.ReasonWorktreeInUse}, protocol.CodeGitConflict,
			`{"reason":"worktreeInUse","paths":[]}`},
		{"remove failed", &workspace.RemoveError{Path: "/w/ab12/p", Snapshot: "refs/knightcode/snapshots/ab12/t", Remaining: []string{"busy"},
			Registered: true, Err: &gitcli.Error{Args: []string{"worktree", "remove"}, ExitCode: 128, Stderr: "fatal: cannot remove"}}, protocol.CodeGitConflict,
			`{"reason":"recoveryRequired","paths":["busy"],"output":"fatal: cannot remove","snapshot":"refs/knightcode/snapshots/ab12/t","registered":true,` +
				`"recoveryInstructions":"The worktree's state is saved in refs/knightcode/snapshots/ab12/t. Remove what is left in /w/ab12/p by hand, then delete the worktree again."}`},
		{"handoff needs recovery", wrap(&handoff.RecoveryError{Conflict: &workspace.ConflictError{Reason: handoff.ReasonRecoveryRequired, Paths: []string{"sub/b.txt"}, Output: "edited"},
			ID: "j1", Ref: "refs/knightcode/oplog/t", Patch: "/a/handoff/j1.patch", Instructions: "do this"}), protocol.CodeGitConflict,
			`{"reason":"recoveryRequired","paths":["sub/b.txt"],"output":"edited","snapshot":"refs/knightcode/oplog/t","recoveryInstructions":"do this","patch":"/a/handoff/j1.patch"}`},
		{"handoff local changes", wrap(&workspace.ConflictError{Reason: handoff.ReasonLocalChanges, Paths: []string{"a.txt"}, Output: handoff.MsgLocalChanges}), protocol.CodeGitConflict,
			`{"reason":"localChanges","paths":["a.txt"],"output":"Stash or commit your local changes to hand off."}`},
		{"workspace param", &workspace.ParamError{Field: "environments[2].name", Message: "must not be empty"}, protocol.CodeInvalidParams,
			`{"field":"environments[2].name"}`},
		{"config param", wrap(&config.ParamError{Field: "cwd", Message: "x is not an existing directory"}), protocol.CodeInvalidParams, `{"field":"cwd"}`},
		{"param with reason", wrap(&workspace.ParamError{Field: "threadId", Reason: workspace.ReasonDetachedHead, Message: "HEAD is detached"}), protocol.CodeInvalidParams,
			`{"field":"threadId","reason":"detachedHead"}`},
		{"refusal caused by state", wrap(coreerr.Refusal(workspace.ReasonNothingToCommit, "nothing to commit")), protocol.CodeInvalidParams,
			`{"reason":"nothingToCommit"}`},
		{"diff changed", wrap(&diffscope.ConflictError{Reason: diffscope.ReasonDiffChanged, Paths: []string{"a.txt"}}), protocol.CodeGitConflict,
			`{"reason":"diffChanged","paths":["a.txt"]}`},
		{"no API key", wrap(&threads.NoKeyError{Provider: "openai"}), protocol.CodeAuthRequired, `{"provider":"openai"}`},
		{"auth required", wrap(&workspace.AuthError{Output: "Permission denied (publickey)"}), protocol.CodeAuthRequired, ""},
		{"tool missing", wrap(workspace.ErrToolMissing), protocol.CodeToolMissing, ""},
		{"gh failed", wrap(&workspace.ToolError{Command: "gh pr create", Tool: "gh", ExitCode: 1, Output: "GraphQL: Something went wrong"}), protocol.CodeExternalFailure,
			`{"reason":"toolFailed","tool":"gh","exitCode":1,"output":"GraphQL: Something went wrong"}`},
		{"gh printed nothing", &workspace.ToolError{Command: "gh pr create", Tool: "gh"}, protocol.CodeExternalFailure,
			`{"reason":"toolFailed","tool":"gh","exitCode":0}`},
		{"provider unreachable", wrap(&provider.UnavailableError{Provider: "openai", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}),
			protocol.CodeExternalFailure, `{"reason":"providerUnavailable","provider":"openai"}`},
		{"config untrusted", wrap(&config.ParamError{Message: "not trusted", Reason: config.ReasonUntrusted}), protocol.CodeInvalidParams,
			`{"reason":"untrusted"}`},
		{"config conflict", wrap(&config.VersionConflictError{Path: "/a/settings.json", Version: "none"}), protocol.CodeConfigConflict, `{"version":"none"}`},
		{"config corrupt", wrap(&config.CorruptError{Path: "/a/settings.json", Line: 1, Column: 2, Err: errors.New("bad")}), protocol.CodeInternal, ""},
		{"search param", wrap(&filesearch.ParamError{Field: "query", Message: "too long"}), protocol.CodeInvalidParams, `{"field":"query"}`},
		{"fd missing", wrap(&filesearch.ToolMissingError{Tools: []string{"fd", "fdfind"}}), protocol.CodeToolMissing, ""},
		{"search shutting down", wrap(filesearch.ErrShuttingDown), protocol.CodeShuttingDown, ""},
		{"search timeout", wrap(filesearch.ErrTimeout), protocol.CodeInternal, ""},
		{"not deleted", wrap(workspace.ErrNotDeleted), protocol.CodeInvalidParams, `{"reason":"notDeleted"}`},
		{"unborn", workspace.ErrUnbornHead, protocol.CodeInvalidParams, `{"reason":"unbornHead"}`},
		{"bare", workspace.ErrBareRepository, protocol.CodeInvalidParams, `{"reason":"bareRepository"}`},
		{"untrusted", wrap(workspace.ErrUntrusted), protocol.CodeInvalidParams, `{"reason":"untrusted"}`},
		{"not a repository", wrap(gitcli.ErrNotRepo), protocol.CodeNotGitRepo, ""},
		{"anything else", errors.New("disk on fire"), protocol.CodeInternal, ""},
	}
	for _, tt := range tests {
		got := jsonrpc.ToWireError(tt.err, CoreErrorMappers()...)
		if got.Code != tt.code {
			t.Errorf("%s: code %s, want %s (%v)", tt.name, got.Code, tt.code, got)
			continue
		}
		gotData := ""
		if got.Data != nil {
			b, err := json.Marshal(got.Data)
			if err != nil {
				t.Fatal(err)
			}
			gotData = string(b)
		}
		if diff := cmp.Diff(gotData, tt.wantData); diff != "" {
			t.Errorf("%s: data (-got +want):\n%s", tt.name, diff)
		}
	}
}
