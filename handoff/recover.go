package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/atomicfile"
)

// lockFileName is the flock, in a repository's common git dir, that one
// handoff (or its recovery) holds at a time. It is not gitcli's repository
// lock: a handoff makes and deletes worktrees (workspace takes that one).
const lockFileName = "knightcode-handoff.lock"

// heldKey marks a context whose handoff holds the lock of a common dir
// (the value), so that the recovery it runs does not wait for itself.
type heldKey struct{}

// lockRepo takes the repository's handoff lock, waiting until ctx ends;
// it returns ctx marked as holding it. Under a ctx that holds it already
// it does nothing.
func lockRepo(ctx context.Context, commonDir string) (context.Context, func(), error) {
	if held, _ := ctx.Value(heldKey{}).(string); held == commonDir {
		return ctx, func() {}, nil
	}
	fl := flock.New(filepath.Join(commonDir, lockFileName))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return ctx, nil, fmt.Errorf("handoff: lock %s: %w", commonDir, errorsJoin(err, ctx.Err()))
	}
	return context.WithValue(ctx, heldKey{}, commonDir), func() { _ = fl.Unlock() }, nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// RecoverOptions select the journals [Handoff.Recover] finishes.
type RecoverOptions struct {
	// CommonDir limits recovery to the journals of that repository
	// (its common git dir); "" recovers every stopped journal (server
	// start).
	CommonDir string
	// Record is called for a journal that verified but had not recorded
	// its landing (Options.Record of the handoff that stopped).
	Record func(ctx context.Context, l *Landed) error
}

// Recovery outcomes.
const (
	RolledForward    = "rolledForward"    // the handoff completed
	RolledBack       = "rolledBack"       // the source kept its changes; the destination is as before
	RecoveryRequired = "recoveryRequired" // neither side matches a journaled state
)

// Recovered reports one stopped handoff that [Handoff.Recover] handled.
type Recovered struct {
	ID string `json:"id"`
	// ThreadID is the thread that was handed off (Options.ThreadID).
	ThreadID string `json:"threadId,omitempty"`
	Outcome  string `json:"outcome"`
	// Landed is where the thread now runs when rolled forward.
	Landed *Landed `json:"landed,omitempty"`
	// Err is set with RecoveryRequired.
	Err *RecoveryError `json:"-"`
	// Note adds what the user should know of a RolledBack one: the
	// worktree it had made was deleted with its snapshot kept
	// ([KeptWorktreeError]).
	Note string `json:"note,omitempty"`
}

// Message is a one-line warning for the thread layer (thread/resume,
// the next handoff's warnings).
func (r Recovered) Message() string {
	switch r.Outcome {
	case RolledForward:
		return fmt.Sprintf("An interrupted handoff (%s) was finished: the changes are in %s.", r.ID, r.Landed.Destination)
	case RolledBack:
		msg := fmt.Sprintf("An interrupted handoff (%s) was undone: the changes stayed where they were.", r.ID)
		if r.Note != "" {
			msg += " But " + r.Note + "."
		}
		return msg
	}
	if r.Err != nil {
		return r.Err.Error() + " " + r.Err.Instructions
	}
	return "An interrupted handoff (" + r.ID + ") needs recovery."
}

