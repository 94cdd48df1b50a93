// Command knightcode is the knightcode CLI. app-server serves the
// app-server protocol on stdin/stdout (spec: app-server.md, Starting); call
// sends one request to a server of its own in the same process, for
// scripts (call.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/extensions"
	"github.com/knightcode/knightcode/filesearch"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/mcp"
	"github.com/knightcode/knightcode/mcp/mcpauth"
	"github.com/knightcode/knightcode/plugins"
	"github.com/knightcode/knightcode/rpc"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/protocol/schemagen"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// version is set by release builds with -ldflags "-X main.version=<version>";
// when empty, serverVersion reads the module's build information.
var version string

// serverVersion is the version `knightcode --version` prints and initialize
// reports as serverInfo.version.
func serverVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionFrom(version, info, ok)
}

// devVersion is the version of a build that knows nothing better.
const devVersion = "0.0.0-dev"

// versionFrom picks the version: the -ldflags override, else the main
// module's version from the build information (a tag or Go's pseudo-version
// when built from a VCS checkout or installed with `go install ...@v`), else
// devVersion with the VCS revision stamped by `go build` as build metadata
// (devVersion+<12 hex>[.dirty]), else devVersion.
func versionFrom(override string, info *debug.BuildInfo, ok bool) string {
	if override != "" {
		return override
	}
	if !ok || info == nil {
		return devVersion
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return devVersion
	}
	v := devVersion + "+" + rev[:min(len(rev), 12)]
	if modified == "true" {
		v += ".dirty"
	}
	return v
}

const usage = `Usage: knightcode <command> [flags]

Commands:
  app-server   serve the app-server protocol (JSON-RPC over stdin/stdout)
  call         send one request to a server of its own and print the result

Flags:
  --version    print the version and exit
  -h, --help   print this help

Run 'knightcode app-server --help' or 'knightcode call --help' for a
command's flags.
`

const appServerUsage = `Usage: knightcode app-server [-e <extension>]... [--session-dir <dir>]
       knightcode app-server generate-schema
       knightcode app-server generate-ts

Serves the knightcode app-server protocol: newline-delimited JSON-RPC messages
on stdin and stdout. stdout carries only protocol messages; logs go to stderr.
Closing stdin, SIGINT or SIGTERM shuts the server down within 10 seconds.

Commands:
  generate-schema         print the JSON Schema of every message
                          (app-server.schema.json) and exit
  generate-ts             print the TypeScript declarations of every message
                          and the method maps (app-server.d.ts) and exit

Flags:
  -e, --extension <path>  load this extension in every thread, as an explicitly
                          trusted CLI path: a .ts, .js or .mjs file, or a folder
                          with package.json knightcode.extensions or an index.ts
                          (repeatable; relative paths resolve against the
                          working directory)
  --session-dir <dir>     store sessions here (default: $KNIGHTCODE_CODING_AGENT_SESSION_DIR,
                          then the sessionDir setting, then the per-project layout)
  --version               print the version and exit
  -h, --help              print this help
`

