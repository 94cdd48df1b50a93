package threads

import (
	"encoding/json"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// The items of a running turn: the agent's events become live items,
// item/* notifications and session entries (owner goroutine).

// newItem appends a live item, giving it the next durable ordinal (its id
// unless it is a tool call) and its index; it returns its position.
func (tr *turnRun) newItem(it protocol.Item) int {
	t := tr.t
	if it.Type != protocol.ItemToolCall {
		it.ID = session.ItemID(t.nextItem)
	}
	t.nextItem++
	pos := len(tr.items)
	idx := pos
	it.Index = &idx
	tr.items = append(tr.items, it)
	return pos
}

// itemStarted sends item/started for the item at pos.
func (tr *turnRun) itemStarted(pos int) {
	t := tr.t
	t.notify(protocol.ItemStarted.With(protocol.ItemStartedParams{ThreadID: t.id, TurnID: tr.id, Item: t.m.spool.inlineItem(tr.items[pos])}))
}

// itemCompleted sends item/completed for the item at pos.
func (tr *turnRun) itemCompleted(pos int) {
	t := tr.t
	t.notify(protocol.ItemCompleted.With(protocol.ItemCompletedParams{ThreadID: t.id, TurnID: tr.id, Item: t.m.spool.inlineItem(tr.items[pos])}))
}

// onEvent turns an agent event into items, entries and notifications
// (owner goroutine).
func (tr *turnRun) onEvent(e agent.Event) {
	t := tr.t
	switch e.Type {
	case agent.EventMessageStart:
		switch e.Message.Role {
		case agent.RoleUser:
			it := messageItem(e.Message)
			if !tr.userSeen {
				tr.userSeen = true
				it.ClientMessageID = tr.in.clientMessageID
			}
			tr.itemStarted(tr.newItem(it))
		case agent.RoleCustom:
			tr.itemStarted(tr.newItem(messageItem(e.Message)))
		case agent.RoleAssistant:
			tr.reply = &replyState{thinking: map[int]int{}, textPos: -1}
		}
	case agent.EventThinkingDelta, agent.EventTextDelta:
		if e.Delta == "" || tr.reply == nil {
			return
		}
		r := tr.reply
		var pos int
		delta := protocol.ItemAgentMessageDelta
		if e.Type == agent.EventThinkingDelta {
			delta = protocol.ItemReasoningDelta
			p, ok := r.thinking[e.ContentIndex]
			if !ok {
				p = tr.newItem(protocol.Item{Type: protocol.ItemReasoning, StartedAt: time.Now().UnixMilli()})
				r.thinking[e.ContentIndex] = p
				tr.itemStarted(p)
			}
			pos = p
		} else {
			if r.textPos < 0 {
				r.textPos = tr.newItem(protocol.Item{Type: protocol.ItemAgentMessage, StartedAt: time.Now().UnixMilli()})
				tr.itemStarted(r.textPos)
			}
			pos = r.textPos
		}
		tr.items[pos].Text += e.Delta
		t.notify(delta.With(protocol.ItemDeltaParams{ThreadID: t.id, TurnID: tr.id, ItemID: tr.items[pos].ID, Delta: e.Delta}))
	case agent.EventMessageEnd:
		tr.persist(e.Message, "persisting a message failed")
		switch e.Message.Role {
		case agent.RoleUser, agent.RoleCustom:
			// The user or extension item was sent complete at its start;
			// complete it as the message ended (a message_end handler may
			// have replaced it).
			pos := len(tr.items) - 1
			it := messageItem(e.Message)
			it.ID, it.Index, it.ClientMessageID = tr.items[pos].ID, tr.items[pos].Index, tr.items[pos].ClientMessageID
			tr.items[pos] = it
			tr.itemCompleted(pos)
			if e.Message.Role == agent.RoleUser {
				t.sidebarChanged() // the first user text titles the thread
			}
		case agent.RoleAssistant:
			tr.endReply(e.Message)
		}
	case agent.EventReplyReset:
		tr.resetReply()
	case agent.EventCompactionStart:
		tr.compactionStarted()
	case agent.EventCompactionEnd:
		tr.compactionEnded(e.Compaction, e.Err)
	case agent.EventRetry:
		msg, kind := "", agent.ErrorKind(e.Err)
		if e.Err != nil {
			msg = e.Err.Error()
		}
		t.notify(protocol.TurnRetry.With(protocol.TurnRetryParams{
			ThreadID: t.id, TurnID: tr.id, Attempt: e.Attempt, DelayMs: e.Delay.Milliseconds(),
			Error: protocol.TurnError{Message: msg, Kind: kind},
		}))
	case agent.EventToolStart:
		pos, ok := tr.toolPos[e.ToolCall.ID]
		if !ok {
			pos = tr.newItem(protocol.Item{ID: e.ToolCall.ID, Type: protocol.ItemToolCall, Name: e.ToolCall.Name, Arguments: e.ToolCall.Arguments, Status: protocol.ToolInProgress, StartedAt: time.Now().UnixMilli()})
			tr.toolPos[e.ToolCall.ID] = pos
		}
		tr.itemStarted(pos)
	case agent.EventToolEnd:
		tr.persist(e.Message, "persisting a tool result failed")
		pos, ok := tr.toolPos[e.ToolCall.ID]
		if !ok {
			return
		}
		it := &tr.items[pos]
		out := e.Message.Text()
		it.Output = &out
		it.CompletedAt = e.Message.Timestamp
		var d agent.ToolDetails
		if len(e.Message.Details) > 0 && json.Unmarshal(e.Message.Details, &d) == nil {
			it.BackgroundShellID = d.BackgroundShellID
			it.View = d.View
			it.McpApp = session.McpApp(d.MCPApp)
		}
		switch e.ToolStatus {
		case agent.ToolDeclined:
			it.Status = protocol.ToolDeclined
		case agent.ToolCompleted:
			it.Status = protocol.ToolCompleted
			for _, fc := range e.Message.FileChanges() {
				it.FileChanges = append(it.FileChanges, protocol.FileChange{Path: fc.Path, Kind: string(fc.Kind), Diff: fc.Diff})
			}
		default:
			it.Status = protocol.ToolFailed
		}
		tr.itemCompleted(pos)
	}
}

// messageItem is the item of a user or custom message (the userMessage or
// extensionMessage item a read-back gives it), without id and index.
func messageItem(m agent.Message) protocol.Item {
	if m.Role == agent.RoleCustom {
		it := session.ExtensionItem(m.CustomType, m.Text(), m.Details, m.Timestamp)
		it.View = m.View
		return it
	}
	images := 0
	for _, b := range m.Content {
		if b.Type == agent.ContentImage {
			images++
		}
	}
	return protocol.Item{Type: protocol.ItemUserMessage, Text: m.DisplayText(), Images: images, Comments: wireComments(m.Comments), CompletedAt: m.Timestamp}
}

// resetReply withdraws the live items of the reply being streamed (its
// request failed and is retried): item/removed for each, and their ordinals
// are given back so the retried reply's items get the ids a read-back gives
// them. The reply's items are the last live items.
func (tr *turnRun) resetReply() {
	r := tr.reply
	if r == nil {
		return
	}
	first := len(tr.items)
	for _, p := range r.thinking {
		first = min(first, p)
	}
	if r.textPos >= 0 {
		first = min(first, r.textPos)
	}
	tr.withdrawFrom(first)
	tr.reply = &replyState{thinking: map[int]int{}, textPos: -1}
}

// withdrawFrom withdraws the live items from position first on
// (item/removed for each) and gives their ordinals back, so the items
// made after get the ids a read-back gives them.
func (tr *turnRun) withdrawFrom(first int) {
	t := tr.t
	for _, it := range tr.items[first:] {
		t.notify(protocol.ItemRemoved.With(protocol.ItemRemovedParams{ThreadID: t.id, TurnID: tr.id, ItemID: it.ID}))
	}
	t.nextItem -= len(tr.items) - first
	tr.items = tr.items[:first]
}

// dropStale withdraws the streamed items of the reply r that its final
// message msg has nothing for, as a read-back of msg has no item for
// them: a reasoning item whose block is no longer non-empty thinking, the
// agentMessage item when msg has no text. That is how a reply a
// message_end handler dropped (its replacement keeps no text, see below)
// leaves the turn: item/removed with the item's id, and thread/read lacks
// it. The reply's items are the last live items; the ones after the
// first withdrawn are withdrawn too and made again by endReply, so ids
// stay those a read-back gives.
//
// "Dropped" follows pi 0.73.1, which has no way to delete a message: a
// message_end handler's replacement (of the same role) replaces the
// message in place (agent-session.ts _replaceMessageInPlace) in the
// conversation, the session file and later events, and a replacement
// without content shows nothing in pi's terminal. Here the replacement is
// likewise what the conversation, the session file, item/completed and
// thread/read hold; an assistant replacement with no text drops the
// reply's agentMessage item, one without a thinking block drops that
// reasoning item, one without a tool call never runs it.
func (tr *turnRun) dropStale(r *replyState, msg agent.Message) {
	keepThinking := func(ci int) bool {
		return ci < len(msg.Content) && msg.Content[ci].Type == agent.ContentThinking && msg.Content[ci].Thinking != ""
	}
	first := len(tr.items)
	for ci, p := range r.thinking {
		if !keepThinking(ci) {
			first = min(first, p)
		}
	}
	if r.textPos >= 0 && msg.Text() == "" {
		first = min(first, r.textPos)
	}
	if first == len(tr.items) {
		return
	}
	tr.withdrawFrom(first)
	for ci, p := range r.thinking {
		if p >= first {
			delete(r.thinking, ci)
		}
	}
	if r.textPos >= first {
		r.textPos = -1
	}
}

// endReply completes the items of a finalized assistant reply in the order
// a read-back gives them (reasoning blocks, the text, the tool calls),
// adds its usage and reports thread/tokenUsage/updated.
func (tr *turnRun) endReply(msg agent.Message) {
	t := tr.t
	r := tr.reply
	if r == nil {
		r = &replyState{thinking: map[int]int{}, textPos: -1}
	}
	tr.reply = nil
	tr.dropStale(r, msg)
	start, end := msg.Timestamp, msg.Timestamp
	if msg.DurationMs > 0 {
		end = msg.Timestamp + msg.DurationMs
	}
	for ci, b := range msg.Content {
		if b.Type != agent.ContentThinking || b.Thinking == "" {
			continue
		}
		pos, ok := r.thinking[ci]
		if !ok {
			pos = tr.newItem(protocol.Item{Type: protocol.ItemReasoning, StartedAt: start})
			tr.itemStarted(pos)
		}
		it := &tr.items[pos]
		it.Text, it.StartedAt, it.CompletedAt = b.Thinking, start, end
		tr.itemCompleted(pos)
	}
	if text := msg.Text(); text != "" || r.textPos >= 0 {
		pos := r.textPos
		if pos < 0 {
			pos = tr.newItem(protocol.Item{Type: protocol.ItemAgentMessage, StartedAt: start})
			tr.itemStarted(pos)
		}
		it := &tr.items[pos]
		it.Text, it.StartedAt, it.CompletedAt = text, start, end
		tr.itemCompleted(pos)
	}
	ran := msg.StopReason != agent.StopReasonError && msg.StopReason != agent.StopReasonAborted
	for _, call := range msg.ToolCalls() {
		pos := tr.newItem(protocol.Item{ID: call.ID, Type: protocol.ItemToolCall, Name: call.Name, Arguments: call.Arguments, Status: protocol.ToolInProgress, StartedAt: end})
		tr.toolPos[call.ID] = pos
		if !ran {
			// The loop never runs the calls of a failed or aborted reply;
			// a read-back shows them failed.
			tr.items[pos].Status = protocol.ToolFailed
			tr.itemStarted(pos)
			tr.itemCompleted(pos)
		}
	}
	tr.usage = tr.usage.Add(msg.Usage)
	addUsage(&t.usage, msg)
	t.notify(protocol.ThreadTokenUsageUpdated.With(protocol.ThreadTokenUsageUpdatedParams{ThreadID: t.id, TurnID: tr.id, Usage: t.usageSnapshot()}))
}
