package threads

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// DefaultIdleUnload is how long a loaded thread without a subscriber and
// without running work stays loaded (spec: "A thread unloads after ten
// minutes without a subscriber and with no running work").
const DefaultIdleUnload = 10 * time.Minute

// Notifier sends a notification to every initialized connection (the rpc
// server's Broadcast, *jsonrpc.Server). It must not block for long: the
// thread goroutines call it.
type Notifier interface {
	Broadcast(n protocol.Notification) error
}

// Subscriber is a connection subscribed to threads (a *jsonrpc.Conn): ID is
// unique among the server's connections and Send queues a notification
// without blocking for long (an error means the connection is gone).
// Notifications are made from the method table's descriptors
// (protocol.TurnStarted.With(params)), never from a method name.
type Subscriber interface {
	ID() uint64
	Send(n protocol.Notification) error
}

// Config is what a Manager is built with. Git, Differ, Models and Dirs are
// required; the other fields have defaults.
type Config struct {
	// Git runs every git process (captures and ref pins go through Differ).
	Git *gitcli.Runner
	// Differ captures checkouts and totals turns.
	Differ *diffscope.Differ
	// Models is the process's one provider registry (model/list, turns).
	Models *provider.Registry
	// Dirs says where session files live (session.ResolveDirs).
	Dirs session.Dirs
	// Notifier broadcasts to every initialized connection (nil: dropped).
	Notifier Notifier
	// Logger receives the manager's log (default: discard).
	Logger *slog.Logger
	// IdleUnload is how long a thread with no subscriber and no running work
	// stays loaded (default DefaultIdleUnload).
	IdleUnload time.Duration
	// DefaultApprovalMode is the approval mode of a thread started without
	// one and of a resumed thread whose branch records none or an invalid
	// one (default "ask": spec "Desktop threads default to ask ... invalid
	// stored state restores as ask").
	DefaultApprovalMode string
	// Warnings are the startup warnings (malformed settings or models.json)
	// every thread/start and thread/resume reports, so they do not silently
	// disappear.
	Warnings []protocol.Warning
	// SystemPrompt is the system prompt of every turn (default
	// DefaultSystemPrompt).
	SystemPrompt string
	// Workspace manages the worktrees of worktree threads (thread/start
	// with {mode: "worktree"}, archive, restore, worktree/*,
	// environment/*); nil refuses worktree mode. Its agent directory should
	// be Dirs.AgentDir, whose settings.json holds worktrees.root and
	// worktrees.keep.
	Workspace *workspace.Manager
	// Trust is the project trust store (project/trust/*, and whether an
	// environment's setup script may run); nil trusts no project.
	Trust *config.TrustStore
	// PayloadDir is where the payload spool directory is made (default
	// os.TempDir()); the spool is removed by Shutdown.
	PayloadDir string
	// PayloadTTL is a payload reference's sliding expiry (default
	// DefaultPayloadTTL).
	PayloadTTL time.Duration
	// Extensions are loaded in every thread load after the built-in ones
	// (package builtin), in this order (ext.Extension; EXTENSIBILITY.md
	// §7's order of sources is the caller's).
	Extensions []ext.Extension
	// ExtensionsFor, when set, gives the extensions of a thread load in
	// cwd (the thread's working directory), loaded after the built-in
	// ones and before Extensions: the JavaScript extensions of
	// EXTENSIBILITY.md §7's sources (a trusted project's, the global
	// ones, the -e paths), in that order. It is called once per load.
	ExtensionsFor func(cwd string) []ext.Extension
	// InactiveFactories, when set, counts the compiled extension
	// factories no loaded thread leases (server/diagnostics
	// inactiveFactories).
	InactiveFactories func() int64
	// CommandReaper runs every bash command under a reaper process, so that
	// no descendant of it escapes its thread (tools.ProcessGroups.Reaper;
	// Linux). Set it only when the process's executable calls
	// tools.RunReaper when started with tools.ReaperArg, as knightcode's
	// main does.
	CommandReaper bool
}

