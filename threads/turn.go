package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// DefaultSystemPrompt is the system prompt of every turn unless
// Config.SystemPrompt replaces it.
const DefaultSystemPrompt = `You are knightcode, a coding agent working in the user's project directory.
Use the tools to read files (read), run shell commands (bash), and change files (edit, write); paths are relative to the project directory.
Prefer small, precise edits, check your work, and say briefly what you changed.`

// captureTimeout bounds one checkout capture around a turn.
const captureTimeout = 2 * time.Minute

// PinRefPrefix is where the trees captured around turns are kept reachable:
// refs/knightcode/turns/<threadId>/<turnId>/before and .../after (the
// working tree), .../before-index and .../after-index (the index).
const PinRefPrefix = "refs/knightcode/turns/"

// turnRun is a running turn. The fields up to cancel are set at admission
// and read-only afterwards; the rest belong to the thread's goroutine.
type turnRun struct {
	t         *thread
	id        string
	startedAt int64
	in        input
	ctx       context.Context
	cancel    context.CancelFunc
	// extIn are the messages extensions sent for the model that it gets
	// with the input (after it), taken at admission.
	extIn []agent.Message

	interrupted bool
	items       []protocol.Item // live items; position = index in the turn
	toolPos     map[string]int  // call id -> position
	userSeen    bool            // the input's userMessage was sent
	reply       *replyState
	usage       agent.Usage
	// convIDs are the entry ids of the agent's conversation, message by
	// message ("" for messages without an entry), kept in step with it
	// through compactions (compaction.go).
	convIDs    []string
	compactPos int // position of the running compaction's item
}

// replyState tracks the live items of the assistant reply being streamed.
type replyState struct {
	thinking map[int]int // content index -> position of its reasoning item
	textPos  int         // position of the agentMessage item, -1 before
}

// interrupt cancels the turn; it completes interrupted.
func (tr *turnRun) interrupt() {
	tr.interrupted = true
	tr.cancel()
}

// snapshot is the running turn with its items so far.
func (tr *turnRun) snapshot() protocol.Turn {
	items := make([]protocol.Item, len(tr.items))
	for i, it := range tr.items {
		items[i] = tr.t.m.spool.inlineItem(it)
	}
	return protocol.Turn{ID: tr.id, Status: protocol.TurnInProgress, StartedAt: tr.startedAt, Items: items}
}

// resolveModel returns the thread's provider, model and thinking level
// (owner goroutine).
func (t *thread) resolveModel() (provider.Provider, agent.Model, agent.ThinkingLevel, error) {
	st := t.settings
	if st.Provider == "" || st.Model == "" {
		return nil, agent.Model{}, "", coreerr.Refusal(ReasonNoModel, "no model is selected for this thread: pick one of model/list with thread/settings/update {threadId, model: {provider, id}}")
	}
	p, mdl, err := t.m.cfg.Models.LookupFor(t.runner(), st.Provider, st.Model)
	if nl := (*provider.NotLoadedError)(nil); errors.As(err, &nl) {
		return nil, agent.Model{}, "", providerNotLoaded(nl)
	}
	if err != nil {
		return nil, agent.Model{}, "", coreerr.Refusal(ReasonNoModel, "the thread's model %s/%s is not available: pick one of model/list with thread/settings/update", st.Provider, st.Model)
	}
	if !t.m.cfg.Models.HasKey(st.Provider) {
		return nil, agent.Model{}, "", &NoKeyError{Provider: st.Provider}
	}
	level := agent.ThinkingLevel(st.Thinking)
	if !slices.Contains(mdl.ThinkingLevels, level) {
		level = agent.ThinkingOff
	}
	return p, mdl, level, nil
}

// ReasonProviderNotLoaded is the invalidParams data.reason (field
// "model") of a model whose provider an extension registers that the
// thread does not load (EXTENSIBILITY.md §7 "Extension providers in
// model/list").
const ReasonProviderNotLoaded = "providerNotLoaded"

// providerNotLoaded is the invalidParams error of nl.
func providerNotLoaded(nl *provider.NotLoadedError) error {
	return &coreerr.ParamError{Field: "model", Reason: ReasonProviderNotLoaded, Message: nl.Error()}
}

