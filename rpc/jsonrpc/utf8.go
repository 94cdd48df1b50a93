package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// firstInvalidUTF8 returns the offset of the first byte of line that is not
// part of a valid UTF-8 sequence, or -1 when line is valid UTF-8.
//
// encoding/json replaces such bytes with U+FFFD while decoding, so a string
// sent with them (a file name in Latin-1) would silently name another file;
// the frame refuses the message instead (issue 15: invalidParams when the id
// is readable, else parseError).
func firstInvalidUTF8(line []byte) int {
	for i := 0; i < len(line); {
		if line[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// invalidUTF8Field names the member of a message whose string (value or
// member name) holds the byte at offset bad: the dotted path inside params
// ("path", "items[2].text") for a member of params, else the top-level
// member ("method"); "" when the walk cannot tell (the line is not JSON).
func invalidUTF8Field(line []byte, bad int) string {
	type level struct {
		object  bool
		wantKey bool
		key     string
		index   int
	}
	var stack []*level
	path := func() string {
		var b []byte
		for _, l := range stack {
			if !l.object {
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(l.index), 10)
				b = append(b, ']')
				continue
			}
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, l.key...)
		}
		p := string(b)
		if rest, ok := strings.CutPrefix(p, "params."); ok {
			return rest
		}
		return p
	}
	consumed := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := int(dec.InputOffset())
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &level{object: t == '{', wantKey: t == '{'})
			default:
				stack = stack[:len(stack)-1]
				consumed()
			}
		case string:
			top := (*level)(nil)
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			if top != nil && top.object && top.wantKey {
				top.key, top.wantKey = t, false
				if end > bad {
					return path()
				}
				continue
			}
			if end > bad {
				return path()
			}
			consumed()
		default:
			consumed()
		}
	}
}
