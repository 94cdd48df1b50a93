package threads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/knightcode/knightcode/handoff"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// The steps of a handoff once the manager admitted it and fenced both
// checkouts (handoff.go): the settings and the environment it uses, the
// handoff package's Plan or Run, the workspace entry recorded where the
// thread lands, a new worktree's setup and pruning; and the recovery of
// the handoffs a stopped server left.

// handoffer returns the handoff runner of this server: its journals are
// in the operation log <agentDir>/oplog, its patches in
// <agentDir>/handoff.
func (p *placement) handoffer() *handoff.Handoff {
	return handoff.New(p.git, p.workspace, p.agentDir)
}

// savedHandoffStart is what a dry run reads of thread id, not loaded: its
// saved transcript (read without loading or locking it, like thread/read,
// and without writing the listing's index cache) gives where it runs, its
// title and its turns' changes. It returns the thread as thread/read shows
// it. Errors: those of handoffSide; ErrThreadNotFound.
func (p *placement) savedHandoffStart(id string, to handoff.Direction) (handoffStart, *protocol.Thread, error) {
	tr, s, err := p.catalog.readSavedReadOnly(id)
	if err != nil {
		return handoffStart{}, nil, err
	}
	place := tr.Placement()
	if err := handoffSide(id, tr.ItemCount(), place.Workspace, to); err != nil {
		return handoffStart{}, nil, err
	}
	th := p.catalog.savedThread(tr, s.ForkedFromID, p.view(place.Workspace))
	return handoffStart{cwd: place.Cwd, title: tr.ListTitle(), branch: place.Branch, ws: place.Workspace, home: place.Home,
		changes: turnChanges(tr)}, &th, nil
}

// handoffDestination is where a handoff of thread id, read as st, to to
// lands: the main checkout (to local), or the thread's home worktree (to a
// worktree; "" when it has none, and the handoff makes one), "" too when
// its directory does not exist. The managed worktree the move needs (the
// source to local, the home back) must be there: its folder removed
// outside knightcode is worktreeDeleted, as the spec lists (QA:
// invalidParams "cwd", or notGitRepo).
func (p *placement) handoffDestination(id string, st handoffStart, to handoff.Direction) (string, error) {
	wt, dest := st.home, ""
	if to == handoff.ToLocal {
		wt, dest = st.ws, st.ws.ProjectCwd
	} else if wt != nil {
		dest = wt.Path
	}
	if wt != nil {
		if fi, err := os.Stat(wt.Path); err != nil || !fi.IsDir() {
			// thread/resume re-creates the worktree a thread runs in; the
			// home a thread handed to local goes back to, only
			// thread/worktree/restore (QA).
			how := "thread/worktree/restore rebuilds it"
			if to == handoff.ToLocal {
				how = "thread/resume re-creates it at its last commit, or thread/worktree/restore"
			}
			return "", &workspace.ConflictError{Reason: workspace.ReasonWorktreeDeleted, Paths: []string{wt.Path},
				Output: fmt.Sprintf("the worktree %s of thread %s is missing (its folder was removed outside knightcode); %s", wt.Path, id, how)}
		}
	}
	if dest != "" {
		if _, err := os.Stat(dest); err != nil {
			dest = ""
		}
	}
	return dest, nil
}

// busyRefusal is the refusal of a handoff to dest ("": not there yet)
// while busy holds one of its checkouts: first what the person can act on,
// their own changes in the destination (its localChanges:
// handoff.Handoff.CheckDestination), else busy.
func (p *placement) busyRefusal(ctx context.Context, dest string, busy error) error {
	if dest != "" {
		if err := p.handoffer().CheckDestination(ctx, dest); err != nil {
			return err
		}
	}
	return busy
}

