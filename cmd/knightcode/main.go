// Command knightcode is the knightcode CLI. Its one command, app-server,
// serves the app-server protocol on stdin/stdout (spec: app-server.md,
// Starting).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// version is reported as serverInfo.version; release builds set it with
// -ldflags "-X main.version=<version>".
var version = "0.0.0-dev"

const usage = `Usage: knightcode <command> [flags]

Commands:
  app-server   serve the app-server protocol (JSON-RPC over stdin/stdout)

Run 'knightcode app-server --help' for its flags.
`

const appServerUsage = `Usage: knightcode app-server [-e <extension>]... [--session-dir <dir>]

Serves the knightcode app-server protocol: newline-delimited JSON-RPC messages
on stdin and stdout. stdout carries only protocol messages; logs go to stderr.
Closing stdin, SIGINT or SIGTERM shuts the server down within 10 seconds.

Flags:
  -e, --extension <path>  load this extension in every thread, as an explicitly
                          trusted CLI path (repeatable; relative paths resolve
                          against the working directory)
  --session-dir <dir>     store sessions here (default: $KNIGHTCODE_CODING_AGENT_SESSION_DIR,
                          then the sessionDir setting, then the per-project layout)
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
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A client that closed its end of stdout makes writes fail with EPIPE
	// (the connection then ends) instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args and runs the command; it returns the exit code: 0 after a
// clean run or help, 2 for a usage error, 1 when the server failed.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, code, ok := parseArgs(args, stderr)
	if !ok {
		return code
	}
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

// parseArgs parses the command line (without the program name). ok is false
// when nothing is to run: help was printed (code 0) or the arguments were
// wrong (usage printed on stderr, code 2). It reads nothing but args.
func parseArgs(args []string, stderr io.Writer) (opts options, code int, ok bool) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return opts, 2, false
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, usage)
		return opts, 0, false
	case "app-server":
	default:
		fmt.Fprintf(stderr, "knightcode: unknown command %q\n\n%s", args[0], usage)
		return opts, 2, false
	}
	fs := flag.NewFlagSet("app-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, appServerUsage) }
	var exts stringList
	fs.Var(&exts, "e", "extension path (repeatable)")
	fs.Var(&exts, "extension", "extension path (repeatable)")
	fs.StringVar(&opts.SessionDir, "session-dir", "", "session directory")
	if err := fs.Parse(args[1:]); err != nil {
		if err == flag.ErrHelp {
			return opts, 0, false
		}
		return opts, 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "knightcode app-server: unexpected argument %q\n\n%s", fs.Arg(0), appServerUsage)
		return opts, 2, false
	}
	opts.Extensions = exts
	return opts, 0, true
}

// runAppServer serves the protocol on opts.In/opts.Out until stdin ends or
// ctx is done (a signal), then shuts down within 10 s (spec: Ownership,
// unloading, and shutdown). Logs go to opts.Err.
func runAppServer(ctx context.Context, opts options) error {
	log := slog.New(slog.NewTextHandler(opts.Err, nil))
	srv, err := newAppServer(opts, log)
	if err != nil {
		log.Error("app-server cannot start", "err", err)
		return err
	}
	log.Info("app-server started", "version", version, "pid", os.Getpid())
	err = srv.Serve(ctx, opts.In, opts.Out)
	if err != nil {
		log.Error("app-server stopped", "err", err)
	}
	return err
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
	mappers := rpc.CoreErrorMappers()
	srv := jsonrpc.NewServer(jsonrpc.Config{
		Name:         "knightcode",
		Version:      version,
		Logger:       log,
		ErrorMappers: mappers,
	})
	differ := diffscope.New(git)
	mgr := threads.New(threads.Config{
		Git:       git,
		Differ:    differ,
		Models:    models,
		Dirs:      dirs,
		Notifier:  srv,
		Logger:    log.With("component", "threads"),
		Warnings:  append(dirWarnings, modelWarnings...),
		Workspace: worktrees,
		Trust:     trust,
	})
	core := rpc.Core{Threads: mgr, Git: git, Differ: differ, Workspace: worktrees, Trust: trust}
	rpc.RegisterThreadMethods(srv, core)
	rpc.RegisterDiffMethods(srv, core)
	rpc.RegisterWorktreeMethods(srv, core)
	rpc.RegisterEnvironmentMethods(srv, core)
	rpc.RegisterTrustMethods(srv, core)
	return srv, nil
}
