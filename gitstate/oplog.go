package gitstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// OplogRefPrefix is where recovery points live: one ref per action,
// refs/knightcode/oplog/<UTC time>. Refs keep their commits (and every
// blob of the state they record) from `git gc`.
const OplogRefPrefix = "refs/knightcode/oplog/"

// Retention defaults (settings recovery.keep and recovery.maxAgeDays).
const (
	// DefaultKeep is how many recovery points a repository keeps.
	DefaultKeep = 200
	// DefaultMaxAge is how long a recovery point is kept (14 days).
	DefaultMaxAge = 14 * 24 * time.Hour
)

// journalVersion is the version of the journal file format.
const journalVersion = 1

// Journal states, in order. A journal found with its lock free is
// unfinished: [Oplog.Recover] rolls it back (or, in state done, forward:
// every write had landed).
const (
	// StateRecording: the journal exists, its recovery point is being
	// written; nothing of the user's state has been written.
	StateRecording = "recording"
	// StateApplying: the recovery point exists; writes may have started.
	StateApplying = "applying"
	// StateDone: every write landed; the journal is about to be removed.
	StateDone = "done"
)

// Oplog is the operation log of the actions that write a user's working
// tree or index (revert, reapply, stage, unstage; handoff and branch
// switch): its journals live in Dir (<agentDir>/oplog, one <id>.json per
// running action, flock-held through <id>.lock while it runs) and its
// recovery points under [OplogRefPrefix] of each repository. The zero
// values of Keep and MaxAge mean [DefaultKeep] and [DefaultMaxAge].
//
// An Oplog is safe for concurrent use; actions on one repository must
// still be serialized by the caller (gitcli.LockCommonDir), as the
// journal does not lock the repository itself.
type Oplog struct {
	// Dir is the journal folder; required.
	Dir string
	// Keep is the number of recovery points kept per repository
	// (setting recovery.keep); <= 0 means DefaultKeep.
	Keep int
	// MaxAge is how long a recovery point is kept (setting
	// recovery.maxAgeDays); <= 0 means DefaultMaxAge.
	MaxAge time.Duration
	// StepHook, when set, is called with the name of each step a journal
	// reaches ("locked", "recorded", "checkout#3", "index-linked", ...,
	// "unjournaled" once its journal file is removed), before the step's
	// write. Tests use it to crash a process at a chosen point.
	StepHook func(step string)
	// Now, when set, is the clock (tests); nil means time.Now.
	Now func() time.Time

	pruneCount atomic.Int64
}

// pruneEvery is how often Done prunes: on an Oplog's first action and
// every pruneEvery-th after it (a for-each-ref per action is not needed
// to keep the count within Keep).
const pruneEvery = 16

func (o *Oplog) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Oplog) keep() int {
	if o.Keep > 0 {
		return o.Keep
	}
	return DefaultKeep
}

func (o *Oplog) maxAge() time.Duration {
	if o.MaxAge > 0 {
		return o.MaxAge
	}
	return DefaultMaxAge
}

// Entry is a path's entry in a tree, an index or the working tree: octal
// mode and object id; Mode "" means the path is absent.
type Entry struct {
	Mode string `json:"mode,omitempty"`
	OID  string `json:"oid,omitempty"`
}

// Absent reports an absent entry.
func (e Entry) Absent() bool { return e.Mode == "" || e.Mode == "0" || e.Mode == "000000" }

func (e Entry) norm() Entry {
	if e.Absent() {
		return Entry{}
	}
	return e
}

// PathRecord is one path an action writes, as the journal records it:
// the working-tree and index entries before the action, and the entries
// the action writes (nil: that side is not written). Worktree entries are
// the path's content as git would add it (mode, blob id through the
// clean filters), so they compare with a tree entry.
type PathRecord struct {
	Path           string `json:"path"`
	WorktreeBefore Entry  `json:"worktreeBefore"`
	IndexBefore    Entry  `json:"indexBefore"`
	WorktreeAfter  *Entry `json:"worktreeAfter,omitempty"`
	IndexAfter     *Entry `json:"indexAfter,omitempty"`
	// IndexIntentToAdd marks an index entry before that was intent-to-add
	// (`git add -N`), which a rollback records again as such.
	IndexIntentToAdd bool `json:"indexIntentToAdd,omitempty"`
}

