package gitstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Recovery outcomes ([RecoveryReport.Outcome]).
const (
	// OutcomeNothingWritten: the action died before its first write.
	OutcomeNothingWritten = "nothingWritten"
	// OutcomeRolledBack: what the action had written was put back to the
	// recovery point (Restored); Conflicts lists what was left alone.
	OutcomeRolledBack = "rolledBack"
	// OutcomeCompleted: the journal was marked done (every write had
	// landed); the action's result is kept (rolled forward).
	OutcomeCompleted = "completed"
	// OutcomeCheckoutGone: the checkout no longer exists; the journal is
	// dropped (the recovery point, if written, stays in the repository).
	OutcomeCheckoutGone = "checkoutGone"
)

// RecoveryReport says what the recovery of one unfinished journal did.
// The thread layer turns it into a warning on the next thread/start or
// resume in Checkout.
type RecoveryReport struct {
	// Checkout is the work tree the action ran in.
	Checkout string `json:"checkout"`
	// Action is the action's name ("revert", "stage", ...).
	Action string `json:"action"`
	// Journal is the journal's id.
	Journal string `json:"journal"`
	// Ref is the recovery point ("" when the action died before writing
	// it); it gives back the state before the action with plain git.
	Ref string `json:"ref,omitempty"`
	// Started is when the action started (UTC).
	Started time.Time `json:"started"`
	// Outcome is one of the Outcome* constants.
	Outcome string `json:"outcome"`
	// Restored lists the paths put back to their state before the action.
	Restored []string `json:"restored,omitempty"`
	// Conflicts lists the paths the action wrote that were neither as the
	// action found them nor as it meant to leave them (edited after the
	// crash): left as they are; the recovery point holds their content
	// from before the action.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Message is a one-line description for a warning.
func (r RecoveryReport) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "knightcode was interrupted during %s in %s (started %s): ", r.Action, r.Checkout, r.Started.Format(time.RFC3339))
	switch r.Outcome {
	case OutcomeNothingWritten:
		b.WriteString("nothing had been changed")
	case OutcomeCompleted:
		b.WriteString("every change had been written; it was kept")
	case OutcomeCheckoutGone:
		b.WriteString("the checkout no longer exists")
	default:
		fmt.Fprintf(&b, "%d path(s) were put back as they were before", len(r.Restored))
	}
	if len(r.Conflicts) > 0 {
		fmt.Fprintf(&b, "; %d path(s) changed since and were left alone: %s", len(r.Conflicts), strings.Join(r.Conflicts, ", "))
	}
	if r.Ref != "" {
		fmt.Fprintf(&b, "; the state before is kept in %s", r.Ref)
	}
	return b.String()
}

// Recover finishes the unfinished journals in o.Dir (those whose lock is
// free: their process died) of the checkout that contains dir, or of
// every checkout when dir is "": each is rolled back to its recovery point
// exactly, but only for the paths still at the journal's before or after
// entry (anything else was edited after the crash and is reported, never
// overwritten), or rolled forward when it is in state done (every write
// had landed) or, for an [Action.EndsInCommit], when HEAD moved (the
// commit landed); then its
// journal, work folder, stage folder and any index.lock it had linked are
// removed. The repository's lock (gitcli.LockCommonDir) is taken around
// each journal. It returns the reports of these recoveries and of those
// that [Oplog.Begin] ran since the last Recover of the checkout, oldest
// first; a journal that cannot be recovered now (git failing) stays for
// the next call and its error is returned joined with the others.
//
// Call it at server start with dir "" and when a thread loads in a
// checkout, before any turn or write.
func (o *Oplog) Recover(ctx context.Context, git *gitcli.Runner, dir string) ([]RecoveryReport, error) {
	root, err := o.recoverAll(ctx, git, dir)
	reps, terr := o.takeReports(root)
	return reps, errors.Join(err, terr)
}

// RecoverPending is [Oplog.Recover] that keeps every report for the next
// Recover of the checkout (an action recovering its checkout before it
// reads the diff). Errors as for Recover.
func (o *Oplog) RecoverPending(ctx context.Context, git *gitcli.Runner, dir string) error {
	_, err := o.recoverAll(ctx, git, dir)
	return err
}

