package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/procgroup"
)

// DefaultTimeout bounds a git call whose [Cmd] sets no Timeout.
const DefaultTimeout = 2 * time.Minute

// hookKillGrace is how long a stopped git call that runs the user's hooks
// has between SIGTERM and SIGKILL ([procgroup.SetupGraceful]).
const hookKillGrace = 5 * time.Second

// DefaultMaxOutput is the most stdout, in bytes, that a verb keeps in memory
// (Runner.run) when its [Cmd] sets no MaxOutput. Larger outputs fail with
// [ErrOutputTooLarge]; callers expecting more use [Runner.Stream].
const DefaultMaxOutput = 64 << 20

// maxStderr is the most stderr, in bytes, kept for an [Error].
const maxStderr = 64 << 10

// pinnedConfig is passed as -c options before every subcommand, so a user's
// configuration cannot change the text knightcode parses or the patches it
// applies (shared/cases C01, C07, C08: diff.context, diff.indentHeuristic,
// diff.noprefix).
var pinnedConfig = []string{
	"core.quotePath=false",
	"color.ui=false",
	"diff.noprefix=false",
	"diff.mnemonicPrefix=false",
	"diff.relative=false",
	"diff.context=3",
	"diff.interHunkContext=0",
	"diff.algorithm=myers",
	"diff.indentHeuristic=true",
	"diff.suppressBlankEmpty=false",
	"diff.submodule=short",
	"core.pager=cat",
	"advice.detachedHead=false",
}

// plumbingConfig is added for internal calls (every [Cmd] without Hooks): no
// user hook, no signing prompt, no automatic gc while knightcode works.
//
// core.fsmonitor=false: a repository-local fsmonitor hook is a program git
// runs on a plain status or add (git-config(1), core.fsmonitor), so the
// server never lets one run for its own calls (ARCHITECTURE.md, "Git").
var plumbingConfig = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"gc.auto=0",
	"maintenance.auto=false",
}

// keptGitEnv lists the GIT_* variables a child may inherit: identity, ssh and
// credential helpers, config-file selection and tracing. Every other GIT_*
// variable (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY,
// GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF, ...) is removed, so a parent that
// runs knightcode from inside a hook cannot redirect it.
var keptGitEnv = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true, "GIT_ASKPASS": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
	"GIT_EXEC_PATH": true, "GIT_TRACE": true, "GIT_TRACE2": true, "GIT_TRACE2_EVENT": true,
	"GIT_TRACE_PERFORMANCE": true, "GIT_SSL_NO_VERIFY": true, "GIT_SSL_CAINFO": true,
}

// Runner starts git processes. Build one with [New] in main and share it; it
// is safe for concurrent use and holds no per-call state.
type Runner struct {
	gitPath string
	env     []string // scrubbed environment, computed once
	// exec runs one built command and hands its stdout to read; nil means
	// [Runner.execGit]. Tests set it to see the exact argv of a verb
	// (argv gives the full argv of a Cmd).
	exec func(ctx context.Context, c Cmd, read func(stdout io.Reader) error) error
	// hookTimeout, when not 0, bounds the calls that run the user's hooks
	// instead of their own Timeout ([Runner.WithHookTimeout]).
	hookTimeout time.Duration
	// started, when set, is called with the Args of every git process
	// before it starts ([Runner.WithStartHook]).
	started func(args []string)
	// cache is what the Runner keeps per repository (configuration
	// snapshots, object stores); shared by the copies WithStartHook and
	// WithHookTimeout make.
	cache *runnerCaches
	// supervisor, when not nil, starts the calls that run the user's
	// hooks ([Runner.WithSupervisor]).
	supervisor Supervisor
}

// WithHookTimeout returns a Runner like r whose calls that run the user's
// hooks ([Cmd.Hooks]: commit, push, switch, hook run) are bounded by d, the
// user's setting (git.hookTimeoutSeconds, issue 22), instead of their
// Timeout. r is not changed; the copy shares r's caches.
func (r *Runner) WithHookTimeout(d time.Duration) *Runner {
	c := *r
	c.hookTimeout = d
	return &c
}

// WithStartHook returns a copy of r that calls hook with the Args of every
// git process it starts (the subcommand and its arguments as the verb built
// them, without the pinned -c options), before the process starts, long-lived
// ones (cat-file, hash-object helpers) included. Tests count an action's git
// processes with it (issue 24: a regression to whole-index work per hunk
// fails a test). hook must be safe for concurrent use.
func (r *Runner) WithStartHook(hook func(args []string)) *Runner {
	v := *r
	v.started = hook
	return &v
}

// New returns a Runner for the git found on PATH. It returns [ErrGitMissing]
// when there is none.
func New() (*Runner, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGitMissing, err)
	}
	return &Runner{gitPath: path, env: scrubEnv(os.Environ()), cache: &runnerCaches{}}, nil
}