// Action describes what a journal is for.
type Action struct {
	// Name names the action ("revert", "reapply", "stage", "unstage",
	// "handoff", "switch", ...); it goes into the journal and the
	// recovery point's message.
	Name string
	// Paths are the repository-relative, /-separated paths the action may
	// touch. With Full unset the recovery point records only these (their
	// working-tree content and the whole index).
	Paths []string
	// Full records the whole state in the recovery point: HEAD, the index
	// and the working tree with every untracked, non-ignored file
	// ([Complete]). Whole-scope and turn actions set it.
	Full bool
	// State, with Full, is the capture the caller already made of the
	// checkout (under its lock, nothing written since): the recovery
	// point records it instead of capturing again.
	State *State
	// Head and HeadTree, with HeadKnown, are HEAD's commit ("" when
	// unborn) and tree as the caller read them under its lock: the
	// recovery point stands on them instead of HEAD read again.
	Head, HeadTree string
	HeadKnown      bool
	// External marks an action that finishes its own journals
	// (handoff): [Oplog.Recover] leaves them alone and
	// [Oplog.RecoverExternal] hands them to the action's resolver.
	External bool
	// EndsInCommit marks an action whose last step is git committing the
	// index it wrote (git/commit's staging, then the user's `git
	// commit`): a recovery that finds HEAD's commit moved since Begin
	// keeps the action (rolled forward, Outcome completed) instead of
	// unstaging what the commit recorded.
	EndsInCommit bool
}

// journalFile is the journal as written to <Dir>/<id>.json.
type journalFile struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Action  string `json:"action"`
	Full    bool   `json:"full,omitempty"`
	// Repository: the work tree, its git dir, common dir and index file.
	Root      string `json:"root"`
	GitDir    string `json:"gitDir"`
	CommonDir string `json:"commonDir"`
	IndexPath string `json:"indexPath"`
	// Ref and Commit are the recovery point (set once it is written);
	// Head is HEAD at the start ("" when unborn).
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Head   string `json:"head,omitempty"`
	// WorktreeTree and IndexTree are the recovery point's trees.
	WorktreeTree string `json:"worktreeTree,omitempty"`
	IndexTree    string `json:"indexTree,omitempty"`
	// Stage is the folder (on the work tree's file system) where files
	// are written before being renamed into place.
	Stage   string       `json:"stage"`
	State   string       `json:"state"`
	Step    string       `json:"step,omitempty"`
	Created time.Time    `json:"created"`
	Paths   []PathRecord `json:"paths,omitempty"`
	// External, Data and Refs serve actions that finish their own
	// journals ([Action.External]): their state (Data, any JSON, with
	// Step) and the refs they moved ([Journal.UpdateRef]).
	External     bool            `json:"external,omitempty"`
	EndsInCommit bool            `json:"endsInCommit,omitempty"`
	Data         json.RawMessage `json:"data,omitempty"`
	Refs         []RefRecord     `json:"refs,omitempty"`
	// Checkouts are the checkouts an external action wrote
	// ([Journal.WriteCheckout]), in order.
	Checkouts []CheckoutRecord `json:"checkouts,omitempty"`
}

// Journal is one running action: its journal file (held locked), its
// recovery point, and the writes it makes to the working tree and the
// index (see [Journal.Checkout], [Journal.Remove], [Journal.WriteIndex],
// [Journal.ApplyWorktree]). Every write goes through it so that a crash at
// any instant leaves each path at its before or its after entry, with the
// journal saying which. Use: [Oplog.Begin], the writes, then
// [Journal.Done] or [Journal.Abort]; [Journal.Close] always.
type Journal struct {
	o     *Oplog
	repo  *gitcli.Repo
	f     journalFile
	lock  *flock.Flock
	work  string // <Dir>/<id>.d: temporary indexes
	byP   map[string]int
	steps map[string]int
	point map[string]bool // the paths a partial recovery point records
	// pointWT is the working-tree entry of each path of a partial
	// recovery point, as recorded in it (absent: Mode "").
	pointWT map[string]Entry
	// indexRead marks the records whose IndexBefore was read (expect).
	indexRead map[string]bool
	ended     bool
	// Recovered lists what the recovery of earlier unfinished journals of
	// this repository, run by Begin, did (also saved for the next
	// [Oplog.Recover] of the checkout).
	Recovered []RecoveryReport
}

