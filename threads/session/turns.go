package session

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// ItemID is the durable id of the item at position n (0-based) among the
// branch's items: "item-<n>". Tool calls occupy a position but keep their
// call id instead (spec: "item IDs use durable ordinals except tool calls,
// which retain their call IDs"). The thread manager numbers live items the
// same way, continuing from [Transcript.ItemCount].
func ItemID(n int) string { return "item-" + strconv.Itoa(n) }

// turnSpan is one turn found on a branch.
type turnSpan struct {
	start     int    // position in the branch of its first entry
	id        string // from the turn_start marker, or the first message's entry id
	marked    bool   // opened by a turn_start entry
	startedAt int64
	end       *Entry // the matching turn_end, if any
	msgs      []Entry
}

// groupTurns splits a branch into turns. A turn runs from a turn_start entry
// to the turn_end with the same turnId; the messages between belong to it. A
// turn_start without its end (the next turn_start or the end of the branch
// comes first) is an unterminated turn. Messages outside marked turns (pi
// files, which have no markers) form legacy turns, each starting at a user
// message (or at the first message after a marked turn) and running until
// the next user message or marker. Other entries belong to no turn.
func groupTurns(branch []Entry) []turnSpan {
	var (
		spans []turnSpan
		cur   *turnSpan
	)
	closeCur := func() {
		if cur != nil {
			spans = append(spans, *cur)
			cur = nil
		}
	}
	for i, e := range branch {
		switch e.Type {
		case TypeTurnStart:
			closeCur()
			cur = &turnSpan{start: i, id: e.TurnID, marked: true, startedAt: e.StartedAt}
		case TypeTurnEnd:
			if cur != nil && cur.marked && cur.id == e.TurnID {
				end := e
				cur.end = &end
				closeCur()
			}
			// A stray end (no open turn with that id) is ignored.
		case TypeCompaction:
			// A compaction item in the turn that compacted.
			if cur != nil && cur.marked {
				cur.msgs = append(cur.msgs, e)
			}
		case TypeMessage:
			if cur != nil && cur.marked {
				cur.msgs = append(cur.msgs, e)
				continue
			}
			if cur == nil || e.Role() == RoleUser {
				closeCur()
				cur = &turnSpan{start: i, id: e.ID}
			}
			cur.msgs = append(cur.msgs, e)
		}
	}
	closeCur()
	return spans
}

