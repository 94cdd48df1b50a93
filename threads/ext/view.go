package ext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Views and text (spec "Dialogs and extension UI", "Limits";
// EXTENSIBILITY.md §6 "View schema"): what an extension shows is checked
// here before a client sees it. A view is data of a closed schema, never
// HTML:
//
//	{"type":"stack","direction":"vertical|horizontal","gap":0..16,"children":[View…]}
//	{"type":"list","items":[View…]}
//	{"type":"text","text":"…","style":"normal|muted|bold|code|success|warning|error"}
//	{"type":"button","id":"run","label":"Run checks","style":"primary|secondary|danger","disabled":false}
//	{"type":"input","id":"query","value":"","placeholder":"…","label":"…"}
//	{"type":"select","id":"level","value":"info","options":[{"value":"info","label":"Info"}],"label":"…"}
//	{"type":"toggle","id":"verbose","value":true,"label":"Verbose"}
//	{"type":"progress","value":0.4,"label":"…"}
//	{"type":"link","url":"https://…","label":"Open sign-in page"}
//
// Required members: stack children, list items, text text, button id and
// label, input/select/toggle id, select options (at least one), progress
// value (a number from 0 to 1), link url (http or https). Control ids are
// 1–128 characters, unique per view.

// The limits of the extension UI (spec "Limits"), in UTF-8 bytes of
// compact JSON unless said otherwise.
const (
	// MaxWidgetBytes bounds a widget: its lines (as a JSON array) or its
	// view.
	MaxWidgetBytes = 16 << 10
	// MaxItemViewBytes bounds the view of a toolCall or extensionMessage
	// item.
	MaxItemViewBytes = 64 << 10
	// MaxViewDepth bounds how deep stacks and lists nest (a top-level
	// stack is depth 1).
	MaxViewDepth = 8
	// MaxTextRunes bounds a line of text (a status, the title, the working
	// message, a widget line, a string of a view) in code points.
	MaxTextRunes = 200
	// MaxKeyChars bounds a status or widget key and a control id, in
	// code points (at least 1).
	MaxKeyChars = 128
	// MaxWidgets and MaxStatuses bound what one thread shows.
	MaxWidgets  = 16
	MaxStatuses = 50
	// MaxInputValueBytes bounds an input field's value.
	MaxInputValueBytes = 16 << 10
	// maxGap bounds a stack's gap.
	maxGap = 16
)

// The control types of a view, those a ui/event addresses.
const (
	ViewButton = "button"
	ViewInput  = "input"
	ViewSelect = "select"
	ViewToggle = "toggle"
)

// Control is one control of a checked view, as a ui/event addresses it:
// its Type (ViewButton, ViewInput, ViewSelect or ViewToggle) and, for a
// select, the values of its Options.
type Control struct {
	Type    string
	Options []string
}

// CheckedView is a view that passed CheckView: JSON is what a client gets
// (compact, members sorted, text cleaned by CleanText), Controls its
// controls by id.
type CheckedView struct {
	JSON     json.RawMessage
	Controls map[string]Control
}

// CheckView checks the view raw against the closed schema (see above) and
// returns it as a client gets it: every text string cleaned (CleanText
// with keepSpacing; an input's value only stripped of ANSI escapes and
// kept to one line), compact. Errors, each naming where: not a JSON
// object; an unknown type or member; a member of the wrong type or value;
// stacks and lists nested deeper than MaxViewDepth; a duplicate control
// id; a select value that is not one of its options; a link that is not
// http(s); the result over maxBytes.
func CheckView(raw json.RawMessage, maxBytes int) (CheckedView, error) {
	if len(raw) > 4*maxBytes+1024 {
		return CheckedView{}, fmt.Errorf("the view is %d bytes, over the %s limit", len(raw), kib(maxBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return CheckedView{}, fmt.Errorf("the view is not JSON: %v", err)
	}
	if dec.More() {
		return CheckedView{}, errors.New("the view is followed by more JSON")
	}
	c := viewCheck{controls: map[string]Control{}}
	if err := c.node(v, "view", 0); err != nil {
		return CheckedView{}, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return CheckedView{}, err
	}
	if len(out) > maxBytes {
		return CheckedView{}, fmt.Errorf("the view is %d bytes, over the %s limit", len(out), kib(maxBytes))
	}
	return CheckedView{JSON: out, Controls: c.controls}, nil
}

func kib(n int) string { return fmt.Sprintf("%d KiB", n>>10) }

type viewCheck struct {
	controls map[string]Control
}

// member kinds of the schema.
type memberKind int

const (
	mString   memberKind = iota // a text string, cleaned
	mEnum                       // one of the listed values
	mID                         // a control id
	mBool                       // a boolean
	mChildren                   // an array of views
	mURL                        // an http(s) URL
	mGap                        // an integer 0..maxGap
	mFraction                   // a number 0..1
	mOptions                    // a select's options
	mInput                      // an input's value: a string
	mSelect                     // a select's value: one of its options
)

type member struct {
	kind     memberKind
	required bool
	enum     []string
}

var viewTypes = map[string]map[string]member{
	"stack": {
		"direction": {kind: mEnum, enum: []string{"vertical", "horizontal"}},
		"gap":       {kind: mGap},
		"children":  {kind: mChildren, required: true},
	},
	"list": {"items": {kind: mChildren, required: true}},
	"text": {
		"text":  {kind: mString, required: true},
		"style": {kind: mEnum, enum: []string{"normal", "muted", "bold", "code", "success", "warning", "error"}},
	},
	ViewButton: {
		"id":       {kind: mID, required: true},
		"label":    {kind: mString, required: true},
		"style":    {kind: mEnum, enum: []string{"primary", "secondary", "danger"}},
		"disabled": {kind: mBool},
	},
	ViewInput: {
		"id":          {kind: mID, required: true},
		"value":       {kind: mInput},
		"placeholder": {kind: mString},
		"label":       {kind: mString},
	},
	ViewSelect: {
		"id":      {kind: mID, required: true},
		"value":   {kind: mSelect},
		"options": {kind: mOptions, required: true},
		"label":   {kind: mString},
	},
	ViewToggle: {
		"id":    {kind: mID, required: true},
		"value": {kind: mBool},
		"label": {kind: mString},
	},
	"progress": {
		"value": {kind: mFraction, required: true},
		"label": {kind: mString},
	},
	"link": {
		"url":   {kind: mURL, required: true},
		"label": {kind: mString},
	},
}

// node checks the view v at path (depth: the stacks and lists around it),
// cleaning its strings in place.
func (c *viewCheck) node(v any, path string, depth int) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a view is an object", path)
	}
	typ, _ := obj["type"].(string)
	members, ok := viewTypes[typ]
	if !ok {
		return fmt.Errorf("%s.type: unknown view type %q", path, obj["type"])
	}
	for name := range obj {
		if _, ok := members[name]; !ok && name != "type" {
			return fmt.Errorf("%s: unknown member %q of a %s", path, name, typ)
		}
	}
	if typ == "stack" || typ == "list" {
		depth++
		if depth > MaxViewDepth {
			return fmt.Errorf("%s: stacks and lists nest more than %d deep", path, MaxViewDepth)
		}
	}
	// Options before the value that must be one of them.
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmpBool(members[a].kind == mSelect, members[b].kind == mSelect, strings.Compare(a, b))
	})
	var options []string
	for _, name := range names {
		m := members[name]
		val, present := obj[name]
		at := path + "." + name
		if !present {
			if m.required {
				return fmt.Errorf("%s: a %s needs %s", path, typ, name)
			}
			continue
		}
		switch m.kind {
		case mString:
			s, ok := val.(string)
			if !ok {
				return fmt.Errorf("%s: a string", at)
			}
			obj[name] = CleanText(s, true)
		case mEnum:
			s, _ := val.(string)
			if !slices.Contains(m.enum, s) {
				return fmt.Errorf("%s: one of %s", at, strings.Join(m.enum, ", "))
			}
		case mID:
			s, ok := val.(string)
			if !ok || !ValidKey(s) {
				return fmt.Errorf("%s: a string of 1 to %d characters", at, MaxKeyChars)
			}
			if _, dup := c.controls[s]; dup {
				return fmt.Errorf("%s: the control id %q is used twice", at, s)
			}
			c.controls[s] = Control{Type: typ}
		case mBool:
			if _, ok := val.(bool); !ok {
				return fmt.Errorf("%s: a boolean", at)
			}
		case mChildren:
			list, ok := val.([]any)
			if !ok {
				return fmt.Errorf("%s: an array of views", at)
			}
			for i, child := range list {
				if err := c.node(child, fmt.Sprintf("%s[%d]", at, i), depth); err != nil {
					return err
				}
			}
		case mURL:
			s, _ := val.(string)
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s: an http or https URL", at)
			}
		case mGap:
			n, ok := val.(json.Number)
			i, err := n.Int64()
			if !ok || err != nil || i < 0 || i > maxGap {
				return fmt.Errorf("%s: an integer from 0 to %d", at, maxGap)
			}
		case mFraction:
			n, ok := val.(json.Number)
			f, err := n.Float64()
			if !ok || err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return fmt.Errorf("%s: a number from 0 to 1", at)
			}
		case mOptions:
			var err error
			if options, err = checkOptions(val, at); err != nil {
				return err
			}
		case mInput:
			s, ok := val.(string)
			if !ok || len(s) > MaxInputValueBytes {
				return fmt.Errorf("%s: a string of at most %s", at, kib(MaxInputValueBytes))
			}
			obj[name] = oneLine(ansi.Strip(s))
		case mSelect:
			s, ok := val.(string)
			if !ok || !slices.Contains(options, s) {
				return fmt.Errorf("%s: one of the select's option values", at)
			}
		}
	}
	if typ == ViewSelect {
		id := obj["id"].(string)
		c.controls[id] = Control{Type: ViewSelect, Options: options}
	}
	return nil
}

