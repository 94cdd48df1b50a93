package handoff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// lockFileName is the flock, in a repository's common git dir, that one
// handoff (or its recovery) holds at a time.
const lockFileName = "knightcode-handoff.lock"

// lockRepo takes the repository's handoff lock, waiting until ctx ends.
func lockRepo(ctx context.Context, commonDir string) (func(), error) {
	fl := flock.New(filepath.Join(commonDir, lockFileName))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("handoff: lock %s: %w", commonDir, errorsJoin(err, ctx.Err()))
	}
	return func() { _ = fl.Unlock() }, nil
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
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
	// Landed is where the thread now runs when rolled forward.
	Landed *Landed `json:"landed,omitempty"`
	// Err is set with RecoveryRequired.
	Err *RecoveryError `json:"-"`
}

// Message is a one-line warning for the thread layer (thread/resume,
// the next handoff's warnings).
func (r Recovered) Message() string {
	switch r.Outcome {
	case RolledForward:
		return fmt.Sprintf("An interrupted handoff (%s) was finished: the changes are in %s.", r.ID, r.Landed.Destination)
	case RolledBack:
		return fmt.Sprintf("An interrupted handoff (%s) was undone: the changes stayed where they were.", r.ID)
	}
	if r.Err != nil {
		return r.Err.Error() + " " + r.Err.Instructions
	}
	return "An interrupted handoff (" + r.ID + ") needs recovery."
}

// Recover finishes the handoffs that stopped (journals in
// <agentDir>/handoff/ whose lock is free): one that verified its
// destination rolls forward (Record, then the source is cleaned); one
// that did not rolls back (the destination clean at its old HEAD, the
// source untouched). When a side holds edits that match no journaled
// state the journal stays and the outcome is RecoveryRequired with a
// *RecoveryError. Call it at server start (CommonDir "") and before a
// thread loads in a repository; [Handoff.Run] calls it for its
// repository first.
func (h *Handoff) Recover(ctx context.Context, o RecoverOptions) ([]Recovered, error) {
	return h.recoverWith(ctx, o, true)
}

// recover is Recover for a caller holding the repository's handoff lock.
func (h *Handoff) recover(ctx context.Context, o RecoverOptions) ([]Recovered, error) {
	return h.recoverWith(ctx, o, false)
}

func (h *Handoff) recoverWith(ctx context.Context, o RecoverOptions, lock bool) ([]Recovered, error) {
	js, err := h.openJournals()
	if err != nil {
		return nil, err
	}
	var out []Recovered
	for _, j := range js {
		if o.CommonDir != "" && j.CommonDir != "" && j.CommonDir != o.CommonDir {
			j.unlock()
			continue
		}
		if _, err := os.Stat(j.CommonDir); j.CommonDir != "" && err != nil {
			j.unlock() // the repository is gone: nothing to finish
			continue
		}
		var r Recovered
		unlock := func() {}
		if lock && j.CommonDir != "" {
			if unlock, err = lockRepo(ctx, j.CommonDir); err != nil {
				j.unlock()
				return out, err
			}
		}
		r, err = h.recoverOne(ctx, j, o.Record)
		unlock()
		j.unlock()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (h *Handoff) recoverOne(ctx context.Context, j *Journal, record func(context.Context, *Landed) error) (Recovered, error) {
	r := Recovered{ID: j.ID}
	switch j.Step {
	case "":
		return Recovered{ID: j.ID, Outcome: RolledBack}, j.remove()
	case StepSaved:
		src, err := h.git.Discover(ctx, j.Plan.Source)
		if err != nil {
			return r, err
		}
		r.Outcome = RolledBack
		return r, h.drop(ctx, j, src)
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
		return r, h.rollback(ctx, j)
	case StepVerified, StepRecorded, StepCleaning, StepNeedsHelp:
		if j.Step == StepNeedsHelp {
			j.Step = StepCleaning
		}
		return h.recoverForward(ctx, j, record)
	}
	return r, fmt.Errorf("handoff: journal %s: unknown step %q", j.ID, j.Step)
}

func (h *Handoff) recoverForward(ctx context.Context, j *Journal, record func(context.Context, *Landed) error) (Recovered, error) {
	r := Recovered{ID: j.ID}
	res, err := h.forward(ctx, j, record, false)
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
func (h *Handoff) pendingRecovery(ctx context.Context, commonDir string) error {
	js, err := h.openJournals()
	if err != nil {
		return err
	}
	var found error
	for _, j := range js {
		if found == nil && j.CommonDir == commonDir && j.Step == StepNeedsHelp {
			found = recoveryError(j, "an earlier handoff (%s) stopped and its changes match no journaled state", j.ID)
		}
		j.unlock()
	}
	return found
}