// Manager owns the loaded threads of the process. Its methods are safe for
// concurrent use. Build one with New; call Shutdown once at the end.
type Manager struct {
	cfg Config
	log *slog.Logger

	// The seams the manager works through, each its own type.
	gates    *gates     // the checkouts' gates: fences, turns, operations (gates.go)
	catalog  *catalog   // saved threads, listings, sidebar broadcasts (catalog.go)
	spool    *spool     // values over the inline limit (spool.go, bound.go)
	settings *settings  // what the settings files say (settings_files.go)
	place    *placement // where threads run: worktrees, handoffs (placement.go)

	// The table of loaded threads and their admission.
	mu         sync.Mutex
	threads    map[string]*thread       // loaded threads by id
	loading    int                      // loads in progress
	closing    bool                     // Shutdown began: no more loads
	loadingIDs map[string]chan struct{} // resumes in progress by thread id
	wg         sync.WaitGroup           // thread goroutines
	// deleting counts the claims on managed worktree paths a deletion is
	// removing (worktreeClaim, placement.claim): no thread loads inside
	// them meanwhile.
	deleting map[string]int

	// base is the manager's lifetime context (not a request's): the git
	// work of turns (captures, ref pins, totals) runs on contexts derived
	// from it, and Shutdown cancels it at its deadline, so no git process
	// outlives the server. cancelBase cancels it.
	base       context.Context
	cancelBase context.CancelFunc

	// onWorktreeClaim, when set (tests only), runs after a worktree path was
	// claimed for a deletion, before the deletion goes on.
	onWorktreeClaim func(path string)
}

// New returns a Manager with cfg.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IdleUnload <= 0 {
		cfg.IdleUnload = DefaultIdleUnload
	}
	if cfg.DefaultApprovalMode == "" {
		cfg.DefaultApprovalMode = session.ApprovalAsk
	}
	if cfg.SystemPrompt == "" {
		cfg.SystemPrompt = DefaultSystemPrompt
	}
	base, cancel := context.WithCancel(context.Background())
	m := &Manager{
		cfg:     cfg,
		log:     cfg.Logger,
		gates:   newGates(cfg.Git),
		catalog: newCatalog(cfg.Dirs, cfg.Notifier, cfg.Logger),
		spool:   newSpool(cfg.PayloadDir, cfg.PayloadTTL, cfg.Logger),
		settings: &settings{agentDir: cfg.Dirs.AgentDir, trust: cfg.Trust, systemPrompt: cfg.SystemPrompt,
			warnings: cfg.Warnings, log: cfg.Logger},
		threads:    map[string]*thread{},
		loadingIDs: map[string]chan struct{}{},
		deleting:   map[string]int{},
		base:       base,
		cancelBase: cancel,
	}
	m.place = &placement{git: cfg.Git, differ: cfg.Differ, workspace: cfg.Workspace, trust: cfg.Trust, agentDir: cfg.Dirs.AgentDir,
		settings: m.settings, catalog: m.catalog, log: cfg.Logger, claim: func() *worktreeClaim { return &worktreeClaim{m: m} }}
	return m
}

// loaded returns the loaded thread id, nil when it is not loaded.
func (m *Manager) loaded(id string) *thread {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.threads[id]
}

// lookup returns the loaded thread id. Errors: goneErr's.
func (m *Manager) lookup(id string) (*thread, error) {
	m.mu.Lock()
	t, closing := m.threads[id], m.closing
	m.mu.Unlock()
	if t == nil {
		return nil, goneErr(closing, id)
	}
	return t, nil
}

// goneErr is the error of a request for thread id that is not loaded, or
// unloaded while the request waited: ErrShuttingDown once Shutdown began
// (closing; the thread unloaded for it), else ErrThreadNotFound.
func goneErr(closing bool, id string) error {
	if closing {
		return fmt.Errorf("%w: thread %s unloaded", ErrShuttingDown, id)
	}
	return threadNotFound(id)
}

// gone is goneErr of t, which unloaded (or is unloading) while a request
// for it waited.
func (t *thread) gone() error {
	t.m.mu.Lock()
	closing := t.m.closing
	t.m.mu.Unlock()
	return goneErr(closing, t.id)
}

// Checkout returns the working directory of the loaded thread threadID: the
// checkout its tools and diffs act on (its cwd; for a worktree thread, its
// worktree). Errors: ErrThreadNotFound when the thread is not loaded;
// *workspace.ConflictError worktreeDeleted when the thread's managed
// worktree is gone (checkoutGone).
func (m *Manager) Checkout(threadID string) (cwd string, err error) {
	t, err := m.lookup(threadID)
	if err != nil {
		return "", err
	}
	if err := t.checkoutGone(); err != nil {
		return "", err
	}
	return t.cwd, nil
}