// startTurn admits and starts a turn of in (owner goroutine): it writes the
// turn_start entry (fsynced), reports turn/started and runs the agent on a
// goroutine of its own.
func (t *thread) startTurn(in input, requestID string) error {
	if t.unloading {
		return t.gone()
	}
	if t.turn != nil {
		return fmt.Errorf("%w: turn %s is running", ErrTurnInProgress, t.turn.id)
	}
	if err := t.m.place.gone(t.id, t.ws); err != nil {
		return err
	}
	prov, mdl, level, err := t.resolveModel()
	if err != nil {
		return err
	}
	id := uuid.NewString()
	if err := t.gate.admitTurn(t.id, id); err != nil {
		return err
	}
	startedAt := time.Now().UnixMilli()
	if _, err := t.append(session.NewTurnStart(id, startedAt)); err != nil {
		t.gate.endTurn(t.id)
		return err
	}
	t.m.place.touch(t.id, t.ws)
	history, ids := contextHistory(t.sess.Transcript().Branch())
	ctx, cancel := context.WithCancel(t.m.base)
	tr := &turnRun{t: t, id: id, startedAt: startedAt, in: in, ctx: ctx, cancel: cancel, toolPos: map[string]int{}, convIDs: ids,
		extIn: t.takeExtMessages(false)}
	t.turn = tr
	t.disarmIdle()
	t.setStatus(statusActive)
	t.notify(protocol.TurnStarted.With(protocol.TurnStartedParams{
		ThreadID: t.id, RequestID: requestID,
		Turn: protocol.Turn{ID: id, Status: protocol.TurnInProgress, StartedAt: startedAt},
	}))
	go tr.run(history, prov, mdl, level)
	return nil
}

// run is the turn's goroutine: capture, agent loop, capture, totals; then
// it hands the outcome to the thread's goroutine.
func (tr *turnRun) run(history []agent.Message, prov provider.Provider, mdl agent.Model, level agent.ThinkingLevel) {
	t := tr.t
	m := t.m
	tc := m.settings.turnContext(tr.ctx, t.cwd)
	before := t.capture()
	systemPrompt, input := tr.agentStart(tr.ctx, tc.systemPrompt, tc.modelInput(tr.in))
	opts := agent.Options{
		Provider:      prov,
		Model:         mdl.ID,
		ThinkingLevel: level,
		SystemPrompt:  systemPrompt,
		Tools:         tools.All(t.cwd, tools.WithProcessGroups(t.procs)),
		Approve:       tr.approve,
		Steer:         tr.takeSteering,
		Retry:         m.settings.retryPolicy(tr.ctx, t.cwd),
		Compaction:    m.settings.compaction(tr.ctx, t.cwd, mdl),
		OnEvent: func(e agent.Event) {
			// The thread goroutine outlives the turn: it waits for finish.
			t.inbox <- func() { tr.onEvent(e) }
		},
	}
	tr.extensionHooks(&opts)
	runErr := tr.agentRun(func() ([]agent.Message, error) { return agent.Run(tr.ctx, opts, history, input) })
	out := turnOutcome{err: runErr, before: before}
	if before != nil {
		out.after = t.capture()
		if out.after != nil {
			out.files, out.haveFiles = t.turnFiles(tr.id, before, out.after)
		}
	}
	t.inbox <- func() { t.finishTurn(tr, out) }
}

// turnOutcome is what the turn goroutine hands back.
type turnOutcome struct {
	err           error
	before, after *diffscope.Capture
	files         []protocol.FileTotal
	haveFiles     bool
}

// capture captures the thread's checkout; nil outside git (no error: the
// thread works without totals) or when the capture failed (logged). It runs
// on the manager's base context, so Shutdown's deadline cuts it (the git
// processes are killed and the temporary index files removed).
func (t *thread) capture() *diffscope.Capture {
	m, cwd := t.m, t.cwd
	if m.cfg.Differ == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(m.base, captureTimeout)
	defer cancel()
	c, err := m.cfg.Differ.Capture(ctx, cwd)
	if err != nil {
		if !errors.Is(err, gitcli.ErrNotRepo) {
			m.log.Warn("capturing the checkout failed; the turn gets no file totals", "cwd", cwd, "err", err)
		}
		return nil
	}
	return c
}

