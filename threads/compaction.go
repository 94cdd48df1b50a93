package threads

import (
	"encoding/json"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Compaction (issue 12): the agent summarizes older history when the
// context would exceed the model's window, or after a contextOverflow
// error (then retrying once). The thread records a pi-shaped compaction
// entry {summary, firstKeptEntryId, tokensBefore}, shows a compaction item
// in the turn, bills the summarizing request like a reply, and builds the
// next turns' context from the summary and the entries kept.

// contextHistory is the conversation a turn on branch starts from, with
// the entry id of each message ("" for messages without one): after the
// branch's latest compaction entry, agent.SummaryMessage of its summary,
// then the messages from its firstKeptEntryId up to it, then those after
// it; without one (or when the kept entry is not on the branch before it),
// agentHistory of the whole branch.
func contextHistory(branch []session.Entry) ([]agent.Message, []string) {
	last := -1
	for i, e := range branch {
		if e.Type == session.TypeCompaction {
			last = i
		}
	}
	if last < 0 {
		return agentHistoryIDs(branch)
	}
	c := branch[last]
	kept := -1
	for i := range last {
		if branch[i].ID == c.FirstKeptEntryID {
			kept = i
			break
		}
	}
	if kept < 0 {
		return agentHistoryIDs(branch)
	}
	rest := make([]session.Entry, 0, len(branch)-kept)
	for i, e := range branch[kept:] {
		if kept+i != last {
			rest = append(rest, e)
		}
	}
	msgs, ids := agentHistoryIDs(rest)
	ts := c.Time().UnixMilli()
	if c.Time().IsZero() {
		ts = 0
	}
	return append([]agent.Message{agent.SummaryMessage(c.Summary, ts)}, msgs...), append([]string{""}, ids...)
}

// persist appends msg to the session file and records its entry id in the
// conversation's ids (owner goroutine); a failure is logged with what.
func (tr *turnRun) persist(msg agent.Message, what string) {
	t := tr.t
	id, err := t.appendMessageID(msg)
	if err != nil {
		t.m.log.Error(what, "thread", t.id, "err", err)
	}
	tr.convIDs = append(tr.convIDs, id)
}

// appendMessageID persists an LLM message and returns its entry id.
func (t *thread) appendMessageID(msg agent.Message) (string, error) {
	b, err := json.Marshal(msg)
	if err != nil {
		return "", err
	}
	e, err := session.NewMessage(b)
	if err != nil {
		return "", err
	}
	out, err := t.append(e)
	if err != nil {
		return "", err
	}
	return out.ID, nil
}

// compactionUsage is the usage of the summarizing request a compaction
// entry records (its "usage", knightcode's addition to pi's shape), zero
// when absent.
func compactionUsage(e session.Entry) agent.Usage {
	if e.Usage == nil {
		return agent.Usage{}
	}
	u := e.Usage
	return agent.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Cost: agent.Cost{Total: u.Cost}}
}

// compactionStarted starts the turn's compaction item.
func (tr *turnRun) compactionStarted() {
	tr.compactPos = tr.newItem(protocol.Item{Type: protocol.ItemCompaction})
	tr.itemStarted(tr.compactPos)
}

// compactionEnded ends the compaction item started last (owner
// goroutine). On success it appends the compaction entry (its first kept
// entry is the first kept message that has one), completes the item with
// the summary, and keeps the conversation's ids in step; on failure it
// withdraws the item (item/removed, its ordinal given back). Either way
// the summarizing request's usage is billed and thread/tokenUsage/updated
// reports it; after a compaction the context size is unknown until the
// next reply.
func (tr *turnRun) compactionEnded(res *agent.CompactionResult, err error) {
	t := tr.t
	pos := tr.compactPos
	if pos < 0 || pos >= len(tr.items) || tr.items[pos].Type != protocol.ItemCompaction {
		return
	}
	tr.compactPos = -1
	var usage agent.Usage
	if res != nil {
		usage = res.Usage
	}
	if err != nil || res == nil || res.Kept > len(tr.convIDs) {
		t.m.log.Warn("compacting the conversation failed", "thread", t.id, "err", err)
		if pos == len(tr.items)-1 {
			t.notify(protocol.ItemRemoved.With(protocol.ItemRemovedParams{ThreadID: t.id, TurnID: tr.id, ItemID: tr.items[pos].ID}))
			tr.items = tr.items[:pos]
			t.nextItem--
		}
	} else {
		keptIDs := tr.convIDs[len(tr.convIDs)-res.Kept:]
		first := ""
		for _, id := range keptIDs {
			if id != "" {
				first = id
				break
			}
		}
		entry := session.NewCompaction(res.Summary, first, res.TokensBefore)
		entry.Usage = &protocol.TurnUsage{Input: usage.Input, Output: usage.Output, CacheRead: usage.CacheRead, CacheWrite: usage.CacheWrite, Cost: usage.Cost.Total}
		if _, err := t.append(entry); err != nil {
			t.m.log.Error("persisting a compaction failed", "thread", t.id, "err", err)
		}
		tr.convIDs = append([]string{""}, keptIDs...)
		it := &tr.items[pos]
		it.Text, it.CompletedAt = res.Summary, time.Now().UnixMilli()
		tr.itemCompleted(pos)
	}
	tr.usage = tr.usage.Add(usage)
	addUsage(&t.usage, agent.Message{Usage: usage})
	t.usage.ContextTokens = nil
	t.notify(protocol.ThreadTokenUsageUpdated.With(protocol.ThreadTokenUsageUpdatedParams{ThreadID: t.id, TurnID: tr.id, Usage: t.usageSnapshot()}))
}
