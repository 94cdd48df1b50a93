package diffscope

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file connects the actions to gitstate's operation log: every
// revert, reapply, stage and unstage runs under a journal with a recovery
// point (issue 15), and an unfinished journal of the checkout is recovered
// before the action reads the diff.

// Config configures a [Differ].
type Config struct {
	// OplogDir is the operation log's journal folder: the server passes
	// <agentDir>/oplog. "" means [DefaultOplogDir].
	OplogDir string
	// RecoveryKeep is the number of recovery points kept per repository
	// (setting recovery.keep); <= 0 means 200.
	RecoveryKeep int
	// RecoveryMaxAge is how long a recovery point is kept (setting
	// recovery.maxAgeDays, in days); <= 0 means 14 days.
	RecoveryMaxAge time.Duration
	// StepHook, when set, is called at each named step of an action's
	// journal (tests crash a process there).
	StepHook func(step string)
}

// DefaultOplogDir is the journal folder of a Differ made without one:
// knightcode-oplog-<uid> in the system's temporary folder. A server must
// pass its own (<agentDir>/oplog), which survives a reboot and which its
// start-up recovery reads.
func DefaultOplogDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("knightcode-oplog-%d", os.Getuid()))
}

// NewWithConfig returns a Differ that runs git through r with the
// operation log c.
func NewWithConfig(r *gitcli.Runner, c Config) *Differ {
	dir := c.OplogDir
	if dir == "" {
		dir = DefaultOplogDir()
	}
	return &Differ{git: r, oplog: &gitstate.Oplog{Dir: dir, Keep: c.RecoveryKeep, MaxAge: c.RecoveryMaxAge, StepHook: c.StepHook}}
}

// RecoveryReport says what the recovery of an action that died did; see
// [gitstate.RecoveryReport] (Message gives a warning's text).
type RecoveryReport = gitstate.RecoveryReport

// OplogCounts are the operation log's counts for server/diagnostics; see
// [gitstate.OplogCounts].
type OplogCounts = gitstate.OplogCounts

// Recover recovers the actions that died (kill -9, power loss) in the
// checkout containing dir, or in every checkout when dir is "": each is
// rolled back to its recovery point, path by path, except paths changed
// since (reported in Conflicts, never overwritten), or kept when all of
// it had landed. It returns the reports of these and of the recoveries
// run since the last call for the checkout (by [Differ.RecoverStart] or
// by the actions themselves), and forgets them; the thread layer turns
// each into a warning. Call it with the checkout when a thread loads,
// before any turn or write. Errors: those of gitcli.Runner.Discover for
// dir; git failures (the journal then stays for the next call).
func (d *Differ) Recover(ctx context.Context, dir string) ([]RecoveryReport, error) {
	return d.oplog.Recover(ctx, d.git, dir)
}

// RecoverStart recovers the actions that died in every checkout, as
// [Differ.Recover] does, and keeps each report for the next Recover of
// its checkout (the next thread/start or resume there warns about it).
// The server calls it once at start. Errors: git and file-system failures
// (the journals concerned stay for the next call).
func (d *Differ) RecoverStart(ctx context.Context) error {
	return d.oplog.RecoverPending(ctx, d.git, "")
}

// OplogCounts returns the operation log's counts: the recovery points of
// the repository containing dir (none when dir is ""), and the unfinished
// and running journals of the server. Errors: those of
// gitcli.Runner.Discover for dir.
func (d *Differ) OplogCounts(ctx context.Context, dir string) (OplogCounts, error) {
	var repo *gitcli.Repo
	if dir != "" {
		r, err := d.git.Discover(ctx, dir)
		if err != nil {
			return OplogCounts{}, err
		}
		repo = r
	}
	return d.oplog.Counts(ctx, repo)
}

// recoverFirst recovers the checkout's unfinished journals before an
// action reads its diff, so the action never acts on a half-applied state.
// It costs one folder listing when there is none.
func (d *Differ) recoverFirst(ctx context.Context, checkout string) error {
	if names, _ := filepath.Glob(filepath.Join(d.oplog.Dir, "*.json")); len(names) == 0 {
		return nil
	}
	// The reports are kept for the thread layer's next Recover.
	return d.oplog.RecoverPending(ctx, d.git, checkout)
}