// Recover finishes the handoffs that stopped (their oplog journals,
// gitstate.Oplog.RecoverExternal, whose lock is free): one that verified
// its destination rolls forward (Record, then the source is cleaned); one
// that did not rolls back (the refs it moved put back, the destination
// clean at its old HEAD, the source untouched). When a side holds edits
// that match no journaled state the journal stays and the outcome is
// RecoveryRequired with a *RecoveryError. The capture folders of
// handoffs killed before their journal began go too. Call it at server start
// (CommonDir "") and before a thread loads in a repository; [Handoff.Run]
// calls it for its repository first.
func (h *Handoff) Recover(ctx context.Context, o RecoverOptions) ([]Recovered, error) {
	sweepCaptures(h.patchDir())
	var out []Recovered
	_, err := h.oplog.RecoverExternal(ctx, JournalAction, o.CommonDir, func(ctx context.Context, oj *gitstate.Journal) (gitstate.RecoveryReport, error) {
		if _, err := os.Stat(oj.CommonDir()); err != nil {
			// The repository is gone; its patch stays in <agentDir>/handoff.
			return gitstate.RecoveryReport{Outcome: gitstate.OutcomeCheckoutGone}, nil
		}
		ctx, unlock, err := lockRepo(ctx, oj.CommonDir())
		if err != nil {
			return gitstate.RecoveryReport{}, err
		}
		defer unlock()
		j := &Journal{ID: oj.ID(), oj: oj, recovering: true}
		if ok, err := oj.Data(j); err != nil {
			return gitstate.RecoveryReport{}, err
		} else if !ok {
			// Stopped before the changes were saved: nothing moved.
			j.Patch = filepath.Join(h.patchDir(), oj.ID()+".patch")
			out = append(out, Recovered{ID: j.ID, Outcome: RolledBack})
			return gitstate.RecoveryReport{Outcome: gitstate.OutcomeNothingWritten}, j.remove(ctx)
		}
		r, err := h.recoverOne(ctx, j, o.Record)
		if err != nil {
			return gitstate.RecoveryReport{}, err
		}
		out = append(out, r)
		rep := gitstate.RecoveryReport{Outcome: gitstate.OutcomeRolledBack}
		switch r.Outcome {
		case RolledForward:
			rep.Outcome = gitstate.OutcomeCompleted
		case RecoveryRequired:
			rep.Outcome = gitstate.OutcomeRecoveryRequired
			rep.Conflicts = r.Err.Conflict.Paths
		}
		return rep, nil
	})
	return out, err
}

// orphanWorktree finds the managed worktree a handoff stopped at StepSaved
// made for its thread but had not journaled (killed between
// workspace.Manager.Create and StepMoving): the live worktree of the
// journal's repository attached to that thread alone and created since the
// journal began. Nothing else can have made one: no other handoff of the
// thread runs before this recovery, and a fork or a new thread gets an id
// of its own. "" when the plan made none or no such worktree is there.
func (h *Handoff) orphanWorktree(j *Journal) (string, error) {
	if !j.Plan.CreateWorktree || j.Plan.ThreadID == "" || h.ws == nil {
		return "", nil
	}
	list, err := h.ws.Registry().List()
	if err != nil {
		return "", err
	}
	for _, w := range list {
		if !w.Deleted && w.State == "" && w.CommonDir == j.CommonDir && !w.CreatedAt.Before(j.Time) &&
			slices.Equal(w.ThreadIDs, []string{j.Plan.ThreadID}) {
			return w.Path, nil
		}
	}
	return "", nil
}

func (h *Handoff) recoverOne(ctx context.Context, j *Journal, record func(context.Context, *Landed) error) (Recovered, error) {
	r := Recovered{ID: j.ID, ThreadID: j.Plan.ThreadID}
	switch j.Step {
	case StepSaved:
		r.Outcome = RolledBack
		if path, err := h.orphanWorktree(j); err != nil {
			return r, err
		} else if path != "" {
			// Made, but killed before its path was journaled: undone
			// as a rollback undoes the worktree a handoff made.
			j.Destination, j.CreatedWorktree = path, true
			err := h.rollback(ctx, j)
			if kept, ok := errors.AsType[*KeptWorktreeError](err); ok {
				r.Note, err = kept.Error(), nil
			}
			return r, err
		}
		return r, h.drop(ctx, j)
	case StepMoving:
		if j.Destination != "" {
			if dst, err := h.git.Discover(ctx, j.Destination); err == nil {
				if ok, err := h.matches(ctx, dst, j.Saved); err != nil {
					return r, err
				} else if ok {
					j.Landed = landed(&j.Plan, j, dst.Root)
					if err := j.save(StepVerified); err != nil {
						return r, err
					}
					return h.recoverForward(ctx, j, record)
				}
			}
		}
		r.Outcome = RolledBack
		err := h.rollback(ctx, j)
		if kept, ok := errors.AsType[*KeptWorktreeError](err); ok {
			r.Note, err = kept.Error(), nil
		}
		return r, err
	case StepVerified, StepRecorded, StepCleaning, StepNeedsHelp:
		if j.Step == StepNeedsHelp {
			j.Step = StepCleaning
		}
		return h.recoverForward(ctx, j, record)
	}
	return r, fmt.Errorf("handoff: journal %s: unknown step %q", j.ID, j.Step)
}