// recoverAll recovers the unfinished journals of the checkout containing
// dir ("" for all), saving their reports, and returns the checkout's root.
func (o *Oplog) recoverAll(ctx context.Context, git *gitcli.Runner, dir string) (string, error) {
	if o.Dir == "" {
		return "", nil
	}
	root := ""
	if dir != "" {
		repo, err := git.Discover(ctx, dir)
		if err != nil {
			return "", err
		}
		root = repo.Root
	}
	o.sweep()
	journals, err := o.journals()
	if err != nil {
		return root, err
	}
	var errs []error
	for _, f := range journals {
		if f.External || root != "" && f.Root != root {
			continue
		}
		if _, _, err := o.recoverOne(ctx, git, nil, f); err != nil {
			errs = append(errs, err)
		}
	}
	return root, errors.Join(errs...)
}

// recoverRepo recovers the unfinished journals of repo's checkout, whose
// lock the caller holds, saving their reports for the next Recover.
func (o *Oplog) recoverRepo(ctx context.Context, repo *gitcli.Repo) ([]RecoveryReport, error) {
	o.sweep()
	journals, err := o.journals()
	if err != nil {
		return nil, err
	}
	var out []RecoveryReport
	for _, f := range journals {
		if f.External || f.Root != repo.Root {
			continue
		}
		rep, ok, err := o.recoverOne(ctx, repo.Runner(), repo, f)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, rep)
		}
	}
	return out, nil
}

