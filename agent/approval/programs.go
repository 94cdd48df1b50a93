package approval

import (
	"slices"
	"strings"
)

// cmdTable is what a program (or a subcommand with subcommands of its own)
// accepts next (SHELL-PREFIX.md R7).
type cmdTable struct {
	// subs are the known subcommands. Unknown words, aliases and external
	// subcommands (git-<name>, cargo-<name> and kubectl-<name> from PATH)
	// give no prefix; so do dispatchers, interpreters and wrappers (R6),
	// which are left out of every table.
	subs map[string]*sub
	// optional: the table's words may also end with no subcommand (bare "git
	// stash", "git remote -v"). Otherwise a missing subcommand, or an option
	// where it belongs ("git -C dir status"), gives no prefix.
	optional bool
	// exec are arguments that make any command of this table run a program
	// of the caller's choosing (R10).
	exec execArgs
}

// sub is one known subcommand.
type sub struct {
	next *cmdTable // its own subcommands (git stash drop, go mod tidy)
	// script: the next word, a name and not an option, is part of the
	// prefix (npm run build).
	script bool
	// refuse are arguments that turn this subcommand into a dispatcher (git
	// submodule foreach, git bisect run): a command holding one anywhere after
	// the subcommand gets no prefix.
	refuse []string
	exec   execArgs
}

// execArgs are the options that make a granted command run other programs or
// write files (R10). An argument matches a long option when it is "--name" or
// "--name=value" and name is a non-empty prefix of a listed option: git and
// npm accept unique abbreviations ("--upload-pa="), and an ambiguous one fails
// anyway. It matches a short option when it is a single-dash cluster holding
// the letter ("-O", "-nO", "-Ocmd"); conservatively, an attached value
// counts. With single, a single dash also introduces a long option and names
// are compared whole, as Go's flag package does ("-toolexec", "--exec=x";
// "-v" is not "-vettool").
type execArgs struct {
	long   []string
	short  string
	single bool
}