// lockCheckout discovers checkout and takes its repository lock
// (gitcli.LockCommonDir) for an action: held from before its read until
// its last write, so that another action in the same checkout (another
// thread's revert, a git/stage, a switch) cannot change the state between
// what this one read and what it writes. Plain reads never take it. It
// returns the discovery (HEAD as the action sees it) and the unlock.
func (d *Differ) lockCheckout(ctx context.Context, checkout string) (repoInfo, func(), error) {
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return repoInfo{}, nil, err
	}
	lock, err := gitcli.LockCommonDir(ctx, ri.CommonDir)
	if err != nil {
		return repoInfo{}, nil, err
	}
	return ri, func() { _ = lock.Unlock() }, nil
}

// begin starts the journal of an action on sel of st (the caller holds
// the repository lock): the full state is recorded for a whole-scope or
// whole-turn action, the selected files' paths otherwise (a partial
// recovery point on top of HEAD as the action's discovery saw it).
func (d *Differ) begin(ctx context.Context, st *readState, name string, sel selection) error {
	a := gitstate.Action{Name: name, Full: sel.all}
	if st.ri.Repo != nil {
		a.Head, a.HeadTree, a.HeadKnown = st.ri.head, st.ri.headTree, true
	}
	if !sel.all {
		a.Paths = filePaths(sel.files)
	}
	j, err := d.oplog.Begin(ctx, st.repo, a)
	if err != nil {
		return err
	}
	if len(j.Recovered) > 0 {
		// Another action of this checkout died after recoverFirst ran and
		// Begin recovered it under the lock: the plan may be stale.
		defer j.Close()
		return j.Abort(ctx, errPlanStale)
	}
	st.txn = j
	return nil
}

// errPlanStale is an action's plan made before an interrupted action of
// the same checkout was recovered ([Differ.begin]); nothing was written.
var errPlanStale = errors.New("diffscope: an interrupted action in this checkout was recovered after the plan was made")

// retryStale runs an action, and once more when its plan went stale
// (errPlanStale); a second stale plan is concurrentChange.
func retryStale(run func() ([]string, error)) ([]string, error) {
	paths, err := run()
	if !errors.Is(err, errPlanStale) {
		return paths, err
	}
	paths, err = run()
	if errors.Is(err, errPlanStale) {
		return nil, &ConflictError{Reason: ReasonConcurrentChange, Output: err.Error()}
	}
	return paths, err
}

// end finishes the journal of st: done when the action succeeded, rolled
// back when it failed (err is returned then).
func (d *Differ) end(ctx context.Context, st *readState, paths []string, err error) ([]string, error) {
	j := st.txn
	defer j.Close()
	if err != nil {
		return nil, j.Abort(ctx, err)
	}
	if err := j.Done(ctx); err != nil {
		return nil, err
	}
	return paths, nil
}

// writeIndex writes entries (path -> entry; an absent entry removes the
// path) into the checkout's index through the journal, in one
// `update-index --index-info` on its temporary copy
// (gitstate.Journal.WriteIndexEntries). With refresh the stat data of the
// present paths is refreshed too (`add --refresh`, whole-file actions);
// a hunk's entry is refreshed by update-index itself when it is the file
// on disk.
func (d *Differ) writeIndex(ctx context.Context, st *readState, entries map[string]entry, refresh bool) error {
	var present []string
	if refresh {
		for _, p := range sortedKeys(entries) {
			if e := entries[p]; !e.absent() && e.mode != modeGitlink {
				present = append(present, p)
			}
		}
	}
	return st.txn.WriteIndexEntries(ctx, stateEntries(entries), present)
}

// stateEntries converts diffscope entries to gitstate's.
func stateEntries(m map[string]entry) map[string]gitstate.Entry {
	out := make(map[string]gitstate.Entry, len(m))
	for p, e := range m {
		out[p] = gitstate.Entry{Mode: e.mode, OID: e.oid}
	}
	return out
}

// Oplog is the Differ's operation log, which the server's other actions
// that write a checkout journal through too (git/branch/switch,
// git/commit's staging), so that one recovery finishes them all.
func (d *Differ) Oplog() *gitstate.Oplog { return d.oplog }
