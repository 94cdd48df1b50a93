package protocol

import "encoding/json"

// Rows of the diff methods (spec: Method reference, thread/diff/read,
// thread/diff/file, thread/diff/revert; "Workspaces, diffs and git"). They
// run per thread: a read sent after a revert on the same connection sees the
// revert.
var (
	// ThreadDiffFile ("thread/diff/file") returns both sides of one file of
	// a thread/diff/read result, by the trees the read named.
	ThreadDiffFile = clientRequest[ThreadDiffFileParams, ThreadDiffFileResult]("thread/diff/file", PerThread)

	// ThreadDiffRead ("thread/diff/read") reads one diff scope of the
	// thread's checkout with content-hash hunk ids.
	ThreadDiffRead = clientRequest[ThreadDiffReadParams, ThreadDiffReadResult]("thread/diff/read", PerThread)

	// ThreadDiffRevert ("thread/diff/revert") reverse-applies one hunk, one
	// file or a whole scope to the working tree; refused while a turn runs
	// in the checkout.
	ThreadDiffRevert = clientRequest[ThreadDiffRevertParams, ThreadDiffRevertResult]("thread/diff/revert", PerThread)
)

// The diff scopes of thread/diff/read and thread/diff/revert (spec:
// "Workspaces, diffs and git": Codex's Changes scopes).
const (
	ScopeLastTurn    = "lastTurn"
	ScopeUncommitted = "uncommitted" // the default
	ScopeUnstaged    = "unstaged"
	ScopeStaged      = "staged"
	ScopeCommitted   = "committed"
	ScopeBranch      = "branch"
)

// MaxDiffContext is the most context lines a diff read or action may ask for.
const MaxDiffContext = 1000

// validScope reports whether s is "" (the default) or one of the six scopes.
func validScope(s string) bool {
	switch s {
	case "", ScopeLastTurn, ScopeUncommitted, ScopeUnstaged, ScopeStaged, ScopeCommitted, ScopeBranch:
		return true
	}
	return false
}

// validateScope checks scope, context and commit as every diff method does:
// scope one of the six (invalidParams "scope"), context 0..MaxDiffContext
// ("context"), committed only with a commit ("commit").
func validateScope(scope string, context *int, commit string) error {
	if !validScope(scope) {
		return InvalidParams("scope", "unknown scope %q: one of lastTurn, uncommitted, unstaged, staged, committed, branch", scope)
	}
	if err := validateContext(context); err != nil {
		return err
	}
	if scope == ScopeCommitted && commit == "" {
		return InvalidParams("commit", "the committed scope needs a commit")
	}
	return nil
}

// validateContext checks that context, when given, is 0..MaxDiffContext.
func validateContext(context *int) error {
	if context != nil && (*context < 0 || *context > MaxDiffContext) {
		return InvalidParams("context", "must be 0 to %d lines, got %d", MaxDiffContext, *context)
	}
	return nil
}

// ThreadDiffReadParams are the params of thread/diff/read.
type ThreadDiffReadParams struct {
	ThreadID string `json:"threadId"`
	// Scope is lastTurn, uncommitted (the default), unstaged, staged,
	// committed or branch.
	Scope string `json:"scope,omitempty"`
	// Against is the ref or commit a branch read compares with; without it
	// the worktree's base, else the upstream, else the default branch.
	Against string `json:"against,omitempty" jsonschema:"minLength=1"`
	// Commit is the commit of a committed read (required there).
	Commit string `json:"commit,omitempty" jsonschema:"minLength=1"`
	// Context is the number of context lines, 0 to 1000 (default 3). Hunk
	// ids depend on it; ids read at 0 match no action.
	Context *int `json:"context,omitempty"`
	// IgnoreWhitespace reads ignoring whitespace; its hunk ids match no
	// action and the result names no trees.
	IgnoreWhitespace bool `json:"ignoreWhitespace,omitempty"`
}

// Validate checks scope, context (0..1000) and that committed has a commit.
func (p ThreadDiffReadParams) Validate() error {
	return validateScope(p.Scope, p.Context, p.Commit)
}

// ThreadDiffReadResult is the result of thread/diff/read. Files' paths are
// relative to Root, the repository root (not the thread's cwd, which can be
// a subdirectory of it). TurnID and Stale come with lastTurn reads: the turn
// compared (absent before the thread's first turn ended), and whether any
// of its files changed in the working tree since the turn left it (an undo
// would then be refused); stale is sent with every lastTurn read, false
// included, and with no other scope. Against echoes the ref a
// branch read compared with. FromTree and ToTree name the compared trees
// (for thread/diff/file) unless the read ignored whitespace.
type ThreadDiffReadResult struct {
	Scope            string     `json:"scope"`
	Root             string     `json:"root"`
	Files            []DiffFile `json:"files"`
	FilesOmitted     int        `json:"filesOmitted,omitempty"`
	UntrackedSkipped int        `json:"untrackedSkipped,omitempty"`
	TurnID           string     `json:"turnId,omitempty"`
	Stale            bool       `json:"stale,omitempty"`
	Against          string     `json:"against,omitempty"`
	FromTree         string     `json:"fromTree,omitempty"`
	ToTree           string     `json:"toTree,omitempty"`
}

// MarshalJSON writes stale with every lastTurn read, false included, and
// leaves it out of the other scopes' reads.
func (r ThreadDiffReadResult) MarshalJSON() ([]byte, error) {
	type plain ThreadDiffReadResult
	if r.Scope != ScopeLastTurn {
		return json.Marshal(plain(r))
	}
	// The outer Stale is shallower than the embedded one, so it wins.
	return json.Marshal(struct {
		plain
		Stale bool `json:"stale"`
	}{plain(r), r.Stale})
}

