package threads

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Background shells (spec: thread/backgroundShells/*): the commands a
// thread's bash calls started with run_in_background live in its
// ProcessGroups' registry (tools.BackgroundShells) and end with the session
// (finishUnload's StopAll). Every start and end reaches the subscribers as
// thread/backgroundShells/updated; every end but the session's own becomes
// a notice for the model: an extensionMessage (extension background_shell)
// delivered with the next turn, or steered into the running one when the
// command ended by itself. A command the user stopped is recorded for the
// next turn without starting one. A running background shell is running
// work: the thread does not unload idle while one runs.
//
// A notice outlives the thread's load: it is written to the session file
// when the command ends, as a custom entry (customType
// background_shell_notice, data {backgroundShells: [notice], steer}), and
// a thread loading again (register) takes back every such entry of its
// branch that no later background_shell message delivered (pendingNotices),
// so the model still gets it with its next turn.

// bgNotice is an ended command the model has not been told of yet. steer
// says it may be steered into a running turn (it ended by itself).
type bgNotice struct {
	shell protocol.BackgroundShellNotice
	steer bool
}

// watchBackgroundShells makes the thread receive its background shells'
// events on its goroutine (called once by register).
func (t *thread) watchBackgroundShells() {
	t.procs.Shells().SetOnChange(func(e tools.ShellEvent) {
		t.post(func() { t.backgroundShellChanged(e) })
	})
}

// backgroundShellChanged (owner goroutine) reports the whole list to the
// subscribers and, for an end, keeps the notice for the model and rechecks
// the idle unload.
func (t *thread) backgroundShellChanged(e tools.ShellEvent) {
	if t.exited {
		return
	}
	if !e.Ended {
		t.notifyShells()
		t.disarmIdle()
		return
	}
	// The notice is in the session file before the subscribers hear of the
	// end, so a client that unloads the thread on that event cannot lose it.
	if !e.SessionEnded && !t.unloading {
		s := e.Shell
		n := bgNotice{
			shell: protocol.BackgroundShellNotice{ID: s.ID, Command: s.Command, Status: string(s.Status),
				ExitCode: s.ExitCode, Error: s.Error, OutputTail: s.OutputTail},
			steer: !e.ByUser,
		}
		t.bgNotices = append(t.bgNotices, n)
		t.persistNotice(n)
	}
	t.notifyShells()
	t.checkIdle()
}

// notifyShells (owner goroutine) sends the subscribers the whole list of the
// thread's background shells (thread/backgroundShells/updated).
func (t *thread) notifyShells() {
	t.notify(protocol.ThreadBackgroundShellsUpdated.With(protocol.BackgroundShellsUpdatedParams{
		ThreadID: t.id, Shells: wireShells(t.procs.Shells().List()),
	}))
}

// noticeEntryType is the customType of the custom entry that keeps a
// notice the model has not been told of yet in the session file.
const noticeEntryType = "background_shell_notice"

// noticeData is the data of a background_shell_notice entry.
type noticeData struct {
	BackgroundShells []protocol.BackgroundShellNotice `json:"backgroundShells"`
	Steer            bool                             `json:"steer"`
}

// persistNotice (owner goroutine) writes n to the session file as a
// background_shell_notice entry. A failure is logged: the notice still
// reaches the model during this load.
func (t *thread) persistNotice(n bgNotice) {
	data, err := json.Marshal(noticeData{BackgroundShells: []protocol.BackgroundShellNotice{n.shell}, Steer: n.steer})
	if err == nil {
		_, err = t.append(session.NewCustom(noticeEntryType, data))
	}
	if err != nil {
		t.m.log.Warn("persisting a background shell notice failed; it is lost if the thread unloads first", "thread", t.id, "shell", n.shell.ID, "err", err)
	}
}

// pendingNotices returns the notices of the branch's
// background_shell_notice entries that no later background_shell message
// (the notice as the model got it) names, in order.
func pendingNotices(branch []session.Entry) []bgNotice {
	var out []bgNotice
	for _, e := range branch {
		switch {
		case e.Type == session.TypeCustom && e.CustomType == noticeEntryType:
			var d noticeData
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			for _, s := range d.BackgroundShells {
				out = append(out, bgNotice{shell: s, steer: d.Steer})
			}
		case e.Type == session.TypeMessage && e.Role() == session.RoleCustom && len(out) > 0:
			var m agent.Message
			if json.Unmarshal(e.Message, &m) != nil || m.CustomType != protocol.ExtensionBackgroundShell {
				continue
			}
			told := session.ExtensionItem(m.CustomType, "", m.Details, 0).BackgroundShells
			out = slices.DeleteFunc(out, func(n bgNotice) bool {
				return slices.ContainsFunc(told, func(s protocol.BackgroundShellNotice) bool { return s.ID == n.shell.ID })
			})
		}
	}
	return out
}

// backgroundRunning reports whether a background shell runs (running work
// for the idle unload).
func (t *thread) backgroundRunning() bool { return t.procs.Shells().Running() > 0 }

// takeNotices (owner goroutine) returns the custom message telling the model
// of the ended commands it has not been told of (all of them, or with
// steerOnly those that may be steered into a running turn) and forgets
// them; ok is false when there are none.
func (t *thread) takeNotices(steerOnly bool) (agent.Message, bool) {
	var shells []protocol.BackgroundShellNotice
	kept := t.bgNotices[:0]
	for _, n := range t.bgNotices {
		if steerOnly && !n.steer {
			kept = append(kept, n)
			continue
		}
		shells = append(shells, n.shell)
	}
	clear(t.bgNotices[len(kept):])
	t.bgNotices = kept
	if len(shells) == 0 {
		return agent.Message{}, false
	}
	return noticeMessage(shells), true
}

// noticeMessage is the custom message (extension background_shell) telling
// the model that shells ended: its text says how each ended with the end of
// its output; details carry {backgroundShells}.
func noticeMessage(shells []protocol.BackgroundShellNotice) agent.Message {
	var b strings.Builder
	b.WriteString("Background commands ended:")
	for _, s := range shells {
		fmt.Fprintf(&b, "\n\nShell %s (%s) %s", s.ID, s.Command, s.Status)
		switch {
		case s.ExitCode != nil:
			fmt.Fprintf(&b, " with exit code %d", *s.ExitCode)
		case s.Error != "":
			fmt.Fprintf(&b, ": %s", s.Error)
		}
		b.WriteString(".")
		if s.OutputTail == "" {
			b.WriteString(" It wrote no output.")
		} else {
			b.WriteString(" The end of its output:\n" + s.OutputTail)
		}
	}
	details, _ := json.Marshal(struct {
		BackgroundShells []protocol.BackgroundShellNotice `json:"backgroundShells"`
	}{shells})
	return agent.Message{
		Role: agent.RoleCustom, CustomType: protocol.ExtensionBackgroundShell, Display: true,
		Content: []agent.ContentBlock{agent.TextBlock(b.String())}, Details: details,
	}
}

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