// handoff runs the handoff of thread id, read as st, as o asks, once it
// was admitted and both checkouts fenced (see Manager.Handoff): with the
// worktrees.* and branch prefix settings and, into a new worktree, o's
// environment; handoff.Handoff.Plan for a dry run, else Run, whose Record
// writes where the thread lands (record, with the worktree's HEAD in the
// registry); then a worktree the handoff made is set up by its
// environment and the project's worktrees past worktrees.keep are pruned.
// It returns the branch and the warnings; the caller fills in the thread.
// Errors: *coreerr.ParamError "environment" for an unknown environment;
// the handoff package's.
func (p *placement) handoff(ctx context.Context, sub Subscriber, id string, st handoffStart, o HandoffOptions,
	record func(ctx context.Context, id string, e session.WorkspaceEntry) error) (HandedOff, error) {
	var res HandedOff
	wts, warnings := p.settings.worktrees(ctx)
	ho := handoff.Options{
		To: o.To, Cwd: st.cwd, ThreadID: id, Title: st.title, Branch: o.Branch,
		PreviousBranch: st.branch, BranchPrefix: p.settings.branchPrefix(ctx, st.cwd), WorktreesRoot: wts.Root,
		Changes: st.changes,
	}
	var env *workspace.Environment
	trusted := false
	if o.To == handoff.ToWorktree {
		if st.home != nil {
			ho.Worktree = st.home.Path
			if o.Environment != "" {
				warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Path: st.home.Path,
					Message: fmt.Sprintf("environment %q was not used: the thread goes back to its worktree %s, which is not new (an environment's setup runs in a worktree a handoff makes)", o.Environment, st.home.Path)})
			}
		} else if o.Environment != "" {
			var err error
			if env, trusted, err = p.environment(ctx, st.cwd, o.Environment); err != nil {
				return res, err
			}
			ho.Environment = env.Name
		}
	}
	h := p.handoffer()
	if o.DryRun {
		plan, err := h.Plan(ctx, ho)
		if err != nil {
			return res, err
		}
		if plan.Branch != nil {
			res.Branch = plan.Branch.Name
		}
		for _, w := range plan.Warnings() {
			warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Message: w})
		}
		res.Warnings = warnings
		return res, nil
	}
	ho.Record = func(ctx context.Context, l *handoff.Landed) error {
		p.recordLandedHead(l)
		return record(ctx, id, placementOf(l, st))
	}
	out, err := h.Run(ctx, ho)
	if err != nil {
		return res, err
	}
	for _, w := range out.Warnings {
		warnings = append(warnings, protocol.Warning{Source: protocol.WarningSourceServer, Message: w})
	}
	if out.Branch != nil {
		res.Branch = out.Branch.Name
	}
	if out.Worktree != nil {
		// A worktree made as thread/start makes one: its environment's
		// setup runs there, then the project's worktrees past
		// worktrees.keep are pruned (the thread now runs in this one).
		made := &worktreeStart{created: true, cwd: out.Cwd, header: headerOf(*out.Worktree), env: env, trusted: trusted, keep: wts.Keep}
		if env != nil {
			warnings = append(warnings, p.setup(ctx, sub, id, made)...)
		}
		warnings = append(warnings, p.prune(ctx, made)...)
	}
	res.Warnings = warnings
	return res, nil
}

// placementOf is the workspace entry of a handoff that landed l, of a
// thread read as st.
func placementOf(l *handoff.Landed, st handoffStart) session.WorkspaceEntry {
	e := session.WorkspaceEntry{Cwd: l.Cwd, Home: st.home, Branch: st.branch}
	switch {
	case l.Branch != nil:
		e.Branch = l.Branch.Name
	case l.Worktree != nil:
		e.Workspace = headerOf(*l.Worktree)
		e.Home = e.Workspace
	default:
		e.Workspace = st.home
	}
	return e
}

