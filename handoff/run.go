package handoff

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/workspace"
)

// Landed is where the thread runs after a handoff: what Options.Record
// receives and [Result] reports.
type Landed struct {
	To Direction `json:"to"`
	// ThreadID is the thread that moved (Options.ThreadID).
	ThreadID string `json:"threadId,omitempty"`
	// Source and Destination are the checkouts' roots.
	Source      string `json:"source"`
	Destination string `json:"destination"`
	// Cwd is the thread's new working directory: the same subdirectory
	// of Destination as it had in Source.
	Cwd string `json:"cwd"`
	// Workspace is the thread's new workspace mode: "local" or "worktree".
	Workspace string `json:"workspace"`
	// Branch is the main checkout's branch after a to-local handoff.
	Branch *Branch `json:"branch,omitempty"`
	// Worktree is the managed worktree the handoff made (ToWorktree
	// without Options.Worktree).
	Worktree *workspace.Worktree `json:"worktree,omitempty"`
	// Head is the commit both checkouts are at.
	Head string `json:"head"`
}

// Result reports a finished handoff.
type Result struct {
	Landed
	// JournalID is the journal the handoff ran under (removed when done).
	JournalID string `json:"journalId"`
	// Untracked counts the untracked files moved.
	Untracked int `json:"untracked"`
	// Warnings are for the caller to pass on (spec: result warnings),
	// e.g. journals of earlier handoffs recovered first.
	Warnings []string `json:"warnings,omitempty"`
}

// checkoutConfig are the -c options of every write into a checkout: no
// fsmonitor hook, no submodule recursion (hooks are already off in
// gitcli).
var checkoutConfig = []string{"core.fsmonitor=false", "submodule.recurse=false"}