// options are what `knightcode app-server` runs with.
type options struct {
	In  io.Reader // protocol input (stdin)
	Out io.Writer // protocol output (stdout)
	Err io.Writer // logs (stderr)
	// SessionDir is --session-dir, "" when not given.
	SessionDir string
	// Extensions are the -e/--extension paths in command-line order, as given.
	Extensions []string
	// GoExtensions are extensions written in Go that every thread loads
	// after the built-in ones (threads.Config.Extensions). No flag sets
	// them: in-process tests of the wired server do.
	GoExtensions []ext.Extension
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == tools.ReaperArg {
		// The server runs its own executable as each bash command's
		// reaper (threads.Config.CommandReaper).
		os.Exit(tools.RunReaper(os.Args[2:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A client that closed its end of stdout makes writes fail with EPIPE
	// (the connection then ends) instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// action is what a command line asks for.
type action int

const (
	actionServe      action = iota // run the app-server
	actionHelp                     // print invocation.help on stderr
	actionVersion                  // print the version on stdout
	actionSchema                   // print the JSON Schema on stdout
	actionTypeScript               // print the TypeScript declarations on stdout
	actionCall                     // send one request (knightcode call)
)

// invocation is a parsed command line.
type invocation struct {
	action action
	// help is the usage text actionHelp prints.
	help string
	// opts are the app-server's options (actionServe).
	opts options
	// call is the request of actionCall.
	call callOptions
}

// usageError is a command line that cannot run: run prints
// "<prog>: <msg>" and a pointer to the help on stderr and exits 2.
type usageError struct {
	prog string // "knightcode", "knightcode app-server" or "knightcode call"
	msg  string
}

func (e *usageError) Error() string { return e.prog + ": " + e.msg }

// run parses args and runs the command; it returns the exit code: 0 after a
// clean run, help or version, 2 for a usage error (and for a call answered
// invalidParams), 1 when the command failed.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	inv, err := parseArgs(args)
	if ue, ok := err.(*usageError); ok {
		fmt.Fprintf(stderr, "%s\nRun '%s --help' for usage.\n", ue, ue.prog)
		return 2
	}
	switch inv.action {
	case actionHelp:
		// stdout carries only protocol messages and requested output.
		fmt.Fprint(stderr, inv.help)
		return 0
	case actionVersion:
		fmt.Fprintf(stdout, "knightcode %s\n", serverVersion())
		return 0
	case actionSchema, actionTypeScript:
		gen := schemagen.Schema
		if inv.action == actionTypeScript {
			gen = schemagen.TypeScript
		}
		b, err := gen()
		if err == nil {
			_, err = stdout.Write(b)
		}
		if errors.Is(err, syscall.EPIPE) {
			return 0 // the reader had enough (`generate-ts | head`)
		}
		if err != nil {
			fmt.Fprintf(stderr, "knightcode app-server: %v\n", err)
			return 1
		}
		return 0
	}
	if inv.action == actionCall {
		return runCall(ctx, inv.call, stdout, stderr)
	}
	opts := inv.opts
	opts.In, opts.Out, opts.Err = stdin, stdout, stderr
	if err := runAppServer(ctx, opts); err != nil {
		return 1
	}
	return 0
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// parseArgs parses the command line (without the program name). It reads
// nothing but args and writes nothing; a command line that cannot run is a
// *usageError naming the program.
func parseArgs(args []string) (invocation, error) {
	const prog = "knightcode"
	if len(args) == 0 {
		return invocation{}, &usageError{prog, "no command given"}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return invocation{action: actionHelp, help: usage}, nil
	case "-version", "--version":
		return invocation{action: actionVersion}, nil
	case "app-server":
		return parseAppServerArgs(args[1:])
	case "call":
		return parseCallArgs(args[1:])
	}
	if strings.HasPrefix(args[0], "-") {
		return invocation{}, &usageError{prog, fmt.Sprintf("unknown flag %q", args[0])}
	}
	return invocation{}, &usageError{prog, fmt.Sprintf("unknown command %q", args[0])}
}

// generators are app-server's subcommands that print a generated file.
var generators = map[string]action{
	"generate-schema": actionSchema,
	"generate-ts":     actionTypeScript,
}

// parseAppServerArgs parses the arguments after "app-server".
func parseAppServerArgs(args []string) (invocation, error) {
	const prog = "knightcode app-server"
	if len(args) > 0 {
		if act, ok := generators[args[0]]; ok {
			return parseGenerateArgs(prog+" "+args[0], act, args[1:])
		}
	}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	// Errors are returned and printed by run; the flag package prints nothing.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		inv         = invocation{action: actionServe}
		exts        stringList
		showVersion bool
	)
	fs.Var(&exts, "e", "extension path (repeatable)")
	fs.Var(&exts, "extension", "extension path (repeatable)")
	fs.StringVar(&inv.opts.SessionDir, "session-dir", "", "session directory")
	fs.BoolVar(&showVersion, "version", false, "print the version")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return invocation{action: actionHelp, help: appServerUsage}, nil
		}
		return invocation{}, &usageError{prog, err.Error()}
	}
	if showVersion {
		return invocation{action: actionVersion}, nil
	}
	if fs.NArg() > 0 {
		return invocation{}, &usageError{prog, fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if slices.Contains(exts, "") {
		// An empty path would resolve to the working directory and load it
		// as an extension folder: it never means that.
		return invocation{}, &usageError{prog, `-e/--extension "": an empty path names no extension (use "." for the working directory)`}
	}
	inv.opts.Extensions = exts
	return inv, nil
}

// parseGenerateArgs parses the arguments after "app-server generate-...":
// none but -h/--help.
func parseGenerateArgs(prog string, act action, args []string) (invocation, error) {
	switch {
	case len(args) == 0:
		return invocation{action: act}, nil
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		return invocation{action: actionHelp, help: appServerUsage}, nil
	}
	return invocation{}, &usageError{prog, fmt.Sprintf("unexpected argument %q", args[0])}
}

// maxLogValueBytes bounds one logged value: a 9 MiB path in a refused
// request must not land whole in the log (issue 15).
const maxLogValueBytes = 2048

// boundLogValue is the log handler's ReplaceAttr: a string, error or other
// value whose text is longer than maxLogValueBytes is cut there (at a
// character boundary) and says how long it was.
func boundLogValue(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		case []byte:
			s = string(x)
		default:
			return a
		}
		if len(s) <= maxLogValueBytes {
			return a
		}
	default:
		return a
	}
	if len(s) <= maxLogValueBytes {
		return a
	}
	n := maxLogValueBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return slog.String(a.Key, fmt.Sprintf("%s... (%d bytes)", s[:n], len(s)))
}

// runAppServer serves the protocol on opts.In/opts.Out until stdin ends or
// ctx is done (a signal), then shuts down within 10 s (spec: Ownership,
// unloading, and shutdown). Logs go to opts.Err.
func runAppServer(ctx context.Context, opts options) error {
	log := slog.New(slog.NewTextHandler(opts.Err, &slog.HandlerOptions{ReplaceAttr: boundLogValue}))
	srv, err := newAppServer(opts, log)
	if err != nil {
		log.Error("app-server cannot start", "err", err)
		return err
	}
	// Orphaned grandchildren of tool commands (a daemon a bash call left
	// behind) are reparented to the server, which reaps them, instead of to
	// init (spec: tool processes end with their thread).
	if err := tools.BecomeSubreaper(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		log.Warn("cannot become a child subreaper", "err", err)
	}
	log.Info("app-server started", "version", serverVersion(), "pid", os.Getpid())
	growOutputPipe(opts.Out)
	err = srv.Serve(ctx, opts.In, opts.Out)
	if err != nil {
		log.Error("app-server stopped", "err", err)
	}
	killMCPServers(log)
	return err
}

// killMCPServers kills the stdio MCP servers still running (mcp.KillAll):
// the last shutdown hook, and again once Serve returned, since the
// shutdown limit (10 s) ends Serve without waiting for hooks still held up
// by a thread that cannot unload. No MCP server outlives the server
// (EXTENSIBILITY.md §2, "Process hygiene").
func killMCPServers(log *slog.Logger) {
	if n := mcp.KillAll(); n > 0 {
		log.Warn("MCP servers of threads that did not unload were killed", "servers", n)
	}
}

// settings are the resolved startup options the threads layer will load
// threads with.
type settings struct {
	// SessionDir is --session-dir as an absolute path; "" leaves the choice
	// to session.ResolveDirs ($KNIGHTCODE_CODING_AGENT_SESSION_DIR, then the
	// sessionDir setting, then the per-project layout).
	SessionDir string
	// Extensions are the -e paths made absolute against the working
	// directory, in command-line order.
	Extensions []string
}

// resolveSettings applies the spec's path rules to opts: paths given on the
// command line are made absolute against the working directory. It reads no
// environment: session.ResolveDirs applies the session directory's
// precedence.
func resolveSettings(opts options) (settings, error) {
	var s settings
	if dir := opts.SessionDir; dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return s, fmt.Errorf("session dir %q: %w", dir, err)
		}
		s.SessionDir = abs
	}
	for _, e := range opts.Extensions {
		abs, err := filepath.Abs(e)
		if err != nil {
			return s, fmt.Errorf("extension %q: %w", e, err)
		}
		s.Extensions = append(s.Extensions, abs)
	}
	return s, nil
}