func (h *Handoff) recoverForward(ctx context.Context, j *Journal, record func(context.Context, *Landed) error) (Recovered, error) {
	r := Recovered{ID: j.ID, ThreadID: j.Plan.ThreadID}
	res, err := h.forward(ctx, j, record, nil)
	if re, ok := err.(*RecoveryError); ok {
		r.Outcome, r.Err = RecoveryRequired, re
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Outcome, r.Landed = RolledForward, &res.Landed
	return r, nil
}

// pendingRecovery returns the *RecoveryError of a journal of this
// repository that needs the user (read only: Plan's check).
func (h *Handoff) pendingRecovery(_ context.Context, commonDir string) error {
	infos, err := h.oplog.ExternalJournals(JournalAction, commonDir)
	if err != nil {
		return err
	}
	for _, info := range infos {
		if info.Step != StepNeedsHelp {
			continue
		}
		j := &Journal{}
		if err := json.Unmarshal(info.Data, j); err != nil {
			return errorf("journal %s: %v", info.ID, err)
		}
		return recoveryError(j, "an earlier handoff (%s) stopped and its changes match no journaled state", j.ID)
	}
	return nil
}

// reportsDir holds the outcomes [Handoff.RecoverStart] keeps:
// <agentDir>/handoff/reports/<journal id>.json.
func (h *Handoff) reportsDir() string { return filepath.Join(h.patchDir(), "reports") }

// RecoverStart is [Handoff.Recover] of every stopped handoff for the
// server's start: no thread is loaded to warn yet, so each outcome that
// finished its journal (RolledForward, RolledBack) is kept in
// <agentDir>/handoff/reports until [Handoff.TakeRecovered] hands it to the
// next load of its thread (issue 9: "after a restart report it as a
// thread/resume warning"). A RecoveryRequired journal stays and is
// reported by every later Recover and refused handoff, so it is not kept;
// nor is one that names no thread (it stopped before it saved its plan:
// nothing had moved).
// Errors: those of Recover (the journals concerned stay), and a report
// that could not be written.
func (h *Handoff) RecoverStart(ctx context.Context, o RecoverOptions) error {
	o.CommonDir = ""
	recs, err := h.Recover(ctx, o)
	for _, r := range recs {
		if r.Outcome == RecoveryRequired || r.ThreadID == "" {
			// Kept for no one: a journal that stopped before it saved
			// its plan names no thread, and nothing had moved.
			continue
		}
		data, merr := json.Marshal(r)
		if merr == nil {
			merr = os.MkdirAll(h.reportsDir(), 0o700)
		}
		if merr == nil {
			merr = atomicfile.WriteFile(filepath.Join(h.reportsDir(), r.ID+".json"), data, 0o600)
		}
		if merr != nil {
			err = errors.Join(err, errorf("keeping the report of handoff %s: %v", r.ID, merr))
		}
	}
	return err
}

// TakeRecovered returns and forgets the outcomes [Handoff.RecoverStart]
// kept for thread threadID (none for ""), oldest first. A report older
// than keptReportAge (its thread was never loaded again) or unreadable is
// dropped. Errors: listing the folder.
func (h *Handoff) TakeRecovered(threadID string) ([]Recovered, error) {
	names, err := filepath.Glob(filepath.Join(h.reportsDir(), "*.json"))
	if err != nil {
		return nil, errorf("recovery reports: %v", err)
	}
	slices.SortStableFunc(names, func(a, b string) int { return modTime(a).Compare(modTime(b)) })
	var out []Recovered
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var r Recovered
		if json.Unmarshal(data, &r) != nil || r.ID == "" || time.Since(modTime(n)) > keptReportAge {
			_ = os.Remove(n)
			continue
		}
		if r.ThreadID != threadID {
			continue
		}
		if os.Remove(n) != nil {
			continue // another take got it, or it stays for a later one: never reported twice
		}
		out = append(out, r)
	}
	return out, nil
}

// keptReportAge is how long a report [Handoff.RecoverStart] kept waits
// for its thread to load again.
const keptReportAge = 30 * 24 * time.Hour

// modTime is the file's modification time (zero when it cannot be read).
func modTime(name string) time.Time {
	fi, err := os.Stat(name)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}
