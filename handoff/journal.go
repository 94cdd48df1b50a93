package handoff

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/knightcode/knightcode/gitstate"
)

// JournalAction is the name of a handoff's journal in the operation log
// (gitstate.Oplog, <agentDir>/oplog): the one journal mechanism that
// revert, stage and unstage use too. A handoff's journal is external
// (gitstate.Action.External): the handoff finishes it itself
// ([Handoff.Recover]).
const JournalAction = "handoff"

// Journal steps, in order ([Journal.Step]).
const (
	StepSaved     = "saved"     // changes saved (recovery point, patch); nothing moved
	StepMoving    = "moving"    // the destination is being written
	StepVerified  = "verified"  // the destination captures to the saved trees
	StepRecorded  = "recorded"  // Options.Record returned
	StepCleaning  = "cleaning"  // the source is being cleaned
	StepNeedsHelp = "needsHelp" // recovery found a side matching no state
)

// Journal is a handoff's state, saved atomically at each step as the data
// of its operation-log journal (<agentDir>/oplog/<id>.json, flock-held
// while the handoff runs). The journal's recovery point,
// refs/knightcode/oplog/<time>, is the saved changes: the full state of
// the source before anything moved (parent 1 HEAD, parent 2 the index
// commit, the tree the worktree tree with untracked files). Refs the
// handoff moves (HEADs, the branch) are journaled by the oplog journal
// (gitstate.Journal.UpdateRef) and put back by a rollback.
type Journal struct {
	ID        string    `json:"id"`
	Step      string    `json:"step"`
	CommonDir string    `json:"commonDir"`
	Time      time.Time `json:"time"`
	Plan      Planned   `json:"plan"`
	// Saved is the source's state: the trees every side is checked
	// against.
	Saved Saved `json:"saved"`
	// Ref and Patch hold the saved changes: the recovery point's ref and
	// the binary patch HEAD -> worktree tree,
	// <agentDir>/handoff/<id>.patch.
	Ref   string `json:"ref"`
	Patch string `json:"patch"`
	// Destination is the destination's root once known (a new worktree's
	// path once made); CreatedWorktree says the handoff made it.
	Destination     string `json:"destination,omitempty"`
	CreatedWorktree bool   `json:"createdWorktree,omitempty"`
	// Landed is what Options.Record got (set at StepVerified).
	Landed *Landed `json:"landed,omitempty"`
	// Paths lists, at StepNeedsHelp, the paths matching no state.
	Paths []string `json:"paths,omitempty"`

	oj *gitstate.Journal
	// recovering: the journal is finished by gitstate.Oplog.RecoverExternal
	// (remove then only deletes the patch).
	recovering bool
}

// Saved is the captured source, as trees.
type Saved struct {
	Head         string   `json:"head"`
	HeadTree     string   `json:"headTree"`
	IndexTree    string   `json:"indexTree"`
	WorktreeTree string   `json:"worktreeTree"`
	IntentToAdd  []string `json:"intentToAdd,omitempty"`
	Commit       string   `json:"commit"`
}

// patchDir is <agentDir>/handoff, where the saved patches are.
func (h *Handoff) patchDir() string { return filepath.Join(h.agentDir, "handoff") }

// newJournal wraps the oplog journal oj (Begin wrote its recovery point of
// st) as a handoff journal.
func (h *Handoff) newJournal(oj *gitstate.Journal, commonDir string, p *Planned, st *gitstate.State, now time.Time) (*Journal, error) {
	if err := os.MkdirAll(h.patchDir(), 0o700); err != nil {
		return nil, errorf("journal: %v", err)
	}
	return &Journal{ID: oj.ID(), CommonDir: commonDir, Time: now.UTC(), Plan: *p, Ref: oj.Ref(),
		Patch:       filepath.Join(h.patchDir(), oj.ID()+".patch"),
		Destination: p.Destination, oj: oj,
		Saved: Saved{Head: st.Head, HeadTree: st.HeadTree, IndexTree: st.IndexTree, WorktreeTree: st.WorktreeTree,
			IntentToAdd: st.IntentToAdd, Commit: oj.PointCommit()}}, nil
}

// save writes the journal atomically at step.
func (j *Journal) save(step string) error {
	j.Step = step
	if err := j.oj.Save(step, j); err != nil {
		return errorf("journal: %v", err)
	}
	return nil
}

// unlock releases the journal's lock: an unfinished journal stays for
// [Handoff.Recover].
func (j *Journal) unlock() { j.oj.Close() }

// remove ends the journal (the handoff finished or was undone): its patch
// goes, and the oplog journal is done (the recovery point stays, under
// the oplog's retention).
func (j *Journal) remove(ctx context.Context) error {
	err := os.Remove(j.Patch)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if j.recovering {
		return err
	}
	return errors.Join(err, j.oj.Done(context.WithoutCancel(ctx)))
}