// checkoutGone is placement.gone for the reads and writes of a thread's
// checkout (diffs, files, git): a worktree thread whose folder is not a
// directory, deleted by an archive or removed behind our back, answers
// worktreeDeleted rather than git's notGitRepo, so the client is told
// what thread/worktree/restore brings back. Its cost is one lstat while
// the folder is there.
func (t *thread) checkoutGone() error {
	if t.ws == nil {
		return nil
	}
	if fi, err := os.Lstat(t.ws.Path); err == nil && fi.IsDir() {
		return nil
	}
	return t.m.place.gone(t.id, t.ws)
}

// WithCheckout runs fn with the loaded thread's cwd while no turn runs in
// that checkout (the git work tree holding the cwd, shared by every loaded
// thread inside it; the cwd itself outside git), and keeps any turn from
// starting there until fn returns (spec thread/diff/revert: "Refused while a
// turn runs in the checkout; no turn starts and no tool runs there until it
// ends"). Admission goes through the thread's goroutine, so it is ordered
// with that thread's turn starts. fn runs on the caller's goroutine; its
// error is returned as is. Queued inputs held back meanwhile start when fn
// returns. The fence holds a use of the checkout's gate until fn returns,
// so it outlasts the thread if the thread unloads meanwhile: a thread
// loaded in the checkout then shares the fenced gate and starts no turn.
//
// action names what fn does (the method: "thread/diff/revert"): a request
// refused meanwhile is told which thread runs it ([BusyError]).
//
// Errors: ErrThreadNotFound when the thread is not loaded; a *BusyError
// (ErrTurnInProgress) naming the thread and its turn, or the thread and
// its long operation ([Manager.RunOperation]), that runs in the checkout; *workspace.ConflictError worktreeDeleted
// when the thread's managed worktree is gone (checkoutGone); ctx's error
// when ctx ends first.
func (m *Manager) WithCheckout(ctx context.Context, threadID, action string, fn func(cwd string) error) error {
	t, err := m.lookup(threadID)
	if err != nil {
		return err
	}
	if err := t.checkoutGone(); err != nil {
		return err
	}
	var (
		cwd string
		g   *gate
	)
	h := holder{thread: t.id, action: action}
	err = t.call(ctx, func() error {
		if err := t.gate.fence(h); err != nil {
			return err
		}
		// The thread is loaded (its goroutine runs this), so its gate is
		// still the checkout's: count the fence as one more holder of it.
		m.gates.hold(t.gate)
		cwd, g = t.cwd, t.gate
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		m.unfence(g, h)
		m.gates.release(g)
	}()
	return fn(cwd)
}

// unfence releases the fence h holds and, when it was the last, lets the
// threads of the checkout start their queued inputs.
func (m *Manager) unfence(g *gate, h holder) {
	if !g.unfence(h) {
		return
	}
	m.mu.Lock()
	var kick []*thread
	for _, t := range m.threads {
		if t.gate == g {
			kick = append(kick, t)
		}
	}
	m.mu.Unlock()
	for _, t := range kick {
		t.post(t.startNextQueued)
	}
}

// ThreadCounters implements rpc.DiagnosticsSource: loaded and loading
// threads, the live payload spool files and their bytes, and the listing
// counters of thread/list, and Config.InactiveFactories (0 without it).
func (m *Manager) ThreadCounters() protocol.ThreadCounters {
	m.mu.Lock()
	loaded, loading := len(m.threads), m.loading
	m.mu.Unlock()
	lc := m.catalog.lister.Counters()
	files, bytes := m.spool.counters()
	var inactive int64
	if f := m.cfg.InactiveFactories; f != nil {
		inactive = f()
	}
	return protocol.ThreadCounters{
		LoadedThreads:       int64(loaded),
		LoadingThreads:      int64(loading),
		PayloadFiles:        files,
		PayloadBytes:        bytes,
		ListingFilesOpened:  lc.FilesOpened,
		ListingBytesScanned: lc.BytesScanned,
		InactiveFactories:   inactive,
	}
}

// errClosing refuses loads and starts once shutdown began.
var errClosing = ErrShuttingDown
