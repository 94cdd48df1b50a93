package diffscope

import (
	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// Scope names one of the six diff scopes of thread/diff/read (spec,
// "Workspaces, diffs and git"; ARCHITECTURE.md, "capture a checkout as
// trees").
type Scope string

// The six scopes. Each is a tree-to-tree diff:
//
//	uncommitted  HEAD tree        -> worktree tree (the default)
//	unstaged     index tree       -> worktree tree
//	staged       HEAD tree        -> index tree
//	committed    commit's parent  -> commit
//	branch       merge-base(against or base/upstream/default, HEAD) -> worktree tree
//	lastTurn     the turn's before tree -> its after tree
const (
	ScopeUncommitted Scope = "uncommitted"
	ScopeUnstaged    Scope = "unstaged"
	ScopeStaged      Scope = "staged"
	ScopeCommitted   Scope = "committed"
	ScopeBranch      Scope = "branch"
	ScopeLastTurn    Scope = "lastTurn"
)

// ReadOptions selects what [Differ.Read] compares.
type ReadOptions struct {
	// Scope is the scope to read; "" means uncommitted.
	Scope Scope
	// Against names the ref or commit a branch read compares with; empty
	// means the worktree's base (BaseRef), else the upstream, else the
	// default branch.
	Against string
	// BaseRef is the base a worktree thread was created at, used by branch
	// reads without Against.
	BaseRef string
	// Commit is the commit of a committed read (required there).
	Commit string
	// FromTree and ToTree are the two trees of a lastTurn read (required
	// there): the turn's before and after worktree trees.
	FromTree, ToTree string
	// Context is the number of context lines; nil means 3. Hunk ids depend
	// on it; ids read at 0 match no action.
	Context *int
	// IgnoreWhitespace reads with -w; the ids it gives match no action and
	// the result names no trees.
	IgnoreWhitespace bool
	// Budget bounds the response, in bytes: each file costs its hunk text
	// (headers and lines with their newlines) plus 256 bytes and its
	// paths. 0 means 1 MiB; negative means no budget (what actions use).
	// Past it the largest files lose their hunks (TooLarge) and then files
	// are left out from the end and only counted (FilesOmitted).
	Budget int
}

// Result is a diff read, shaped exactly as thread/diff/read's result.
type Result struct {
	Scope            Scope  `json:"scope"`
	Root             string `json:"root"`
	Files            []File `json:"files"`
	FilesOmitted     int    `json:"filesOmitted,omitempty"`
	UntrackedSkipped int    `json:"untrackedSkipped,omitempty"`
	Against          string `json:"against,omitempty"`
	FromTree         string `json:"fromTree,omitempty"`
	ToTree           string `json:"toTree,omitempty"`
}

// File is one changed file of a read. Paths are relative to the repository
// root and /-separated. Status is added, modified, deleted, renamed or
// typeChanged. Binary files and gitlinks carry no hunks and no line counts.
type File struct {
	Path      string `json:"path"`
	OldPath   string `json:"oldPath,omitempty"`
	Status    string `json:"status"`
	Binary    bool   `json:"binary"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	TooLarge  bool   `json:"tooLarge,omitempty"`
	// OldMode and NewMode are git's octal modes ("100644", "100755",
	// "120000", "160000"), absent when the side does not exist.
	OldMode string `json:"oldMode,omitempty"`
	NewMode string `json:"newMode,omitempty"`
	// Submodule marks a gitlink (mode 160000): one item, no text hunks.
	Submodule bool `json:"submodule,omitempty"`
	// ID identifies the whole-file change (content hash of the file header:
	// paths, blob ids and modes); actions on binary files, gitlinks and
	// mode-only changes use it as their hunk id.
	ID    string `json:"id"`
	Hunks []Hunk `json:"hunks"`
}

// Hunk is one hunk of a file, its lines exactly as git printed them, each
// with its " ", "+", "-" or "\" prefix (a "\ No newline at end of file"
// marker is a line of its own). ID is the content hash of ARCHITECTURE.md
// "Hunk ids".
type Hunk struct {
	ID       string   `json:"id"`
	Header   string   `json:"header"`
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// Differ reads and changes diffs of checkouts. It holds the git runner and
// the operation log its actions journal through, and is safe for
// concurrent use.
type Differ struct {
	git   *gitcli.Runner
	oplog *gitstate.Oplog
	hunks hunkCache
}

// New returns a Differ that runs git through r, with its operation log in
// [DefaultOplogDir] (a server passes its own with [NewWithConfig]).
func New(r *gitcli.Runner) *Differ { return NewWithConfig(r, Config{}) }

// fileDiff is one file of a read as parsed, kept for actions (revert,
// stage, unstage) so they patch exactly what the ids were computed from.
type fileDiff struct {
	wire File
	// raw is the exact bytes git printed for this file, from its
	// "diff --git" line through its last hunk line. For a file whose hunks
	// were dropped while reading (TooLarge because it alone passed the
	// budget) it holds the header only. A typeChanged file (file <->
	// symlink <-> gitlink) is two sections: git prints a deletion followed
	// by a creation.
	raw []byte
	// oldOID and newOID are the full blob ids of the two sides ("" for an
	// absent side), also for mode-only changes, which print no index line.
	oldOID, newOID string
}

// readState is a read with everything actions need.
type readState struct {
	repo *gitcli.Repo
	// ri is the discovery the read was made with: HEAD as the action
	// saw it, which its recovery point stands on.
	ri       repoInfo
	scope    Scope
	context  int
	from, to string // the compared trees
	capture  *Capture
	files    []fileDiff
	result   *Result
	// ignoreWhitespace records a -w read (its ids match no action).
	ignoreWhitespace bool
	// txn is the journal every write of an action goes through (set by
	// the action's entry point once it holds the repository lock).
	txn *gitstate.Journal
	// worktree, when set, is the working-tree entry of the one file of a
	// path read (readPath, or a read's file found current in the hunk
	// cache), so the action does not hash the file again.
	worktree *entry
}
