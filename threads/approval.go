package threads

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/approval"
	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/ext"
	"github.com/knightcode/knightcode/threads/session"
)

// DeclinedReason is the result text the model gets for a call the person
// declined without a message (or with an answer of the wrong shape, or an
// unoffered decision).
const DeclinedReason = "The user declined this tool call."

// CancelledReason is the result text of a call the person cancelled (or
// that no subscriber could answer): the call does not run and the turn
// ends interrupted.
const CancelledReason = "The user cancelled this tool call; the turn was stopped."

// approve is the agent's approval hook (spec: Approvals; issue 11): no tool
// runs in a worktree thread whose worktree is gone; ask_user (the built-in
// extension's tool) never asks (it asks the person itself); any other
// call, an extension's tool's too, goes through
// approval.Decide with the thread's mode and this load's grants, and when
// the policy asks, item/toolCall/requestApproval goes to one subscriber
// (ask). Its answer is applied by approval.Grants.Answer: accept runs the
// call, acceptForSession and acceptPrefixForSession also grant for the
// load, decline (with its message, cut to 4,000 code points, as the
// model's decline reason) does not run it, and cancel, no subscriber, or a
// withdrawn request block it and end the turn interrupted, as turn/interrupt
// does (queued inputs dropped). An unoffered decision and an answer of the
// wrong shape are a decline.
func (tr *turnRun) approve(ctx context.Context, call agent.ToolCall) agent.Decision {
	t := tr.t
	// No tool runs in a worktree deleted or removed while the turn ran.
	if err := t.m.place.gone(t.id, t.ws); err != nil {
		return agent.Decision{Reason: err.Error()}
	}
	if call.Name == tools.AskUserName {
		return agent.Decision{Allow: true}
	}
	mode, _ := t.approval.Load().(string)
	input := call.Arguments
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	as := t.approveAs(call.Name, input)
	v := approval.Decide(approval.Call{
		Mode: approval.Mode(mode), Tool: as.Tool, Input: as.Input, ReadOnly: as.ReadOnly,
		Cwd: t.cwd, Checkout: t.gate.key, AgentDir: t.m.cfg.Dirs.AgentDir,
	}, &t.asks.grants)
	if !v.Ask {
		return agent.Decision{Allow: true}
	}
	input = as.Input
	p := protocol.ItemToolCallRequestApprovalParams{
		ThreadID: t.id, TurnID: tr.id, ItemID: call.ID, Tool: as.Tool, Input: input,
		Reason: v.Reason,
	}
	// An input over the inline limit (a large write) goes as a payload
	// reference (spec: Approvals, "input | inputRef").
	if len(input) > protocol.MaxInlineBytes {
		ref, err := t.m.spool.put(input)
		if err != nil {
			t.m.log.Error("an approval's input could not be spooled: declined", "thread", t.id, "item", call.ID, "err", err)
			return agent.Decision{Reason: DeclinedReason}
		}
		p.Input, p.InputRef = nil, &ref
	}
	for _, d := range v.Decisions {
		p.Decisions = append(p.Decisions, string(d))
	}
	if v.Prefix != nil {
		p.Prefix = v.Prefix.String()
	}
	raw, answered := t.ask(ctx, protocol.WaitingOnApproval, protocol.ItemToolCallRequestApproval.Name, p)
	if !answered {
		tr.stop()
		return agent.Decision{Reason: CancelledReason}
	}
	var res protocol.ItemToolCallRequestApprovalResult
	if err := decodeStrict(raw, &res); err != nil {
		t.m.log.Info("approval answer of the wrong shape: declined", "thread", t.id, "item", call.ID, "err", err)
		return agent.Decision{Reason: DeclinedReason}
	}
	switch t.asks.grants.Answer(as.Tool, v, approval.Decision(res.Decision)) {
	case approval.OutcomeRun:
		return agent.Decision{Allow: true}
	case approval.OutcomeCancel:
		tr.stop()
		return agent.Decision{Reason: CancelledReason}
	}
	reason := DeclinedReason
	if res.Decision == protocol.DecisionDecline && res.Message != "" {
		reason = session.TruncateRunes(res.Message, protocol.MaxDeclineMessageChars)
	}
	return agent.Decision{Reason: reason}
}

// approveAs is what the approval gate decides a call of the tool name with
// input as: what the extension tool's Approve says (the MCP runtime's
// search tool names the real tool; a read-only MCP tool says so), else the
// call itself. A name of the thread's own tools is never taken from an
// extension: the call is then decided as itself, not read-only.
func (t *thread) approveAs(name string, input json.RawMessage) ext.ApproveAs {
	self := ext.ApproveAs{Tool: name, Input: input}
	if slices.Contains(builtinTools, name) {
		return self
	}
	for _, et := range t.runner().Tools() {
		if et.Name != name || et.Approve == nil {
			continue
		}
		as := et.Approve(input)
		if as.Tool == "" {
			as.Tool = name
		}
		if as.Input == nil {
			as.Input = input
		}
		if slices.Contains(builtinTools, as.Tool) {
			return self
		}
		return as
	}
	return self
}

// stop ends the turn interrupted from one of its hooks, as turn/interrupt
// does: queued inputs and undelivered steering are dropped and the turn's
// context is cancelled before stop returns, so the agent runs nothing more.
func (tr *turnRun) stop() {
	t := tr.t
	err := t.call(context.Background(), func() error {
		if t.turn == tr {
			t.dropQueues()
			tr.interrupt()
		}
		return nil
	})
	if err != nil {
		tr.cancel() // the thread is gone: its turn ends anyway
	}
}