// landed is the workspace entry of a recovered handoff l of a thread that
// runs as cur: what the handoff's own Record would have written
// (placementOf: the previous handoff's branch and the thread's home
// worktree carry on), the worktree it landed in looked up in the registry
// when the journal does not name it. The worktree's HEAD is recorded
// (recordLandedHead).
func (p *placement) landed(l *handoff.Landed, cur session.WorkspaceEntry) session.WorkspaceEntry {
	e := placementOf(l, handoffStart{branch: cur.Branch, home: cur.Home})
	if l.Worktree == nil && l.Workspace == protocol.WorkspaceWorktree && e.Workspace == nil {
		if w, ok, err := p.workspace.Lookup(l.Destination); err == nil && ok {
			e.Workspace = headerOf(w)
			e.Home = e.Workspace
		}
	}
	p.recordLandedHead(l)
	return e
}

// environment looks up the environment named name of cwd's project and
// whether the project is trusted (its scripts run only then). Errors:
// *coreerr.ParamError "environment" for an unknown name.
func (p *placement) environment(ctx context.Context, cwd, name string) (*workspace.Environment, bool, error) {
	project, err := p.workspace.Project(ctx, cwd)
	if err != nil {
		return nil, false, err
	}
	envs, err := workspace.ReadEnvironments(project)
	if err != nil {
		return nil, false, err
	}
	for i := range envs {
		if envs[i].Name == name {
			trusted := false
			if p.trust != nil {
				if trusted, err = p.trust.Trusted(ctx, cwd); err != nil {
					return nil, false, err
				}
			}
			return &envs[i], trusted, nil
		}
	}
	return nil, false, coreerr.Param("environment", "no environment named %q in %s", name, filepath.Join(project, workspace.EnvironmentsFile))
}

// recoverStart finishes the handoffs a stopped server left, for the
// server's start (handoff.Handoff.RecoverStart; see
// Manager.RecoverHandoffs), record writing where a rolled-forward thread
// runs. A failure is logged.
func (p *placement) recoverStart(ctx context.Context, record func(context.Context, *handoff.Landed) error) {
	if p.workspace == nil || p.git == nil {
		return
	}
	if err := p.handoffer().RecoverStart(ctx, handoff.RecoverOptions{Record: record}); err != nil {
		p.log.Warn("recovering interrupted handoffs at start", "err", err)
	}
}

// recoverHandoffs finishes the handoffs a stopped server left (journals
// whose lock is free; handoff.Handoff.Recover): each rolls forward (record
// writes its thread's workspace entry then) or back. It returns a warning
// (source "server") for each of those of thread id ("" every thread),
// including those that need the user (recoveryRequired, with the saved
// patch), and for each of thread id the server's start recovered
// (recoverStart). A failure is a warning too.
func (p *placement) recoverHandoffs(ctx context.Context, id string, record func(context.Context, *handoff.Landed) error) []protocol.Warning {
	if p.workspace == nil || p.git == nil {
		return nil
	}
	h := p.handoffer()
	kept, kerr := h.TakeRecovered(id)
	recs, err := h.Recover(ctx, handoff.RecoverOptions{Record: record})
	var out []protocol.Warning
	for _, r := range slices.Concat(kept, recs) {
		if id == "" || r.ThreadID == id {
			out = append(out, protocol.Warning{Source: protocol.WarningSourceServer, Message: r.Message()})
		}
	}
	if err = errors.Join(err, kerr); err != nil {
		p.log.Warn("recovering interrupted handoffs", "err", err)
		out = append(out, protocol.Warning{Source: protocol.WarningSourceServer,
			Message: fmt.Sprintf("an interrupted handoff could not be recovered yet: %v", err)})
	}
	return out
}

// recordLandedHead records the commit a to-worktree handoff detached its
// worktree at (workspace.Manager.RecordHead). A to-local handoff leaves
// its worktree at the commit it was at.
func (p *placement) recordLandedHead(l *handoff.Landed) {
	if l.To != handoff.ToWorktree || p.workspace == nil {
		return
	}
	if err := p.workspace.RecordHead(l.Destination, l.Head); err != nil {
		p.log.Debug("recording a handoff's worktree HEAD", "path", l.Destination, "err", err)
	}
}
