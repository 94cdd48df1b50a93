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
	// stash"). Otherwise a missing subcommand, or an option where it belongs
	// ("git -C dir status"), gives no prefix.
	optional bool
	// exec are arguments that make any command of this table run a program
	// of the caller's choosing or write what a later command reads to choose
	// one (R10, R12).
	exec execArgs
}

// sub is one known subcommand.
type sub struct {
	next *cmdTable // its own subcommands (git stash drop, go mod tidy)
	// script: the next word, a name and not an option, is part of the
	// prefix (npm run build).
	script bool
	// noArgs: a word after the subcommand that is not an option gives no
	// prefix (npm install <package> runs the package's install scripts: a
	// program the grant did not name; bare npm install installs what the
	// project names).
	noArgs bool
	// repository: the first word after the subcommand that is not an
	// option is a repository (git push); one written as a path or a URL
	// of a local or command transport gives no prefix, since pushing to a
	// repository on this machine runs its hooks (Decide also refuses one
	// that names an existing path).
	repository bool
	exec       execArgs
	// never says why this subcommand never gets a prefix (R12): it
	// reconfigures what later commands run (git config, npm config, go env),
	// puts programs where later commands look them up (go install, npm link),
	// or runs a program its command line does not name (git bisect run). A
	// command of it still runs when the person approves it once. The entry
	// is kept, rather than left out as unknown, so the table documents the
	// decision and the README's list can be checked against it.
	never string
}

// execArgs are the options that make a granted command run other programs,
// write files, or change what later commands run (R10, R12). An argument
// matches a long option when it is "--name" or "--name=value" and name is a
// non-empty prefix of a listed option (git and npm accept unique
// abbreviations: "--upload-pa=") or starts with one of starts (option
// families: pnpm's "--config.<key>", "--global-dir"). It matches a short
// option when it is a single-dash cluster holding the letter ("-O", "-nO",
// "-Ocmd"); conservatively, an attached value counts. With single, a single
// dash also introduces a long option and names are compared whole, as Go's
// flag package does ("-toolexec", "--exec=x"; "-v" is not "-vettool").
// Options in exact are options of their own that only look like an
// abbreviation: the parser takes an exact name first (git's --text is not
// --textconv).
//
// With anyDashes, the program parses options as npm's nopt does: one, two
// or more dashes all introduce a long option ("-node-options=x",
// "---script-shell=x"), and a single dash is also a cluster of short
// letters (a single letter only that: a shorthand).
type execArgs struct {
	long      []string
	starts    []string
	exact     []string
	short     string
	single    bool
	anyDashes bool
}