// settingsExtensions gives the extensions cwd's settings configure, as
// resource/list reports them (config.Store.Resources): the enabled
// top-level ones its extensions paths name, the enabled ones of its
// packages, and the disabled top-level ones. Unreadable settings
// configure none (resource/list reports why).
func settingsExtensions(store *config.Store) func(cwd string) extensions.Configured {
	return func(cwd string) extensions.Configured {
		conf := extensions.Configured{Disabled: map[string]bool{}}
		set, err := store.Resources(context.Background(), cwd)
		if err != nil {
			return conf
		}
		for _, r := range set.Resources {
			switch {
			case r.Type != config.ResourceExtensions:
			case r.Origin == config.OriginPackage && r.Enabled:
				conf.Packages = append(conf.Packages, r.Path)
			case r.Origin == config.OriginPackage:
			case !r.Enabled:
				conf.Disabled[r.Path] = true
			case r.Source == config.SourceLocal:
				conf.Paths = append(conf.Paths, r.Path)
			}
		}
		return conf
	}
}

// cliExtensions resolves the -e paths (absolute, in command-line order)
// to their extension entry files (extensions.Entries), an entry given
// twice (by real path) once, and the warnings of the paths that give none,
// one per path with source "extension": "extension not found: <path>"
// for a missing path (EXTENSIBILITY.md §7), else why it has no entry.
// Every thread/start, resume and fork result carries the warnings with the
// other startup warnings, so no path is dropped silently.
func cliExtensions(paths []string) (entries []string, warnings []protocol.Warning) {
	seen := map[string]bool{}
	for _, p := range paths {
		es, err := extensions.Entries(p)
		if err != nil {
			msg := fmt.Sprintf("extension %s cannot be loaded: %v", p, err)
			if errors.Is(err, fs.ErrNotExist) {
				msg = "extension not found: " + p
			}
			warnings = append(warnings, protocol.Warning{Message: msg, Source: protocol.WarningSourceExtension, Path: p})
			continue
		}
		for _, e := range es {
			real := e
			if r, err := filepath.EvalSymlinks(e); err == nil {
				real = r
			}
			if !seen[real] {
				seen[real] = true
				entries = append(entries, e)
			}
		}
	}
	return entries, warnings
}