// GitPath is the absolute path of the git binary this Runner starts.
func (r *Runner) GitPath() string { return r.gitPath }

// mallocTrim is the glibc malloc tunable every git child gets: keep up to
// 64 MiB free at the top of the heap instead of giving it back to the
// kernel at each free. Git allocates zlib's buffers (a few hundred KiB)
// for every object it writes; with glibc's default trim threshold each
// object then costs a grow and a trim of the heap and the page faults of
// touching it again: a capture writing 2,000 blobs and 1,500 trees spent
// two thirds of its CPU time there (measured with git 2.39 on Linux; the
// processes are short-lived, so the kept memory is not). A trim threshold
// in the user's own GLIBC_TUNABLES wins; other C libraries ignore the
// variable.
const mallocTrim = "glibc.malloc.trim_threshold=67108864"

func scrubEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+5)
	tunables := mallocTrim
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_") && !keptGitEnv[k]:
			continue
		case k == "LC_ALL" || k == "LANG" || k == "LANGUAGE":
			continue
		case k == "GLIBC_TUNABLES":
			switch v = strings.Trim(v, ":"); {
			case v == "":
			case strings.Contains(v, "glibc.malloc.trim_threshold="):
				tunables = v
			default:
				tunables = v + ":" + mallocTrim
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1", "GLIBC_TUNABLES="+tunables)
}

// Cmd describes one git invocation.
type Cmd struct {
	// Dir is the directory git runs in; required. Paths in Args are
	// relative to it.
	Dir string
	// Args are the subcommand and its arguments, e.g. {"diff-tree", "-z",
	// ...}. Pathspecs are literal (GIT_LITERAL_PATHSPECS=1) and belong after
	// "--".
	Args []string
	// Stdin feeds the process's standard input; nil means empty.
	Stdin io.Reader
	// Env adds KEY=VALUE entries after the scrubbed environment, e.g.
	// "GIT_INDEX_FILE=/tmp/x" for a temporary index.
	Env []string
	// Write marks a call that may write the repository (refs, index,
	// worktree). Calls without it run with GIT_OPTIONAL_LOCKS=0, so a read
	// never takes index.lock or refreshes the user's index.
	Write bool
	// Hooks lets the user's hooks and commit signing run. Only the user's
	// own operations set it: git/commit, git/push and git/branch/switch
	// (spec: "The user's hooks run."; issue 10); every other call runs with
	// core.hooksPath=/dev/null.
	Hooks bool
	// Timeout bounds the call; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxOutput caps the stdout a verb keeps (Runner.run), in bytes; 0 means
	// DefaultMaxOutput.
	MaxOutput int64
}

func (r *Runner) command(ctx context.Context, c Cmd) (*exec.Cmd, context.Context, context.CancelFunc, error) {
	if c.Dir == "" {
		return nil, nil, nil, errors.New("gitcli: Cmd.Dir is required")
	}
	if len(c.Args) == 0 {
		return nil, nil, nil, errors.New("gitcli: Cmd.Args is empty")
	}
	timeout := c.Timeout
	if c.Hooks && r.hookTimeout > 0 {
		timeout = r.hookTimeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if r.started != nil {
		r.started(c.Args)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, &TimeoutError{Timeout: timeout, Hooks: c.Hooks})
	cmd := exec.CommandContext(ctx, r.gitPath, argv(c)...)
	cmd.Dir = c.Dir
	env := make([]string, 0, len(r.env)+len(c.Env)+1)
	env = append(env, r.env...)
	if !c.Write {
		env = append(env, "GIT_OPTIONAL_LOCKS=0")
	}
	cmd.Env = append(env, c.Env...)
	// Kill the whole process group on cancel: git may start helpers
	// (index-pack, remote helpers) that would otherwise outlive the call.
	// A call running the user's hooks is asked first (SIGTERM), so git
	// removes its lock files and a hook can undo what it started (a
	// formatter that stashed the unstaged changes puts them back).
	cmd.WaitDelay = 5 * time.Second
	if c.Hooks {
		procgroup.SetupGraceful(cmd, hookKillGrace)
		cmd.WaitDelay = hookKillGrace + time.Second
	} else {
		procgroup.Setup(cmd)
	}
	// Die with the server: a git child must never finish half an action
	// after the process that journaled it was killed (issue 15).
	setDeathSignal(cmd.SysProcAttr)
	return cmd, ctx, cancel, nil
}

// argv is the full argument list git gets for c (after the program name):
// the pinned -c options, the plumbing -c options unless c.Hooks, then
// c.Args.
func argv(c Cmd) []string {
	out := make([]string, 0, 2*(len(pinnedConfig)+len(plumbingConfig))+len(c.Args))
	for _, kv := range pinnedConfig {
		out = append(out, "-c", kv)
	}
	if !c.Hooks {
		for _, kv := range plumbingConfig {
			out = append(out, "-c", kv)
		}
	}
	return append(out, c.Args...)
}

// run runs git and returns its stdout. A non-zero exit, a timeout or a
// failure to start returns an [*Error] carrying the args, exit code and
// stderr; errors.Is reports [ErrNotRepo] when git said the directory is not
// in a repository, [ErrOutputTooLarge] when stdout passed MaxOutput, and
// context.DeadlineExceeded or context.Canceled when the context ended it.
func (r *Runner) run(ctx context.Context, c Cmd) ([]byte, error) {
	var out []byte
	err := r.Stream(ctx, c, func(stdout io.Reader) error {
		limit := c.MaxOutput
		if limit <= 0 {
			limit = DefaultMaxOutput
		}
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(stdout, limit+1))
		if err != nil {
			return err
		}
		if n > limit {
			return ErrOutputTooLarge
		}
		out = buf.Bytes()
		return nil
	})
	return out, err
}

