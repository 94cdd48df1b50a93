package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Mode is a thread's approval mode (spec: Approvals): "ask" or "fullAccess",
// the strings of the wire's approvalMode.
type Mode string

// The approval modes. Decide treats any other value as ModeAsk.
const (
	ModeAsk        Mode = "ask"
	ModeFullAccess Mode = "fullAccess"
)

// Decision is one answer a person can give to item/toolCall/requestApproval,
// spelled as on the wire (spec: Approvals).
type Decision string

// The decisions. Decide offers accept, decline and cancel on every ask, plus
// acceptForSession for tools that are not shells, or acceptPrefixForSession
// for a shell command that has a derived prefix.
const (
	DecisionAccept                 Decision = "accept"
	DecisionAcceptForSession       Decision = "acceptForSession"
	DecisionAcceptPrefixForSession Decision = "acceptPrefixForSession"
	DecisionDecline                Decision = "decline"
	DecisionCancel                 Decision = "cancel"
)

// The built-in tool names the policy knows (agent/tools).
const (
	ToolRead  = "read"
	ToolBash  = "bash"
	ToolEdit  = "edit"
	ToolWrite = "write"
)

// shells maps a tool name to the shell its command runs in: such a tool is
// never granted for the session, only by prefix.
var shells = map[string]Shell{ToolBash: ShellBash}

// ShellOf returns the shell a tool runs its command in, and false for a tool
// that is not a shell.
func ShellOf(tool string) (Shell, bool) {
	s, ok := shells[tool]
	return s, ok
}

// Call is one tool call to decide on.
type Call struct {
	Mode Mode   // the thread's effective approval mode
	Tool string // the tool's name: read, bash, edit, write, or another tool
	// Input is the call's arguments object. read, edit and write are asked
	// for their "path", bash for its "command".
	Input json.RawMessage
	// Cwd is the directory the tool resolves relative paths against (the
	// thread's cwd, possibly a subdirectory of Checkout); Checkout when
	// empty.
	Cwd string
	// Checkout is the root of the thread's checkout (its working tree): the
	// user's checkout in local mode, the thread's worktree in worktree mode.
	Checkout string
	// AgentDir is the agent directory (KNIGHTCODE_CODING_AGENT_DIR): outside
	// the checkout even when it lies inside it. Empty when unknown.
	AgentDir string
	// ReadOnly says the tool declares the call reads only (an MCP tool's
	// annotations.readOnlyHint, EXTENSIBILITY.md §2): ask mode runs a tool
	// other than the built-ins without asking. The built-ins ignore it.
	ReadOnly bool
}

// Verdict is the policy's answer for one call: run it without asking (Ask is
// false), or send item/toolCall/requestApproval with Reason (may be empty),
// Decisions (in the order to show them) and, when DecisionAcceptPrefixForSession
// is offered, Prefix (its String is the wire's prefix).
type Verdict struct {
	Ask       bool
	Reason    string
	Decisions []Decision
	Prefix    *Prefix
}

var run = Verdict{}

// ask returns an asking verdict offering accept, extra (when not empty),
// decline and cancel.
func ask(reason string, extra Decision, prefix *Prefix) Verdict {
	d := []Decision{DecisionAccept}
	if extra != "" {
		d = append(d, extra)
	}
	return Verdict{Ask: true, Reason: reason, Decisions: append(d, DecisionDecline, DecisionCancel), Prefix: prefix}
}

// Decide applies the approval policy (spec: Approvals; issue 11) to one call
// with the thread's session grants g (nil: none):
//   - fullAccess asks nothing.
//   - read runs when its path resolves inside the checkout, and asks with a
//     reason otherwise.
//   - edit and write ask, offering acceptForSession, unless g holds a session
//     grant of the tool; a path that resolves outside the checkout asks with a
//     reason even then (a session grant covers the checkout only, a deliberate
//     narrowing of the spec), without acceptForSession, which would not cover
//     it.
//   - bash asks unless the command matches a prefix granted for the session;
//     acceptPrefixForSession is offered with the command's prefix when Derive
//     gives one.
//   - any other tool asks, offering acceptForSession, unless granted or
//     ReadOnly.
//
// Paths resolve as the file tools resolve them ("~" is the home directory,
// relative paths join Cwd) and then through every symlink, an existing or a
// dangling one; "outside" covers the agent directory, the checkout's .git
// directory and every nested git worktree or repository (one whose directory
// under the checkout holds a .git entry; submodules included). A path that
// cannot be resolved, an input that cannot be read, an unknown mode and a
// relative or empty Checkout all fail closed: the call asks.
func Decide(c Call, g *Grants) Verdict {
	if c.Mode == ModeFullAccess {
		return run
	}
	if shell, ok := ShellOf(c.Tool); ok {
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(c.Input, &in) // undecodable: an empty command, which derives nothing
		if reason := localRepository(c, shell, in.Command); reason != "" {
			return ask(reason, "", nil)
		}
		if g.PrefixGranted(shell, in.Command) {
			return run
		}
		if p, ok := Derive(shell, in.Command); ok {
			return ask("", DecisionAcceptPrefixForSession, &p)
		}
		return ask("", "", nil)
	}
	switch c.Tool {
	case ToolRead, ToolEdit, ToolWrite:
		if reason := outside(c); reason != "" {
			return ask(reason, "", nil)
		}
		if c.Tool == ToolRead || g.ToolGranted(c.Tool) {
			return run
		}
		return ask("", DecisionAcceptForSession, nil)
	}
	if c.ReadOnly || g.ToolGranted(c.Tool) {
		return run
	}
	return ask("", DecisionAcceptForSession, nil)
}

// localRepository returns why a shell command that would otherwise get a
// prefix must ask with none, even under a grant: a git push whose
// repository argument names a path that exists in the working directory
// (git takes a folder when no remote has that name) pushes to a repository
// on this machine, whose hooks then run (SHELL-PREFIX.md R12: a program the
// command line does not name). Derive already refuses one written as a
// path or a file URL. "" when there is no such reason.
func localRepository(c Call, shell Shell, command string) string {
	p, words, ok := derive(shell, command)
	if !ok {
		return ""
	}
	r, ok := pushRepository(p, words)
	if !ok {
		return ""
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Checkout
	}
	if _, err := os.Lstat(filepath.Join(cwd, r)); err != nil && errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return fmt.Sprintf("%s pushes to %s, a folder here, not a remote: a repository on this machine runs its own hooks", p, r)
}

// outside returns why the path a file tool's call names is outside the
// checkout, or "" when it is inside.
func outside(c Call) string {
	var in struct {
		Path *string `json:"path"`
	}
	if err := json.NewDecoder(bytes.NewReader(c.Input)).Decode(&in); err != nil || in.Path == nil {
		return fmt.Sprintf("%s: the call names no path, so it cannot be checked against the checkout", c.Tool)
	}
	cwd := c.Cwd
	if cwd == "" {
		cwd = c.Checkout
	}
	w, err := Locate(*in.Path, cwd, c.Checkout, c.AgentDir)
	if err != nil {
		return fmt.Sprintf("%s: cannot tell where %q resolves (%v), so it is treated as outside the checkout", c.Tool, *in.Path, err)
	}
	if w.Inside() {
		return ""
	}
	return fmt.Sprintf("%s: %s", c.Tool, w.Why)
}
