package gitstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file serves the actions that move more than files and finish their
// own journals (Action.External: handoff, branch switch): the same journal
// files, locks and recovery points as revert and stage, plus the action's
// own state (Data at a Step) and the refs it moved (HEAD attached or
// detached, a branch created or moved), which a rollback puts back.

// OutcomeRecoveryRequired: an external action's resolver could neither
// finish nor undo it (a side matches no journaled state); its journal
// stays, and the recovery point holds the state before the action.
const OutcomeRecoveryRequired = "recoveryRequired"

// RefValue is a ref's value: Target for a symbolic ref (HEAD attached to
// refs/heads/x), else OID ("" when the ref does not exist).
type RefValue struct {
	Target string `json:"target,omitempty"`
	OID    string `json:"oid,omitempty"`
}

// RefRecord is a ref an action moved: in the checkout Checkout (HEAD is
// per checkout; a branch is shared by them all), from Before to After.
type RefRecord struct {
	Checkout string   `json:"checkout"`
	Ref      string   `json:"ref"`
	Before   RefValue `json:"before"`
	After    RefValue `json:"after"`
	// LockPath is the file git locks the ref with (<ref>.lock in the
	// checkout's git dir for HEAD, else in the common dir), which a
	// recovery removes when a killed write left it holding Before or
	// After ([dropOwnRefLocks]).
	LockPath string `json:"lockPath,omitempty"`
}

// Step is the journal's step as an external action last saved it ("" none).
func (j *Journal) Step() string { return j.f.Step }

// Root is the work tree the journal began in.
func (j *Journal) Root() string { return j.f.Root }

// CommonDir is the common git dir of the journal's repository.
func (j *Journal) CommonDir() string { return j.f.CommonDir }

// PointCommit is the recovery point's commit ("" until Begin wrote it).
func (j *Journal) PointCommit() string { return j.f.Commit }

// Data decodes the state an external action saved into v; false when none
// was saved.
func (j *Journal) Data(v any) (bool, error) {
	if len(j.f.Data) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(j.f.Data, v); err != nil {
		return false, fmt.Errorf("gitstate: oplog: journal %s: %w", j.f.ID, err)
	}
	return true, nil
}

// Save writes the journal atomically with the action's state v at step.
func (j *Journal) Save(step string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.f.Step, j.f.Data = step, data
	return j.save()
}

// readRef reads ref in repo: HEAD's target when attached, else its id.
func readRef(ctx context.Context, repo *gitcli.Repo, ref string) (RefValue, error) {
	if ref == "HEAD" {
		target, ok, err := repo.SymbolicRef(ctx, "HEAD")
		if err != nil {
			return RefValue{}, err
		}
		if ok {
			return RefValue{Target: target}, nil
		}
	}
	id, ok, err := repo.VerifyRef(ctx, ref)
	if err != nil || !ok {
		return RefValue{}, err
	}
	return RefValue{OID: id}, nil
}

// writeRef sets ref in repo from before to after: HEAD attached to
// after.Target or detached at after.OID; another ref created, moved or
// (after.OID "") deleted, only while it is at before.
func writeRef(ctx context.Context, repo *gitcli.Repo, ref string, before, after RefValue, msg string) error {
	if ref == "HEAD" {
		if after.Target != "" {
			return repo.AttachHead(ctx, after.Target, msg)
		}
		return repo.DetachHead(ctx, after.OID, msg)
	}
	old := before.OID
	if old == "" {
		old = repo.ZeroID()
	}
	if after.OID == "" {
		return repo.UpdateRefs(ctx, []gitcli.RefUpdate{{Ref: ref, OldID: old, Delete: true}})
	}
	return repo.UpdateRefs(ctx, []gitcli.RefUpdate{{Ref: ref, NewID: after.OID, OldID: old}})
}

// UpdateRef moves ref ("HEAD" or a full ref name) of the checkout repo to
// after, journaled: the record (its value now, after) is saved before the
// write (step "ref"), so a rollback puts it back: [Journal.RestoreRefs]
// for an external action, [Journal.Abort] and [Oplog.Recover] for the
// others (after the paths). A ref already at after is left alone. msg is
// the reflog message. Errors: git's (a branch no longer at the value
// read: update-ref's check).
func (j *Journal) UpdateRef(ctx context.Context, repo *gitcli.Repo, ref string, after RefValue, msg string) error {
	before, err := readRef(ctx, repo, ref)
	if err != nil {
		return err
	}
	if before == after {
		return nil
	}
	j.f.Refs = append(j.f.Refs, RefRecord{Checkout: repo.Root, Ref: ref, Before: before, After: after, LockPath: refLockPath(repo, ref)})
	if err := j.save(); err != nil {
		return err
	}
	j.step("ref")
	return writeRef(ctx, repo, ref, before, after, msg)
}

// RestoreRefs puts back the refs the journal moved, newest first: each
// still at its After value goes back to Before; one at neither (moved by
// someone else since) is left alone and returned as "<checkout>:<ref>". A
// checkout that no longer exists is skipped. git opens the checkouts.
func (j *Journal) RestoreRefs(ctx context.Context, git *gitcli.Runner, msg string) ([]string, error) {
	return restoreRefs(ctx, git, j.f.Refs, msg)
}