// File statuses (DiffFile.Status).
const (
	FileStatusAdded       = "added"
	FileStatusModified    = "modified"
	FileStatusDeleted     = "deleted"
	FileStatusRenamed     = "renamed"
	FileStatusTypeChanged = "typeChanged"
)

// DiffFile is one changed file of a diff read. Path (and OldPath of a
// rename) are relative to the repository root, /-separated. Status is added,
// modified, deleted, renamed or typeChanged. Binary files and submodules
// carry no hunks and no line counts; TooLarge files (past the response
// budget) keep their counts but no hunks. OldMode and NewMode are git's octal
// modes ("100644", "100755", "120000", "160000"), absent for a side that does
// not exist. ID identifies the whole-file change: actions take it as a hunkId
// to act on the whole file (binary files, mode-only changes).
type DiffFile struct {
	Path      string     `json:"path"`
	OldPath   string     `json:"oldPath,omitempty"`
	Status    string     `json:"status"`
	Binary    bool       `json:"binary"`
	Additions int        `json:"additions"`
	Deletions int        `json:"deletions"`
	TooLarge  bool       `json:"tooLarge,omitempty"`
	OldMode   string     `json:"oldMode,omitempty"`
	NewMode   string     `json:"newMode,omitempty"`
	Submodule bool       `json:"submodule,omitempty"`
	ID        string     `json:"id"`
	Hunks     []DiffHunk `json:"hunks"`
}

// DiffHunk is one hunk of a file: its content-hash ID (of the file header and
// the hunk at the read's context), its "@@ ... @@" header line, its ranges and
// its lines exactly as git printed them, each with its " ", "+", "-" or "\"
// prefix ("\ No newline at end of file" is a line of its own).
type DiffHunk struct {
	ID       string   `json:"id"`
	Header   string   `json:"header"`
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// ThreadDiffFileParams are the params of thread/diff/file: the two trees a
// thread/diff/read result named (full object ids) and one file of it.
type ThreadDiffFileParams struct {
	ThreadID string `json:"threadId"`
	FromTree string `json:"fromTree"`
	ToTree   string `json:"toTree"`
	// Path is the file's path in ToTree (repository-relative).
	Path string `json:"path"`
	// OldPath is the file's path in FromTree when it was renamed.
	OldPath string `json:"oldPath,omitempty"`
}

// ThreadDiffFileResult is the result of thread/diff/file: Old is the file in
// fromTree, New the file in toTree, each absent when the file is not in that
// tree. Neither comes when the file is Binary (a NUL in its first 8 KiB) or
// TooLarge (a side over 2 MiB).
type ThreadDiffFileResult struct {
	Old      *string `json:"old,omitempty"`
	New      *string `json:"new,omitempty"`
	Binary   bool    `json:"binary"`
	TooLarge bool    `json:"tooLarge"`
}

// ThreadDiffRevertParams are the params of thread/diff/revert. Scope,
// Against, Commit and Context select the diff as for thread/diff/read (the
// staged and committed scopes cannot be reverted); Path (repository-relative,
// literal) and HunkID (a hunk id or a file id from a read at the same
// context) narrow it to a file or a hunk; neither means the whole scope.
// Only an absent member widens: path, hunkId or turnId given as "" or null
// is invalidParams naming it, never the whole scope.
// Reapply (lastTurn only, no hunk) applies the turn's changes again. TurnID
// (lastTurn only) is the turn the client shows: a different last turn answers
// gitConflict diffChanged.
type ThreadDiffRevertParams struct {
	ThreadID string `json:"threadId"`
	Scope    string `json:"scope,omitempty"`
	Against  string `json:"against,omitempty" jsonschema:"minLength=1"`
	Commit   string `json:"commit,omitempty" jsonschema:"minLength=1"`
	Path     string `json:"path,omitempty" jsonschema:"minLength=1"`
	HunkID   string `json:"hunkId,omitempty" jsonschema:"minLength=1"`
	Context  *int   `json:"context,omitempty"`
	Reapply  bool   `json:"reapply,omitempty"`
	TurnID   string `json:"turnId,omitempty" jsonschema:"minLength=1"`
}

// Validate checks scope and context as for a read, refuses the staged and
// committed scopes ("scope"), reapply outside lastTurn or with a hunk
// ("reapply") and turnId outside lastTurn ("turnId").
func (p ThreadDiffRevertParams) Validate() error {
	if !validScope(p.Scope) {
		return validateScope(p.Scope, nil, "")
	}
	switch p.Scope {
	case ScopeStaged:
		return InvalidParams("scope", "the staged scope cannot be reverted: unstage staged changes with git/unstage")
	case ScopeCommitted:
		return InvalidParams("scope", "the committed scope cannot be reverted: thread/diff/revert changes the working tree and never undoes a commit")
	}
	if err := validateContext(p.Context); err != nil {
		return err
	}
	if p.Reapply && p.Scope != ScopeLastTurn {
		return InvalidParams("reapply", "reapply needs the lastTurn scope")
	}
	if p.Reapply && p.HunkID != "" {
		return InvalidParams("reapply", "reapply applies a whole turn or file, not a hunk")
	}
	if p.TurnID != "" && p.Scope != ScopeLastTurn {
		return InvalidParams("turnId", "turnId needs the lastTurn scope")
	}
	return nil
}

// ThreadDiffRevertResult is the result of thread/diff/revert: the
// repository-relative paths the revert changed, sorted.
type ThreadDiffRevertResult struct {
	Paths []string `json:"paths"`
}