func (e execArgs) match(arg string) bool {
	name, dashes := arg, 0
	for (dashes < 2 || e.anyDashes) && strings.HasPrefix(name, "-") {
		name, dashes = name[1:], dashes+1
	}
	if dashes == 0 || name == "" {
		return false
	}
	if dashes == 1 && !e.single {
		if strings.ContainsAny(name, e.short) {
			return true
		}
		// One letter is a shorthand (npm's -s is --loglevel silent); more
		// can be a long option for nopt.
		if l, _, _ := strings.Cut(name, "="); !e.anyDashes || len(l) == 1 {
			return false
		}
	}
	name, _, _ = strings.Cut(name, "=")
	if name == "" || slices.Contains(e.exact, name) {
		return false
	}
	for _, l := range e.long {
		if l == name || !e.single && strings.HasPrefix(l, name) {
			return true
		}
	}
	for _, s := range e.starts {
		if strings.HasPrefix(name, s) {
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

// The reasons a subcommand never gets a prefix (R12), as the README words
// them.
const (
	reconfigures = "changes configuration that later commands read to choose what they run"
	installsPATH = "puts programs where later commands look them up (PATH)"
	runsUnnamed  = "runs a program its command line does not name"
	writesAway   = "writes files (with their modes) at a path it names, outside the checkout"
	repoints     = "changes which image a later command runs under a name"
)

// gitExec: options of any git subcommand that run a program or write a file
// of the caller's choosing. --output writes the diff to a file (every command
// that takes diff or revision options: log, show, diff*, rev-list, shortlog,
// blame, reflog, format-patch, bundle...); --ext-diff and --textconv run diff
// drivers; --exec, --upload-pack and --receive-pack run programs on a remote
// or here; --open-files-in-pager runs a pager; --template copies hooks in;
// --config sets configuration for the new repository (git clone --config
// core.fsmonitor=...); --strategy runs git-merge-<name> from PATH;
// --unsafe-paths lets git apply write outside the checkout (R10, R12).
var gitExec = execArgs{long: []string{
	"output", "ext-diff", "textconv", "exec", "upload-pack", "receive-pack",
	"open-files-in-pager", "template", "config", "strategy", "unsafe-paths",
}, exact: []string{"text"}}

// gitTable: git subcommands, builtin only (an unknown name runs git-<name>
// from PATH). stash and worktree add their own subcommand. Left out:
// dispatchers and servers such as daemon, instaweb, shell, upload-pack and
// the web--browse and credential helpers.
var gitTable = &cmdTable{exec: gitExec, subs: with(subs(
	"add", "am", "annotate", "apply", "blame", "branch", "bundle", "check-attr",
	"check-ignore", "checkout", "cherry", "cherry-pick", "clean", "commit", "count-objects",
	"describe", "diff", "diff-files", "diff-index", "diff-tree", "fetch", "for-each-ref",
	"fsck", "gc", "help", "log", "ls-files", "ls-remote", "ls-tree", "merge-base",
	"mv", "name-rev", "notes", "range-diff", "reflog", "reset", "restore", "rev-list",
	"rev-parse", "revert", "rm", "shortlog", "show", "show-branch", "show-ref",
	"sparse-checkout", "status", "switch", "tag", "version", "whatchanged",
), map[string]*sub{
	"archive":      {exec: execArgs{long: []string{"remote"}, short: "o"}},
	"cat-file":     {exec: execArgs{long: []string{"filters"}}},
	"format-patch": {exec: execArgs{long: []string{"output-directory"}, short: "o"}},
	"grep":         {exec: execArgs{short: "O"}},
	// push: --repo names the repository too; one on this machine runs
	// its hooks (see sub.repository).
	"push":   {repository: true, exec: execArgs{long: []string{"repo"}}},
	"merge":  {exec: execArgs{short: "s"}},
	"pull":   {exec: execArgs{short: "s"}},
	"rebase": {exec: execArgs{short: "xs"}},
	"stash": {next: &cmdTable{optional: true, subs: subs(
		"list", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store",
		"show",
	)}},
	"worktree": {next: &cmdTable{subs: with(subs(
		"list", "lock", "prune", "remove", "repair", "unlock",
	), map[string]*sub{
		"add":  {never: writesAway},
		"move": {never: writesAway},
	})}},
	// R12: the configuration and dispatchers.
	"config":        {never: reconfigures},
	"remote":        {never: reconfigures},
	"submodule":     {never: reconfigures},
	"hook":          {never: runsUnnamed},
	"bisect":        {never: runsUnnamed},
	"filter-branch": {never: runsUnnamed},
	"difftool":      {never: runsUnnamed},
	"mergetool":     {never: runsUnnamed},
	"clone":         {never: writesAway},
	// init --separate-git-dir=<dir> moves the repository into the
	// checkout, where its config can be edited as a plain file.
	"init": {never: reconfigures},
})}

// npmConfig: npm reads every configuration key as an option of any command
// ("npm run build --script-shell=./x"); these keys name a program npm runs, a
// config file holding such keys, or where global programs go. -g installs
// onto PATH, -C is --prefix, -c is --call.
var npmConfig = execArgs{long: []string{
	"script-shell", "userconfig", "globalconfig", "node-options", "git", "editor", "shell",
	"browser", "viewer", "node-gyp", "init-module", "call", "global", "location", "prefix",
}, short: "gCc", anyDashes: true}

// npmTable: npm's own commands without aliases ("t", "i", "run-script" give
// no prefix); exec, explore, init/create (which run packages) are left out.
var npmTable = &cmdTable{exec: npmConfig, subs: with(subs(
	"access", "audit", "bugs", "cache", "ci", "dedupe", "deprecate", "diff",
	"dist-tag", "docs", "doctor", "explain", "find-dupes", "fund", "help",
	"login", "logout", "ls", "outdated", "owner", "pack", "ping", "prefix",
	"profile", "prune", "publish", "query", "rebuild", "repo", "restart", "root", "sbom",
	"search", "shrinkwrap", "star", "start", "stop", "team", "test", "token", "uninstall",
	"unpublish", "unstar", "update", "version", "view", "whoami",
), map[string]*sub{
	"run":     {script: true},
	"install": {noArgs: true},
	"config":  {never: reconfigures},
	"set":     {never: reconfigures},
	"pkg":     {never: reconfigures}, // npm pkg set scripts.build=...
	"link":    {never: installsPATH},
})}

// pnpmExec and yarnExec: the same keys for pnpm and yarn, plus pnpm's
// --config.<key> overrides and global folders, and yarn's --use-yarnrc (a
// yarnrc can name the yarn that runs).
var (
	pnpmExec = execArgs{long: npmConfig.long, starts: []string{"config.", "global"}, short: "gC", anyDashes: true}
	yarnExec = execArgs{long: append([]string{"use-yarnrc", "modules-folder"}, npmConfig.long...), starts: []string{"global"}, anyDashes: true}
)

// pnpmTable and yarnTable: their own commands; an unknown word runs a script
// or a package binary of that name, and dlx, exec, create, node and
// workspace(s) dispatch, so none of those gives a prefix.
var pnpmTable = &cmdTable{exec: pnpmExec, subs: with(subs(
	"audit", "fetch", "import", "licenses", "list", "ls", "outdated",
	"pack", "patch", "prune", "publish", "rebuild", "remove", "root", "start", "store", "test",
	"unlink", "update", "why",
), map[string]*sub{
	"run":     {script: true},
	"add":     {noArgs: true},
	"install": {noArgs: true},
	"config":  {never: reconfigures},
	"pkg":     {never: reconfigures},
	"link":    {never: installsPATH},
})}

var yarnTable = &cmdTable{exec: yarnExec, subs: with(subs(
	"audit", "cache", "info", "licenses", "list", "outdated",
	"pack", "publish", "remove", "test", "unlink", "upgrade", "version", "why",
), map[string]*sub{
	"run":      {script: true},
	"add":      {noArgs: true},
	"install":  {noArgs: true},
	"config":   {never: reconfigures},
	"policies": {never: reconfigures}, // policies set-version writes yarnPath
	"link":     {never: installsPATH},
	"global":   {never: installsPATH},
})}

// goTable: go's commands; run, generate and tool (which run programs) are
// left out. -exec, -toolexec, -vettool and -fixtool run a program of the caller's
// choosing under any build command; -ldflags and -gccgoflags can name the
// external linker (-extld) and its flags; -o writes the built program at any
// path (a folder on PATH, .git/hooks).
var goTable = &cmdTable{
	exec: execArgs{long: []string{"exec", "toolexec", "vettool", "fixtool", "ldflags", "gccgoflags", "o"}, single: true},
	subs: with(subs(
		"build", "clean", "doc", "fix", "fmt", "get", "list", "test", "version", "vet", "work",
	), map[string]*sub{
		"mod": {next: &cmdTable{subs: subs(
			"download", "edit", "graph", "init", "tidy", "vendor", "verify", "why",
		)}},
		"env":     {never: reconfigures}, // go env -w GOFLAGS=-toolexec=...
		"install": {never: installsPATH},
	}),
}

// cargoTable: cargo's builtin commands ("+toolchain", aliases and external
// cargo-<name> give no prefix). --config can set a rustc wrapper or runner;
// -Z turns on unstable options; --out-dir and --artifact-dir copy the built
// programs to any folder.
var cargoTable = &cmdTable{exec: execArgs{long: []string{"config", "out-dir", "artifact-dir"}, short: "Z"}, subs: with(subs(
	"add", "bench", "build", "check", "clean", "doc", "fetch", "fix",
	"generate-lockfile", "help", "info", "init", "locate-project", "login", "logout",
	"metadata", "new", "owner", "package", "pkgid", "publish", "remove", "report", "run",
	"search", "test", "tree", "uninstall", "update", "vendor",
	"verify-project", "version", "yank",
), map[string]*sub{
	"config":  {never: reconfigures},
	"install": {never: installsPATH},
	// rustc and rustdoc pass what follows -- to the compiler: -C linker=
	// names a program to run, --emit and -o write anywhere.
	"rustc":   {never: runsUnnamed},
	"rustdoc": {never: runsUnnamed},
})}

// dockerTable: docker's commands; run, exec, attach, container (which holds
// run and exec) and plugins are left out; compose adds its own subcommand.
// create and commit set the command a later start runs; tag, load, import and
// image re-point a name a later compose up runs; cp copies files with their
// modes out of a container; build's --tag and --output do the same two.
var dockerTable = &cmdTable{subs: with(subs(
	"diff", "events", "export", "history", "images", "info", "inspect",
	"kill", "login", "logout", "logs", "manifest", "network", "pause", "port", "ps", "pull",
	"push", "rename", "restart", "rm", "rmi", "save", "search", "start", "stats", "stop",
	"system", "top", "unpause", "update", "version", "volume", "wait",
), map[string]*sub{
	"build": {exec: execArgs{long: []string{"tag", "output"}, short: "to"}},
	"compose": {next: &cmdTable{subs: with(subs(
		"build", "config", "create", "down", "events", "images", "kill", "logs", "ls", "pause",
		"port", "ps", "pull", "push", "restart", "rm", "start", "stop", "top", "unpause", "up",
		"version", "wait",
	), map[string]*sub{"cp": {never: writesAway}})}},
	"context": {never: reconfigures},
	"builder": {never: repoints}, // builder build is build, with -t
	"create":  {never: reconfigures},
	"commit":  {never: reconfigures},
	"tag":     {never: repoints},
	"image":   {never: repoints},
	"load":    {never: repoints},
	"import":  {never: repoints},
	"cp":      {never: writesAway},
})}

// kubectlTable: kubectl's commands; exec, run, debug, attach, edit and
// plugins are left out; rollout adds its own subcommand. A kubeconfig can
// name a credential plugin to execute; kustomize's plugins and helm run
// programs; --server (-s) and the TLS options send the user's credentials
// to another host.
var kubectlTable = &cmdTable{
	exec: execArgs{long: []string{
		"kubeconfig", "enable-alpha-plugins", "enable-exec", "enable-helm", "helm-command",
		"server", "insecure-skip-tls-verify", "certificate-authority", "tls-server-name",
	}, short: "s"},
	subs: with(subs(
		"annotate", "api-resources", "api-versions", "apply", "auth", "autoscale", "certificate",
		"cluster-info", "completion", "cordon", "create", "delete", "describe",
		"diff", "drain", "events", "explain", "expose", "get", "kustomize", "label", "logs",
		"patch", "port-forward", "proxy", "replace", "scale", "set", "taint", "top",
		"uncordon", "version", "wait",
	), map[string]*sub{
		"rollout": {next: &cmdTable{subs: subs(
			"history", "pause", "restart", "resume", "status", "undo",
		)}},
		"config": {never: reconfigures}, // config set-credentials --exec-command=...
		"cp":     {never: writesAway},
	}),
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
// false when it gets none: an unknown program, an unknown subcommand path, a
// subcommand that never gets one, or an argument after the prefix that runs
// programs or reconfigures what later commands run (R6, R7, R10, R12). It does not
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
		if s == nil || s.never != "" || !words[n].plain {
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
		if s.noArgs && slices.ContainsFunc(words[n:], func(w word) bool { return !strings.HasPrefix(w.text, "-") }) {
			return 0, false
		}
		if s.repository {
			if r, ok := firstArgument(words[n:]); ok && pathLike(r) {
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

// firstArgument returns the first of words that is not an option.
func firstArgument(words []word) (string, bool) {
	for _, w := range words {
		if !strings.HasPrefix(w.text, "-") {
			return w.text, true
		}
	}
	return "", false
}

// pathLike reports whether a git repository argument is written as a path
// or a URL of the file or a command transport (".", "./r", "/r", "r/x",
// "file:///r", "ext::cmd", "fd::3") rather than a remote's name or a
// network URL. A bare name can still be a folder (git tries a remote of
// that name first): Decide checks that against the working directory.
func pathLike(r string) bool {
	scheme, _, hasScheme := strings.Cut(r, "://")
	switch {
	case hasScheme:
		return scheme == "file"
	case strings.Contains(r, "::"), strings.HasPrefix(r, "file:"):
		return true
	}
	if host, _, ok := strings.Cut(r, ":"); ok && len(host) > 1 && !strings.ContainsAny(host, "/\\") {
		return false // scp-like ssh: [user@]host:path
	}
	return strings.HasPrefix(r, ".") || strings.ContainsAny(r, "/\\")
}

// pushRepository returns the repository argument of a command whose prefix
// is p, for a subcommand whose first argument is one (git push): the first
// word after the prefix that is not an option, and false when there is none.
func pushRepository(p Prefix, words []word) (string, bool) {
	if len(p.Words) != 2 || p.Words[0] != "git" {
		return "", false
	}
	if s := gitTable.subs[p.Words[1]]; s == nil || !s.repository {
		return "", false
	}
	return firstArgument(words[len(p.Words):])
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
