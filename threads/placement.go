package threads

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// placement is where threads run and the making of those places (spec:
// "Workspaces, diffs and git"; ARCHITECTURE.md "Worktrees, snapshots,
// handoff"). The workspace package does the git work over paths; placement
// ties its worktrees to threads:
//   - worktree.go: the managed worktree of a thread/start or a fork
//     (prepare, forkWorktree), the environment's setup script, pruning past
//     worktrees.keep, the rollback of a failed start, restore and
//     worktree/delete;
//   - this file: a thread's workspace on the wire, whether its worktree is
//     gone, and the registry's record of which thread uses a worktree and
//     when;
//   - cleanup.go: the environment's cleanup script before a removal;
//   - archive.go: an archived thread's worktree, a deleted thread's refs;
//   - handoff_run.go: the steps of a handoff (settings, environment, plan or
//     run, the new worktree's setup) and the recovery of interrupted ones;
//   - recovery.go: the recovery of actions that died in a checkout.
//
// It knows the loaded threads only through claims (claims.go): a deletion
// claims the worktree paths it removes, and the manager's table refuses a
// load inside them meanwhile.
type placement struct {
	git       *gitcli.Runner
	differ    *diffscope.Differ
	workspace *workspace.Manager // nil: managed worktrees are not available
	trust     *config.TrustStore // nil: no project is trusted
	agentDir  string
	settings  *settings
	catalog   *catalog
	log       *slog.Logger
	// claim starts a claim on worktree paths for one deletion; the manager's
	// table honours it (Manager.register).
	claim func() *worktreeClaim
}

// workspaces returns the worktree manager, or for a server built without
// one a *coreerr.ParamError naming field.
func (p *placement) workspaces(field string) (*workspace.Manager, error) {
	if p.workspace == nil {
		return nil, coreerr.Param(field, "managed worktrees are not available in this server")
	}
	return p.workspace, nil
}

// view is a thread's workspace on the wire: {mode: "local"} without a
// header record, else {mode: "worktree", path, projectCwd, baseRef?,
// deleted?}, deleted when the registry has the worktree deleted (or no
// longer has it at all).
func (p *placement) view(ws *session.Workspace) protocol.Workspace {
	if ws == nil {
		return protocol.Workspace{Mode: protocol.WorkspaceLocal}
	}
	out := protocol.Workspace{Mode: protocol.WorkspaceWorktree, Path: ws.Path, ProjectCwd: ws.ProjectCwd, BaseRef: ws.BaseRef}
	if p.workspace != nil {
		if w, ok, err := p.workspace.Registry().Get(ws.Path); err == nil && (!ok || w.Deleted) {
			out.Deleted = true
		} else if err != nil {
			p.log.Warn("reading the worktree registry", "err", err)
		}
	}
	return out
}

// gone refuses work in thread id running in the managed worktree ws when
// the worktree is gone: deleted in the registry (archived, pruned or
// worktree/delete'd, a deletion that did not finish included, or no longer
// registered at all) or its directory missing or replaced by a file. It
// answers *workspace.ConflictError worktreeDeleted (thread/worktree/restore
// brings a deleted one back), nil for a local thread (ws nil) or a worktree
// that is there. A turn must not run there: a write tool would recreate the
// path as a plain folder.
func (p *placement) gone(id string, ws *session.Workspace) error {
	if ws == nil {
		return nil
	}
	path := ws.Path
	gone := func(why string) error {
		return &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{path},
			Output: fmt.Sprintf("the managed worktree %s of thread %s %s; thread/worktree/restore rebuilds it from its snapshot, or fork the chat into a new worktree", path, id, why)}
	}
	if p.workspace != nil {
		w, ok, err := p.workspace.Registry().Get(path)
		switch {
		case err != nil:
			p.log.Warn("reading the worktree registry", "path", path, "err", err)
		case !ok:
			return gone("is no longer registered")
		case w.Deleted:
			return gone("is deleted")
		}
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return gone("is missing (its directory was removed)")
	case err == nil && !fi.IsDir():
		return &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{path},
			Output: fmt.Sprintf("the managed worktree %s of thread %s is not a directory any more (something else is at its path, left as it is); move it away, then thread/worktree/restore rebuilds the worktree, or fork the chat into a new worktree", path, id)}
	}
	return nil
}

// branchBase is what a branch read of a thread in the managed worktree ws
// compares with when the request names nothing (see Manager.BranchBase):
// the commit the worktree was created at (the registry's resolved Base;
// the header's BaseRef when the registry has no record of it); "" for a
// thread in the user's checkout.
func (p *placement) branchBase(ws *session.Workspace) string {
	if ws == nil {
		return ""
	}
	if w, ok := p.registered(ws); ok && w.Base != "" {
		return w.Base
	}
	return ws.BaseRef
}

// baseRef is the baseRef the managed worktree ws was created from, as it
// was given (the registry's BaseRef, else the header's; see
// Manager.WorktreeBaseRef); "" for a thread in the user's checkout.
func (p *placement) baseRef(ws *session.Workspace) string {
	if ws == nil {
		return ""
	}
	if w, ok := p.registered(ws); ok {
		return w.BaseRef
	}
	return ws.BaseRef
}

