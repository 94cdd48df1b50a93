package threads

import (
	"errors"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Background shells (spec: thread/backgroundShells/*): the commands a
// thread's bash calls started with run_in_background live in its
// ProcessGroups' registry (tools.BackgroundShells) and end with the session
// (finishUnload's StopAll). Every start and end reaches the subscribers as
// thread/backgroundShells/updated. Every end but the session's own becomes
// a notice for the model, an extensionMessage of extension
// background_shell, made and delivered by the built-in extension
// (builtin.BackgroundShells, through the extension seam): with the next
// turn, or steered into the running one when the command ended by itself;
// a notice not delivered yet is kept in the session file. A running
// background shell is running work: the thread does not unload idle while
// one runs.

// watchBackgroundShells makes the thread receive its background shells'
// events on its goroutine (called once by register). Each event first
// reaches the background_shell extension, on the goroutine that made it,
// so the notice of an end is in the session file before the subscribers
// hear of the end (a client that unloads the thread on that event cannot
// lose it).
func (t *thread) watchBackgroundShells() {
	t.procs.Shells().SetOnChange(func(e tools.ShellEvent) {
		t.bg.ShellChanged(e)
		t.post(func() { t.backgroundShellChanged(e) })
	})
}

// backgroundShellChanged (owner goroutine) reports the whole list to the
// subscribers and rechecks the idle unload.
func (t *thread) backgroundShellChanged(e tools.ShellEvent) {
	if t.exited {
		return
	}
	t.notifyShells()
	if !e.Ended {
		t.disarmIdle()
		return
	}
	t.checkIdle()
}

// notifyShells (owner goroutine) sends the subscribers the whole list of the
// thread's background shells (thread/backgroundShells/updated).
func (t *thread) notifyShells() {
	t.notify(protocol.ThreadBackgroundShellsUpdated.With(protocol.BackgroundShellsUpdatedParams{
		ThreadID: t.id, Shells: wireShells(t.procs.Shells().List()),
	}))
}

// backgroundRunning reports whether a background shell runs (running work
// for the idle unload).
func (t *thread) backgroundRunning() bool { return t.procs.Shells().Running() > 0 }

// wireShells is the registry's list as the protocol shows it.
func wireShells(list []tools.ShellInfo) []protocol.BackgroundShell {
	out := make([]protocol.BackgroundShell, len(list))
	for i, s := range list {
		out[i] = protocol.BackgroundShell{ID: s.ID, Command: s.Command, Cwd: s.Cwd, Status: string(s.Status),
			StartedAt: s.StartedAt, EndedAt: s.EndedAt, ExitCode: s.ExitCode, Error: s.Error}
	}
	return out
}

// shellErr maps the registry's errors: an unknown id is a
// *coreerr.ParamError naming "id" (nil stays nil).
func shellErr(id string, err error) error {
	if errors.Is(err, tools.ErrUnknownShell) {
		return coreerr.Param("id", "the thread has no background shell %q", id)
	}
	return err
}

// BackgroundShellsList lists the background shells of the loaded thread
// id, oldest first (thread/backgroundShells/list). Errors:
// ErrThreadNotFound.
func (m *Manager) BackgroundShellsList(id string) ([]protocol.BackgroundShell, error) {
	t, err := m.lookup(id)
	if err != nil {
		return nil, err
	}
	return wireShells(t.procs.Shells().List()), nil
}

// BackgroundShellsOutput returns the end of the output of the background
// shell shellID of the loaded thread id (thread/backgroundShells/output):
// its last 2,000 lines or 50 KB, terminal escapes kept. Errors:
// ErrThreadNotFound; *coreerr.ParamError "id" for an unknown shell.
func (m *Manager) BackgroundShellsOutput(id, shellID string) (string, error) {
	t, err := m.lookup(id)
	if err != nil {
		return "", err
	}
	out, err := t.procs.Shells().Output(shellID)
	return out, shellErr(shellID, err)
}

// BackgroundShellsStop stops the running background shell shellID of the
// loaded thread id as the user (thread/backgroundShells/stop: SIGTERM,
// then SIGKILL after the bash tool's grace) and answers at once; stopped
// is false when the shell had already ended or was stopping. Errors:
// ErrThreadNotFound; *coreerr.ParamError "id" for an unknown shell.
func (m *Manager) BackgroundShellsStop(id, shellID string) (stopped bool, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return false, err
	}
	stopped, err = t.procs.Shells().Stop(shellID)
	return stopped, shellErr(shellID, err)
}