// Run hands the thread's changes over (see the package doc): it holds the
// repository's handoff lock (<common dir>/knightcode-handoff.lock, a
// flock) throughout, so two handoffs in one repository never interleave;
// it recovers this repository's stopped handoffs first, runs every check of
// [Handoff.Plan], then saves, moves, verifies, calls o.Record and cleans
// the source, journaling each step. The source is captured while the
// checks run (the capture writes only unreferenced objects and temporary
// files; a refusal discards it), and the saved patch is written from it
// while the collision check and the journal's recovery point are made. Errors: those of Plan (nothing
// written); [*ConflictError] ReasonSubmodules for submodules with changes
// of their own (nothing written); [*RecoveryError]; git and filesystem
// errors, after which the destination is back as it was and the source
// untouched, or, when the failure came after the destination verified,
// the journal stays for [Handoff.Recover] to finish. Result.Warnings
// names untracked nested repositories, which stay in the source (no tree
// holds them).
func (h *Handoff) Run(ctx context.Context, o Options) (*Result, error) {
	var (
		warnings []string
		early    *capturing
	)
	if o.Cwd != "" {
		if repo, err := h.git.Discover(ctx, o.Cwd); err == nil {
			lctx, unlock, err := lockRepo(ctx, repo.CommonDir)
			if err != nil {
				return nil, err
			}
			defer unlock()
			ctx = lctx
			recs, err := h.Recover(ctx, RecoverOptions{CommonDir: repo.CommonDir, Record: o.Record})
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				if r.Err != nil {
					return nil, r.Err
				}
				warnings = append(warnings, r.Message())
			}
			if !repo.Bare && repo.Root != "" {
				// The source's capture runs while the plan checks both
				// sides: it writes nothing but unreferenced objects.
				early = startCapture(ctx, repo, h.patchDir())
				defer early.discard()
			}
		}
	}
	p, s, err := h.plan(ctx, &o, true)
	if err != nil {
		return nil, err
	}
	c := early
	if c == nil || c.repo.Root != s.src.Root {
		c = startCapture(ctx, s.src, h.patchDir())
		defer c.discard()
	}
	st, paths, err := c.wait()
	if err != nil {
		return nil, err
	}
	if st.Head != p.Head {
		return nil, errorf("the source's HEAD moved during the handoff's checks")
	}
	if len(st.DirtySubmodules) > 0 {
		return nil, conflict(ReasonSubmodules, st.DirtySubmodules, "submodules hold changes of their own, which a handoff cannot move")
	}
	if len(st.NestedRepositories) > 0 {
		warnings = append(warnings, nestedWarning(s.src.Root, st.NestedRepositories, "stayed"))
	}
	if p.Branch != nil && p.Branch.Note != "" {
		warnings = append(warnings, p.Branch.Note)
	}
	p.Paths = paths
	if err := sourceCollisions(ctx, s.src, paths, st.UntrackedPaths); err != nil {
		return nil, err
	}
	if s.dst != nil {
		if err := collisionsOf(ctx, p, s.src, s.dst, s.dstTree, st); err != nil {
			return nil, err
		}
	}
	// The oplog journal's recovery point is the saved state.
	oj, err := h.oplog.Begin(ctx, s.src, gitstate.Action{Name: JournalAction, Full: true, State: st, External: true})
	if err != nil {
		return nil, err
	}
	defer oj.Close()
	j, err := h.newJournal(oj, s.src.CommonDir, p, st, time.Now())
	if err != nil {
		return nil, errors.Join(err, oj.Done(ctx))
	}
	if err := h.runStep("begun"); err != nil { // the journal and its recovery point exist; no patch, no step yet
		return nil, errors.Join(err, h.drop(ctx, j))
	}
	if err := h.saveChanges(j, c); err != nil {
		return nil, errors.Join(err, h.drop(ctx, j))
	}
	if err := h.runStep(StepSaved); err != nil {
		return nil, errors.Join(err, h.drop(ctx, j))
	}
	var created *workspace.Created
	if p.CreateWorktree {
		created, err = h.ws.Create(ctx, workspace.CreateOptions{Cwd: s.src.Root, Root: o.WorktreesRoot,
			ThreadID: o.ThreadID, Environment: o.Environment})
		if err != nil {
			return nil, errors.Join(err, h.drop(ctx, j))
		}
		j.Destination, j.CreatedWorktree = created.Worktree.Path, true
		// Killed from here until StepMoving is saved, the journal is at
		// StepSaved without the worktree's path: recovery finds the
		// worktree made for the thread after the journal began
		// (orphanWorktree) and deletes it.
		if err := h.runStep("made"); err != nil {
			return nil, h.undo(ctx, j, err)
		}
		if s.dst, err = h.git.Discover(ctx, created.Worktree.Path); err != nil {
			return nil, h.undo(ctx, j, err)
		}
	}
	if err := j.save(StepMoving); err != nil {
		return nil, h.undo(ctx, j, err)
	}
	if err := h.runStep(StepMoving); err != nil {
		return nil, h.undo(ctx, j, err)
	}
	if err := h.move(ctx, j, s.src, s.dst, c.changes()); err != nil {
		return nil, h.undo(ctx, j, err)
	}
	if err := h.runStep("moved"); err != nil {
		return nil, h.undo(ctx, j, err)
	}
	if err := h.verify(ctx, s.dst, j.Saved); err != nil {
		return nil, h.undo(ctx, j, err)
	}
	j.Landed = landed(p, j, s.dst.Root)
	if created != nil {
		w := created.Worktree
		j.Landed.Worktree = &w
	}
	if err := os.MkdirAll(j.Landed.Cwd, 0o755); err != nil {
		return nil, errorf("thread cwd: %v", err)
	}
	if err := j.save(StepVerified); err != nil {
		return nil, err
	}
	res, err := h.forward(ctx, j, o.Record, &fastClean{src: s.src, kept: c.kept, changes: c.changes()})
	if err != nil {
		return nil, err
	}
	res.Untracked = st.Untracked
	if o.Changes != nil {
		names, err := untouched(ctx, s.src, paths, o.Changes)
		if w := untouchedWarning(names, err, "moved"); w != "" {
			warnings = append(warnings, w)
		}
	}
	if slices.ContainsFunc(p.Paths, isGitignore) {
		if w, err := leftUntracked(ctx, s.src); err != nil {
			warnings = append(warnings, fmt.Sprintf("listing the untracked files of %s after the handoff: %v", s.src.Root, err))
		} else if w != "" {
			warnings = append(warnings, w)
		}
	}
	res.Warnings = append(warnings, res.Warnings...)
	return res, nil
}