// llmMessage is the part of an LLM message (pi-compatible JSON) that items
// are built from.
type llmMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	Timestamp    int64           `json:"timestamp"`
	DurationMs   int64           `json:"durationMs"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	ToolCallID   string          `json:"toolCallId"`
	Details      json.RawMessage `json:"details"`
	IsError      bool            `json:"isError"`
	CustomType   string          `json:"customType"`
	// View: a custom message's view (agent.Message.View).
	View json.RawMessage `json:"view"`
	// Typed: a user message's text as typed, when the model got an
	// expansion of it (agent.Message.Typed).
	Typed string `json:"typed"`
	// Comments: a user message's review comments (agent.Message.Comments).
	Comments []protocol.ReviewComment `json:"comments"`
}

// userText is what a user message's item shows: the text as typed, else
// the text of its blocks.
func (m llmMessage) userText(bs []contentBlock) string {
	if m.Typed != "" || len(m.Comments) > 0 {
		return m.Typed
	}
	return textOf(bs)
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// blocks returns the message content as blocks; a string content is one text
// block.
func (m llmMessage) blocks() []contentBlock {
	if len(m.Content) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []contentBlock{{Type: "text", Text: s}}
	}
	var bs []contentBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

func textOf(bs []contentBlock) string {
	var b strings.Builder
	for _, c := range bs {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// resultDetails is the part of a tool result's details that items use.
type resultDetails struct {
	Declined          bool            `json:"declined"`
	FileChanges       json.RawMessage `json:"fileChanges"`
	BackgroundShellID string          `json:"backgroundShellId"`
	View              json.RawMessage `json:"view"`
	McpApp            json.RawMessage `json:"mcpApp"`
}

// McpApp is the mcpApp of a toolCall item from a tool result's
// details.mcpApp (raw JSON); nil when there is none or it is malformed.
func McpApp(raw json.RawMessage) *protocol.McpApp {
	if len(raw) == 0 {
		return nil
	}
	var a protocol.McpApp
	if json.Unmarshal(raw, &a) != nil || a.Server == "" || a.ResourceURI == "" {
		return nil
	}
	return &a
}

// validFileChanges returns the reported file changes, or nil when the
// report is malformed in any way (spec: "a malformed report is ignored as a
// whole").
func validFileChanges(raw json.RawMessage) []protocol.FileChange {
	if len(raw) == 0 {
		return nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]protocol.FileChange, 0, len(list))
	for _, m := range list {
		var fc protocol.FileChange
		if json.Unmarshal(m["path"], &fc.Path) != nil || fc.Path == "" {
			return nil
		}
		if json.Unmarshal(m["kind"], &fc.Kind) != nil {
			return nil
		}
		switch fc.Kind {
		case protocol.FileAdd, protocol.FileModify, protocol.FileDelete:
		default:
			return nil
		}
		if d, ok := m["diff"]; ok && string(d) != "null" {
			if json.Unmarshal(d, &fc.Diff) != nil {
				return nil
			}
		}
		out = append(out, fc)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// legacyErrorKind is the kind given to a failed legacy turn, whose error was
// never classified when it was saved.
const legacyErrorKind = protocol.ErrorKindOther

// buildTurn turns a span into a wire turn with its items. next is the
// ordinal of the first item; it returns the ordinal after the last.
func buildTurn(sp turnSpan, next int, runningTurnID string) (protocol.Turn, int) {
	turn := protocol.Turn{ID: sp.id, StartedAt: sp.startedAt}
	running := sp.marked && sp.end == nil && sp.id != "" && sp.id == runningTurnID
	var (
		items   []protocol.Item
		pending = map[string]int{} // call id -> position in items
		lastEnd int64
		lastAsg llmMessage
		haveAsg bool
	)
	add := func(it protocol.Item) int {
		pos := len(items)
		if it.Type != protocol.ItemToolCall {
			it.ID = ItemID(next)
		}
		next++
		idx := pos
		it.Index = &idx
		items = append(items, it)
		return pos
	}
	for _, e := range sp.msgs {
		if e.Type == TypeCompaction {
			ts := e.Time().UnixMilli()
			if e.Time().IsZero() {
				ts = 0
			}
			add(protocol.Item{Type: protocol.ItemCompaction, Text: e.Summary, CompletedAt: ts})
			continue
		}
		var m llmMessage
		if json.Unmarshal(e.Message, &m) != nil {
			continue
		}
		if turn.StartedAt == 0 {
			turn.StartedAt = m.Timestamp
		}
		switch m.Role {
		case RoleUser:
			bs := m.blocks()
			images := 0
			for _, b := range bs {
				if b.Type == "image" {
					images++
				}
			}
			add(protocol.Item{Type: protocol.ItemUserMessage, Text: m.userText(bs), Images: images, Comments: m.Comments, CompletedAt: m.Timestamp})
			lastEnd = max(lastEnd, m.Timestamp)
		case RoleCustom:
			it := ExtensionItem(m.CustomType, textOf(m.blocks()), m.Details, m.Timestamp)
			it.View = m.View
			add(it)
			lastEnd = max(lastEnd, m.Timestamp)
		case RoleAssistant:
			start, end := m.Timestamp, m.Timestamp
			if m.Timestamp != 0 && m.DurationMs > 0 {
				end = m.Timestamp + m.DurationMs
			}
			bs := m.blocks()
			for _, b := range bs {
				if b.Type == "thinking" && b.Thinking != "" {
					add(protocol.Item{Type: protocol.ItemReasoning, Text: b.Thinking, StartedAt: start, CompletedAt: end})
				}
			}
			if text := textOf(bs); text != "" {
				add(protocol.Item{Type: protocol.ItemAgentMessage, Text: text, StartedAt: start, CompletedAt: end})
			}
			for _, b := range bs {
				if b.Type != "toolCall" {
					continue
				}
				args := b.Arguments
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage(`{}`)
				}
				pos := add(protocol.Item{ID: b.ID, Type: protocol.ItemToolCall, Name: b.Name, Arguments: args, Status: protocol.ToolInProgress, StartedAt: end})
				pending[b.ID] = pos
			}
			lastEnd = max(lastEnd, end)
			lastAsg, haveAsg = m, true
		case RoleToolResult:
			pos, ok := pending[m.ToolCallID]
			if !ok {
				continue
			}
			delete(pending, m.ToolCallID)
			it := &items[pos]
			var d resultDetails
			if len(m.Details) > 0 {
				_ = json.Unmarshal(m.Details, &d)
			}
			switch {
			case d.Declined:
				it.Status = protocol.ToolDeclined
			case m.IsError:
				it.Status = protocol.ToolFailed
			default:
				it.Status = protocol.ToolCompleted
				it.FileChanges = validFileChanges(d.FileChanges)
			}
			it.BackgroundShellID = d.BackgroundShellID
			it.View = d.View
			it.McpApp = McpApp(d.McpApp)
			out := textOf(m.blocks())
			it.Output = &out
			it.CompletedAt = m.Timestamp
			lastEnd = max(lastEnd, m.Timestamp)
		}
	}
	for _, pos := range pending {
		if !running {
			items[pos].Status = protocol.ToolFailed
		}
	}

	switch {
	case sp.end != nil:
		turn.Status = sp.end.Status
		switch turn.Status {
		case protocol.TurnCompleted, protocol.TurnFailed, protocol.TurnInterrupted:
		default:
			turn.Status = protocol.TurnFailed
		}
		turn.CompletedAt = sp.end.CompletedAt
		turn.Error = sp.end.Error
		turn.Usage = sp.end.Usage
		turn.Files = sp.end.Files
	case running:
		turn.Status = protocol.TurnInProgress
	case sp.marked:
		// Spec: "A saved turn with no end entry reads as interrupted" and
		// "An interrupted turn without an end entry has no completion time".
		turn.Status = protocol.TurnInterrupted
	default:
		turn.Status = protocol.TurnCompleted
		if haveAsg {
			switch lastAsg.StopReason {
			case "error":
				msg := lastAsg.ErrorMessage
				if msg == "" {
					msg = "the model request failed"
				}
				turn.Status = protocol.TurnFailed
				turn.Error = &protocol.TurnError{Message: msg, Kind: legacyErrorKind}
			case "aborted":
				turn.Status = protocol.TurnInterrupted
			}
		}
		turn.CompletedAt = lastEnd
	}
	turn.Items = items
	return turn, next
}

// builtTurn is a wire turn with the branch position its anchor entry has.
type builtTurn struct {
	turn  protocol.Turn
	start int
}

func buildTurns(branch []Entry, runningTurnID string) []builtTurn {
	spans := groupTurns(branch)
	out := make([]builtTurn, 0, len(spans))
	next := 0
	for _, sp := range spans {
		var t protocol.Turn
		t, next = buildTurn(sp, next, runningTurnID)
		out = append(out, builtTurn{turn: t, start: sp.start})
	}
	return out
}

// Turns returns every turn of the current branch, oldest first, with its
// items. A turn_start without a turn_end reads as interrupted with no
// completedAt, unless its id is runningTurnID (a loaded thread's running
// turn), which reads as inProgress with its unanswered tool calls
// inProgress. Items are built from the messages (see the package's wire
// item rules in rpc/protocol): a user message gives a userMessage (text =
// its text blocks concatenated, images = the number of image blocks,
// completedAt = the message timestamp); an assistant message gives one
// reasoning item per non-empty thinking block, then one agentMessage when
// its text is non-empty (both from timestamp to timestamp+durationMs), then
// one toolCall per toolCall block (started at the message's end), completed
// by its toolResult (completedAt = the result's timestamp; status declined
// when details.declined is true, else failed when isError, else completed
// with details.fileChanges); a call never answered is failed.
func (t *Transcript) Turns(runningTurnID string) []protocol.Turn {
	bt := buildTurns(t.Branch(), runningTurnID)
	out := make([]protocol.Turn, len(bt))
	for i, b := range bt {
		out[i] = b.turn
	}
	return out
}

// ItemCount is the number of items on the current branch: the ordinal the
// next live item of the thread takes.
func (t *Transcript) ItemCount() int {
	n := 0
	for _, b := range buildTurns(t.Branch(), "") {
		n += len(b.turn.Items)
	}
	return n
}

// LastTurn returns the last turn of the current branch that is not the
// running turn runningTurnID, with its items, as Turns builds it (a turn
// without an end entry reads as interrupted); ok is false when the branch
// has no other turn. Only that turn's items are built.
func (t *Transcript) LastTurn(runningTurnID string) (turn protocol.Turn, ok bool) {
	spans := groupTurns(t.Branch())
	for i := len(spans) - 1; i >= 0; i-- {
		sp := spans[i]
		if runningTurnID != "" && sp.marked && sp.end == nil && sp.id == runningTurnID {
			continue
		}
		turn, _ = buildTurn(sp, 0, "")
		return turn, true
	}
	return protocol.Turn{}, false
}