// ID is the journal's id (its file is <Dir>/<ID>.json).
func (j *Journal) ID() string { return j.f.ID }

// Ref is the recovery point's ref ("" until Begin wrote it).
func (j *Journal) Ref() string { return j.f.Ref }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (o *Oplog) jsonPath(id string) string   { return filepath.Join(o.Dir, id+".json") }
func (o *Oplog) lockPath(id string) string   { return filepath.Join(o.Dir, id+".lock") }
func (o *Oplog) workPath(id string) string   { return filepath.Join(o.Dir, id+".d") }
func (o *Oplog) reportPath(id string) string { return filepath.Join(o.Dir, id+".report.json") }

// Begin starts an action on repo (a work tree: repo.Root set), which the
// caller holds locked. It first recovers this checkout's unfinished
// journals (their reports go to [Journal.Recovered] and are kept for the
// next [Oplog.Recover]); then, before anything of the user's is written:
//
//  1. creates and flock-holds <Dir>/<id>.lock and writes <Dir>/<id>.json
//     (atomically) in state recording;
//  2. records the recovery point: a commit in git's stash shape
//     ([WriteSnapshot]: parent 1 HEAD, parent 2 the index commit, its
//     tree the working tree) of the whole state when a.Full, else of the
//     index and the working-tree content of a.Paths only, under
//     refs/knightcode/oplog/<UTC time>;
//  3. writes the journal again in state applying, naming the ref.
//
// Errors: *gitcli.Error when git fails, filesystem errors for the journal;
// nothing of the user's has been written then.
func (o *Oplog) Begin(ctx context.Context, repo *gitcli.Repo, a Action) (*Journal, error) {
	if o.Dir == "" {
		return nil, errors.New("gitstate: oplog folder not configured")
	}
	if repo.Root == "" {
		return nil, errors.New("gitstate: an action needs a work tree")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("gitstate: oplog: %w", err)
	}
	recovered, err := o.recoverRepo(ctx, repo)
	if err != nil {
		return nil, err
	}
	var id string
	var lock *flock.Flock
	for range 3 {
		id = newID()
		if lock, err = o.lockNew(id); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	j := &Journal{o: o, repo: repo, lock: lock, work: o.workPath(id), byP: map[string]int{}, steps: map[string]int{},
		point: map[string]bool{}, indexRead: map[string]bool{}, Recovered: recovered}
	for _, p := range a.Paths {
		j.point[p] = true
	}
	j.f = journalFile{Version: journalVersion, ID: id, Action: a.Name, Full: a.Full, External: a.External,
		EndsInCommit: a.EndsInCommit, Root: repo.Root,
		GitDir: repo.GitDir, CommonDir: repo.CommonDir, IndexPath: repo.IndexPath,
		Stage: stageDir(repo, id), State: StateRecording, Created: o.now().UTC()}
	// A panic past this point (a bug, or a test's crash) leaves the
	// journal unfinished, its lock released, for Recover.
	defer func() {
		if r := recover(); r != nil {
			j.Close()
			panic(r)
		}
	}()
	if err := os.MkdirAll(j.work, 0o700); err != nil {
		j.drop()
		return nil, fmt.Errorf("gitstate: oplog: %w", err)
	}
	j.step("locked")
	if err := j.saveLight(); err != nil {
		j.drop()
		return nil, err
	}
	if err := j.record(ctx, a); err != nil {
		j.drop()
		return nil, err
	}
	j.f.State = StateApplying
	// Each write of an action saves the journal durably first; an
	// external action (handoff) gets a durable save here, as its own
	// steps decide their writes.
	save := j.saveLight
	if a.External {
		save = j.save
	}
	if err := save(); err != nil {
		j.drop()
		return nil, err
	}
	j.step("recorded")
	return j, nil
}

// stageDir is the folder where a journal's files are written before they
// are renamed into place: in the git dir when it is on the work tree's
// file system (a rename cannot cross file systems), else at the work
// tree's top.
func stageDir(repo *gitcli.Repo, id string) string {
	name := "knightcode-oplog-" + id
	gi, err1 := os.Stat(repo.GitDir)
	ri, err2 := os.Stat(repo.Root)
	if err1 == nil && err2 == nil && sameDevice(gi, ri) {
		return filepath.Join(repo.GitDir, name)
	}
	return filepath.Join(repo.Root, "."+name)
}

// record writes the recovery point of a and names it in the journal.
func (j *Journal) record(ctx context.Context, a Action) error {
	repo := j.repo
	head, headTree := a.Head, a.HeadTree
	var err error
	if !a.HeadKnown {
		if head, headTree, err = repo.Head(ctx); err != nil {
			return err
		}
	}
	j.f.Head = head
	var wt, it string
	var snap Snapshot
	if a.Full {
		if a.State != nil {
			head, wt, it = a.State.Head, a.State.WorktreeTree, a.State.IndexTree
			j.f.Head = head
		} else {
			s, err := Complete(ctx, repo)
			if err != nil {
				return err
			}
			wt, it = s.WorktreeTree, s.IndexTree
		}
		base := head
		if base == "" {
			// An unborn HEAD: the point's first parent is a root commit
			// of the empty tree.
			if base, err = repo.CommitTree(ctx, headTree, nil, unbornMessage, Ident); err != nil {
				return err
			}
		}
		snap, err = WriteSnapshot(ctx, repo, SnapshotSpec{Head: base, IndexTree: it, WorktreeTree: wt,
			IndexMessage: "knightcode oplog: index before " + a.Name + "\n", Message: pointMessage(a, repo.Root)})
		if err != nil {
			return err
		}
	} else if snap, it, wt, err = j.partialPoint(ctx, head, headTree, a); err != nil {
		return err
	}
	// Every object of the point is written; the ref that keeps them is
	// next (a kill here leaves unreferenced objects, as git would).
	j.step("point-objects")
	t := j.o.now().UTC()
	for range 100 {
		ref := OplogRefPrefix + t.Format(refTimeLayout)
		err = repo.CreateRefKept(ctx, ref, snap.Commit)
		if err == nil {
			j.f.Ref, j.f.Commit, j.f.WorktreeTree, j.f.IndexTree = ref, snap.Commit, wt, it
			return nil
		}
		if _, exists, verr := repo.VerifyRef(ctx, ref); verr != nil || !exists {
			return err
		}
		t = t.Add(time.Microsecond)
	}
	return err
}

// unbornMessage is the message of the root commit a recovery point of an
// unborn HEAD stands on.
const unbornMessage = "knightcode oplog: unborn HEAD\n"

// refTimeLayout names a recovery point: sortable UTC time to the
// microsecond.
const refTimeLayout = "20060102T150405.000000Z"

// pointMessage is a recovery point's commit message: the action, whether
// it records the full state or is partial, and the paths a partial one
// records.
func pointMessage(a Action, root string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "knightcode oplog: before %s\n\nrepository: %s\n", a.Name, root)
	if a.Full {
		b.WriteString("recorded: full state (HEAD, index, working tree with untracked files)\n")
		return b.String()
	}
	b.WriteString("recorded: partial: the index entry and the working-tree content of these paths only, on top of HEAD (restore only these paths):\n")
	for _, p := range a.Paths {
		fmt.Fprintf(&b, "path: %s\n", p)
	}
	return b.String()
}

