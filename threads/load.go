package threads

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// StartOptions are the options of [Manager.Start] (thread/start): Cwd is
// the absolute path of an existing directory; ApprovalMode is "ask" or
// "fullAccess" ("" for the default); Model names a model of model/list
// (nil: none, turns then need thread/settings/update); Workspace says
// where the thread runs.
type StartOptions struct {
	Cwd          string
	ApprovalMode string
	Model        *ModelRef
	Workspace    WorkspaceOptions
}

// WorkspaceOptions are where a started thread runs (spec: "Workspaces,
// diffs and git"): Mode "local" ("" too) runs it in the cwd, "worktree" in
// a new managed worktree made at BaseRef ("" for the checkout's HEAD),
// carrying the cwd's uncommitted changes with CarryLocalChanges, with
// Environment's setup script run in it ("" for none).
type WorkspaceOptions struct {
	Mode              string
	BaseRef           string
	CarryLocalChanges bool
	Environment       string
}

// ModelRef names a model as model/list lists it: its provider and id.
type ModelRef struct {
	Provider string
	ID       string
}

// Start starts a thread in o.Cwd and subscribes sub (thread/start). A
// local thread is not saved until its first entry (a settings change or a
// turn): its settings entries (approval_mode, model_change) are written
// then; a worktree thread is saved at once, so its worktree always has a
// transcript that names it. Its approval mode is o.ApprovalMode, else
// Config.DefaultApprovalMode (fullAccess for a terminal-mode sub); its
// model is o.Model, else none.
//
// Workspace (spec: "Workspaces, diffs and git"): mode local (the default)
// runs the thread in o.Cwd; mode worktree creates a managed worktree and
// runs the thread in the same subdirectory of it (see placement.prepare:
// environment setup, pruning); a cwd inside a managed worktree joins that
// worktree whatever the mode. The thread's workspace is recorded in its
// session header.
//
// Errors (*coreerr.ParamError, invalidParams on the wire): "cwd" when it is not an absolute
// path of an existing directory, or (worktree mode) an unborn or bare
// repository; "approvalMode" when not ask or fullAccess; "model" when not a
// model of model/list; "workspace.mode" for anything but local and
// worktree; "workspace.baseRef" naming no commit; "workspace.environment"
// naming no environment of the project. Errors matching gitcli.ErrNotRepo
// (notGitRepo) for a worktree outside a git repository; *ConflictError
// patchFailed when carried changes do not apply onto baseRef;
// *ConflictError worktreeDeleted when cwd is inside a managed worktree a
// deletion holds (worktreeClaim). shuttingDown once Shutdown began. A start
// that fails leaves no worktree behind.
func (m *Manager) Start(ctx context.Context, sub Subscriber, o StartOptions) (Opened, error) {
	cwd, err := checkCwd(o.Cwd)
	if err != nil {
		return Opened{}, err
	}
	mode := o.Workspace.Mode
	if mode == "" {
		mode = protocol.WorkspaceLocal
	}
	if mode != protocol.WorkspaceLocal && mode != protocol.WorkspaceWorktree {
		return Opened{}, coreerr.Param("workspace.mode", "must be %q or %q, got %q", protocol.WorkspaceLocal, protocol.WorkspaceWorktree, mode)
	}
	approval := defaultApproval(sub, m.cfg.DefaultApprovalMode)
	if o.ApprovalMode != "" {
		if !validApproval(o.ApprovalMode) {
			return Opened{}, invalidApproval(o.ApprovalMode)
		}
		approval = o.ApprovalMode
	}
	st := threadSettings{Approval: approval, Thinking: string(agent.ThinkingOff)}
	pending := []session.Entry{session.NewApprovalMode(approval)}
	if o.Model != nil {
		if _, _, ok := m.cfg.Models.Lookup(o.Model.Provider, o.Model.ID); !ok {
			return Opened{}, unknownModel("model", *o.Model)
		}
		st.Provider, st.Model = o.Model.Provider, o.Model.ID
		pending = append(pending, session.NewModelChange(st.Provider, st.Model))
	}
	// Handoffs a stopped server left are finished or undone first: one
	// may have left this checkout half-cleaned, which a new worktree or a
	// first turn must not start from.
	handedOff := m.place.recoverHandoffs(ctx, "", m.recordLanding)
	wt, err := m.place.prepare(ctx, cwd, mode, o.Workspace)
	if err != nil {
		return Opened{}, err
	}
	opts := session.CreateOptions{Cwd: cwd}
	if wt != nil {
		cwd = wt.cwd
		opts = session.CreateOptions{Cwd: cwd, Workspace: wt.header}
	}
	recovered := append(handedOff, m.place.recoveryWarnings(ctx, cwd)...)
	sess, err := session.Create(m.cfg.Dirs.ForCwd(cwd), opts)
	if err != nil {
		m.place.rollback(ctx, wt)
		return Opened{}, err
	}
	t, err := m.register(ctx, sess, cwd, st, pending, func(t *thread) {
		t.updatedAt = sess.Header().Timestamp
		t.asks.terminal.Store(isTerminal(sub))
		t.asks.apps.Store(drawsApps(sub))
	})
	if err != nil {
		m.place.rollback(ctx, wt)
		return Opened{}, err
	}
	warnings := append(t.warnings(), recovered...)
	if wt != nil {
		warnings = append(warnings, wt.warnings...)
		warnings = append(warnings, m.place.setup(ctx, sub, t.id, wt)...)
		warnings = append(warnings, m.place.prune(ctx, wt)...)
	}
	var res Opened
	err = t.call(ctx, func() error {
		if wt != nil {
			// A worktree thread is saved at once: its transcript is what
			// ties the worktree to a thread across restarts.
			if err := t.flushPending(); err != nil {
				return err
			}
		}
		warnings = append(warnings, t.takeUnheard()...)
		t.subscribe(sub)
		t.setStatus(statusIdle)
		res = Opened{Thread: t.wire(), Warnings: warnings, UI: t.uiSnapshot()}
		t.checkIdle()
		return nil
	})
	return res, err
}

