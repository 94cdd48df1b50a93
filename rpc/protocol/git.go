package protocol

// Rows of the git methods that act on the thread's checkout (spec: Method
// reference, git/*). They run per thread.
var (
	// GitStage ("git/stage") stages one hunk, one file or everything of the
	// unstaged scope.
	GitStage = clientRequest[GitStageParams, GitStageResult]("git/stage", PerThread)

	// GitUnstage ("git/unstage") unstages one hunk, one file or everything
	// of the staged scope.
	GitUnstage = clientRequest[GitUnstageParams, GitUnstageResult]("git/unstage", PerThread)
)

// GitStageParams are the params of git/stage: Path (repository-relative,
// taken literally, never a pattern) and HunkID (a hunk id or file id from a
// thread/diff/read of the unstaged scope at the same Context, default 3)
// narrow it to one file or hunk; neither means everything. Only an absent
// member widens: path or hunkId given as "" or null is invalidParams naming
// it, never everything.
type GitStageParams struct {
	ThreadID string `json:"threadId"`
	Path     string `json:"path,omitempty" jsonschema:"minLength=1"`
	HunkID   string `json:"hunkId,omitempty" jsonschema:"minLength=1"`
	Context  *int   `json:"context,omitempty"`
}

// Validate checks that context, when given, is 0..1000.
func (p GitStageParams) Validate() error { return validateContext(p.Context) }

// GitStageResult is the result of git/stage: the repository-relative paths
// whose index entry changed, sorted.
type GitStageResult struct {
	Paths []string `json:"paths"`
}

// GitUnstageParams are the params of git/unstage, as GitStageParams but the
// ids come from a read of the staged scope.
type GitUnstageParams GitStageParams

// Validate checks that context, when given, is 0..1000.
func (p GitUnstageParams) Validate() error { return validateContext(p.Context) }

// GitUnstageResult is the result of git/unstage: the repository-relative
// paths whose index entry changed, sorted.
type GitUnstageResult GitStageResult
