package threads

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Inline limits (spec: "Limits and client reference"). Sizes are the
// values' bytes as JSON, escapes included: a NUL byte takes six.
const (
	// MaxInlineItemBytes is the most bytes one item takes as JSON in a
	// notification or a history page; larger values travel as payload
	// references (inlineItem).
	MaxInlineItemBytes = protocol.MaxInlineBytes
	// responseEnvelopeReserve is what a history or list response keeps
	// for the JSON-RPC envelope around its result ({"id":...,"result":}).
	responseEnvelopeReserve = 1 << 10
)

// inlineItem returns it as it is sent inline: unchanged when its JSON fits
// in MaxInlineItemBytes; else a tool call's arguments and output whose JSON
// alone exceeds the limit are replaced by ArgumentsRef and OutputRef
// (their exact bytes in the spool), and an item still over the limit
// becomes a stub with Ref, the whole item as JSON (see protocol.Item).
// Nothing is cut. When the spool cannot be written the item is sent whole
// (a line over the limit rather than lost content) and the failure logged.
func (s *spool) inlineItem(it protocol.Item) protocol.Item {
	out := it
	if it.Type == protocol.ItemToolCall {
		// A value's JSON is at least as long as its bytes: a long one is
		// over the limit without encoding it.
		if len(it.Arguments) > MaxInlineItemBytes {
			if ref, ok := s.value(it.Arguments, "tool arguments"); ok {
				out.Arguments, out.ArgumentsRef = nil, &ref
			}
		}
		if o := it.Output; o != nil && (len(*o) > MaxInlineItemBytes || jsonSize(*o) > MaxInlineItemBytes) {
			if ref, ok := s.value([]byte(*o), "tool output"); ok {
				out.Output, out.OutputRef = nil, &ref
			}
		}
	}
	if jsonSize(out) <= MaxInlineItemBytes {
		return out
	}
	whole, err := json.Marshal(it)
	if err != nil {
		s.log.Error("encoding an item failed", "item", it.ID, "err", err)
		return out
	}
	ref, ok := s.value(whole, "item")
	if !ok {
		return out
	}
	return protocol.Item{ID: it.ID, Type: it.Type, Index: it.Index, StartedAt: it.StartedAt, CompletedAt: it.CompletedAt,
		Name: it.Name, Status: it.Status, ClientMessageID: it.ClientMessageID, Images: it.Images, Ref: &ref}
}

// value puts b in the spool; ok is false (logged) when it
// could not.
func (s *spool) value(b []byte, what string) (protocol.PayloadRef, bool) {
	ref, err := s.put(b)
	if err != nil {
		s.log.Warn("spooling a large value failed; it is sent inline", "value", what, "bytes", len(b), "err", err)
		return protocol.PayloadRef{}, false
	}
	return ref, true
}

// inlineTurn returns t with every item inlined (inlineItem).
func (s *spool) inlineTurn(t protocol.Turn) protocol.Turn {
	if len(t.Items) == 0 {
		return t
	}
	items := make([]protocol.Item, len(t.Items))
	for i, it := range t.Items {
		items[i] = s.inlineItem(it)
	}
	t.Items = items
	return t
}

// boundPage returns a history page's turns as sent: every item inlined,
// and, while the response would exceed protocol.MaxHistoryResponseBytes
// (envelope is the JSON size of the rest of the result), its largest turns
// replaced by references to the whole turn (turnStub), largest first; if
// the stubs alone are still too large, the largest stubs drop their files.
// The page's turns (and so its cursor) never change: only how they travel.
func (s *spool) boundPage(turns []protocol.Turn, envelope int) []protocol.Turn {
	out := make([]protocol.Turn, len(turns))
	sizes := make([]int, len(turns))
	total := envelope + responseEnvelopeReserve + 2
	for i, t := range turns {
		out[i] = s.inlineTurn(t)
		sizes[i] = jsonSize(out[i])
		total += sizes[i] + 1
	}
	limit := protocol.MaxHistoryResponseBytes
	byRef := func(pick func(i int) bool) {
		order := make([]int, 0, len(out))
		for i := range out {
			if pick(i) {
				order = append(order, i)
			}
		}
		slices.SortStableFunc(order, func(a, b int) int { return sizes[b] - sizes[a] })
		for _, i := range order {
			if total <= limit {
				return
			}
			var next protocol.Turn
			if out[i].Ref == nil {
				whole, err := json.Marshal(turns[i])
				if err != nil {
					s.log.Error("encoding a turn failed", "turn", turns[i].ID, "err", err)
					continue
				}
				ref, ok := s.value(whole, "turn")
				if !ok {
					continue
				}
				next = turnStub(turns[i], ref)
			} else {
				next = out[i]
				next.Files = nil
			}
			n := jsonSize(next)
			total += n - sizes[i]
			out[i], sizes[i] = next, n
		}
	}
	byRef(func(int) bool { return true })
	byRef(func(i int) bool { return out[i].Ref != nil && len(out[i].Files) > 0 })
	return out
}

// turnStub is the summary of t sent in its place with ref, the whole turn:
// no items, error.message bounded to session.MaxSummaryErrorChars.
func turnStub(t protocol.Turn, ref protocol.PayloadRef) protocol.Turn {
	s := protocol.Turn{ID: t.ID, Status: t.Status, StartedAt: t.StartedAt, CompletedAt: t.CompletedAt,
		Usage: t.Usage, Files: t.Files, Ref: &ref}
	if t.Error != nil {
		e := *t.Error
		if utf8.RuneCountInString(e.Message) > session.MaxSummaryErrorChars {
			e.Message = session.TruncateRunes(e.Message, session.MaxSummaryErrorChars)
		}
		s.Error = &e
	}
	return s
}

// jsonSize is the length of v as JSON (0 when it cannot be encoded).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
