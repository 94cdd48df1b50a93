package threads

import (
	"context"
	"errors"

	"github.com/knightcode/knightcode/agent/tools"
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

// shellErr maps the registry's errors: an unknown id is invalidParams
// naming "id".
func shellErr(id string, err error) error {
	if errors.Is(err, tools.ErrUnknownShell) {
		return protocol.InvalidParams("id", "the thread has no background shell %q", id)
	}
	return err
}

// BackgroundShellsList answers thread/backgroundShells/list: the loaded
// thread's background shells, oldest first. Errors: threadNotFound.
func (m *Manager) BackgroundShellsList(_ context.Context, p protocol.BackgroundShellsListParams) (protocol.BackgroundShellsListResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.BackgroundShellsListResult{}, err
	}
	return protocol.BackgroundShellsListResult{Shells: wireShells(t.procs.Shells().List())}, nil
}

// BackgroundShellsOutput answers thread/backgroundShells/output: the end of
// a shell's output (last 2,000 lines or 50 KB, terminal escapes kept).
// Errors: threadNotFound; invalidParams for an unknown id.
func (m *Manager) BackgroundShellsOutput(_ context.Context, p protocol.BackgroundShellsOutputParams) (protocol.BackgroundShellsOutputResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.BackgroundShellsOutputResult{}, err
	}
	out, err := t.procs.Shells().Output(p.ID)
	if err != nil {
		return protocol.BackgroundShellsOutputResult{}, shellErr(p.ID, err)
	}
	return protocol.BackgroundShellsOutputResult{Output: out}, nil
}

// BackgroundShellsStop answers thread/backgroundShells/stop: it stops a
// running shell as the user (SIGTERM, then SIGKILL after the bash tool's
// grace) and answers at once; stopped is false when the shell had already
// ended or was stopping. Errors: threadNotFound; invalidParams for an
// unknown id.
func (m *Manager) BackgroundShellsStop(_ context.Context, p protocol.BackgroundShellsStopParams) (protocol.BackgroundShellsStopResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.BackgroundShellsStopResult{}, err
	}
	ok, err := t.procs.Shells().Stop(p.ID)
	if err != nil {
		return protocol.BackgroundShellsStopResult{}, shellErr(p.ID, err)
	}
	return protocol.BackgroundShellsStopResult{Stopped: ok}, nil
}