// checkOptions checks a select's options [{value, label?}] (at least one,
// values unique) and returns their values.
func checkOptions(val any, at string) ([]string, error) {
	list, ok := val.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%s: an array of at least one {value, label?}", at)
	}
	var values []string
	for i, o := range list {
		obj, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: an object {value, label?}", at, i)
		}
		for name, v := range obj {
			switch name {
			case "value":
			case "label":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("%s[%d].label: a string", at, i)
				}
				obj[name] = CleanText(s, true)
			default:
				return nil, fmt.Errorf("%s[%d]: unknown member %q of an option", at, i, name)
			}
		}
		s, ok := obj["value"].(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d].value: a string", at, i)
		}
		if slices.Contains(values, s) {
			return nil, fmt.Errorf("%s[%d].value: %q is offered twice", at, i, s)
		}
		values = append(values, s)
	}
	return values, nil
}

func cmpBool(a, b bool, tie int) int {
	switch {
	case a == b:
		return tie
	case a:
		return 1
	}
	return -1
}

// ValidKey reports whether s is a status or widget key, or a control id:
// 1 to MaxKeyChars code points.
func ValidKey(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= MaxKeyChars
}

// CleanText is s as a client shows one line of text (spec: "The server
// strips ANSI escapes and keeps text on one line, at most 200 code
// points; widget lines keep their spacing"): ANSI escape sequences
// removed, each run of CR and LF and each tab made one space, other
// control characters removed, then cut to MaxTextRunes code points (a
// cut never leaves a base character without the combining marks that
// follow it: the character goes too). Without keepSpacing (statuses, the
// title, the working message) leading and trailing blanks are trimmed.
func CleanText(s string, keepSpacing bool) string {
	s = oneLine(ansi.Strip(s))
	if !keepSpacing {
		s = strings.TrimSpace(s)
	}
	return cutRunes(s, MaxTextRunes)
}

// oneLine makes each run of CR and LF and each tab one space and drops
// the other control characters.
func oneLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	newline := false
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			if !newline {
				b.WriteByte(' ')
			}
			newline = true
			continue
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
		newline = false
	}
	return b.String()
}

// cutRunes cuts s to at most n code points, dropping a base character
// whose combining marks would be cut off.
func cutRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count < n {
			count++
			continue
		}
		// s[i:] is cut: back off over the marks and their base character.
		cut := s[:i]
		if next, _ := utf8.DecodeRuneInString(s[i:]); unicode.In(next, unicode.Mn, unicode.Me, unicode.Mc) {
			for len(cut) > 0 {
				last, size := utf8.DecodeLastRuneInString(cut)
				cut = cut[:len(cut)-size]
				if !unicode.In(last, unicode.Mn, unicode.Me, unicode.Mc) {
					break
				}
			}
		}
		return cut
	}
	return s
}