// turnFiles totals the turn's files and pins the four trees under
// refs/knightcode/turns/<threadId>/<turnId>/{before,after,before-index,after-index}
// (the index trees too, so content the turn only staged stays reachable and
// an undo can restore the index from them), and HEAD's commit after the
// turn as .../head (commits the turn made stay reachable when git forgets
// a worktree: `rm -rf` of its folder, then `git worktree prune`), in one
// ref transaction (diffscope.Differ.PinAll: all or none). files is never
// nil when ok.
// Like capture, it runs on the manager's base context.
func (t *thread) turnFiles(turnID string, before, after *diffscope.Capture) ([]protocol.FileTotal, bool) {
	m, cwd, threadID := t.m, t.cwd, t.id
	ctx, cancel := context.WithTimeout(m.base, captureTimeout)
	defer cancel()
	base := PinRefPrefix + threadID + "/" + turnID + "/"
	pins := map[string]string{
		base + "before": before.WorktreeTree, base + "after": after.WorktreeTree,
		base + "before-index": before.IndexTree, base + "after-index": after.IndexTree,
	}
	if after.Head != "" {
		// The commit HEAD is at: commits made during the turn stay
		// reachable even when git forgets a worktree holding them.
		pins[base+"head"] = after.Head
	}
	if err := m.cfg.Differ.PinAll(ctx, cwd, pins); err != nil {
		m.log.Warn("pinning the turn's trees failed", "refs", base, "err", err)
	}
	totals, err := m.cfg.Differ.TurnFiles(ctx, cwd, before, after)
	if err != nil {
		m.log.Warn("totalling the turn's files failed", "cwd", cwd, "err", err)
		return nil, false
	}
	files := make([]protocol.FileTotal, len(totals))
	for i, f := range totals {
		files[i] = protocol.FileTotal{Path: f.Path, Additions: f.Additions, Deletions: f.Deletions, Binary: f.Binary}
	}
	return files, true
}

// takeSteering is the agent's Steer hook: it takes the steering texts the
// thread holds for this turn.
func (tr *turnRun) takeSteering() []agent.Message {
	t := tr.t
	var msgs []agent.Message
	_ = t.call(context.Background(), func() error {
		if t.turn != tr {
			return nil
		}
		msgs = append(msgs, t.takeExtMessages(true)...)
		if len(t.steering) == 0 {
			return nil
		}
		for _, s := range t.steering {
			msgs = append(msgs, agent.UserText(s, 0))
		}
		t.steering = nil
		t.queueUpdated()
		return nil
	})
	return msgs
}

// finishTurn ends the turn (owner goroutine): the turn_end entry (fsynced),
// turn/completed, thread/turn/completed to everyone, turn/diff/updated,
// then the next queued input or the pending unload.
func (t *thread) finishTurn(tr *turnRun, out turnOutcome) {
	tr.cancel()
	status := protocol.TurnCompleted
	var terr *protocol.TurnError
	var pe *agent.ProviderError
	switch {
	case tr.interrupted || errors.Is(out.err, agent.ErrInterrupted):
		status = protocol.TurnInterrupted
	case errors.As(out.err, &pe):
		status = protocol.TurnFailed
		terr = &protocol.TurnError{Message: pe.Error(), Kind: pe.Kind()}
	case out.err != nil:
		status = protocol.TurnFailed
		terr = &protocol.TurnError{Message: out.err.Error(), Kind: protocol.ErrorKindOther}
	}
	usage := &protocol.TurnUsage{Input: tr.usage.Input, Output: tr.usage.Output, CacheRead: tr.usage.CacheRead, CacheWrite: tr.usage.CacheWrite, Cost: tr.usage.Cost.Total}
	end := session.TurnEnd{TurnID: tr.id, Status: status, Error: terr, Usage: usage, CompletedAt: time.Now().UnixMilli()}
	if out.before != nil {
		end.BeforeTree, end.BeforeIndexTree = out.before.WorktreeTree, out.before.IndexTree
	}
	if out.after != nil {
		end.AfterTree, end.AfterIndexTree = out.after.WorktreeTree, out.after.IndexTree
	}
	if out.haveFiles {
		// One rule for turn/completed, turn/diff/updated and the read-back
		// (Turn.files): the list whenever the turn has totals, [] when no
		// file changed; absent without totals.
		end.Files = out.files
		if end.Files == nil {
			end.Files = []protocol.FileTotal{}
		}
	}
	if _, err := t.append(session.NewTurnEnd(end)); err != nil {
		t.m.log.Error("persisting the turn end failed", "thread", t.id, "turn", tr.id, "err", err)
	}
	if out.after != nil {
		t.m.place.recordHead(t.id, t.ws, out.after.Head)
	}
	t.turn = nil
	t.gate.endTurn(t.id)
	t.cancelSteers()
	if len(t.steering) > 0 {
		// Steering the turn never took is cancelled by its settlement.
		t.steering = nil
		t.queueUpdated()
	}
	summary := turnSummary(protocol.Turn{ID: tr.id, Status: status, StartedAt: tr.startedAt, CompletedAt: end.CompletedAt,
		Usage: usage, Files: end.Files, Error: terr})
	t.lastTurn = &summary
	if msg := leftOut(out.before, out.after); msg != "" {
		t.notify(protocol.WarningNotification.With(protocol.WarningParams{ThreadID: t.id,
			Warning: protocol.Warning{Source: protocol.WarningSourceServer, Path: t.cwd, Message: msg}}))
	}
	t.notify(protocol.TurnCompletedNotification.With(protocol.TurnCompletedParams{ThreadID: t.id, Turn: summary}))
	t.m.catalog.broadcast(protocol.ThreadTurnCompleted.With(protocol.ThreadTurnCompletedParams{ThreadID: t.id, Turn: summary}))
	if out.haveFiles {
		t.notify(protocol.TurnDiffUpdated.With(protocol.TurnDiffUpdatedParams{ThreadID: t.id, TurnID: tr.id, Files: end.Files}))
	}
	t.setStatus(statusIdle)
	if t.unloading {
		t.finishUnload()
		return
	}
	t.startNextQueued()
	t.checkIdle()
}