// registered is the registry's record of the managed worktree ws; ok is
// false when it has none, or cannot be read (logged).
func (p *placement) registered(ws *session.Workspace) (w workspace.Worktree, ok bool) {
	if p.workspace == nil {
		return workspace.Worktree{}, false
	}
	w, ok, err := p.workspace.Registry().Get(ws.Path)
	if err != nil {
		p.log.Warn("reading the worktree registry", "path", ws.Path, "err", err)
		return workspace.Worktree{}, false
	}
	return w, ok
}

// recordHead records head, the commit thread id's managed worktree ws is
// at after a turn, in the registry (workspace.Manager.RecordHead: what
// NoticeMissing re-creates the worktree at once git forgot it).
func (p *placement) recordHead(id string, ws *session.Workspace, head string) {
	if ws == nil || p.workspace == nil || head == "" {
		return
	}
	if err := p.workspace.RecordHead(ws.Path, head); err != nil {
		p.log.Debug("recording a thread's worktree HEAD", "thread", id, "path", ws.Path, "err", err)
	}
}

// attach records that thread id loaded in the managed worktree ws: its id
// is attached to the worktree in the registry and the worktree's
// lastUsedAt moves on (pruning removes the least recently used first).
func (p *placement) attach(id string, ws *session.Workspace) {
	if ws == nil || p.workspace == nil {
		return
	}
	if err := p.workspace.Registry().AttachThread(ws.Path, id, time.Now()); err != nil {
		p.log.Debug("attaching a thread to its worktree", "thread", id, "path", ws.Path, "err", err)
	}
}

// touch moves the lastUsedAt of thread id's managed worktree ws on (a turn
// starts there).
func (p *placement) touch(id string, ws *session.Workspace) {
	if ws == nil || p.workspace == nil {
		return
	}
	if err := p.workspace.Registry().Touch(ws.Path, time.Now()); err != nil {
		p.log.Debug("touching a thread's worktree", "thread", id, "path", ws.Path, "err", err)
	}
}

// noticeMissing runs workspace.Manager.NoticeMissing for a thread opening
// in the worktree ws (shared/cases C27): a directory removed behind our
// back has its git registration removed (that entry only) and its registry
// entry marked deleted with a snapshot of its HEAD. With recreate
// (thread/resume) the worktree is then re-created clean at that commit
// (workspace.Manager.Restore), and the returned warning (source "server")
// says so; else, or when the restore fails, the thread reports
// workspace.deleted. Failures are logged and warned: the thread opens
// anyway. A folder missing while git has the worktree locked is left as it
// is (workspace.MissingLockedError), and its warning, the only one without
// recreate, says how to bring it back.
func (p *placement) noticeMissing(ctx context.Context, ws *session.Workspace, recreate bool) []protocol.Warning {
	if ws == nil || p.workspace == nil {
		return nil
	}
	d, err := p.workspace.NoticeMissing(ctx, ws.Path)
	if le, ok := errors.AsType[*workspace.MissingLockedError](err); ok {
		return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path, Message: le.Error()}}
	}
	switch {
	case err != nil:
		p.log.Warn("checking a thread's worktree", "path", ws.Path, "err", err)
		return nil
	case d == nil:
		return nil
	}
	p.log.Info("a thread's worktree directory was removed outside knightcode; marked deleted", "path", ws.Path, "snapshot", d.Snapshot, "recoveryRef", d.RecoveryRef)
	if !recreate || d.Snapshot == "" {
		return nil
	}
	r, err := p.workspace.Restore(ctx, ws.Path)
	if err != nil {
		p.log.Warn("re-creating a thread's removed worktree", "path", ws.Path, "err", err)
		return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path,
			Message: fmt.Sprintf("the worktree folder %s was removed outside knightcode and could not be re-created (%v); thread/worktree/restore tries again", ws.Path, err)}}
	}
	return []protocol.Warning{{Source: protocol.WarningSourceServer, Path: ws.Path,
		Message: fmt.Sprintf("the worktree folder %s was removed outside knightcode; it was re-created, clean and detached, at its last commit %s (uncommitted changes it held were gone with the folder)", ws.Path, r.Snapshot.Head[:min(12, len(r.Snapshot.Head))])}}
}

// resumeWarnings are the warnings of a thread/resume of thread id in the
// managed worktree ws: its folder removed behind our back is re-created
// (noticeMissing, C27); a worktree deleted by an archive, a prune or
// worktree/delete (the thread unarchived since) is named now, not only
// when a turn or a diff is refused.
func (p *placement) resumeWarnings(ctx context.Context, id string, ws *session.Workspace) []protocol.Warning {
	missing := p.noticeMissing(ctx, ws, true)
	if len(missing) == 0 {
		if ce, ok := errors.AsType[*workspace.ConflictError](p.gone(id, ws)); ok {
			missing = append(missing, protocol.Warning{Source: protocol.WarningSourceServer, Path: ws.Path, Message: ce.Output})
		}
	}
	return missing
}