// handlerTimeout is $KNIGHTCODE_EXTENSION_HANDLER_TIMEOUT (a Go duration,
// such as "500ms"): how long extension JavaScript may run without
// returning before it is interrupted; 0 (unset or invalid, logged) means
// extensions.DefaultHandlerTimeout.
func handlerTimeout(log *slog.Logger) time.Duration {
	v := os.Getenv("KNIGHTCODE_EXTENSION_HANDLER_TIMEOUT")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		log.Warn("KNIGHTCODE_EXTENSION_HANDLER_TIMEOUT is not a positive duration; the default is used", "value", v)
		return 0
	}
	return d
}

// newAppServer is the wiring: it builds every dependency of the app-server
// explicitly and returns the server with all handlers and hooks installed.
// Layers below rpc (threads and the core packages) are constructed here as
// they arrive, each passed its settings, its error mapper added to
// jsonrpc.Config.ErrorMappers, its handlers installed and its hooks registered
// (OnShutdown, OnConnClose, SetDiagnosticsSource).
func newAppServer(opts options, log *slog.Logger) (*jsonrpc.Server, error) {
	st, err := resolveSettings(opts)
	if err != nil {
		return nil, err
	}
	git, err := gitcli.New()
	if err != nil {
		return nil, err
	}
	// The git calls that run the user's hooks start under a reaper of
	// their own, as bash commands do: what a hook leaves running ends at
	// shutdown (below) or, when the server is killed, with its reaper
	// (README "Branches and commits").
	hookProcs := tools.NewProcessGroups()
	hookProcs.Reaper = true
	git = git.WithSupervisor(hookProcs)
	dirs, dirWarnings, err := session.ResolveDirs(st.SessionDir)
	if err != nil {
		return nil, err
	}
	log.Info("app-server settings", "sessionDir", dirs.Override, "sessionDirSource", dirs.Source, "extensions", st.Extensions)
	models, modelWarnings := provider.Load(dirs.AgentDir)
	worktrees := workspace.New(git, dirs.AgentDir)
	// Worktree creations a killed server left half-made are removed.
	if removed, err := worktrees.Reconcile(context.Background()); err != nil {
		log.Warn("cleaning up unfinished worktree creations", "err", err)
	} else if len(removed) > 0 {
		log.Info("removed unfinished worktree creations", "paths", removed)
	}
	trust := config.NewTrustStore(dirs.AgentDir, worktrees.Project)
	// JavaScript extensions (package extensions): a trusted project's,
	// the global ones, the settings' paths, the -e paths, then the
	// settings' packages', in every thread load.
	cliEntries, cliWarnings := cliExtensions(st.Extensions)
	engine := extensions.New(extensions.Options{Logger: log.With("component", "extensions"), AgentDir: dirs.AgentDir,
		HandlerTimeout: handlerTimeout(log)})
	extSource := extensions.Source{CLI: cliEntries, AgentDir: dirs.AgentDir, Trusted: func(cwd string) bool {
		ok, err := trust.Trusted(context.Background(), cwd)
		return err == nil && ok
	}}
	mappers := rpc.CoreErrorMappers()
	srv := jsonrpc.NewServer(jsonrpc.Config{
		Name:         "knightcode",
		Version:      serverVersion(),
		Logger:       log,
		ErrorMappers: mappers,
	})
	// One operation log for revert, stage, unstage and handoff (its
	// journals and their recovery points, which Prune keeps while a
	// journal names them): <agentDir>/oplog (newDiffer).
	store := config.NewStore(dirs.AgentDir, trust)
	// One sign-in manager for the HTTP MCP servers of every thread
	// (<agentDir>/mcp-auth.json). Its pending sign-ins hold no request
	// (/mcp login returns once the URL is shown) and cancel in the first
	// shutdown hook, before the threads' unload (spec "Shutdown": pending
	// login flows cancel, and every thread unloads).
	mcpAuth := mcpauth.New(dirs.AgentDir, log.With("component", "mcp-auth"), mcpauth.Options{})
	srv.OnShutdown(func(context.Context) { mcpAuth.Close() })
	extSource.Settings = settingsExtensions(store)
	differ := newDiffer(context.Background(), git, store, log)
	apps := mcp.NewApps() // MCP Apps: each thread load's MCP servers
	mgr := threads.New(threads.Config{
		Git:       git,
		Differ:    differ,
		Models:    models,
		Dirs:      dirs,
		Notifier:  srv,
		Logger:    log.With("component", "threads"),
		Warnings:  slices.Concat(dirWarnings, modelWarnings, cliWarnings),
		Workspace: worktrees,
		Trust:     trust,
		// main runs tools.RunReaper when the executable is started with
		// tools.ReaperArg.
		CommandReaper: true,
		// Go extensions load after the built-in ones: the MCP client
		// runtime (package mcp), then the options'; the JavaScript
		// extensions (package extensions) after them.
		Extensions: append([]ext.Extension{mcp.Extension(mcp.Options{Store: store, Auth: mcpAuth,
			Log: log.With("component", "mcp"), Version: serverVersion(), Apps: apps})}, opts.GoExtensions...),
		ExtensionsFor:     func(cwd string) []ext.Extension { return engine.ExtensionsFor(extSource, cwd) },
		InactiveFactories: engine.InactiveFactories,
	})
	// Handoffs a stopped server left are finished or undone before any
	// request; each outcome waits for the next load of its thread.
	mgr.RecoverHandoffs(context.Background())
	core := rpc.Core{Threads: mgr, Models: models, Git: git, Differ: differ, Workspace: worktrees, Trust: trust}
	rpc.RegisterThreadMethods(srv, core)
	rpc.RegisterDiffMethods(srv, core)
	rpc.RegisterWorktreeMethods(srv, core)
	rpc.RegisterEnvironmentMethods(srv, core)
	rpc.RegisterTrustMethods(srv, core)
	rpc.RegisterMCPAppMethods(srv, apps)
	search := filesearch.New(filesearch.Options{})
	srv.OnShutdown(func(context.Context) { search.Close() })
	// The long-lived git helpers (object store, HEAD resolvers, ref
	// writers) end with the server; a call after this starts its own.
	srv.OnShutdown(func(context.Context) { _ = git.Close() })
	// After the threads (their shutdown hook comes first): what the
	// user's hooks left running ends with the server.
	srv.OnShutdown(func(ctx context.Context) {
		if err := hookProcs.StopAll(ctx); err != nil {
			log.Warn("processes the git hooks left running did not all end", "err", err)
		}
	})
	// Last: an MCP server whose thread did not unload in time (stopped
	// normally by its thread's unload) is killed, never left running.
	srv.OnShutdown(func(context.Context) { killMCPServers(log) })
	rpc.RegisterSettingsMethods(srv, rpc.Settings{
		Store: store, Tools: config.NewTools(dirs.AgentDir),
		Models: models, Threads: mgr, Search: search,
	})
	// Plugins and marketplaces; the MCP runtime connects the active
	// plugins' servers (config.Store.ThreadMCPServers).
	home, _ := os.UserHomeDir()
	rpc.RegisterPluginMethods(srv, plugins.New(store, git, home))
	return srv, nil
}

