package protocol

// Rows of the environment methods (spec: Method reference,
// environment/list and environment/save).
var (
	// EnvironmentList ("environment/list") reads the project's
	// .knightcode/environments.json.
	EnvironmentList = clientRequest[EnvironmentListParams, EnvironmentListResult]("environment/list", Concurrent)

	// EnvironmentSave ("environment/save") writes the project's
	// .knightcode/environments.json.
	EnvironmentSave = clientRequest[EnvironmentSaveParams, EnvironmentSaveResult]("environment/save", Concurrent)
)

// Environment is one entry of a project's .knightcode/environments.json: a
// name (unique in the file) and the bash scripts run when a worktree is set
// up for it and cleaned up, with KNIGHTCODE_WORKTREE_PATH set to the
// worktree.
type Environment struct {
	Name    string             `json:"name"`
	Setup   EnvironmentScript  `json:"setup"`
	Cleanup *EnvironmentScript `json:"cleanup,omitempty"`
}

// EnvironmentScript is a script per platform: the platform's own (linux,
// darwin, win32) when set, else default.
type EnvironmentScript struct {
	Default string `json:"default,omitempty"`
	Linux   string `json:"linux,omitempty"`
	Darwin  string `json:"darwin,omitempty"`
	Win32   string `json:"win32,omitempty"`
}

// EnvironmentListParams are the params of environment/list: a directory of
// the project (a managed worktree's cwd reads its project's file).
type EnvironmentListParams struct {
	Cwd string `json:"cwd"`
}

// EnvironmentListResult is the result of environment/list: the
// environments (empty without a file) and whether the project is trusted,
// without which their scripts never run.
type EnvironmentListResult struct {
	Environments []Environment `json:"environments"`
	Trusted      bool          `json:"trusted"`
}

// EnvironmentSaveParams are the params of environment/save: a directory of
// the project and the whole list to write (names unique after trimming
// spaces and not empty, at most 50).
type EnvironmentSaveParams struct {
	Cwd          string        `json:"cwd"`
	Environments []Environment `json:"environments"`
}

// EnvironmentSaveResult is the (empty) result of environment/save.
type EnvironmentSaveResult struct{}
