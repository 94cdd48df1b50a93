package diffscope

import "github.com/knightcode/knightcode/internal/gitcli"

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

// Capture is a checkout captured as trees without writing the user's index
// (ARCHITECTURE.md, "The mechanism everything shares").
type Capture struct {
	// Head is HEAD's commit id, "" when HEAD is unborn.
	Head string `json:"head,omitempty"`
	// HeadTree is HEAD's tree id; the empty tree when HEAD is unborn.
	HeadTree string `json:"headTree"`
	// IndexTree is the tree of the index as it is (write-tree of a copy).
	IndexTree string `json:"indexTree"`
	// WorktreeTree is the tree of the working files: tracked files as they
	// are on disk plus the untracked, non-ignored files within the limits.
	WorktreeTree string `json:"worktreeTree"`
	// Untracked lists the untracked files included in WorktreeTree,
	// repository-relative and /-separated, sorted.
	Untracked []string `json:"untracked,omitempty"`
	// UntrackedSkipped counts untracked files left out by the limits (500
	// files; folders with 200+ untracked files first; files over 10 MiB).
	UntrackedSkipped int `json:"untrackedSkipped,omitempty"`
	// UntrackedDropped reports that more than 500 untracked files remained
	// after leaving out large folders, so no untracked file was included
	// (turn totals then count tracked files only).
	UntrackedDropped bool `json:"untrackedDropped,omitempty"`
	// Submodules maps each initialized submodule (a gitlink of the index
	// whose directory is the top of a repository of its own), by its
	// repository-relative, /-separated path, to a token of its content:
	// 64 hex digits hashing its HEAD, its own worktree tree (a Capture of
	// the submodule's checkout: tracked files as on disk and its untracked
	// files within the limits) and the tokens of its own submodules. The
	// gitlink in WorktreeTree records only the submodule's HEAD; the token
	// changes with any edit inside it too (shared/cases C20). nil when there
	// is none; a submodule that cannot be captured has no token.
	Submodules map[string]string `json:"submodules,omitempty"`
}

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

// Differ reads and changes diffs of checkouts. It holds only the git runner
// and is safe for concurrent use.
type Differ struct {
	git *gitcli.Runner
}

// New returns a Differ that runs git through r.
func New(r *gitcli.Runner) *Differ { return &Differ{git: r} }

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
	repo     gitcli.Repo
	scope    Scope
	context  int
	from, to string // the compared trees
	capture  *Capture
	files    []fileDiff
	result   *Result
	// ignoreWhitespace records a -w read (its ids match no action).
	ignoreWhitespace bool
	// objectFormat is "sha1" or "sha256".
	objectFormat string
}
