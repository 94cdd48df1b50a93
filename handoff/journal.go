package handoff

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

// RefPrefix is where a handoff's saved changes live while it runs:
// refs/knightcode/handoff/<id>, a stash-shaped commit (parent 1 HEAD,
// parent 2 the index commit, tree the worktree tree with untracked files).
const RefPrefix = "refs/knightcode/handoff/"

// Journal steps, in order ([Journal.Step]).
const (
	StepSaved     = "saved"     // changes saved (ref, patches); nothing moved
	StepMoving    = "moving"    // the destination is being written
	StepVerified  = "verified"  // the destination captures to the saved trees
	StepRecorded  = "recorded"  // Options.Record returned
	StepCleaning  = "cleaning"  // the source is being cleaned
	StepNeedsHelp = "needsHelp" // recovery found a side matching no state
)

// Journal is a handoff's state file, <agentDir>/handoff/<id>/state.json,
// rewritten atomically at each step. Its lock file (lock, next to it) is
// flock-held while the handoff runs: a journal whose lock is free belongs
// to a handoff that stopped.
type Journal struct {
	ID        string    `json:"id"`
	Step      string    `json:"step"`
	CommonDir string    `json:"commonDir"`
	Time      time.Time `json:"time"`
	Plan      Planned   `json:"plan"`
	// Saved is the source's state: the trees every side is checked
	// against.
	Saved Saved `json:"saved"`
	// Ref and Patch hold the saved changes: the ref of the stash-shaped
	// commit and the binary patch HEAD -> worktree tree.
	Ref   string `json:"ref"`
	Patch string `json:"patch"`
	// Destination is the destination's root once known (a new worktree's
	// path once made); CreatedWorktree says the handoff made it.
	Destination     string `json:"destination,omitempty"`
	CreatedWorktree bool   `json:"createdWorktree,omitempty"`
	// SourceDetached: a to-local handoff detached the worktree from
	// Plan.SourceBranch.
	SourceDetached bool `json:"sourceDetached,omitempty"`
	// Landed is what Options.Record got (set at StepVerified).
	Landed *Landed `json:"landed,omitempty"`
	// Paths lists, at StepNeedsHelp, the paths matching no state.
	Paths []string `json:"paths,omitempty"`

	dir string
	fl  *flock.Flock
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

// journalRoot is <agentDir>/handoff.
func (h *Handoff) journalRoot() string { return filepath.Join(h.agentDir, "handoff") }

// newJournal creates and locks a new journal folder.
func (h *Handoff) newJournal(commonDir string, p *Planned, now time.Time) (*Journal, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	id := now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
	dir := filepath.Join(h.journalRoot(), id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errorf("journal: %v", err)
	}
	fl := flock.New(filepath.Join(dir, "lock"))
	ok, err := fl.TryLock()
	if err != nil || !ok {
		os.RemoveAll(dir)
		return nil, errorf("journal: lock %s: %v", dir, err)
	}
	return &Journal{ID: id, CommonDir: commonDir, Time: now.UTC(), Plan: *p, Ref: RefPrefix + id,
		Patch:       filepath.Join(dir, "changes.patch"),
		Destination: p.Destination, dir: dir, fl: fl}, nil
}

// save writes the state file atomically at step.
func (j *Journal) save(step string) error {
	j.Step = step
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(j.dir, "state.json"), data, 0o600); err != nil {
		return errorf("journal: %v", err)
	}
	return nil
}

// unlock releases the journal's lock (the folder stays).
func (j *Journal) unlock() {
	if j.fl != nil {
		_ = j.fl.Unlock()
		j.fl = nil
	}
}

// remove deletes the journal's folder (the handoff finished or was undone)
// and releases its lock.
func (j *Journal) remove() error {
	err := os.RemoveAll(j.dir)
	j.unlock()
	return err
}

// openJournals lists the journals in <agentDir>/handoff/ whose lock is
// free, each returned locked; a journal with an unreadable state file is
// returned with Step "" (nothing was written yet: its handoff stopped
// before saving).
func (h *Handoff) openJournals() ([]*Journal, error) {
	ents, err := os.ReadDir(h.journalRoot())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Journal
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(h.journalRoot(), e.Name())
		fl := flock.New(filepath.Join(dir, "lock"))
		ok, err := fl.TryLock()
		if err != nil || !ok {
			continue // running
		}
		j := &Journal{ID: e.Name(), dir: dir, fl: fl}
		data, err := os.ReadFile(filepath.Join(dir, "state.json"))
		if err == nil {
			if err := json.Unmarshal(data, j); err != nil {
				j.unlock()
				return nil, fmt.Errorf("handoff: journal %s: %w", dir, err)
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			j.unlock()
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}