// leftOut is the warning of a turn whose captures left untracked files
// out (gitstate.Capture.LeftOut: undoing the turn cannot restore or remove
// them): the capture after the turn's, else the one before's; "" when both
// recorded every file.
func leftOut(before, after *diffscope.Capture) string {
	if msg := after.LeftOut(); msg != "" {
		return msg
	}
	return before.LeftOut()
}

// startNextQueued starts the oldest queued input while the thread is idle
// (owner goroutine), through its extensions (admitStart). An input that
// fails to start is dropped with an error notification carrying its
// clientMessageId; while a checkout fence holds, inputs wait (the fence's
// release starts them).
func (t *thread) startNextQueued() {
	for t.turn == nil && t.starting == nil && !t.unloading && len(t.followUp) > 0 {
		q := t.followUp[0]
		t.followUp = t.followUp[1:]
		fenced := false
		t.admitStart(q.input, "", func(in input, _ string, err error) {
			if errors.Is(err, errFenced) {
				q.input = in
				t.followUp = append([]*queuedInput{q}, t.followUp...)
				fenced = true
				return
			}
			t.queueUpdated()
			if err != nil {
				t.inputFailed(in, err)
			}
		})
		if fenced {
			return
		}
	}
}

// inputFailed reports a queued input that could not start.
func (t *thread) inputFailed(in input, err error) {
	t.m.log.Info("a queued input failed to start", "thread", t.id, "err", err)
	t.notify(protocol.ErrorNotification.With(protocol.ErrorParams{
		Message: err.Error(), ThreadID: t.id, ClientMessageID: in.clientMessageID, Cause: err,
	}))
}

// agentHistory is the conversation of a branch for the next model request:
// its messages in order without failed or aborted replies; a tool call left
// without a result (a crash mid-turn) gets an error result so the
// conversation stays well formed.
func agentHistory(branch []session.Entry) []agent.Message {
	out, _ := agentHistoryIDs(branch)
	return out
}

// agentHistoryIDs is agentHistory with the entry id of each message ("" for
// the error results it adds).
func agentHistoryIDs(branch []session.Entry) ([]agent.Message, []string) {
	var (
		out     []agent.Message
		ids     []string
		pending []agent.ToolCall
	)
	flush := func() {
		for _, c := range pending {
			ids = append(ids, "")
			out = append(out, agent.Message{
				Role: agent.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name,
				Content: []agent.ContentBlock{agent.TextBlock("Tool call not run: the turn was interrupted.")}, IsError: true,
			})
		}
		pending = nil
	}
	for _, e := range branch {
		if e.Type != session.TypeMessage {
			continue
		}
		var msg agent.Message
		if err := json.Unmarshal(e.Message, &msg); err != nil {
			continue
		}
		switch msg.Role {
		case agent.RoleAssistant:
			if msg.StopReason == agent.StopReasonError || msg.StopReason == agent.StopReasonAborted {
				continue
			}
			flush()
			out, ids = append(out, msg), append(ids, e.ID)
			pending = msg.ToolCalls()
		case agent.RoleToolResult:
			i := slices.IndexFunc(pending, func(c agent.ToolCall) bool { return c.ID == msg.ToolCallID })
			if i < 0 {
				continue
			}
			pending = slices.Delete(pending, i, i+1)
			out, ids = append(out, msg), append(ids, e.ID)
		default:
			flush()
			out, ids = append(out, msg), append(ids, e.ID)
		}
	}
	flush()
	return out, ids
}