// checkCwd requires an absolute path of an existing directory and returns
// it cleaned.
func checkCwd(cwd string) (string, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return "", coreerr.Param("cwd", "must be an absolute path, got %q", cwd)
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return "", coreerr.Param("cwd", "%s is not an existing directory", cwd)
	}
	if !fi.IsDir() {
		return "", coreerr.Param("cwd", "%s is not a directory", cwd)
	}
	return filepath.Clean(cwd), nil
}

func validApproval(mode string) bool {
	return mode == protocol.ApprovalAsk || mode == protocol.ApprovalFullAccess
}

func invalidApproval(mode string) error {
	return coreerr.Param("approvalMode", "must be %q or %q, got %q", protocol.ApprovalAsk, protocol.ApprovalFullAccess, mode)
}

func unknownModel(field string, r ModelRef) error {
	return coreerr.Param(field, "unknown model %s/%s; model/list lists the models", r.Provider, r.ID)
}

// register makes a loaded thread of sess, runs init on it and starts its
// goroutine. On error sess is closed. Errors: shuttingDown once Shutdown
// began; *workspace.ConflictError worktreeDeleted while a deletion holds
// the managed worktree cwd is in (worktreeClaim).
func (m *Manager) register(ctx context.Context, sess *session.Session, cwd string, st threadSettings, pending []session.Entry, init func(*thread)) (*thread, error) {
	key := m.gates.key(ctx, cwd)
	t := &thread{
		m: m, id: sess.ID(), cwd: cwd, sess: sess, ws: sess.Header().Workspace, home: sess.Header().Workspace,
		procs:    tools.NewProcessGroups(),
		inbox:    make(chan func()),
		done:     make(chan struct{}),
		subs:     map[uint64]Subscriber{},
		status:   protocol.ThreadStatus{Type: protocol.ThreadStatusNotLoaded},
		settings: st,
		pending:  pending,
	}
	t.procs.Reaper = m.cfg.CommandReaper
	t.approval.Store(st.Approval)
	tr := sess.Transcript()
	t.newExtensions(tr.Branch())
	t.watchBackgroundShells()
	init(t)
	t.lastTurn = lastTurnOf(tr, "")
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		_ = sess.Close()
		return nil, errClosing
	}
	if m.threads[t.id] != nil {
		m.mu.Unlock()
		_ = sess.Close()
		return nil, fmt.Errorf("threads: thread %s is loaded twice", t.id)
	}
	if p := claimedFor(m.deleting, cwd, t.ws); p != "" {
		m.mu.Unlock()
		_ = sess.Close()
		return nil, worktreeBeingDeleted(p)
	}
	t.gate = m.gates.acquire(key)
	m.threads[t.id] = t
	m.catalog.found(t.id)
	m.wg.Add(1)
	m.mu.Unlock()
	go t.loop()
	m.place.attach(t.id, t.ws)
	t.loadExtensions()
	return t, nil
}

