package threads

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// MaxInlineItemBytes is the most bytes one item takes as JSON in a
// notification or a history page (spec, Limits: "64 KiB per inline
// turn/item"). Larger values will use payload references; until those
// exist, boundItem truncates them with a marker.
const MaxInlineItemBytes = 64 << 10

// maxInlineArguments bounds a tool call's arguments kept inline; larger
// arguments are replaced by a preview object.
const maxInlineArguments = 16 << 10

// truncatedMarker ends a value cut to fit the inline limit.
const truncatedMarker = "\n[... truncated: %d more bytes; payload references are not available in this server version]"

// boundItem returns it cut to at most MaxInlineItemBytes of JSON: it drops
// the diffs of fileChanges, replaces oversized arguments with
// {"truncated": true, "bytes": N, "preview": "<first bytes>"}, and cuts text
// and output, each with a marker.
func boundItem(it protocol.Item) protocol.Item {
	if itemSize(it) <= MaxInlineItemBytes {
		return it
	}
	if len(it.FileChanges) > 0 {
		fcs := make([]protocol.FileChange, len(it.FileChanges))
		for i, fc := range it.FileChanges {
			fc.Diff = ""
			fcs[i] = fc
		}
		it.FileChanges = fcs
	}
	if len(it.Arguments) > maxInlineArguments {
		preview := string(it.Arguments[:maxInlineArguments/2])
		for !utf8.ValidString(preview) && len(preview) > 0 {
			preview = preview[:len(preview)-1]
		}
		b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": len(it.Arguments), "preview": preview})
		it.Arguments = b
	}
	for range 8 {
		over := itemSize(it) - MaxInlineItemBytes
		if over <= 0 {
			break
		}
		cut := over + 512
		switch {
		case it.Output != nil && len(*it.Output) > 0:
			s := cutString(*it.Output, cut)
			it.Output = &s
		case it.Text != "":
			it.Text = cutString(it.Text, cut)
		default:
			return it
		}
	}
	return it
}

// cutString drops at least n bytes from the end of s (at a rune boundary)
// and appends the truncation marker.
func cutString(s string, n int) string {
	keep := len(s) - n - len(truncatedMarker) - 16
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(truncatedMarker, len(s)-keep)
}

func itemSize(it protocol.Item) int {
	b, err := json.Marshal(it)
	if err != nil {
		return 0
	}
	return len(b)
}

// boundTurns bounds every item of turns in place.
func boundTurns(turns []protocol.Turn) {
	for i := range turns {
		for j := range turns[i].Items {
			turns[i].Items[j] = boundItem(turns[i].Items[j])
		}
	}
}

// truncateRunes cuts s to at most n code points.
func truncateRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