func (e execArgs) match(arg string) bool {
	name, dashes := arg, 0
	for dashes < 2 && strings.HasPrefix(name, "-") {
		name, dashes = name[1:], dashes+1
	}
	if dashes == 0 || name == "" {
		return false
	}
	if dashes == 1 && !e.single {
		return strings.ContainsAny(name, e.short)
	}
	name, _, _ = strings.Cut(name, "=")
	if name == "" {
		return false
	}
	for _, l := range e.long {
		if l == name || !e.single && strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

// subs builds a table of subcommands that have nothing of their own.
func subs(names ...string) map[string]*sub {
	m := make(map[string]*sub, len(names))
	for _, n := range names {
		m[n] = &sub{}
	}
	return m
}

// with returns m with the given subcommands replaced.
func with(m map[string]*sub, special map[string]*sub) map[string]*sub {
	for k, v := range special {
		m[k] = v
	}
	return m
}

var diffOutput = execArgs{long: []string{"output"}}

// gitTable: git subcommands, builtin only (an unknown name runs git-<name>
// from PATH). stash, remote and worktree add their own subcommand. Left out:
// dispatchers and servers such as filter-branch, daemon, instaweb, shell,
// upload-pack and the web--browse and credential helpers.
var gitTable = &cmdTable{subs: with(subs(
	"add", "am", "annotate", "apply", "blame", "branch", "bundle", "cat-file",
	"check-attr", "check-ignore", "checkout", "cherry", "cherry-pick", "clean", "commit",
	"config", "count-objects", "describe", "diff-files", "diff-index", "diff-tree",
	"for-each-ref", "format-patch", "fsck", "gc", "help", "ls-files", "ls-tree", "merge",
	"merge-base", "mv", "name-rev", "notes", "reflog", "reset", "restore", "rev-list",
	"rev-parse", "revert", "rm", "shortlog", "show-branch", "show-ref", "sparse-checkout",
	"status", "switch", "tag", "version",
), map[string]*sub{
	"archive":     {exec: execArgs{long: []string{"exec", "remote"}}},
	"bisect":      {refuse: []string{"run"}},
	"clone":       {exec: execArgs{long: []string{"upload-pack", "template", "config"}, short: "uc"}},
	"diff":        {exec: diffOutput},
	"difftool":    {exec: execArgs{long: []string{"extcmd"}, short: "x"}},
	"fetch":       {exec: execArgs{long: []string{"upload-pack"}}},
	"grep":        {exec: execArgs{long: []string{"open-files-in-pager"}, short: "O"}},
	"init":        {exec: execArgs{long: []string{"template"}}},
	"log":         {exec: diffOutput},
	"ls-remote":   {exec: execArgs{long: []string{"upload-pack"}}},
	"pull":        {exec: execArgs{long: []string{"upload-pack"}}},
	"push":        {exec: execArgs{long: []string{"receive-pack", "exec"}}},
	"range-diff":  {exec: diffOutput},
	"rebase":      {exec: execArgs{long: []string{"exec"}, short: "x"}},
	"show":        {exec: diffOutput},
	"submodule":   {refuse: []string{"foreach"}},
	"whatchanged": {exec: diffOutput},
	"stash": {next: &cmdTable{optional: true, subs: with(subs(
		"list", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store",
	), map[string]*sub{"show": {exec: diffOutput}})}},
	"remote": {next: &cmdTable{optional: true, subs: subs(
		"add", "rename", "remove", "rm", "set-head", "set-branches", "get-url", "set-url",
		"show", "prune", "update",
	)}},
	"worktree": {next: &cmdTable{subs: subs(
		"add", "list", "lock", "move", "prune", "remove", "repair", "unlock",
	)}},
})}

// scriptShell: npm, pnpm and yarn run scripts through a shell these options
// choose (directly, or through a config file they name).
var scriptShell = execArgs{long: []string{"script-shell", "userconfig", "globalconfig"}}

// npmTable: npm's own commands without aliases ("t", "i", "run-script" give
// no prefix); exec, explore, init/create (which run packages) are left out.
var npmTable = &cmdTable{exec: scriptShell, subs: with(subs(
	"access", "audit", "bugs", "cache", "ci", "config", "dedupe", "deprecate", "diff",
	"dist-tag", "docs", "doctor", "explain", "find-dupes", "fund", "help", "install", "link",
	"login", "logout", "ls", "outdated", "owner", "pack", "ping", "pkg", "prefix", "profile",
	"prune", "publish", "query", "rebuild", "repo", "restart", "root", "sbom", "search",
	"shrinkwrap", "star", "start", "stop", "team", "test", "token", "uninstall", "unpublish",
	"unstar", "update", "version", "view", "whoami",
), map[string]*sub{"run": {script: true}})}

// pnpmTable and yarnTable: their own commands; an unknown word runs a script
// or a package binary of that name, and dlx, exec, create, node and
// workspace(s) dispatch, so none of those gives a prefix.
var pnpmTable = &cmdTable{exec: scriptShell, subs: with(subs(
	"add", "audit", "fetch", "import", "install", "licenses", "link", "list", "ls", "outdated",
	"pack", "patch", "prune", "publish", "rebuild", "remove", "root", "start", "store", "test",
	"unlink", "update", "why",
), map[string]*sub{"run": {script: true}})}

var yarnTable = &cmdTable{exec: scriptShell, subs: with(subs(
	"add", "audit", "cache", "config", "info", "install", "licenses", "link", "list", "outdated",
	"pack", "publish", "remove", "test", "unlink", "upgrade", "version", "why",
), map[string]*sub{"run": {script: true}})}

// goTable: go's commands; run, generate and tool (which run programs) are
// left out. -exec, -toolexec and -vettool run a program of the caller's
// choosing under any build command.
var goTable = &cmdTable{
	exec: execArgs{long: []string{"exec", "toolexec", "vettool"}, single: true},
	subs: with(subs(
		"build", "clean", "doc", "env", "fix", "fmt", "get", "install", "list", "test",
		"version", "vet", "work",
	), map[string]*sub{"mod": {next: &cmdTable{subs: subs(
		"download", "edit", "graph", "init", "tidy", "vendor", "verify", "why",
	)}}}),
}

// cargoTable: cargo's builtin commands ("+toolchain", aliases and external
// cargo-<name> give no prefix). --config can set a rustc wrapper or runner.
var cargoTable = &cmdTable{exec: execArgs{long: []string{"config"}}, subs: subs(
	"add", "bench", "build", "check", "clean", "config", "doc", "fetch", "fix",
	"generate-lockfile", "help", "info", "init", "install", "locate-project", "login", "logout",
	"metadata", "new", "owner", "package", "pkgid", "publish", "remove", "report", "run",
	"rustc", "rustdoc", "search", "test", "tree", "uninstall", "update", "vendor",
	"verify-project", "version", "yank",
)}

// dockerTable: docker's commands; run, exec, attach, container (which holds
// run and exec) and plugins are left out; compose adds its own subcommand.
var dockerTable = &cmdTable{subs: with(subs(
	"build", "builder", "commit", "context", "cp", "create", "diff", "events", "export",
	"history", "image", "images", "import", "info", "inspect", "kill", "load", "login",
	"logout", "logs", "manifest", "network", "pause", "port", "ps", "pull", "push", "rename",
	"restart", "rm", "rmi", "save", "search", "start", "stats", "stop", "system", "tag", "top",
	"unpause", "update", "version", "volume", "wait",
), map[string]*sub{"compose": {next: &cmdTable{subs: subs(
	"build", "config", "create", "down", "events", "images", "kill", "logs", "ls", "pause",
	"port", "ps", "pull", "push", "restart", "rm", "start", "stop", "top", "unpause", "up",
	"version", "wait",
)}}})}

// kubectlTable: kubectl's commands; exec, run, debug, attach, edit and
// plugins are left out; rollout adds its own subcommand. A kubeconfig can
// name a credential plugin to execute.
var kubectlTable = &cmdTable{
	exec: execArgs{long: []string{"kubeconfig", "enable-alpha-plugins", "enable-exec"}},
	subs: with(subs(
		"annotate", "api-resources", "api-versions", "apply", "auth", "autoscale", "certificate",
		"cluster-info", "completion", "config", "cordon", "cp", "create", "delete", "describe",
		"diff", "drain", "events", "explain", "expose", "get", "kustomize", "label", "logs",
		"patch", "port-forward", "proxy", "replace", "scale", "set", "taint", "top",
		"uncordon", "version", "wait",
	), map[string]*sub{"rollout": {next: &cmdTable{subs: subs(
		"history", "pause", "restart", "resume", "status", "undo",
	)}}}),
}

// alone: the program alone is the prefix; any argument follows.
var alone = &cmdTable{optional: true}

// rgTable: rg alone; --pre, --hostname-bin and -z/--search-zip run
// programs on the files searched.
var rgTable = &cmdTable{optional: true, exec: execArgs{
	long: []string{"pre", "hostname-bin", "search-zip"}, short: "z",
}}

// programs is the table of R7 per shell; make is handled by makePrefix.
var programs = map[Shell]map[string]*cmdTable{
	ShellBash: {
		"git": gitTable, "npm": npmTable, "pnpm": pnpmTable, "yarn": yarnTable,
		"go": goTable, "cargo": cargoTable, "docker": dockerTable, "kubectl": kubectlTable,
		"ls": alone, "cat": alone, "rg": rgTable,
	},
	ShellPowerShell: {
		"git": gitTable, "npm": npmTable, "Get-ChildItem": alone, "Get-Content": alone,
	},
}

// prefixLen returns how many leading words of a command form its prefix, and
// false when it gets none: an unknown program, an unknown subcommand path, or
// an argument after the prefix that runs programs (R6, R7, R10). It does not
// check that the prefix words are plain; Derive does.
func prefixLen(shell Shell, words []word) (int, bool) {
	prog := words[0].text
	if shell == ShellBash && prog == "make" {
		return makePrefix(words)
	}
	t := programs[shell][prog]
	if t == nil {
		return 0, false
	}
	n := 1
	var exec []execArgs
	for t != nil {
		exec = append(exec, t.exec)
		if n == len(words) || strings.HasPrefix(words[n].text, "-") {
			if !t.optional {
				return 0, false
			}
			break
		}
		if t.subs == nil { // the program alone (ls, rg)
			break
		}
		s := t.subs[words[n].text]
		if s == nil || !words[n].plain {
			return 0, false
		}
		n++
		exec = append(exec, s.exec)
		if s.script {
			if n == len(words) || strings.HasPrefix(words[n].text, "-") {
				return 0, false
			}
			n++
		}
		for _, w := range words[n:] {
			if slices.Contains(s.refuse, w.text) {
				return 0, false
			}
		}
		t = s.next
	}
	for _, w := range words[n:] {
		for _, e := range exec {
			if e.match(w.text) {
				return 0, false
			}
		}
	}
	return n, true
}

// makePrefix: make's prefix is every word, the targets included; an option
// or a VAR=value argument gives none (SHELL=... and -f change what runs).
func makePrefix(words []word) (int, bool) {
	for _, w := range words[1:] {
		if strings.HasPrefix(w.text, "-") || strings.Contains(w.text, "=") {
			return 0, false
		}
	}
	return len(words), true
}
