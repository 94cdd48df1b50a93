package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// BackgroundShellPath is the Path of the background_shell extension.
const BackgroundShellPath = ext.BuiltinPathPrefix + "background_shell"

// NoticeEntryType is the customType of the custom entry that keeps, in the
// session file, a notice the model has not been told of yet.
const NoticeEntryType = "background_shell_notice"

// NoticeData is the data of a background_shell_notice entry.
type NoticeData struct {
	BackgroundShells []protocol.BackgroundShellNotice `json:"backgroundShells"`
	Steer            bool                             `json:"steer"`
}

// Notice is an ended command the model has not been told of yet. Steer
// says it may be steered into a running turn (it ended by itself).
type Notice struct {
	Shell protocol.BackgroundShellNotice
	Steer bool
}

// BackgroundShells is the extension background_shell of one thread load
// (spec thread/backgroundShells/*; README "Background shells"): every end
// of a background command but the session's own becomes a notice for the
// model, an extensionMessage of extension background_shell. The notice
// goes with the next turn (its before_agent_start message, after the
// input), or, for a command that ended by itself while a turn runs, is
// steered into that turn after the reply whose calls were running (its
// turn_end handler sends it with ext.DeliverSteer). The notices waiting
// together go as one message, in the order the commands ended.
//
// A notice outlives the load: it is written to the session file when the
// command ends (API.AppendEntry, a background_shell_notice entry), and a
// load starts with the notices of its branch that no later
// background_shell message delivered (PendingNotices).
//
// The thread feeds it its registry's events (ShellChanged), each before
// it reports that change to its subscribers, so a notice is in the
// session file before a client hears of the end.
type BackgroundShells struct {
	mu      sync.Mutex
	api     *ext.API // set by Load
	pending []Notice // the notices the model has not been told of, in order
}

// NewBackgroundShells returns the extension of a thread load that starts
// with the notices pending (PendingNotices of its branch).
func NewBackgroundShells(pending []Notice) *BackgroundShells {
	return &BackgroundShells{pending: slices.Clone(pending)}
}

// Extension is b as the thread loads it.
func (b *BackgroundShells) Extension() ext.Extension {
	return ext.Extension{Path: BackgroundShellPath, Load: func(api *ext.API) error {
		b.mu.Lock()
		b.api = api
		b.mu.Unlock()
		api.OnBeforeAgentStart(func(context.Context, *ext.Thread, ext.BeforeAgentStartEvent) (ext.BeforeAgentStartResult, error) {
			msg, ok := b.take(false)
			if !ok {
				return ext.BeforeAgentStartResult{}, nil
			}
			return ext.BeforeAgentStartResult{Message: &msg}, nil
		})
		api.OnTurnEnd(func(context.Context, *ext.Thread, ext.TurnEndEvent) error {
			if msg, ok := b.take(true); ok {
				return api.SendMessage(msg, ext.DeliverSteer)
			}
			return nil
		})
		return nil
	}}
}

// ShellChanged is given every event of the thread's background shell
// registry, on the goroutine that started or ended the shell. The end of a
// shell, unless its session ended, becomes a notice: written to the
// session file first, then kept for the model. A notice that cannot be
// written (the thread is unloading) is dropped.
func (b *BackgroundShells) ShellChanged(e tools.ShellEvent) {
	if !e.Ended || e.SessionEnded {
		return
	}
	b.mu.Lock()
	api := b.api
	b.mu.Unlock()
	if api == nil {
		return
	}
	s := e.Shell
	n := Notice{
		Shell: protocol.BackgroundShellNotice{ID: s.ID, Command: s.Command, Status: string(s.Status),
			ExitCode: s.ExitCode, Error: s.Error, OutputTail: s.OutputTail},
		Steer: !e.ByUser,
	}
	data, err := json.Marshal(NoticeData{BackgroundShells: []protocol.BackgroundShellNotice{n.Shell}, Steer: n.Steer})
	if err == nil {
		err = api.AppendEntry(NoticeEntryType, data)
	}
	if err != nil {
		return
	}
	b.mu.Lock()
	b.pending = append(b.pending, n)
	b.mu.Unlock()
}

// Pending returns the notices the model has not been told of, in order.
func (b *BackgroundShells) Pending() []Notice {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.pending)
}

// take returns the message telling the model of the waiting notices (all
// of them, or with steerOnly those that may be steered into a running
// turn) and forgets them; ok is false when there are none.
func (b *BackgroundShells) take(steerOnly bool) (ext.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var shells []protocol.BackgroundShellNotice
	b.pending = slices.DeleteFunc(b.pending, func(n Notice) bool {
		if steerOnly && !n.Steer {
			return false
		}
		shells = append(shells, n.Shell)
		return true
	})
	if len(shells) == 0 {
		return ext.Message{}, false
	}
	return NoticeMessage(shells), true
}

// PendingNotices returns the notices of the branch's
// background_shell_notice entries that no later background_shell message
// (the notice as the model got it) names, in order.
func PendingNotices(branch []session.Entry) []Notice {
	var out []Notice
	for _, e := range branch {
		switch {
		case e.Type == session.TypeCustom && e.CustomType == NoticeEntryType:
			var d NoticeData
			if json.Unmarshal(e.Data, &d) != nil {
				continue
			}
			for _, s := range d.BackgroundShells {
				out = append(out, Notice{Shell: s, Steer: d.Steer})
			}
		case e.Type == session.TypeMessage && e.Role() == session.RoleCustom && len(out) > 0:
			var m agent.Message
			if json.Unmarshal(e.Message, &m) != nil || m.CustomType != protocol.ExtensionBackgroundShell {
				continue
			}
			told := session.ExtensionItem(m.CustomType, "", m.Details, 0).BackgroundShells
			out = slices.DeleteFunc(out, func(n Notice) bool {
				return slices.ContainsFunc(told, func(s protocol.BackgroundShellNotice) bool { return s.ID == n.Shell.ID })
			})
		}
	}
	return out
}

// NoticeMessage is the message (extension background_shell) telling the
// model that shells ended: its text says how each ended with the end of
// its output; details carry {backgroundShells}.
func NoticeMessage(shells []protocol.BackgroundShellNotice) ext.Message {
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
	return ext.Message{
		CustomType: protocol.ExtensionBackgroundShell, Display: true,
		Content: []agent.ContentBlock{agent.TextBlock(b.String())}, Details: details,
	}
}