// Resume loads the saved thread id (unless it is loaded), owning its
// session file, subscribes sub and returns one history page (cursor "" for
// the newest; thread/resume) with send-time snapshots of the running turn, the queue, the
// usage and the UI, all taken on the thread's goroutine together with the
// subscription. An invalid cursor subscribes nobody (a thread loaded just
// for it unloads again).
//
// Errors: ErrThreadNotFound when no session file has that id;
// session.ErrLockedElsewhere (threadLockedElsewhere) when another process
// owns it; session.ErrHardLinked (archiveConflict); session.ErrInvalidCursor
// (invalidCursor); *workspace.ConflictError worktreeDeleted while a
// deletion holds the thread's managed worktree (worktreeClaim);
// shuttingDown once Shutdown began. A worktree whose folder was removed
// behind our back is re-created clean at its last commit, with a warning
// (placement.noticeMissing, C27); when that fails the thread reports
// workspace.deleted. A worktree that is deleted (archived, pruned) is
// named in a warning saying thread/worktree/restore brings it back.
func (m *Manager) Resume(ctx context.Context, sub Subscriber, id, cursor string) (Resumed, error) {
	var recovered []protocol.Warning // kept across attempts
	for {
		handoffWarnings := m.place.recoverHandoffs(ctx, id, m.recordLanding) // before it loads: a recovery may move it
		t, loadedNow, err := m.load(ctx, id, sub)
		if err != nil {
			return Resumed{}, err
		}
		recovered = append(recovered, m.place.recoveryWarnings(ctx, t.cwd)...)
		recovered = append(recovered, m.place.resumeWarnings(ctx, t.id, t.ws)...)
		// The result's warnings: the settings' and the extensions' load
		// warnings (t.warnings, read on its goroutine), then these.
		warnings := append(slices.Clone(recovered), handoffWarnings...)
		err = t.awaitExtensions(ctx)
		var res Resumed
		if err == nil {
			res, err = t.resume(ctx, sub, cursor, loadedNow, warnings)
		}
		if !errors.Is(err, errUnloading) && (err == nil || !errors.Is(err, ErrThreadNotFound)) {
			return res, err
		}
		// It was unloading: wait until it is gone, then load it again.
		select {
		case <-t.done:
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}

// errUnloading asks Resume to load again: the thread it found was
// unloading (and is gone once this is returned).
var errUnloading = errors.New("threads: the thread is unloading")

// resume subscribes sub to the loaded thread and takes the history page at
// cursor and the send-time snapshots, on the thread's goroutine (see
// Manager.Resume; loadedNow: Resume loaded it, and unloads it again when
// the cursor is invalid). Errors: errUnloading, or ErrThreadNotFound, when
// the thread is unloading; session.ErrInvalidCursor.
func (t *thread) resume(ctx context.Context, sub Subscriber, cursor string, loadedNow bool, warnings []protocol.Warning) (Resumed, error) {
	var res Resumed
	err := t.call(ctx, func() error {
		if t.unloading {
			return errUnloading
		}
		page, err := t.history(cursor)
		if err != nil {
			if loadedNow && len(t.subs) == 0 && !t.busy() {
				t.beginUnload("")
			}
			return err
		}
		if loadedNow {
			t.asks.terminal.Store(isTerminal(sub))
		}
		warnings = append(warnings, t.takeUnheard()...)
		t.subscribe(sub)
		if t.status.Type == protocol.ThreadStatusNotLoaded {
			t.setStatus(statusIdle)
		}
		res = Resumed{
			Thread:     t.wire(),
			Warnings:   append(t.warnings(), warnings...),
			Turns:      []protocol.Turn{},
			NextCursor: page.NextCursor,
			Queue:      t.queueSnapshot(),
			Usage:      t.usageSnapshot(),
			UI:         t.uiSnapshot(),
		}
		if t.turn != nil {
			rt := t.turn.snapshot()
			res.RunningTurn = &rt
		}
		res.Turns = t.m.spool.boundPage(page.Turns, jsonSize(protocol.ThreadResumeResult(res)))
		return nil
	})
	return res, err
}

// history builds one history page of the thread, its turns whole (owner
// goroutine); spool.boundPage makes them fit the response.
func (t *thread) history(cursor string) (session.Page, error) {
	opts := session.HistoryOptions{}
	if t.turn != nil {
		opts.RunningTurnID = t.turn.id
	}
	return t.sess.Transcript().History(cursor, opts)
}

// load returns the loaded thread id, loading it from its session file when
// needed (owned with session.Open, its settings and placement restored);
// loadedNow says it was loaded by this call. sub, when not nil, is the
// connection loading it: its mode is the load's (terminal, draws apps).
func (m *Manager) load(ctx context.Context, id string, sub Subscriber) (t *thread, loadedNow bool, err error) {
	for {
		m.mu.Lock()
		if t := m.threads[id]; t != nil {
			m.mu.Unlock()
			return t, false, nil
		}
		if m.closing {
			m.mu.Unlock()
			return nil, false, errClosing
		}
		if wait := m.loadingIDs[id]; wait != nil {
			m.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
		}
		ch := make(chan struct{})
		m.loadingIDs[id] = ch
		m.loading++
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			delete(m.loadingIDs, id)
			m.loading--
			m.mu.Unlock()
			close(ch)
		}()
		// Find and own its session file, and register it.
		path, err := m.catalog.sessionFile(id)
		if err != nil {
			return nil, false, err
		}
		sess, err := session.Open(path)
		if err != nil {
			return nil, false, err
		}
		tr := sess.Transcript()
		place := tr.Placement() // a handoff's workspace entry wins over the header
		t, err := m.register(ctx, sess, place.Cwd, restoreSettings(tr.Branch(), m.cfg.DefaultApprovalMode), nil, func(t *thread) {
			t.ws, t.home, t.handoffBranch = place.Workspace, place.Home, place.Branch
			if sub != nil { // before its extensions load: MCP connects read it
				t.asks.terminal.Store(isTerminal(sub))
				t.asks.apps.Store(drawsApps(sub))
			}
			t.updatedAt = tr.UpdatedAt()
			t.nextItem = tr.ItemCount()
			t.usage = branchUsage(tr.Branch())
			if h := tr.Header; h.ParentSession != "" {
				if parent, err := session.ReadHeader(h.ParentSession); err == nil {
					t.forkedFrom = parent.ID // "" when the parent cannot be read
				}
			}
		})
		return t, err == nil, err
	}
}

// restoreSettings reads the thread settings recorded on a branch: the last
// model_change, thinking_level_change and approval_mode entries. A missing
// or invalid approval mode restores as def (spec: "invalid stored state
// restores as ask").
func restoreSettings(branch []session.Entry, def string) threadSettings {
	st := threadSettings{Approval: def, Thinking: string(agent.ThinkingOff)}
	for _, e := range branch {
		switch e.Type {
		case session.TypeModelChange:
			st.Provider, st.Model = e.Provider, e.ModelID
		case session.TypeThinkingLevelChange:
			st.Thinking = e.ThinkingLevel
		case session.TypeApprovalMode:
			if validApproval(e.Mode) {
				st.Approval = e.Mode
			} else {
				st.Approval = def
			}
		}
	}
	return st
}

// branchUsage sums the usage of the branch's assistant replies and
// compactions (compactionUsage) and takes the context size from the last
// reply that completed.
func branchUsage(branch []session.Entry) protocol.TokenUsage {
	var u protocol.TokenUsage
	for _, e := range branch {
		if e.Type == session.TypeCompaction {
			addUsage(&u, agent.Message{Usage: compactionUsage(e)})
			u.ContextTokens = nil
			continue
		}
		if e.Type != session.TypeMessage || e.Role() != session.RoleAssistant {
			continue
		}
		var msg agent.Message
		if err := msg.UnmarshalJSON(e.Message); err != nil {
			continue
		}
		addUsage(&u, msg)
	}
	return u
}

// addUsage adds a finalized reply's usage to the cumulative u; a completed
// reply's total sets the context size.
func addUsage(u *protocol.TokenUsage, msg agent.Message) {
	us := msg.Usage
	u.Input += us.Input
	u.Output += us.Output
	u.CacheRead += us.CacheRead
	u.CacheWrite += us.CacheWrite
	u.Cost += us.Cost.Total
	if msg.StopReason == agent.StopReasonStop || msg.StopReason == agent.StopReasonToolUse {
		if total := us.Input + us.Output + us.CacheRead + us.CacheWrite; total > 0 {
			u.ContextTokens = &total
		}
	}
}

// Read reads one history page of the saved thread id (thread/read),
// without loading or locking it (a loaded thread's history is taken from
// its session, with its running turn inProgress); cursor "" is the newest
// page. An archived thread is read from the archive. Errors:
// ErrThreadNotFound; session.ErrInvalidCursor.
func (m *Manager) Read(ctx context.Context, id, cursor string) (Page, error) {
	t := m.loaded(id)
	if t != nil {
		var res Page
		err := t.call(ctx, func() error {
			page, err := t.history(cursor)
			if err != nil {
				return err
			}
			res = Page{Thread: t.wire(), Turns: []protocol.Turn{}, NextCursor: page.NextCursor}
			res.Turns = m.spool.boundPage(page.Turns, jsonSize(protocol.ThreadReadResult(res)))
			return nil
		})
		if !errors.Is(err, ErrThreadNotFound) {
			return res, err
		}
		// It unloaded meanwhile: read the file.
	}
	tr, s, err := m.catalog.readSaved(id)
	if err != nil {
		return Page{}, err
	}
	page, err := tr.History(cursor, session.HistoryOptions{})
	if err != nil {
		return Page{}, err
	}
	th := m.catalog.savedThread(tr, s.ForkedFromID, m.place.view(tr.Placement().Workspace))
	res := Page{Thread: th, Turns: []protocol.Turn{}, NextCursor: page.NextCursor}
	res.Turns = m.spool.boundPage(page.Turns, jsonSize(protocol.ThreadReadResult(res)))
	return res, nil
}

// Unsubscribe withdraws the subscriber subID from the thread id
// (thread/unsubscribe); unsubscribed is false when it was not subscribed
// (a thread that is not loaded has no subscriber).
func (m *Manager) Unsubscribe(ctx context.Context, subID uint64, id string) (unsubscribed bool, err error) {
	t, err := m.lookup(id)
	if err != nil {
		return false, nil
	}
	err = t.call(ctx, func() error {
		unsubscribed = t.unsubscribe(subID)
		return nil
	})
	if errors.Is(err, ErrThreadNotFound) {
		err = nil
	}
	return unsubscribed, err
}

// DropSubscriber unsubscribes subID from every thread (its connection
// closed). Threads left without subscribers and work unload after
// Config.IdleUnload.
func (m *Manager) DropSubscriber(subID uint64) {
	m.mu.Lock()
	ts := make([]*thread, 0, len(m.threads))
	for _, t := range m.threads {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	for _, t := range ts {
		t.post(func() { t.unsubscribe(subID) })
	}
}

// Shutdown unloads every thread: running turns are interrupted (they end
// interrupted, their end entries written), queued inputs dropped, session
// locks released. No thread loads afterwards. It waits for the threads'
// goroutines until ctx ends (the rpc server's shutdown hook passes the
// grace deadline, 9 s). Then it cancels the manager's base context, which
// cuts the git work still running for turns (the capture after an
// interrupted turn, its ref pins and totals: the git processes are killed
// and their temporary files removed), and waits up to shutdownCutWait more
// for the threads to write their end entries (without trees or files when
// the capture was cut) and exit. It returns nil when every thread exited,
// else ctx's error.
func (m *Manager) Shutdown(ctx context.Context) error {
	defer m.cancelBase()
	defer func() {
		if err := m.spool.close(); err != nil {
			m.log.Warn("removing the payload spool failed", "err", err)
		}
	}()
	m.mu.Lock()
	m.closing = true
	ts := make([]*thread, 0, len(m.threads))
	for _, t := range m.threads {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	for _, t := range ts {
		t.post(func() { t.beginUnload("") })
	}
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	m.log.Warn("shutdown deadline reached: cutting the git work of the threads still unloading")
	m.cancelBase()
	cut := time.NewTimer(shutdownCutWait)
	defer cut.Stop()
	select {
	case <-done:
		return nil
	case <-cut.C:
		return ctx.Err()
	}
}

// shutdownCutWait is how long Shutdown waits for the threads once their git
// work was cut at its deadline: they only have their end entries left to
// write. It fits in the second between the rpc server's grace deadline
// (9 s) and its shutdown limit (10 s).
const shutdownCutWait = 500 * time.Millisecond