// Stream runs git and hands its stdout to read while it runs, for outputs
// too large to hold (diffs of big trees) or read incrementally. If read
// returns an error the process is killed and that error is returned wrapped
// in an [*Error]. Other errors are as for every verb: an [*Error] with the
// args, exit code and stderr for a non-zero exit, a timeout or a failure to
// start, matching [ErrNotRepo] or the context's error as it applies.
func (r *Runner) Stream(ctx context.Context, c Cmd, read func(stdout io.Reader) error) error {
	if r.exec != nil {
		return r.exec(ctx, c, read)
	}
	return r.execGit(ctx, c, read)
}

// execGit starts git for c and streams its stdout to read. git's stdin,
// stdout and stderr are pipes of its own (pipes.go), so the call ends when
// git exits, whatever a process it left behind still holds; its result is
// git's exit status.
func (r *Runner) execGit(ctx context.Context, c Cmd, read func(stdout io.Reader) error) error {
	cmd, runCtx, cancel, err := r.command(ctx, c)
	if err != nil {
		return err
	}
	defer cancel()
	stderr := &capWriter{max: maxStderr}
	p, err := r.pipes(cmd, c.Stdin)
	if err != nil {
		return r.wrapCode(c, -1, stderr, err)
	}
	defer p.close()
	// The parent-death signal fires when the OS thread that started the
	// child exits (prctl(2), PR_SET_PDEATHSIG), not the process: keep this
	// goroutine on its thread from the start until git has exited, so the
	// runtime cannot retire the thread while git runs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	proc, err := r.start(runCtx, cmd, c)
	p.started(err == nil, c.Stdin)
	if err != nil {
		return r.wrapCode(c, -1, stderr, err)
	}
	stderrDone := make(chan struct{})
	go func() { // ends once git has exited and its stderr is read (childPipe)
		defer close(stderrDone)
		_, _ = io.Copy(stderr, p.stderr)
	}()
	waited := make(chan exitStatus, 1)
	go func() { // ends when git has exited
		st := proc.wait()
		p.settle(st.err != nil && runCtx.Err() != nil, cmd.WaitDelay)
		waited <- st
	}()
	readErr := read(p.stdout)
	if readErr != nil {
		cancel()
	}
	// Drain what read left so git never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, p.stdout)
	st := <-waited
	<-stderrDone
	if readErr != nil {
		return r.wrapCode(c, st.code, stderr, readErr)
	}
	if st.err != nil {
		if runCtx.Err() != nil {
			return r.wrapCode(c, st.code, stderr, context.Cause(runCtx))
		}
		return r.wrapCode(c, st.code, stderr, st.err)
	}
	return nil
}

// wrap is the *Error of c, a call os/exec started as cmd (its exit code
// from cmd.ProcessState; -1 before it exited).
func (r *Runner) wrap(c Cmd, cmd *exec.Cmd, stderr *capWriter, err error) error {
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return r.wrapCode(c, code, stderr, err)
}

// wrapCode is the *Error of c with git's exit code (-1 when it did not
// exit normally).
func (r *Runner) wrapCode(c Cmd, code int, stderr *capWriter, err error) error {
	return &Error{Args: c.Args, Dir: c.Dir, ExitCode: code, Stderr: strings.TrimSpace(stderr.String()), Err: err}
}

// capWriter keeps at most max bytes written to it.
type capWriter struct {
	buf bytes.Buffer
	max int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		if len(p) > room {
			w.buf.Write(p[:room])
		} else {
			w.buf.Write(p)
		}
	}
	return len(p), nil
}

func (w *capWriter) String() string { return w.buf.String() }
