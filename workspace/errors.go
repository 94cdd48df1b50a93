package workspace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/knightcode/knightcode/internal/coreerr"
)

// ConflictError is the core gitConflict error ([coreerr.ConflictError]),
// shared with diffscope so one mapping in rpc turns every conflict into
// gitConflict with data.reason = Reason, data.paths = Paths and data.output
// = Output. The reasons this package uses are the Reason* constants below
// and diffscope.ReasonPatchFailed (carried changes that do not apply onto an
// explicit baseRef).
type ConflictError = coreerr.ConflictError

// ParamError is the core invalidParams error ([coreerr.ParamError]): Field
// names the parameter (e.g. "cwd", "baseRef", "path", "keep",
// "environments[2].name"); Reason, when set, is data.reason (the git/*
// refusals: [ReasonDetachedHead], [ReasonNothingToCommit], ...).
type ParamError = coreerr.ParamError

// Conflict reasons (spec, "Workspaces, diffs and git": gitConflict
// data.reason).
const (
	// ReasonWorktreeInUse: a thread is loaded in the worktree, or git has
	// it locked (`git worktree lock`; Output then says "locked: <reason>",
	// shared/cases C25), or another registration occupies its path.
	ReasonWorktreeInUse = coreerr.ReasonWorktreeInUse
	// ReasonSubmodules: the worktree holds a nested repository (an
	// initialized submodule or a repository inside it; Paths lists them),
	// or a snapshot to restore contains gitlinks whose contents cannot be
	// restored.
	ReasonSubmodules = coreerr.ReasonSubmodules
	// ReasonWorktreeMissing: the worktree was deleted without a snapshot
	// (or its snapshot ref is gone), or its directory exists but git no
	// longer has it registered.
	ReasonWorktreeMissing = coreerr.ReasonWorktreeMissing
	// ReasonWorktreeDeleted: the worktree is already deleted.
	ReasonWorktreeDeleted = coreerr.ReasonWorktreeDeleted
	// ReasonLocalChanges: a restore found its path occupied by files
	// (Paths lists the entries found there).
	ReasonLocalChanges = coreerr.ReasonLocalChanges
)

// Sentinel errors (compare with errors.Is).
var (
	// ErrUnbornHead: the checkout's HEAD names a branch with no commit yet,
	// so there is nothing to base a worktree on (pass a baseRef) or to
	// snapshot.
	ErrUnbornHead = errors.New("workspace: the repository has no commit yet (unborn HEAD)")
	// ErrBareRepository: the directory is a bare repository (no working
	// tree to start from); start from one of its worktrees instead.
	ErrBareRepository = errors.New("workspace: the repository is bare (it has no working tree)")
	// ErrNotDeleted: restore of a worktree that is not deleted (spec,
	// thread/worktree/restore: invalidParams).
	ErrNotDeleted = errors.New("workspace: the worktree is not deleted")
	// ErrUntrusted: an environment script of an untrusted project was not
	// run (spec: "An untrusted project's scripts never run").
	ErrUntrusted = errors.New("workspace: the project is not trusted; its environment scripts do not run")
)

// MissingLockedError is what [Manager.NoticeMissing] answers for a
// managed worktree whose directory is missing while git has its
// registration locked (`git worktree lock`, for a worktree on a removable
// disk, say): knightcode keeps a locked registration as git does, so the
// worktree is neither deleted nor re-created until its folder is back or
// the user runs `git worktree unlock <path>`. Reason is the lock's reason
// ("" when none was given).
type MissingLockedError struct {
	Path, Reason string
}

func (e *MissingLockedError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("the worktree folder %s is missing, and git has the worktree locked (%s): bring the folder back (is it on a disk that is not mounted?), or run `git worktree unlock %s` and thread/worktree/restore re-creates it",
		e.Path, reason, e.Path)
}

// RemoveError is a `git worktree remove --force` that failed after the
// snapshot was written (shared/cases C24). Nothing else is deleted: there
// is no rm -rf fallback. Snapshot is the ref holding the worktree's state
// (restorable once the leftovers are dealt with); Remaining lists the
// top-level entries still in the directory; Registered reports whether git
// still has the worktree registered. The registry marks the worktree deleted
// with that snapshot when Registered is false.
type RemoveError struct {
	Path       string
	Snapshot   string
	Remaining  []string
	Registered bool
	Err        error
}

func (e *RemoveError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "workspace: removing %s failed after its snapshot %s was written", e.Path, e.Snapshot)
	if len(e.Remaining) > 0 {
		fmt.Fprintf(&b, "; left in the directory: %s", strings.Join(e.Remaining, ", "))
	}
	if e.Registered {
		b.WriteString("; git still has it registered")
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

func (e *RemoveError) Unwrap() error { return e.Err }

func conflict(reason string, paths []string, format string, args ...any) *ConflictError {
	return coreerr.Conflict(reason, paths, format, args...)
}

func paramErr(field, format string, args ...any) *ParamError {
	return coreerr.Param(field, format, args...)
}
