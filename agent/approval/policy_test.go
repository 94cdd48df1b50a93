package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixture is a checkout with symlinks in and out of it, a nested worktree,
// an agent directory inside it, and a home directory outside it.
type fixture struct {
	root, checkout, agentDir string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{root: root, checkout: filepath.Join(root, "repo"), agentDir: filepath.Join(root, "repo", "agent")}
	for _, d := range []string{"repo/.git", "repo/src", "repo/nested", "repo/agent", "outside", "home", "wt",
		"repo/agent/worktrees/ab12/repo/src", "repo/agent/worktrees/cd34/repo"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"repo/src/a.go":        "package a\n",
		"repo/.git/config":     "",
		"repo/nested/.git":     "gitdir: " + root + "/repo/.git/worktrees/nested\n",
		"repo/nested/x":        "",
		"repo/agent/auth.json": "{}",
		"outside/secret":       "",
		"wt/.git":              "gitdir: " + root + "/repo/.git/worktrees/wt\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"repo/link-out":  "../outside",
		"repo/link-in":   "src",
		"repo/link-abs":  root + "/outside/secret",
		"repo/dangling":  "../outside/new.txt",
		"repo/loop1":     "loop2",
		"repo/loop2":     "loop1",
		"repo/src/up":    "..",
		"repolink":       "repo",
		"repo/link-wt":   "../wt",
		"repo/link-file": "src/a.go",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("KNIGHTCODE_CODING_AGENT_DIR", f.agentDir)
	return f
}

func input(t *testing.T, v map[string]any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verdict is what a test expects of a Verdict: Reason is a substring ("" for
// none), Prefix the offered prefix's text.
type verdict struct {
	Ask       bool
	Reason    string
	Decisions []Decision
	Prefix    string
}

var (
	plain      = []Decision{DecisionAccept, DecisionDecline, DecisionCancel}
	forSession = []Decision{DecisionAccept, DecisionAcceptForSession, DecisionDecline, DecisionCancel}
	forPrefix  = []Decision{DecisionAccept, DecisionAcceptPrefixForSession, DecisionDecline, DecisionCancel}
)

func TestDecide(t *testing.T) {
	f := newFixture(t)
	path := func(p string) json.RawMessage { return input(t, map[string]any{"path": p}) }
	cmd := func(c string) json.RawMessage { return input(t, map[string]any{"command": c}) }
	grant := func(tools ...string) func(*Grants) {
		return func(g *Grants) {
			for _, tool := range tools {
				g.GrantTool(tool)
			}
		}
	}
	grantPrefix := func(words ...string) func(*Grants) {
		return func(g *Grants) { g.GrantPrefix(Prefix{Shell: ShellBash, Words: words}) }
	}
	const outside = "outside the checkout"
	tests := []struct {
		name     string
		mode     Mode
		tool     string
		input    json.RawMessage
		cwd      string // relative to the fixture's root; the checkout when empty
		checkout string // relative to the fixture's root; "repo" when empty
		grants   func(*Grants)
		want     verdict
	}{
		{name: "fullAccess write outside", mode: ModeFullAccess, tool: ToolWrite, input: path(f.root + "/outside/x")},
		{name: "fullAccess bash list", mode: ModeFullAccess, tool: ToolBash, input: cmd("git status && rm -rf ~")},
		{name: "fullAccess unknown tool", mode: ModeFullAccess, tool: "mcp__x"},

		{name: "read inside, relative", mode: ModeAsk, tool: ToolRead, input: path("src/a.go")},
		{name: "read inside, absolute", mode: ModeAsk, tool: ToolRead, input: path(f.checkout + "/src/a.go")},
		{name: "read the checkout itself", mode: ModeAsk, tool: ToolRead, input: path(".")},
		{name: "read a missing file inside", mode: ModeAsk, tool: ToolRead, input: path("src/missing/b.go")},
		{name: "read through a symlink inside", mode: ModeAsk, tool: ToolRead, input: path("link-in/a.go")},
		{name: "read a symlink to a file inside", mode: ModeAsk, tool: ToolRead, input: path("link-file")},
		{name: "read dot-dot out", mode: ModeAsk, tool: ToolRead, input: path("../outside/secret"),
			want: verdict{Ask: true, Reason: "read: " + f.root + "/outside/secret is " + outside, Decisions: plain}},
		{name: "read through a symlink out", mode: ModeAsk, tool: ToolRead, input: path("link-out/secret"),
			want: verdict{Ask: true, Reason: "which resolves to " + f.root + "/outside/secret", Decisions: plain}},
		{name: "read an absolute symlink out", mode: ModeAsk, tool: ToolRead, input: path("link-abs"),
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		// The tools clean ".." lexically before the kernel follows src/up,
		// so this names repo/src/outside/secret.
		{name: "read dot-dot after a symlink", mode: ModeAsk, tool: ToolRead, input: path("src/up/../outside/secret")},
		{name: "read through a symlink to ..", mode: ModeAsk, tool: ToolRead, input: path("src/up/src/a.go")},
		{name: "read through a symlink to .. twice", mode: ModeAsk, tool: ToolRead, input: path("src/up/src/up/link-out/secret"),
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		{name: "read in home", mode: ModeAsk, tool: ToolRead, input: path("~/notes"),
			want: verdict{Ask: true, Reason: f.root + "/home/notes is " + outside, Decisions: plain}},
		{name: "read in another worktree", mode: ModeAsk, tool: ToolRead, input: path("link-wt/x"),
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		{name: "read in a nested worktree", mode: ModeAsk, tool: ToolRead, input: path("nested/x"),
			want: verdict{Ask: true, Reason: "another git worktree or repository", Decisions: plain}},
		{name: "read in .git", mode: ModeAsk, tool: ToolRead, input: path(".git/config"),
			want: verdict{Ask: true, Reason: "git directory", Decisions: plain}},
		{name: "read in the agent dir", mode: ModeAsk, tool: ToolRead, input: path("agent/auth.json"),
			want: verdict{Ask: true, Reason: "agent directory", Decisions: plain}},
		{name: "read a symlink loop", mode: ModeAsk, tool: ToolRead, input: path("loop1"),
			want: verdict{Ask: true, Reason: "cannot tell where", Decisions: plain}},
		{name: "read below a file", mode: ModeAsk, tool: ToolRead, input: path("src/a.go/x"),
			want: verdict{Ask: true, Reason: "cannot tell where", Decisions: plain}},
		{name: "read with no path", mode: ModeAsk, tool: ToolRead, input: json.RawMessage(`{}`),
			want: verdict{Ask: true, Reason: "names no path", Decisions: plain}},
		{name: "read with an empty path", mode: ModeAsk, tool: ToolRead, input: path(""),
			want: verdict{Ask: true, Reason: "cannot tell where", Decisions: plain}},
		{name: "read with a bad input", mode: ModeAsk, tool: ToolRead, input: json.RawMessage(`[`),
			want: verdict{Ask: true, Reason: "names no path", Decisions: plain}},
		{name: "read from a subdirectory cwd", mode: ModeAsk, tool: ToolRead, input: path("a.go"), cwd: "repo/src"},
		{name: "read up from a subdirectory cwd", mode: ModeAsk, tool: ToolRead, input: path("../../outside/secret"), cwd: "repo/src",
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		{name: "read with a symlinked checkout", mode: ModeAsk, tool: ToolRead, input: path(f.checkout + "/src/a.go"), checkout: "repolink"},
		{name: "read with a relative checkout", mode: ModeAsk, tool: ToolRead, input: path("src/a.go"), checkout: "-",
			want: verdict{Ask: true, Reason: "not an absolute path", Decisions: plain}},
		{name: "unknown mode reads inside", mode: "yolo", tool: ToolRead, input: path("src/a.go")},
		{name: "read in a worktree in the agent dir", mode: ModeAsk, tool: ToolRead, input: path("src/a.go"), checkout: "repo/agent/worktrees/ab12/repo"},
		{name: "read another worktree in the agent dir", mode: ModeAsk, tool: ToolRead, input: path("../../cd34/repo/x"), checkout: "repo/agent/worktrees/ab12/repo",
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		{name: "read the agent dir from a worktree in it", mode: ModeAsk, tool: ToolRead, input: path("../../../auth.json"), checkout: "repo/agent/worktrees/ab12/repo",
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},

		{name: "write inside", mode: ModeAsk, tool: ToolWrite, input: path("src/new.go"),
			want: verdict{Ask: true, Decisions: forSession}},
		{name: "write inside, granted", mode: ModeAsk, tool: ToolWrite, input: path("new/dir/new.go"), grants: grant(ToolWrite)},
		{name: "write inside, edit granted", mode: ModeAsk, tool: ToolWrite, input: path("src/new.go"), grants: grant(ToolEdit),
			want: verdict{Ask: true, Decisions: forSession}},
		{name: "write outside, granted", mode: ModeAsk, tool: ToolWrite, input: path("../outside/x"), grants: grant(ToolWrite),
			want: verdict{Ask: true, Reason: "write: " + f.root + "/outside/x is " + outside, Decisions: plain}},
		{name: "write a dangling symlink out, granted", mode: ModeAsk, tool: ToolWrite, input: path("dangling"), grants: grant(ToolWrite),
			want: verdict{Ask: true, Reason: "which resolves to " + f.root + "/outside/new.txt", Decisions: plain}},
		{name: "write the agent dir, granted", mode: ModeAsk, tool: ToolWrite, input: path(f.agentDir + "/x"), grants: grant(ToolWrite),
			want: verdict{Ask: true, Reason: "agent directory", Decisions: plain}},
		{name: "write a hook, granted", mode: ModeAsk, tool: ToolWrite, input: path(".git/hooks/pre-commit"), grants: grant(ToolWrite),
			want: verdict{Ask: true, Reason: "git directory", Decisions: plain}},
		{name: "write a nested worktree, granted", mode: ModeAsk, tool: ToolWrite, input: path("nested/y"), grants: grant(ToolWrite),
			want: verdict{Ask: true, Reason: "another git worktree", Decisions: plain}},
		{name: "edit inside", mode: ModeAsk, tool: ToolEdit, input: path("src/a.go"),
			want: verdict{Ask: true, Decisions: forSession}},
		{name: "edit inside, granted", mode: ModeAsk, tool: ToolEdit, input: path("src/a.go"), grants: grant(ToolEdit)},
		{name: "edit outside, granted", mode: ModeAsk, tool: ToolEdit, input: path("link-out/secret"), grants: grant(ToolEdit),
			want: verdict{Ask: true, Reason: outside, Decisions: plain}},
		{name: "unknown mode edits", mode: "", tool: ToolEdit, input: path("src/a.go"),
			want: verdict{Ask: true, Decisions: forSession}},

		{name: "bash with a prefix", mode: ModeAsk, tool: ToolBash, input: cmd("git status --short"),
			want: verdict{Ask: true, Decisions: forPrefix, Prefix: "git status"}},
		{name: "bash without a prefix", mode: ModeAsk, tool: ToolBash, input: cmd("git status && rm -rf ~"),
			want: verdict{Ask: true, Decisions: plain}},
		{name: "bash with a bad input", mode: ModeAsk, tool: ToolBash, input: json.RawMessage(`{"command": 1}`),
			want: verdict{Ask: true, Decisions: plain}},
		{name: "bash granted", mode: ModeAsk, tool: ToolBash, input: cmd("git status --short"), grants: grantPrefix("git", "status")},
		{name: "bash granted, other subcommand", mode: ModeAsk, tool: ToolBash, input: cmd("git reset --hard"), grants: grantPrefix("git", "status"),
			want: verdict{Ask: true, Decisions: forPrefix, Prefix: "git reset"}},
		{name: "bash granted, chained", mode: ModeAsk, tool: ToolBash, input: cmd("git status; rm -rf ~"), grants: grantPrefix("git", "status"),
			want: verdict{Ask: true, Decisions: plain}},
		{name: "bash granted as a tool", mode: ModeAsk, tool: ToolBash, input: cmd("git status"), grants: grant(ToolBash),
			want: verdict{Ask: true, Decisions: forPrefix, Prefix: "git status"}},
		{name: "bash in an unknown mode", mode: "yolo", tool: ToolBash, input: cmd("ls"),
			want: verdict{Ask: true, Decisions: forPrefix, Prefix: "ls"}},
		// R12: a push to a folder of the working directory runs that
		// repository's hooks; asked with a reason and no prefix, even under
		// a git push grant (QA: a patch made sub/ a bare repository with a
		// pre-receive hook, then a granted git push ./sub ran it).
		{name: "git push to a remote, granted", mode: ModeAsk, tool: ToolBash, input: cmd("git push origin HEAD:main"), grants: grantPrefix("git", "push")},
		{name: "git push to a folder here", mode: ModeAsk, tool: ToolBash, input: cmd("git push nested HEAD:x"), grants: grantPrefix("git", "push"),
			want: verdict{Ask: true, Reason: "git push pushes to nested, a folder here, not a remote: a repository on this machine runs its own hooks", Decisions: plain}},
		{name: "git push to a folder here, options first", mode: ModeAsk, tool: ToolBash, input: cmd("git push -u --force-with-lease src main"),
			want: verdict{Ask: true, Reason: "git push pushes to src, a folder here, not a remote: a repository on this machine runs its own hooks", Decisions: plain}},
		{name: "git push written as a path", mode: ModeAsk, tool: ToolBash, input: cmd("git push ./sub HEAD:x"), grants: grantPrefix("git", "push"),
			want: verdict{Ask: true, Decisions: plain}},
		{name: "git push with no repository", mode: ModeAsk, tool: ToolBash, input: cmd("git push"),
			want: verdict{Ask: true, Decisions: forPrefix, Prefix: "git push"}},

		{name: "unknown tool", mode: ModeAsk, tool: "mcp__x", input: json.RawMessage(`{}`),
			want: verdict{Ask: true, Decisions: forSession}},
		{name: "unknown tool, granted", mode: ModeAsk, tool: "mcp__x", grants: grant("mcp__x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Grants{}
			if tt.grants != nil {
				tt.grants(g)
			}
			c := Call{Mode: tt.mode, Tool: tt.tool, Input: tt.input, Checkout: f.checkout, AgentDir: f.agentDir}
			if tt.cwd != "" {
				c.Cwd = filepath.Join(f.root, tt.cwd)
			}
			switch tt.checkout {
			case "":
			case "-":
				c.Checkout, c.Cwd = "repo", f.checkout
			default:
				c.Checkout = filepath.Join(f.root, tt.checkout)
				if tt.cwd == "" {
					c.Cwd = c.Checkout
				}
			}
			v := Decide(c, g)
			got := verdict{Ask: v.Ask, Reason: v.Reason, Decisions: v.Decisions}
			if v.Prefix != nil {
				got.Prefix = v.Prefix.String()
			}
			if tt.want.Reason != "" && strings.Contains(got.Reason, tt.want.Reason) {
				got.Reason = tt.want.Reason
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%s %s %s) (-want +got):\n%s\nreason: %s", tt.mode, tt.tool, tt.input, diff, v.Reason)
			}
		})
	}
}

func TestDecideNilGrants(t *testing.T) {
	f := newFixture(t)
	v := Decide(Call{Mode: ModeAsk, Tool: ToolEdit, Input: input(t, map[string]any{"path": "src/a.go"}), Checkout: f.checkout}, nil)
	if diff := cmp.Diff(Verdict{Ask: true, Decisions: forSession}, v); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAnswer: each decision's outcome and the grant it leaves, and that a
// fresh Grants (a new load) asks again.
func TestAnswer(t *testing.T) {
	f := newFixture(t)
	edit := Call{Mode: ModeAsk, Tool: ToolEdit, Input: input(t, map[string]any{"path": "src/a.go"}), Checkout: f.checkout}
	editOut := Call{Mode: ModeAsk, Tool: ToolEdit, Input: input(t, map[string]any{"path": "../outside/secret"}), Checkout: f.checkout}
	bash := func(c string) Call {
		return Call{Mode: ModeAsk, Tool: ToolBash, Input: input(t, map[string]any{"command": c}), Checkout: f.checkout}
	}
	tests := []struct {
		name     string
		call     Call
		decision Decision
		want     Outcome
		after    Call // decided again after the answer
		askAfter bool
	}{
		{"accept", edit, DecisionAccept, OutcomeRun, edit, true},
		{"decline", edit, DecisionDecline, OutcomeDecline, edit, true},
		{"cancel", edit, DecisionCancel, OutcomeCancel, edit, true},
		{"unknown", edit, Decision("yes"), OutcomeDecline, edit, true},
		{"empty", edit, Decision(""), OutcomeDecline, edit, true},
		{"acceptForSession", edit, DecisionAcceptForSession, OutcomeRun, edit, false},
		{"acceptForSession leaves outside asking", edit, DecisionAcceptForSession, OutcomeRun, editOut, true},
		{"acceptForSession unoffered outside", editOut, DecisionAcceptForSession, OutcomeDecline, edit, true},
		{"acceptPrefixForSession unoffered for edit", edit, DecisionAcceptPrefixForSession, OutcomeDecline, edit, true},
		{"acceptPrefixForSession", bash("git status"), DecisionAcceptPrefixForSession, OutcomeRun, bash("git status -sb"), false},
		{"acceptPrefixForSession, other command", bash("git status"), DecisionAcceptPrefixForSession, OutcomeRun, bash("git statusx"), true},
		{"acceptPrefixForSession unoffered", bash("git status | sh"), DecisionAcceptPrefixForSession, OutcomeDecline, bash("git status | sh"), true},
		{"acceptForSession unoffered for bash", bash("git status"), DecisionAcceptForSession, OutcomeDecline, bash("git status"), true},
		{"accept bash grants nothing", bash("git status"), DecisionAccept, OutcomeRun, bash("git status"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Grants{}
			v := Decide(tt.call, g)
			if !v.Ask {
				t.Fatalf("Decide(%s) does not ask", tt.call.Input)
			}
			if got := g.Answer(tt.call.Tool, v, tt.decision); got != tt.want {
				t.Errorf("Answer(%q) = %v, want %v", tt.decision, got, tt.want)
			}
			if got := Decide(tt.after, g).Ask; got != tt.askAfter {
				t.Errorf("after %q, Decide(%s).Ask = %v, want %v", tt.decision, tt.after.Input, got, tt.askAfter)
			}
			if !Decide(tt.after, &Grants{}).Ask {
				t.Errorf("a new load's Grants do not ask for %s", tt.after.Input)
			}
		})
	}
}

// TestAnswerPrefixWithoutPrefix: a verdict claiming acceptPrefixForSession
// with no prefix grants nothing.
func TestAnswerPrefixWithoutPrefix(t *testing.T) {
	g := &Grants{}
	v := Verdict{Ask: true, Decisions: forPrefix}
	if got := g.Answer(ToolBash, v, DecisionAcceptPrefixForSession); got != OutcomeDecline {
		t.Errorf("Answer = %v, want OutcomeDecline", got)
	}
	if len(g.prefixes) != 0 {
		t.Errorf("granted %v", g.prefixes)
	}
}

func TestGrants(t *testing.T) {
	var g Grants
	g.GrantTool(ToolBash)
	g.GrantTool("")
	g.GrantPrefix(Prefix{Shell: ShellBash})
	p := Prefix{Shell: ShellBash, Words: []string{"git", "status"}}
	g.GrantPrefix(p)
	g.GrantPrefix(p)
	p.Words[1] = "reset" // the grant keeps its own copy
	if g.ToolGranted(ToolBash) || g.ToolGranted("") {
		t.Error("a shell or an empty tool name was granted")
	}
	if len(g.prefixes) != 1 {
		t.Errorf("prefixes = %v, want one", g.prefixes)
	}
	if !g.PrefixGranted(ShellBash, "git status") || g.PrefixGranted(ShellBash, "git reset") {
		t.Error("the granted prefix changed with the caller's slice")
	}
	if g.PrefixGranted(ShellPowerShell, "git status") {
		t.Error("a bash grant matches a PowerShell command")
	}
	var nilGrants *Grants
	if nilGrants.ToolGranted(ToolEdit) || nilGrants.PrefixGranted(ShellBash, "git status") {
		t.Error("nil Grants hold a grant")
	}
}

// TestGrantsConcurrent runs under -race.
func TestGrantsConcurrent(t *testing.T) {
	var g Grants
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.GrantTool(ToolEdit)
			g.GrantPrefix(Prefix{Shell: ShellBash, Words: []string{"make", string(rune('a' + i))}})
			g.ToolGranted(ToolWrite)
			g.PrefixGranted(ShellBash, "make a")
		}()
	}
	wg.Wait()
	if !g.ToolGranted(ToolEdit) || !g.PrefixGranted(ShellBash, "make h") {
		t.Error("a concurrent grant was lost")
	}
}

// TestDecideReadOnly: a tool other than the built-ins that declares the
// call read-only runs in ask mode without asking; the built-ins ignore
// the flag (a write outside nothing still asks, bash still asks).
func TestDecideReadOnly(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		tool, input string
		ask         bool
	}{
		{"mcp__srv__peek", `{}`, false},
		{"write", `{"path":"a.txt"}`, true},
		{"bash", `{"command":"rm -rf /"}`, true},
		{"edit", `{"path":"a.txt"}`, true},
	} {
		v := Decide(Call{Mode: ModeAsk, Tool: c.tool, Input: json.RawMessage(c.input), Checkout: dir, ReadOnly: true}, nil)
		if v.Ask != c.ask {
			t.Errorf("%s %s read-only: ask %v, want %v", c.tool, c.input, v.Ask, c.ask)
		}
	}
}