// newDiffer returns the diff engine, its operation log's journals in
// <agentDir>/oplog and its recovery points kept per the global settings
// recovery.keep and recovery.maxAgeDays (config.Values; unreadable
// settings mean the defaults), after recovering the actions a previous
// server left unfinished (issue 15): each is rolled back to its recovery
// point, or kept when all of it had landed, and its report waits for the
// next thread/start or resume in its checkout, which warns about it. A
// recovery that fails is logged; the journal stays, and the next action or
// thread load in that checkout tries again.
func newDiffer(ctx context.Context, git *gitcli.Runner, store *config.Store, log *slog.Logger) *diffscope.Differ {
	rec := config.RecoveryValues{Keep: config.DefaultRecoveryKeep, MaxAgeDays: config.DefaultRecoveryMaxAgeDays}
	if snap, err := store.Read(ctx, ""); err != nil {
		log.Warn("reading the recovery settings; the defaults are used", "err", err)
	} else {
		v, _ := snap.Values() // the warnings reach clients with every thread load
		rec = v.Recovery
	}
	differ := diffscope.NewWithConfig(git, diffscope.Config{
		OplogDir:       filepath.Join(store.AgentDir(), "oplog"),
		RecoveryKeep:   rec.Keep,
		RecoveryMaxAge: time.Duration(rec.MaxAgeDays) * 24 * time.Hour,
	})
	if err := differ.RecoverStart(ctx); err != nil {
		log.Warn("recovering unfinished actions", "err", err)
	}
	return differ
}