// step reports a named step to the hook; repeated names are numbered
// ("checkout#1", "checkout#2", ...).
func (j *Journal) step(name string) {
	j.steps[name]++
	if j.o.StepHook == nil {
		return
	}
	j.o.StepHook(fmt.Sprintf("%s#%d", name, j.steps[name]))
}

// save writes the journal atomically and durably (fsync): every save
// that comes just before a write of the user's state.
func (j *Journal) save() error { return j.write(true) }

// saveLight writes the journal atomically without fsync: the saves after
// which nothing of the user's is written before the next durable save
// (recording, applying: the first write saves the paths first) or after
// which nothing is (done). A kill -9 leaves the file as written; a power
// loss may take the save back, to a state that recovers the same way.
func (j *Journal) saveLight() error { return j.write(false) }

func (j *Journal) write(durable bool) error {
	data, err := json.MarshalIndent(&j.f, "", "\t")
	if err != nil {
		return err
	}
	write := atomicfile.WriteFileUnsynced
	if durable {
		write = atomicfile.WriteFile
	}
	if err := write(j.o.jsonPath(j.f.ID), data, 0o600); err != nil {
		return fmt.Errorf("gitstate: oplog: write journal: %w", err)
	}
	return nil
}

// expect adds paths to the journal (their working-tree before entries
// read now, from the recovery point's working tree or the files) unless
// already there, and returns their records' indexes. With index, the
// records' index before entries are read too (once, from the real index,
// before the action's first index write: an action that writes only the
// working tree never reads the index, which a rollback then never
// compares).
func (j *Journal) expect(ctx context.Context, paths []string, index bool) ([]int, error) {
	var missing []string
	var err error
	for _, p := range paths {
		if _, ok := j.byP[p]; !ok && !slices.Contains(missing, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		// The recovery point's working tree holds the content of its
		// paths (all of them when full); others are read as they are.
		var inPoint, live []string
		for _, p := range missing {
			if j.f.Full || j.point[p] {
				inPoint = append(inPoint, p)
			} else {
				live = append(live, p)
			}
		}
		var wt map[string]Entry
		if j.pointWT != nil && !j.f.Full {
			wt = map[string]Entry{}
			for _, p := range inPoint {
				if e := j.pointWT[p]; !e.Absent() {
					wt[p] = e
				}
			}
		} else if wt, err = treeEntries(ctx, j.repo, j.f.WorktreeTree, inPoint); err != nil {
			return nil, err
		}
		if len(live) > 0 {
			lw, err := worktreeEntries(ctx, j.repo, filepath.Join(j.work, "expect-index"), live)
			if err != nil {
				return nil, err
			}
			for p, e := range lw {
				if e.Mode == "040000" {
					return nil, fmt.Errorf("gitstate: %s is a folder in the working tree", p)
				}
				wt[p] = e
			}
		}
		for _, p := range missing {
			j.byP[p] = len(j.f.Paths)
			j.f.Paths = append(j.f.Paths, PathRecord{Path: p, WorktreeBefore: wt[p]})
		}
	}
	if index {
		var unread []string
		for _, p := range paths {
			if !j.indexRead[p] && !slices.Contains(unread, p) {
				unread = append(unread, p)
			}
		}
		if len(unread) > 0 {
			ix, err := indexEntries(ctx, j.repo, unread)
			if err != nil {
				return nil, err
			}
			ita, err := intentToAdd(ctx, j.repo, ix)
			if err != nil {
				return nil, err
			}
			for _, p := range unread {
				r := &j.f.Paths[j.byP[p]]
				r.IndexBefore, r.IndexIntentToAdd = ix[p], ita[p]
				j.indexRead[p] = true
			}
		}
	}
	out := make([]int, len(paths))
	for i, p := range paths {
		out[i] = j.byP[p]
	}
	return out, nil
}

// IntentToAdd reports which of the index entries ix (path -> entry, read
// from repo's index) are intent-to-add (`git add -N`): entries of the
// empty blob that `diff-files --diff-filter=A` shows as added. git runs
// only when an entry holds the empty blob. Errors are git's.
func IntentToAdd(ctx context.Context, repo *gitcli.Repo, ix map[string]Entry) (map[string]bool, error) {
	return intentToAdd(ctx, repo, ix)
}

func intentToAdd(ctx context.Context, repo *gitcli.Repo, ix map[string]Entry) (map[string]bool, error) {
	out := map[string]bool{}
	empty := false
	for _, e := range ix {
		if e.OID == EmptyBlobID(repo) {
			empty = true
			break
		}
	}
	if !empty {
		return out, nil
	}
	added, err := repo.DiffFilesAdded(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range added {
		if e, ok := ix[p]; ok && e.OID == EmptyBlobID(repo) {
			out[p] = true
		}
	}
	return out, nil
}

// EmptyBlobID is the id of the empty blob in repo's object format (what
// an intent-to-add index entry holds).
func EmptyBlobID(repo *gitcli.Repo) string {
	if repo.HexLen() == 64 {
		return "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
	}
	return "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
}

// treeEntries returns the entries of paths in tree (absent ones missing).
func treeEntries(ctx context.Context, repo *gitcli.Repo, tree string, paths []string) (map[string]Entry, error) {
	m := map[string]Entry{}
	if len(paths) == 0 {
		return m, nil
	}
	var ents []gitcli.TreeEntry
	var err error
	if len(paths) > 256 {
		ents, err = repo.LsTree(ctx, tree, true)
	} else {
		ents, err = repo.LsTree(ctx, tree, true, paths...)
	}
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	for _, e := range ents {
		if want[e.Path] {
			m[e.Path] = Entry{Mode: e.Mode, OID: e.OID}
		}
	}
	return m, nil
}

// indexEntries returns the stage-0 entries of paths in repo's index
// (an unmerged path is missing): from the Runner's index cache for the
// repository's own index (gitcli.Repo.IndexList), else one `ls-files -s`.
func indexEntries(ctx context.Context, repo *gitcli.Repo, paths []string) (map[string]Entry, error) {
	m := map[string]Entry{}
	if len(paths) == 0 {
		return m, nil
	}
	if repo.IndexFile() == repo.IndexPath {
		list, err := repo.IndexList(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if e, ok := list.Stage0(p); ok {
				m[p] = Entry{Mode: e.Mode, OID: e.OID}
			}
		}
		return m, nil
	}
	want := map[string]bool{}
	for _, p := range paths {
		want[p] = true
	}
	var limit []string
	if len(paths) <= 256 {
		limit = paths
	}
	err := repo.LsFilesStage(ctx, limit, func(e gitcli.IndexEntry) error {
		if e.Stage == 0 && want[e.Path] {
			m[e.Path] = Entry{Mode: e.Mode, OID: e.OID}
		}
		return nil
	})
	return m, err
}

// Done marks the action done: every write landed. It writes the journal
// in state done, removes it and its work folder, releases the journal's
// lock, and on the first and every 16th action of the Oplog prunes the
// repository's recovery points past the retention ([Oplog.Prune]; a
// failure there is ignored: a later action prunes again).
func (j *Journal) Done(ctx context.Context) error {
	j.step("done")
	j.f.State = StateDone
	if err := j.saveLight(); err != nil {
		return err
	}
	j.finish()
	if j.o.pruneCount.Add(1)%pruneEvery == 1 {
		_, _ = j.o.Prune(ctx, j.repo)
	}
	return nil
}

// Abort rolls back what the action wrote (as [Oplog.Recover] would after a
// crash: each path still at its after entry goes back to its before
// entry; any other state is left alone), removes the journal and returns
// cause, joined with a failure to roll back (the journal is then kept for
// the next recovery).
func (j *Journal) Abort(ctx context.Context, cause error) error {
	rep, err := rollback(context.WithoutCancel(ctx), j.o, j.repo, &j.f, false)
	if err != nil {
		return errors.Join(cause, fmt.Errorf("gitstate: roll back %s (recovery point %s): %w", j.f.Action, j.f.Ref, err))
	}
	if len(rep.Conflicts) > 0 {
		return errors.Join(cause, fmt.Errorf("gitstate: %s: could not roll back %s (changed meanwhile; recovery point %s)",
			j.f.Action, strings.Join(rep.Conflicts, ", "), j.f.Ref))
	}
	j.finish()
	return cause
}

// Close releases the journal's lock when Done or Abort did not end it:
// the journal stays, unfinished, for [Oplog.Recover].
func (j *Journal) Close() {
	if !j.ended {
		j.ended = true
		_ = j.lock.Unlock()
	}
}

// finish removes the journal's files and releases its lock.
func (j *Journal) finish() {
	j.ended = true
	_ = os.RemoveAll(j.f.Stage)
	cleanCheckouts(&j.f, j.work)
	_ = os.RemoveAll(j.work)
	_ = os.Remove(j.o.jsonPath(j.f.ID))
	j.step("unjournaled")
	_ = os.Remove(j.o.lockPath(j.f.ID))
	_ = j.lock.Unlock()
}

// drop removes a journal whose recovery point could not be recorded
// (nothing was written).
func (j *Journal) drop() { j.finish() }

// lockNew creates and flock-holds the lock file of a new journal id. It
// fails when the lock is taken, or when the file it locked is no longer
// the one at the path (a sweep of orphaned lock files ([Oplog.sweep])
// removed it between its open and its flock).
func (o *Oplog) lockNew(id string) (*flock.Flock, error) {
	lock := flock.New(o.lockPath(id))
	ok, err := lock.TryLock()
	if err != nil || !ok {
		return nil, fmt.Errorf("gitstate: oplog: lock journal %s: %v", id, err)
	}
	held, err1 := lock.Stat()
	at, err2 := os.Stat(o.lockPath(id))
	if err1 != nil || err2 != nil || !os.SameFile(held, at) {
		_ = lock.Unlock()
		return nil, fmt.Errorf("gitstate: oplog: lock journal %s: the lock file was removed meanwhile", id)
	}
	return lock, nil
}

// lockWait is how long a recovery waits for a journal's lock before it
// takes the journal's action as running. A killed server's git children
// die with it (a parent-death signal), but one caught between fork and
// exec still holds a copy of the lock's descriptor for a moment after the
// server is gone; a server restarted at once must not skip the journal
// for that.
const lockWait = 500 * time.Millisecond

// lockUnfinished flock-holds the lock of journal id when its action is
// not running and its journal file still exists (ok false otherwise),
// waiting up to wait for a held lock. When the journal finished
// meanwhile, the lock file that taking the lock may have created again is
// removed.
func (o *Oplog) lockUnfinished(id string, wait time.Duration) (lock *flock.Flock, ok bool) {
	lock = flock.New(o.lockPath(id))
	held, err := lock.TryLock()
	for deadline := time.Now().Add(wait); err == nil && !held && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		held, err = lock.TryLock()
	}
	if err != nil || !held {
		return nil, false // running
	}
	if _, err := os.Stat(o.jsonPath(id)); err != nil {
		_ = os.Remove(o.lockPath(id))
		_ = lock.Unlock()
		return nil, false // finished meanwhile
	}
	return lock, true
}

// sweep removes the files of journals that never had a journal file or
// whose journal file is already removed: the lock file and work folder
// left by an action killed between taking its lock and first saving its
// journal (nothing of the user's was written then), or between removing
// its journal and its lock (its action had ended); and the temporary
// files of an atomic write of a journal or report
// (.<id>.json.tmp-*, .<id>.report.json.tmp-*) that a kill interrupted.
// Journals and reports are written only under their journal's lock, so
// a lock still held is an action (or a recovery) at work, and its files
// are left alone.
func (o *Oplog) sweep() {
	ents, err := os.ReadDir(o.Dir)
	if err != nil {
		return
	}
	ids := map[string]bool{}
	temps := map[string][]string{}
	for _, e := range ents {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, ".lock"); ok {
			ids[id] = true
		} else if id, ok := strings.CutSuffix(name, ".d"); ok && e.IsDir() {
			ids[id] = true
		} else if rest, ok := strings.CutPrefix(name, "."); ok && strings.Contains(rest, ".json.tmp-") {
			id, _, _ := strings.Cut(rest, ".")
			temps[id] = append(temps[id], name)
		}
	}
	for id := range temps {
		ids[id] = true
	}
	for id := range ids {
		_, err := os.Lstat(o.jsonPath(id))
		journal := !errors.Is(err, fs.ErrNotExist)
		if journal && len(temps[id]) == 0 {
			continue // an unfinished journal: Recover's
		}
		lock := flock.New(o.lockPath(id))
		if held, err := lock.TryLock(); err != nil || !held {
			continue
		}
		for _, name := range temps[id] {
			_ = os.Remove(filepath.Join(o.Dir, name))
		}
		if _, err := os.Lstat(o.jsonPath(id)); errors.Is(err, fs.ErrNotExist) {
			_ = os.RemoveAll(o.workPath(id))
			_ = os.Remove(o.lockPath(id))
		}
		_ = lock.Unlock()
	}
}