// restoreRefs is [Journal.RestoreRefs] of the records refs.
func restoreRefs(ctx context.Context, git *gitcli.Runner, refs []RefRecord, msg string) ([]string, error) {
	var conflicts []string
	for i := len(refs) - 1; i >= 0; i-- {
		r := refs[i]
		if _, err := os.Stat(r.Checkout); err != nil {
			continue
		}
		repo, err := git.Discover(ctx, r.Checkout)
		if err != nil {
			return conflicts, err
		}
		cur, err := readRef(ctx, repo, r.Ref)
		if err != nil {
			return conflicts, err
		}
		switch cur {
		case r.Before:
		case r.After:
			m := msg
			if r.Ref == "HEAD" {
				// git's own words, which `git switch -` reads back.
				m = "checkout: moving from " + refName(r.After) + " to " + refName(r.Before)
			}
			if err := writeRef(ctx, repo, r.Ref, r.After, r.Before, m); err != nil {
				return conflicts, err
			}
		default:
			conflicts = append(conflicts, r.Checkout+":"+r.Ref)
		}
	}
	return conflicts, nil
}

// Resolver finishes one unfinished journal of an external action, whose
// lock [Oplog.RecoverExternal] holds: it rolls the action forward or back
// and reports what it did. Outcome [OutcomeRecoveryRequired] keeps the
// journal (for the user, and the next recovery); any other outcome removes
// it. An error keeps it too.
type Resolver func(ctx context.Context, j *Journal) (RecoveryReport, error)

// RecoverExternal hands every unfinished journal (lock free) of the
// external action named action, of the repository with common git dir
// commonDir ("" every repository), to resolve, oldest first, and returns
// their reports, after sweeping what killed journals left that holds no
// state ([Oplog.sweep]). A journal whose resolver fails stays; its error is
// returned joined with the others. The caller serializes the action's
// runs (the journal does not lock the repository).
func (o *Oplog) RecoverExternal(ctx context.Context, action, commonDir string, resolve Resolver) ([]RecoveryReport, error) {
	if o.Dir == "" {
		return nil, nil
	}
	o.sweep()
	journals, err := o.journals()
	if err != nil {
		return nil, err
	}
	var out []RecoveryReport
	var errs []error
	for _, f := range journals {
		if !f.External || f.Action != action || commonDir != "" && f.CommonDir != commonDir {
			continue
		}
		lock, ok := o.lockUnfinished(f.ID, lockWait)
		if !ok {
			continue // running, or finished meanwhile
		}
		j := &Journal{o: o, f: *f, lock: lock, work: o.workPath(f.ID), byP: map[string]int{}, steps: map[string]int{},
			point: map[string]bool{}, indexRead: map[string]bool{}}
		// What a kill left of the checkouts' writes goes before the
		// resolver captures them.
		cleanCheckouts(&j.f, j.work)
		dropOwnRefLocks(&j.f)
		rep, err := resolve(ctx, j)
		if rep.Journal == "" {
			rep.Checkout, rep.Action, rep.Journal, rep.Ref, rep.Started = f.Root, f.Action, f.ID, f.Ref, f.Created
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("gitstate: recover %s %s in %s: %w", f.Action, f.ID, f.Root, err))
			j.Close()
			continue
		case rep.Outcome == OutcomeRecoveryRequired:
			j.Close()
		default:
			j.finish()
		}
		out = append(out, rep)
	}
	return out, errors.Join(errs...)
}

// JournalInfo describes an unfinished or running journal of an external
// action ([Oplog.ExternalJournals]).
type JournalInfo struct {
	ID, Action, Root, CommonDir, Ref, Step string
	// Data is the action's saved state (JSON).
	Data json.RawMessage
}

// ExternalJournals lists the journals of the external action named action
// of the repository with common git dir commonDir, oldest first, reading
// only (no lock is taken): the running ones included.
func (o *Oplog) ExternalJournals(action, commonDir string) ([]JournalInfo, error) {
	if o.Dir == "" {
		return nil, nil
	}
	if _, err := os.Stat(o.Dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	journals, err := o.journals()
	if err != nil {
		return nil, err
	}
	var out []JournalInfo
	for _, f := range journals {
		if f.External && f.Action == action && (commonDir == "" || f.CommonDir == commonDir) {
			out = append(out, JournalInfo{ID: f.ID, Action: f.Action, Root: f.Root, CommonDir: f.CommonDir,
				Ref: f.Ref, Step: f.Step, Data: f.Data})
		}
	}
	return out, nil
}

// refLockPath is the lock file git takes to write ref in repo: HEAD is
// the checkout's own (its git dir), every other ref the repository's
// (its common dir). A packed-only ref is locked at the same path.
func refLockPath(repo *gitcli.Repo, ref string) string {
	dir := repo.CommonDir
	if ref == "HEAD" {
		dir = repo.GitDir
	}
	return filepath.Join(dir, filepath.FromSlash(ref)+".lock")
}

// refLockContent is what git writes into a ref's lock file for v: the
// object id, or "ref: <target>" for a symbolic ref, and a newline.
func refLockContent(v RefValue) string {
	if v.Target != "" {
		return "ref: " + v.Target + "\n"
	}
	return v.OID + "\n"
}

// dropOwnRefLocks removes the lock files of the refs f's action moved
// that hold the value the action was writing (its After, or its Before
// when a rollback was writing it): a git child killed with the server
// between taking a ref's lock and renaming it left such a file, which
// would make every later write of that ref fail. A lock holding any other
// value is another process's and stays. The caller holds f's lock (the
// action is not running).
func dropOwnRefLocks(f *journalFile) {
	for _, r := range f.Refs {
		if r.LockPath == "" {
			continue
		}
		b, err := os.ReadFile(r.LockPath)
		if err != nil {
			continue
		}
		if got := string(b); got == refLockContent(r.After) || got == refLockContent(r.Before) {
			_ = os.Remove(r.LockPath)
		}
	}
}

// refName is how git's reflog names HEAD's value: the branch's short name
// when attached, else the commit.
func refName(v RefValue) string {
	if v.Target != "" {
		return strings.TrimPrefix(v.Target, "refs/heads/")
	}
	return v.OID
}
