package protocol

// Rows of the method table for background shells (spec:
// thread/backgroundShells/list, thread/backgroundShells/output and
// thread/backgroundShells/stop).
var (
	// ThreadBackgroundShellsList ("thread/backgroundShells/list") lists the
	// commands a loaded thread's shell calls left running in the background
	// and the last 50 that ended, oldest first.
	ThreadBackgroundShellsList = clientRequest[BackgroundShellsListParams, BackgroundShellsListResult]("thread/backgroundShells/list", PerThread)

	// ThreadBackgroundShellsOutput ("thread/backgroundShells/output")
	// returns the end of a background shell's output.
	ThreadBackgroundShellsOutput = clientRequest[BackgroundShellsOutputParams, BackgroundShellsOutputResult]("thread/backgroundShells/output", PerThread)

	// ThreadBackgroundShellsStop ("thread/backgroundShells/stop") stops a
	// running background shell as the user.
	ThreadBackgroundShellsStop = clientRequest[BackgroundShellsStopParams, BackgroundShellsStopResult]("thread/backgroundShells/stop", PerThread)

	// ThreadBackgroundShellsUpdated ("thread/backgroundShells/updated")
	// sends a thread's whole background shell list whenever a command
	// starts or ends (subscribers).
	ThreadBackgroundShellsUpdated = serverNotification[BackgroundShellsUpdatedParams]("thread/backgroundShells/updated")
)

// Background shell statuses (BackgroundShell.Status).
const (
	BackgroundShellRunning   = "running"
	BackgroundShellCompleted = "completed"
	BackgroundShellFailed    = "failed"
	BackgroundShellStopped   = "stopped"
	BackgroundShellTimedOut  = "timed_out"
)

// BackgroundShell is one command a shell call left running in the
// background: {id, command, cwd, status, startedAt, endedAt?, exitCode?,
// error?}. Status is running, completed, failed, stopped or timed_out;
// StartedAt and EndedAt are Unix milliseconds; ExitCode is set when the
// command exited by itself; Error says why it failed or was stopped without
// an exit code.
type BackgroundShell struct {
	ID        string `json:"id"`
	Command   string `json:"command"`
	Cwd       string `json:"cwd"`
	Status    string `json:"status"`
	StartedAt int64  `json:"startedAt"`
	EndedAt   int64  `json:"endedAt,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	Error     string `json:"error,omitempty"`
}

// BackgroundShellsListParams are the params of thread/backgroundShells/list.
type BackgroundShellsListParams struct {
	ThreadID string `json:"threadId"`
}

// BackgroundShellsListResult is the result of thread/backgroundShells/list:
// the running shells and the last 50 that ended, oldest first.
type BackgroundShellsListResult struct {
	Shells []BackgroundShell `json:"shells"`
}

// BackgroundShellsOutputParams are the params of
// thread/backgroundShells/output: the thread and the shell id.
type BackgroundShellsOutputParams struct {
	ThreadID string `json:"threadId"`
	ID       string `json:"id"`
}

// BackgroundShellsOutputResult is the result of
// thread/backgroundShells/output: the end of the command's output with its
// terminal escapes, the last 2,000 lines or 50 KB, kept after it ended.
type BackgroundShellsOutputResult struct {
	Output string `json:"output"`
}

// BackgroundShellsStopParams are the params of
// thread/backgroundShells/stop: the thread and the shell id.
type BackgroundShellsStopParams struct {
	ThreadID string `json:"threadId"`
	ID       string `json:"id"`
}

// BackgroundShellsStopResult is the result of thread/backgroundShells/stop:
// Stopped is false when the command had already ended or was already
// stopping.
type BackgroundShellsStopResult struct {
	Stopped bool `json:"stopped"`
}

// BackgroundShellsUpdatedParams are the params of
// thread/backgroundShells/updated: the whole list, as list answers it.
type BackgroundShellsUpdatedParams struct {
	ThreadID string            `json:"threadId"`
	Shells   []BackgroundShell `json:"shells"`
}

// ExtensionBackgroundShell is the extension of the extensionMessage that
// tells the model background commands ended.
const ExtensionBackgroundShell = "background_shell"

// BackgroundShellNotice is one ended command in a background_shell
// extensionMessage: {id, command, status, exitCode?, error?, outputTail}.
// Status is how the command ended, never running; OutputTail is the end of
// its output (its last 20 lines within 4 KB).
type BackgroundShellNotice struct {
	ID         string `json:"id"`
	Command    string `json:"command"`
	Status     string `json:"status"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	Error      string `json:"error,omitempty"`
	OutputTail string `json:"outputTail"`
}

// ThreadKey methods (threadkey.go) of the PerThread background shell
// methods' params.

func (p BackgroundShellsListParams) ThreadKey() string   { return p.ThreadID }
func (p BackgroundShellsOutputParams) ThreadKey() string { return p.ThreadID }
func (p BackgroundShellsStopParams) ThreadKey() string   { return p.ThreadID }