// journals reads every journal file of o.Dir, oldest first.
func (o *Oplog) journals() ([]*journalFile, error) {
	names, err := filepath.Glob(filepath.Join(o.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*journalFile
	for _, n := range names {
		if strings.HasSuffix(n, ".report.json") {
			continue
		}
		data, err := os.ReadFile(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // finished meanwhile
		}
		if err != nil {
			return nil, err
		}
		f := &journalFile{}
		if err := json.Unmarshal(data, f); err != nil || f.ID == "" || f.ID+".json" != filepath.Base(n) {
			return nil, fmt.Errorf("gitstate: oplog: unreadable journal %s: %v", n, err)
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b *journalFile) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// recoverOne recovers journal f if its lock is free (ok false when its
// action is still running). repo, when set, is f's checkout and its
// repository lock is held by the caller; otherwise it is discovered and
// locked here.
func (o *Oplog) recoverOne(ctx context.Context, git *gitcli.Runner, repo *gitcli.Repo, f *journalFile) (RecoveryReport, bool, error) {
	lock, ok := o.lockUnfinished(f.ID, lockWait)
	if !ok {
		return RecoveryReport{}, false, nil // running, or finished meanwhile
	}
	defer lock.Unlock()
	rep := RecoveryReport{Checkout: f.Root, Action: f.Action, Journal: f.ID, Ref: f.Ref, Started: f.Created}
	if repo == nil {
		r, err := git.Discover(ctx, f.Root)
		if err != nil || r.Root != f.Root || r.GitDir != f.GitDir {
			if _, serr := os.Stat(f.Root); errors.Is(serr, fs.ErrNotExist) {
				rep.Outcome = OutcomeCheckoutGone
				if err := o.saveReport(rep); err != nil {
					return rep, false, err
				}
				o.removeJournal(f)
				return rep, true, nil
			}
			return rep, false, fmt.Errorf("gitstate: recover %s in %s: %w", f.ID, f.Root, err)
		}
		rl, err := gitcli.LockCommonDir(ctx, r.CommonDir)
		if err != nil {
			return rep, false, err
		}
		defer rl.Unlock()
		repo = r
	}
	dropOwnRefLocks(f)
	rep, err := rollback(ctx, o, repo, f, true)
	if err != nil {
		return rep, false, fmt.Errorf("gitstate: recover %s in %s: %w", f.ID, f.Root, err)
	}
	// The report is saved before the journal goes, under its lock: a
	// kill in between recovers the journal (and saves its report) again.
	if err := o.saveReport(rep); err != nil {
		return rep, false, err
	}
	o.removeJournal(f)
	return rep, true, nil
}

func (o *Oplog) removeJournal(f *journalFile) {
	if f.Stage != "" && strings.Contains(filepath.Base(f.Stage), "knightcode-oplog-"+f.ID) {
		_ = os.RemoveAll(f.Stage)
	}
	_ = os.RemoveAll(o.workPath(f.ID))
	_ = os.Remove(o.jsonPath(f.ID))
	_ = os.Remove(o.lockPath(f.ID))
}

// rollback puts the paths f's action wrote back to their before entries
// (see Recover) and reports what it did; with forward, an action all of
// whose writes landed is kept instead (Outcome completed). It changes
// nothing in f.
func rollback(ctx context.Context, o *Oplog, repo *gitcli.Repo, f *journalFile, forward bool) (RecoveryReport, error) {
	rep := RecoveryReport{Checkout: f.Root, Action: f.Action, Journal: f.ID, Ref: f.Ref, Started: f.Created}
	work := o.workPath(f.ID)
	dropOwnIndexLock(f.IndexPath, work)
	if f.Stage != "" {
		_ = os.RemoveAll(f.Stage)
	}
	var written []*PathRecord
	for i := range f.Paths {
		r := &f.Paths[i]
		if wroteWorktree(r) || wroteIndex(r) {
			written = append(written, r)
		}
	}
	movedRefs := !f.External && len(f.Refs) > 0
	if f.State == StateRecording || len(written) == 0 && !movedRefs {
		rep.Outcome = OutcomeNothingWritten
		return rep, nil
	}
	paths := make([]string, len(written))
	for i, r := range written {
		paths[i] = r.Path
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return rep, err
	}
	wt, ix := map[string]Entry{}, map[string]Entry{}
	var err error
	if len(paths) > 0 {
		if wt, err = worktreeEntries(ctx, repo, filepath.Join(work, "recover-worktree"), paths); err != nil {
			return rep, err
		}
		if ix, err = indexEntries(ctx, repo, paths); err != nil {
			return rep, err
		}
	}
	restoreWT := map[string]Entry{}
	var removeWT []string
	restoreIx := map[string]Entry{}
	var restoreITA []string
	var itaNow map[string]bool
	conflict := map[string]bool{}
	// A path the action removed that is a folder now holds files the
	// action wrote (a file replaced by a folder): it is judged once those
	// are removed.
	var held []*PathRecord
	for _, r := range written {
		if wroteWorktree(r) {
			switch cur := wt[r.Path].norm(); cur {
			case Entry{Mode: "040000"}:
				if r.WorktreeAfter.Absent() {
					held = append(held, r)
				} else {
					conflict[r.Path] = true
				}
			case r.WorktreeBefore.norm():
			case r.WorktreeAfter.norm():
				if r.WorktreeBefore.Absent() {
					removeWT = append(removeWT, r.Path)
				} else {
					restoreWT[r.Path] = r.WorktreeBefore
				}
			default:
				conflict[r.Path] = true
			}
		}
		if wroteIndex(r) {
			cur := ix[r.Path].norm()
			if r.IndexIntentToAdd && cur == r.IndexBefore.norm() {
				// The empty blob either way: intent-to-add still (as
				// before), or a real entry (as after).
				if itaNow == nil {
					if itaNow, err = intentToAdd(ctx, repo, ix); err != nil {
						return rep, err
					}
				}
				if !itaNow[r.Path] {
					restoreIx[r.Path] = Entry{} // removed, then added with -N
					restoreITA = append(restoreITA, r.Path)
				}
				continue
			}
			switch cur {
			case r.IndexBefore.norm():
			case r.IndexAfter.norm():
				if r.IndexIntentToAdd {
					restoreIx[r.Path] = Entry{} // removed, then added with -N
					restoreITA = append(restoreITA, r.Path)
				} else {
					restoreIx[r.Path] = r.IndexBefore.norm()
				}
			default:
				conflict[r.Path] = true
			}
		}
	}
	// Only a journal marked done had every write land: an action journals
	// each write just before it, so a journal whose recorded writes all
	// landed may still miss the writes that were to follow (the index
	// after the working tree), and rolling it forward would keep half an
	// action.
	if forward && f.State == StateDone {
		rep.Outcome = OutcomeCompleted
		return rep, nil
	}
	if forward && f.EndsInCommit {
		if head, _, err := repo.Head(ctx); err != nil {
			return rep, err
		} else if head != f.Head {
			rep.Outcome = OutcomeCompleted // the commit landed
			return rep, nil
		}
	}
	rep.Outcome = OutcomeRolledBack
	for _, p := range removeWT {
		if err := removeFile(repo.Root, p); err != nil {
			return rep, err
		}
	}
	for _, r := range held {
		if _, err := os.Lstat(filepath.Join(repo.Root, filepath.FromSlash(r.Path))); errors.Is(err, fs.ErrNotExist) {
			restoreWT[r.Path] = r.WorktreeBefore
		} else {
			conflict[r.Path] = true
		}
	}
	if len(restoreWT) > 0 {
		stage := f.Stage
		if stage == "" {
			stage = stageDir(repo, f.ID)
		}
		if err := stageEntries(ctx, repo, stage, filepath.Join(work, "recover-checkout"), restoreWT); err != nil {
			return rep, err
		}
		for _, p := range sortedPaths(restoreWT) {
			if err := placeStaged(repo.Root, stage, p); err != nil {
				return rep, err
			}
		}
		_ = os.RemoveAll(stage)
	}
	if len(restoreIx) > 0 {
		tmp := filepath.Join(work, "recover-index")
		_ = os.Remove(tmp)
		before, err := statIndex(repo.IndexPath)
		if err != nil {
			return rep, err
		}
		if _, err := CopyIndex(repo.IndexPath, tmp); err != nil {
			return rep, err
		}
		var info []gitcli.IndexInfo
		for _, p := range sortedPaths(restoreIx) {
			e := restoreIx[p]
			if e.Absent() {
				info = append(info, gitcli.IndexInfo{Mode: "0", OID: repo.ZeroID(), Path: p})
			} else {
				info = append(info, gitcli.IndexInfo{Mode: e.Mode, OID: e.OID, Path: p})
			}
		}
		view := repo.WithIndex(tmp)
		if err := view.UpdateIndexInfo(ctx, info); err != nil {
			return rep, err
		}
		if len(restoreITA) > 0 {
			if err := view.AddIntentToAdd(ctx, restoreITA); err != nil {
				return rep, err
			}
		}
		_ = view.AddRefresh(ctx, presentPaths(restoreIx))
		// When that is the index as the action found it but for stat data
		// (nothing else changed it meanwhile), the kept file goes back
		// instead: byte for byte, stat data of changed entries included,
		// which update-index leaves zeroed.
		if kept := filepath.Join(work, keptIndexName); sameIndexEntries(tmp, kept, repo.HexLen()/2) {
			if err := os.Remove(tmp); err != nil {
				return rep, err
			}
			if _, err := CopyIndex(kept, tmp); err != nil {
				return rep, err
			}
		}
		if _, err := commitIndex(repo.IndexPath, tmp, before, func(string) {}); err != nil {
			return rep, err
		}
	}
	restored := map[string]bool{}
	for _, p := range removeWT {
		restored[p] = true
	}
	for p := range restoreWT {
		restored[p] = true
	}
	for p := range restoreIx {
		restored[p] = true
	}
	// The refs go back after the paths (an action moves them last), each
	// only while it is as the action left it.
	if movedRefs {
		refConflicts, err := restoreRefs(ctx, repo.Runner(), f.Refs, "knightcode: roll back "+f.Action+" "+f.ID)
		if err != nil {
			return rep, err
		}
		for _, c := range refConflicts {
			conflict[c] = true
		}
	}
	rep.Restored = slices.Sorted(mapKeys(restored))
	rep.Conflicts = slices.Sorted(mapKeys(conflict))
	return rep, nil
}

func wroteWorktree(r *PathRecord) bool {
	return r.WorktreeAfter != nil && r.WorktreeAfter.norm() != r.WorktreeBefore.norm()
}

// wroteIndex reports a record whose index entry the action wrote: a
// different entry, or (the same empty blob) a real entry where an
// intent-to-add one was.
func wroteIndex(r *PathRecord) bool {
	return r.IndexAfter != nil && (r.IndexAfter.norm() != r.IndexBefore.norm() || r.IndexIntentToAdd)
}

func presentPaths(m map[string]Entry) []string {
	var out []string
	for _, p := range sortedPaths(m) {
		if !m[p].Absent() && m[p].Mode != modeGitlink {
			out = append(out, p)
		}
	}
	return out
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// worktreeEntries returns the working-tree entries of paths as git would
// add them (a copy of the index at tmp, `update-index --add --remove`,
// `ls-files -s`); absent paths are missing.
func worktreeEntries(ctx context.Context, repo *gitcli.Repo, tmp string, paths []string) (map[string]Entry, error) {
	_ = os.Remove(tmp)
	if _, err := CopyIndex(repo.IndexPath, tmp); err != nil {
		return nil, err
	}
	view := repo.WithIndex(tmp)
	if _, err := resolveUnmerged(ctx, view); err != nil {
		return nil, err
	}
	// A path now held by a folder cannot be added; its entry is then
	// a folder's (and differs from a file's). A path under a symlink or a
	// file is absent.
	files, folders, _ := fileTargets(repo.Root, paths)
	if err := seeFiles(ctx, view, files); err != nil {
		return nil, err
	}
	if err := view.UpdateIndexAdd(ctx, files); err != nil {
		return nil, err
	}
	m, err := indexEntries(ctx, view, files)
	if err != nil {
		return nil, err
	}
	for p := range folders {
		m[p] = Entry{Mode: "040000"} // a folder: neither before nor after
	}
	return m, nil
}

// dropOwnIndexLock removes <index>.lock when it is one of the journal's
// own temporary indexes put there (the journal died between taking the
// lock and renaming it): the same file as one in work (linked), or one
// with the same bytes (copied, when work is on another file system).
func dropOwnIndexLock(indexPath, work string) {
	lock := indexPath + ".lock"
	li, err := os.Lstat(lock)
	if err != nil {
		return
	}
	ents, err := os.ReadDir(work)
	if err != nil {
		return
	}
	var lockData []byte
	for _, e := range ents {
		fi, err := os.Lstat(filepath.Join(work, e.Name()))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if os.SameFile(li, fi) {
			_ = os.Remove(lock)
			return
		}
		if fi.Size() != li.Size() {
			continue
		}
		if lockData == nil {
			if lockData, err = os.ReadFile(lock); err != nil {
				return
			}
		}
		if data, err := os.ReadFile(filepath.Join(work, e.Name())); err == nil && bytes.Equal(data, lockData) {
			_ = os.Remove(lock)
			return
		}
	}
}

// saveReport keeps a report for the next Recover of its checkout.
func (o *Oplog) saveReport(r RecoveryReport) error {
	data, err := json.MarshalIndent(r, "", "\t")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(o.reportPath(r.Journal), data, 0o600)
}

// takeReports returns and removes the saved reports of the checkout root
// ("" for every checkout), oldest first.
func (o *Oplog) takeReports(root string) ([]RecoveryReport, error) {
	names, err := filepath.Glob(filepath.Join(o.Dir, "*.report.json"))
	if err != nil {
		return nil, err
	}
	var out []RecoveryReport
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var r RecoveryReport
		if json.Unmarshal(data, &r) != nil {
			_ = os.Remove(n)
			continue
		}
		if root != "" && r.Checkout != root {
			continue
		}
		out = append(out, r)
		_ = os.Remove(n)
	}
	slices.SortFunc(out, func(a, b RecoveryReport) int { return a.Started.Compare(b.Started) })
	return out, nil
}