// nestedWarning says that the untracked nested repositories nested of
// the source at root stay there (verb: "stayed", or "stay" for a plan).
func nestedWarning(root string, nested []string, verb string) string {
	return fmt.Sprintf("%s %s in %s: a repository inside the checkout that git does not track (%s) is not a file a handoff moves; move it yourself if the work needs it",
		plural(len(nested), "a nested repository", "nested repositories"), verb, root, strings.Join(nested, ", "))
}

// Warnings are what a handoff as planned would warn of: a branch prefix
// setting that was not used (Branch.Note), the source's untracked
// nested repositories, which stay where they are, and the moved paths no
// turn of the thread changed (Options.Changes).
func (p *Planned) Warnings() []string {
	var out []string
	if p.Branch != nil && p.Branch.Note != "" {
		out = append(out, p.Branch.Note)
	}
	if len(p.Nested) > 0 {
		out = append(out, nestedWarning(p.Source, p.Nested, "would stay"))
	}
	if w := untouchedWarning(p.untouched, p.untouchedErr, "would move"); w != "" {
		out = append(out, w)
	}
	return out
}

// MaxUntouchedNamed is how many of the moved paths no turn of the thread
// changed a warning names; it counts them all.
const MaxUntouchedNamed = 20

// untouched returns the paths of moved that c says no turn of the thread
// changed: those c.Paths does not list and no pair of c.Trees differs in
// (asked of git only when some are left, in one process), sorted; nil
// when c is nil.
func untouched(ctx context.Context, repo *gitcli.Repo, moved []string, c *Changes) ([]string, error) {
	if c == nil || len(moved) == 0 {
		return nil, nil
	}
	left := make(map[string]bool, len(moved))
	for _, p := range moved {
		left[p] = true
	}
	for _, p := range c.Paths {
		delete(left, p)
	}
	if len(left) > 0 && len(c.Trees) > 0 {
		err := repo.DiffTreeNamesPairs(ctx, c.Trees, func(p string) error {
			delete(left, p)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(left) == 0 {
		return nil, nil
	}
	return slices.Sorted(maps.Keys(left)), nil
}

// untouchedWarning says that the paths of untouched (sorted), which no
// turn of the thread changed, move with it (verb "moved", or "would move"
// for a plan): their count and the first MaxUntouchedNamed of them; or,
// with err, that they could not be told. "" when neither.
func untouchedWarning(untouched []string, err error, verb string) string {
	if err != nil {
		return fmt.Sprintf("could not tell which of the paths the handoff %s this thread's turns changed: %v", verb, err)
	}
	if len(untouched) == 0 {
		return ""
	}
	names, more := untouched, ""
	if len(names) > MaxUntouchedNamed {
		names, more = names[:MaxUntouchedNamed], fmt.Sprintf(" and %d more", len(untouched)-MaxUntouchedNamed)
	}
	return fmt.Sprintf("%s that no turn of this thread changed %s with it (a handoff moves every uncommitted change of the checkout, another tool's or person's too): %s%s",
		plural(len(untouched), "1 path", "paths"), verb, strings.Join(names, ", "), more)
}

// plural is one when n is 1, else the count and many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// landed is where the thread runs once the move verified.
func landed(p *Planned, j *Journal, dst string) *Landed {
	l := &Landed{To: p.To, ThreadID: p.ThreadID, Source: p.Source, Destination: dst, Branch: p.Branch, Head: p.Head,
		Cwd: filepath.Join(dst, filepath.FromSlash(p.Prefix))}
	l.Workspace = "local"
	if p.To == ToWorktree {
		l.Workspace = "worktree"
	}
	return l
}

// fastClean is what a handoff that ran in this process (fenced by the
// caller) knows of its source: the source's cleanup skips the capture
// before it, since its one-way merge itself refuses any file that changed
// since the capture.
type fastClean struct {
	src *gitcli.Repo
	// kept is the capture's worktree index (nil: none was kept).
	kept *keptIndex
	// changes are the saved changes as the capture listed them.
	changes *changes
}

// forward finishes a verified handoff: Record, then the source's cleanup
// (fast when not nil: see fastClean).
func (h *Handoff) forward(ctx context.Context, j *Journal, record func(context.Context, *Landed) error, fast *fastClean) (*Result, error) {
	if j.Step == StepVerified {
		if err := h.runStep(StepVerified); err != nil {
			return nil, err
		}
		if record != nil {
			if err := record(ctx, j.Landed); err != nil {
				return nil, err
			}
		}
		if err := j.save(StepRecorded); err != nil {
			return nil, err
		}
		if err := h.runStep(StepRecorded); err != nil {
			return nil, err
		}
	}
	var src *gitcli.Repo
	if fast != nil {
		src = fast.src
	} else {
		var err error
		if src, err = h.git.Discover(ctx, j.Plan.Source); err != nil {
			return nil, err
		}
	}
	if j.Step != StepCleaning {
		if err := j.save(StepCleaning); err != nil {
			return nil, err
		}
	}
	if err := h.runStep(StepCleaning); err != nil {
		return nil, err
	}
	if paths, err := h.cleanSource(ctx, j, src, fast); err != nil {
		return nil, err
	} else if len(paths) > 0 {
		return nil, h.needsHelp(j, paths, "the source %s holds edits made during the handoff", src.Root)
	}
	if err := h.runStep("cleaned"); err != nil {
		return nil, err
	}
	if err := j.remove(ctx); err != nil {
		return nil, err
	}
	return &Result{Landed: *j.Landed, JournalID: j.ID}, nil
}

// saveChanges puts the binary patch HEAD -> worktree tree, written from
// the capture (c), next to the recovery point (the saved commit, written
// by the oplog journal's Begin), then saves the journal at StepSaved.
func (h *Handoff) saveChanges(j *Journal, c *capturing) error {
	if err := c.savePatch(j.Patch); err != nil {
		return err
	}
	return j.save(StepSaved)
}

// writePatch writes the binary patch from tree from to tree to at path
// (not synced: [capturing.savePatch] syncs it where it stays).
func writePatch(ctx context.Context, repo *gitcli.Repo, path, from, to string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return errorf("journal: %v", err)
	}
	err = repo.DiffTreeBinaryPatch(ctx, from, to, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// move writes the destination: HEAD first (a to-local handoff detaches
// the worktree, moves the branch forward or creates it, and points the
// main checkout's HEAD at it; a to-worktree handoff detaches the worktree
// at the source's HEAD), then the tree transplant (known: the saved
// changes as the capture listed them, nil when not at hand).
func (h *Handoff) move(ctx context.Context, j *Journal, src, dst *gitcli.Repo, known *changes) error {
	p := &j.Plan
	msg := "knightcode handoff " + j.ID
	// The tree the destination's files and index hold (it is clean).
	_, oldTree, err := dst.Head(ctx)
	if err != nil {
		return err
	}
	// Every ref moves through the oplog journal, which records it first
	// so that a rollback puts it back.
	switch p.To {
	case ToLocal:
		if p.SourceBranch != "" {
			if err := j.oj.UpdateRef(ctx, src, "HEAD", gitstate.RefValue{OID: p.Head}, msg); err != nil {
				return err
			}
			if err := h.runStep("detached"); err != nil {
				return err
			}
		}
		b := p.Branch
		if b.Old != b.New {
			// The branch must still be where the plan found it.
			cur, _, err := dst.VerifyRef(ctx, b.Ref)
			if err != nil {
				return err
			}
			if cur != b.Old {
				return conflict(ReasonBranchExists, []string{b.Name}, "the branch %s moved during the handoff", b.Name)
			}
			if err := j.oj.UpdateRef(ctx, dst, b.Ref, gitstate.RefValue{OID: b.New}, msg); err != nil {
				return err
			}
		}
		if p.DestinationBranch != b.Ref {
			if err := j.oj.UpdateRef(ctx, dst, "HEAD", gitstate.RefValue{Target: b.Ref}, msg); err != nil {
				return err
			}
		}
	case ToWorktree:
		if err := j.oj.UpdateRef(ctx, dst, "HEAD", gitstate.RefValue{OID: p.Head}, msg); err != nil {
			return err
		}
	}
	if err := h.runStep("head"); err != nil {
		return err
	}
	return transplant(ctx, j, dst, oldTree, known)
}

// transplant writes the working tree of dst (clean at the tree oldTree;
// its HEAD now at s.Head) from s.WorktreeTree, then its index from
// s.IndexTree with the intent-to-add entries, through the journal
// (gitstate.Journal.WriteCheckout): the paths oldTree and the worktree
// tree differ in are written or removed, refused (nothing written) when
// one of them changed since the plan or a path the move adds is taken by
// a file; the new index is dst's index after `read-tree -m <index tree>`
// (a one-way merge: entries whose object is unchanged keep their stat
// data, refreshed by the check), a refresh (the files written whose
// content is their entry's get their stat data; those with unstaged
// changes keep none, as git leaves them) and `add -N`. When oldTree is
// the saved HEAD's tree, what to write is the capture's listing (known,
// when not nil) rather than another diff-tree.
func transplant(ctx context.Context, j *Journal, dst *gitcli.Repo, oldTree string, known *changes) error {
	s := j.Saved
	var m treeMove
	if known != nil && oldTree == s.HeadTree {
		m = moveOf(known.raw, false)
	} else {
		var err error
		if m, err = moveBetween(ctx, dst, oldTree, s.WorktreeTree); err != nil {
			return err
		}
	}
	if err := m.convertWith(ctx, dst, s.WorktreeTree); err != nil {
		return err
	}
	w := m.w
	removed := slices.Clone(w.Remove)
	slices.Sort(removed)
	w.Check = unchanged(dst.Root, m.paths, m.added, removed)
	w.Index = func(ctx context.Context, tmp *gitcli.Repo) error {
		if err := tmp.ReadTree(ctx, s.IndexTree, gitcli.ReadTreeOptions{Merge: true, IndexOnly: true}); err != nil {
			return err
		}
		if err := tmp.RefreshIndex(ctx); err != nil {
			return err
		}
		if len(s.IntentToAdd) > 0 {
			return tmp.AddIntentToAdd(ctx, s.IntentToAdd)
		}
		return nil
	}
	err := j.oj.WriteCheckout(ctx, dst.WithConfig(checkoutConfig...), w)
	var ce *changedError
	if errors.As(err, &ce) {
		return conflict(ReasonLocalChanges, ce.paths, "files in %s changed during the handoff", dst.Root)
	}
	if fe, ok := errors.AsType[*gitstate.FileChangedError](err); ok {
		return conflict(ReasonLocalChanges, []string{fe.Path}, "%s in %s changed while the handoff wrote it; the handoff was undone and the change kept", fe.Path, dst.Root)
	}
	return err
}

// matches reports whether a capture of the checkout gives the saved HEAD,
// trees and intent-to-add entries.
func (h *Handoff) matches(ctx context.Context, repo *gitcli.Repo, s Saved) (bool, error) {
	c, err := gitstate.Complete(ctx, repo)
	if err != nil {
		return false, err
	}
	return capturedAs(c, s), nil
}

func capturedAs(c *gitstate.State, s Saved) bool {
	return c.Head == s.Head && c.IndexTree == s.IndexTree && c.WorktreeTree == s.WorktreeTree &&
		slices.Equal(c.IntentToAdd, s.IntentToAdd)
}

// verify checks that a capture of the destination gives the saved state
// once the move wrote it. A destination whose files or index differ was
// changed by someone else while the handoff wrote it: a *ConflictError
// localChanges naming the paths (the rollback keeps those changes).
func (h *Handoff) verify(ctx context.Context, dst *gitcli.Repo, s Saved) error {
	c, err := gitstate.Complete(ctx, dst)
	if err != nil || capturedAs(c, s) {
		return err
	}
	var paths []string
	for _, pair := range [][2]string{{c.WorktreeTree, s.WorktreeTree}, {c.IndexTree, s.IndexTree}} {
		if pair[0] == pair[1] {
			continue
		}
		names, err := dst.DiffTreeNames(ctx, pair[0], pair[1])
		if err != nil {
			return err
		}
		paths = append(paths, names...)
	}
	if len(paths) == 0 {
		return errorf("the destination %s does not capture to the saved state after the move (HEAD %s, intent-to-add %v)", dst.Root, c.Head, c.IntentToAdd)
	}
	slices.Sort(paths)
	return conflict(ReasonLocalChanges, slices.Compact(paths),
		"files in %s changed while the handoff wrote it; the handoff was undone and those changes kept", dst.Root)
}

// cleanSource brings the source (HEAD at s.Head) back to clean, removing
// exactly the saved changes, through the journal
// (gitstate.Journal.WriteCheckout). When it still captures to the saved
// trees: the paths the worktree tree and HEAD's tree differ in are
// written as HEAD has them or removed, refused (nothing written) when one
// of them no longer matches the worktree tree, checked on an index that
// is the worktree tree with every entry's stat data matching its file
// (the capture's own worktree index, fast.kept, when the real index is
// still the one captured; else a copy of the index after `read-tree -m
// -i <worktree tree>` and a refresh); the new index is that one after
// `read-tree -m <HEAD's tree>` and a refresh. Otherwise (a cleanup that
// stopped part-way) every path must be at its saved or its HEAD version:
// the paths at neither are returned and nothing is written; else the
// paths not at HEAD's version are written as HEAD has them or removed,
// and the index becomes HEAD's tree (`read-tree --reset`, a refresh).
func (h *Handoff) cleanSource(ctx context.Context, j *Journal, src *gitcli.Repo, fast *fastClean) ([]string, error) {
	s := j.Saved
	wt := src.WithConfig(checkoutConfig...)
	exact := func(kept *keptIndex) ([]string, error) {
		if s.WorktreeTree == s.HeadTree && s.IndexTree == s.HeadTree && len(s.IntentToAdd) == 0 {
			return nil, nil
		}
		var m treeMove
		if fast != nil && fast.changes != nil {
			m = moveOf(fast.changes.raw, true)
		} else {
			var err error
			if m, err = moveBetween(ctx, src, s.WorktreeTree, s.HeadTree); err != nil {
				return nil, err
			}
		}
		if err := m.convertWith(ctx, src, s.HeadTree); err != nil {
			return nil, err
		}
		w := m.w
		check := unchanged(src.Root, m.paths, nil, nil)
		if kept.usable(src.IndexPath) {
			w.From, w.FromIndex = kept.path, kept.real
			w.Check = check
		} else {
			w.Check = func(ctx context.Context, tmp *gitcli.Repo) error {
				if err := tmp.ReadTree(ctx, s.WorktreeTree, gitcli.ReadTreeOptions{Merge: true, IndexOnly: true}); err != nil {
					return err
				}
				return check(ctx, tmp)
			}
		}
		w.Index = func(ctx context.Context, tmp *gitcli.Repo) error {
			if err := tmp.ReadTree(ctx, s.HeadTree, gitcli.ReadTreeOptions{Merge: true, IndexOnly: true}); err != nil {
				return err
			}
			return tmp.RefreshIndex(ctx)
		}
		return nil, j.oj.WriteCheckout(ctx, wt, w)
	}
	if fast != nil {
		if head, _, err := src.Head(ctx); err != nil || head != s.Head {
			return []string{"HEAD"}, err
		}
		paths, err := exact(fast.kept)
		if err == nil {
			return paths, nil
		}
		// A file changed since the capture (or the index did): the
		// careful path below sorts it out.
	}
	c, err := gitstate.Complete(ctx, src)
	if err != nil {
		return nil, err
	}
	if c.Head != s.Head {
		return []string{"HEAD"}, nil
	}
	if c.IndexTree == s.IndexTree && c.WorktreeTree == s.WorktreeTree && slices.Equal(c.IntentToAdd, s.IntentToAdd) {
		if paths, err := exact(nil); !errors.Is(err, errChangedMeanwhile) && !errors.Is(err, gitstate.ErrFileChanged) {
			return paths, err
		}
		// Changed since this capture: decided below, path by path.
		if c, err = gitstate.Complete(ctx, src); err != nil {
			return nil, err
		}
	}
	if c.WorktreeTree == s.HeadTree && c.IndexTree == s.HeadTree && len(c.IntentToAdd) == 0 {
		return nil, nil
	}
	vsSaved, err := src.DiffTreeNames(ctx, c.WorktreeTree, s.WorktreeTree)
	if err != nil {
		return nil, err
	}
	m, err := moveBetween(ctx, src, c.WorktreeTree, s.HeadTree)
	if err != nil {
		return nil, err
	}
	if neither := intersect(vsSaved, m.paths); len(neither) > 0 {
		return neither, nil
	}
	if err := m.convertWith(ctx, src, s.HeadTree); err != nil {
		return nil, err
	}
	w := m.w
	w.Index = func(ctx context.Context, tmp *gitcli.Repo) error {
		if err := tmp.ReadTree(ctx, s.HeadTree, gitcli.ReadTreeOptions{Reset: true}); err != nil {
			return err
		}
		return tmp.RefreshIndex(ctx)
	}
	return nil, j.oj.WriteCheckout(ctx, wt, w)
}

// drop ends a handoff before anything moved: its patch and journal go
// (the recovery point stays, under the oplog's retention).
func (h *Handoff) drop(ctx context.Context, j *Journal) error {
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	return j.remove(ctx)
}

// rollback undoes a handoff that did not verify: a worktree the handoff
// made is deleted; every ref it moved (the HEADs, a branch created or
// moved forward) goes back, newest first, while still where the handoff
// put it (gitstate.Journal.RestoreRefs); the destination's files that
// are as the handoff writes them go back to its old HEAD's (a file at
// neither version, edited while the handoff ran, is left as it is) and
// its index to its old HEAD's tree; then the patch and the journal go.
// The source's files and index were not written.
func (h *Handoff) rollback(ctx context.Context, j *Journal) error {
	ctx, cancel := cleanupCtx(ctx)
	defer cancel()
	p := &j.Plan
	msg := "knightcode handoff " + j.ID + " undone"
	var kept error
	if j.CreatedWorktree && j.Destination != "" {
		// Files written into the new worktree while the handoff ran are
		// not the handoff's: its snapshot keeps them (never forgotten).
		foreign, ferr := h.foreignFiles(ctx, j)
		d, err := h.ws.Delete(ctx, j.Destination, workspace.DeleteOptions{})
		if err != nil {
			return err
		}
		if ferr == nil && len(foreign) == 0 {
			if _, err := h.ws.Forget(ctx, j.Destination); err != nil {
				return err
			}
		} else if d.Snapshot != "" {
			kept = &KeptWorktreeError{Path: j.Destination, Snapshot: d.Snapshot, Paths: foreign, CheckErr: ferr}
		}
	}
	if _, err := j.oj.RestoreRefs(ctx, h.git, msg); err != nil {
		return err
	}
	if !j.CreatedWorktree && j.Destination != "" {
		dst, err := h.git.Discover(ctx, j.Destination)
		if err != nil {
			return err
		}
		oldTree, err := dst.TreeOf(ctx, p.DestinationHead)
		if err != nil {
			return err
		}
		// The destination was clean: a path at the version the handoff
		// writes goes back to the old tree's (an untracked file there is
		// the handoff's own); a path at neither is an edit made while the
		// handoff ran and stays as it is; the index becomes the old tree.
		c, err := gitstate.Complete(ctx, dst)
		if err != nil {
			return err
		}
		m, err := moveBetween(ctx, dst, c.WorktreeTree, oldTree)
		if err != nil {
			return err
		}
		notMoved, err := dst.DiffTreeNames(ctx, c.WorktreeTree, j.Saved.WorktreeTree)
		if err != nil {
			return err
		}
		if err := m.convertWith(ctx, dst, oldTree); err != nil {
			return err
		}
		w := m.w
		edited := map[string]bool{}
		for _, p := range notMoved {
			edited[p] = true
			delete(w.Write, p)
		}
		w.Remove = slices.DeleteFunc(w.Remove, func(p string) bool { return edited[p] })
		w.RemoveLinks = slices.DeleteFunc(w.RemoveLinks, func(p string) bool { return edited[p] })
		w.Index = func(ctx context.Context, tmp *gitcli.Repo) error {
			if err := tmp.ReadTree(ctx, oldTree, gitcli.ReadTreeOptions{Reset: true}); err != nil {
				return err
			}
			return tmp.RefreshIndex(ctx)
		}
		if err := j.oj.WriteCheckout(ctx, dst.WithConfig(checkoutConfig...), w); err != nil {
			return err
		}
	}
	if err := h.drop(ctx, j); err != nil {
		return err
	}
	return kept
}

// undo rolls the handoff back after err (rollback) and returns err with
// what the rollback adds: its own failure, or the snapshot it kept of the
// worktree the handoff made, which a *ConflictError's output and paths
// then carry too, so that the client's message names the ref.
func (h *Handoff) undo(ctx context.Context, j *Journal, err error) error {
	rerr := h.rollback(ctx, j)
	if kept, ok := errors.AsType[*KeptWorktreeError](rerr); ok {
		if ce, ok := errors.AsType[*ConflictError](err); ok {
			ce.Output += "; " + kept.Error()
			ce.Paths = slices.Compact(slices.Sorted(slices.Values(slices.Concat(ce.Paths, kept.Paths))))
		}
	}
	return errors.Join(err, rerr)
}

// foreignFiles lists the paths of the worktree the handoff made (its
// HEAD checked out at p.Head, then the saved worktree tree written) that
// hold neither version: files written there by someone else while the
// handoff ran.
func (h *Handoff) foreignFiles(ctx context.Context, j *Journal) ([]string, error) {
	dst, err := h.git.Discover(ctx, j.Destination)
	if err != nil {
		return nil, err
	}
	c, err := gitstate.Complete(ctx, dst)
	if err != nil {
		return nil, err
	}
	notSaved, err := dst.DiffTreeNames(ctx, c.WorktreeTree, j.Saved.WorktreeTree)
	if err != nil || len(notSaved) == 0 {
		return nil, err
	}
	notHead, err := dst.DiffTreeNames(ctx, c.WorktreeTree, j.Saved.HeadTree)
	if err != nil {
		return nil, err
	}
	return intersect(notSaved, notHead), nil
}

// intersect returns the strings of a that b holds too, in a's order.
func intersect(a, b []string) []string {
	b = slices.Clone(b)
	slices.Sort(b)
	var out []string
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); ok {
			out = append(out, s)
		}
	}
	return out
}

// KeptWorktreeError is what a rollback that finished returns when it
// deleted the worktree its handoff had made but kept its snapshot: files
// were written there while the handoff ran (Paths), which are neither the
// handoff's nor the checkout's; the snapshot ref's tree holds them (`git
// restore --source=<Snapshot> -- <path>`).
type KeptWorktreeError struct {
	Path, Snapshot string
	Paths          []string
	// CheckErr, when set, is why the worktree could not be compared with
	// the handoff's versions (Paths is empty then): the snapshot is kept
	// in case.
	CheckErr error
}

func (e *KeptWorktreeError) Error() string {
	if e.CheckErr != nil {
		return fmt.Sprintf("the worktree %s the handoff made was deleted, and its snapshot %s kept: it could not be checked for files written while the handoff ran (%v)",
			e.Path, e.Snapshot, e.CheckErr)
	}
	return fmt.Sprintf("the worktree %s the handoff made held files written while it ran (%s); it was deleted, and its snapshot %s keeps them: `git restore --source=%s -- <path>` brings one back",
		e.Path, strings.Join(e.Paths, ", "), e.Snapshot, e.Snapshot)
}

// needsHelp marks the journal as needing the user and returns the
// *RecoveryError.
func (h *Handoff) needsHelp(j *Journal, paths []string, format string, args ...any) *RecoveryError {
	j.Paths = paths
	_ = j.save(StepNeedsHelp)
	return recoveryError(j, format, args...)
}

func recoveryError(j *Journal, format string, args ...any) *RecoveryError {
	text := instructions(j.Ref, j.Patch)
	if l := j.Landed; l != nil {
		// The destination verified: nothing is missing there, and what
		// waits is the source's cleanup, which would overwrite the edits.
		text = fmt.Sprintf("Nothing is lost and nothing needs restoring: the handoff's changes are in %s. %s still holds them too, with edits made while the handoff ran to %s. Keep those edits elsewhere if you want them (or discard them: `git -C %s restore --staged --worktree -- <path>`); the next handoff or thread/resume then finishes cleaning %s. ",
			l.Destination, j.Plan.Source, strings.Join(j.Paths, ", "), j.Plan.Source, j.Plan.Source) + text
	}
	return &RecoveryError{Conflict: conflict(ReasonRecoveryRequired, j.Paths, format, args...),
		ID: j.ID, Ref: j.Ref, Patch: j.Patch, Instructions: text}
}

func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}
