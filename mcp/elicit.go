package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knightcode/knightcode/threads/ext"
)

// The answers of an elicitation (MCP elicitation/create).
const (
	elicitAccept  = "accept"
	elicitDecline = "decline"
	elicitCancel  = "cancel"
)

// fieldSchema is what the runtime reads of one property of an
// elicitation's requestedSchema (MCP's restricted schema: primitives and
// enums).
type fieldSchema struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Enum        []any    `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	OneOf       []struct {
		Const any    `json:"const"`
		Title string `json:"title"`
	} `json:"oneOf"`
	Minimum *float64 `json:"minimum"`
	Maximum *float64 `json:"maximum"`
}

// elicit asks an elicitation of s with the thread's dialogs
// (EXTENSIBILITY.md §2 "Client capabilities"): one dialog per field of
// the requested schema, in schema order, titled with the server's name
// and the message: an enum (or a oneOf of consts) a select of its labels,
// a boolean a confirm, a string, number or integer an input (a number is
// parsed and range-checked; a bad value asks once more). A cancelled
// dialog answers cancel; all answered, accept with the content. Decline,
// with a warning naming the server: a field of another type, a URL-mode
// elicitation, a thread without UI, or no turn running.
func (rt *runtime) elicit(ctx context.Context, s *server, p *mcpsdk.ElicitParams) (*mcpsdk.ElicitResult, error) {
	th := rt.api.Thread()
	decline := func(why string) (*mcpsdk.ElicitResult, error) {
		rt.warn(s, "its request for input was declined: "+why)
		return &mcpsdk.ElicitResult{Action: elicitDecline}, nil
	}
	switch {
	case p == nil:
		return decline("it is empty")
	case p.Mode == "url":
		return decline("URL-mode requests are not supported")
	case !th.HasUI:
		return decline("the thread has no UI")
	case th.IsIdle():
		return decline("no turn is running")
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return decline("its schema cannot be read")
	}
	var schema struct {
		Properties map[string]fieldSchema `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return decline("its schema cannot be read: " + err.Error())
	}
	names := propertyOrder(raw)
	for _, n := range names {
		if f := schema.Properties[n]; len(f.Enum) == 0 && len(f.OneOf) == 0 &&
			f.Type != "boolean" && f.Type != "string" && f.Type != "number" && f.Type != "integer" {
			return decline(fmt.Sprintf("field %s has the unsupported type %q", n, f.Type))
		}
	}
	title := s.cfg.Name + ": " + p.Message
	content := map[string]any{}
	for _, n := range names {
		v, ok, err := askField(ctx, th.UI, title, n, schema.Properties[n])
		if err != nil {
			return nil, err
		}
		if !ok {
			return &mcpsdk.ElicitResult{Action: elicitCancel}, nil
		}
		content[n] = v
	}
	return &mcpsdk.ElicitResult{Action: elicitAccept, Content: content}, nil
}

// askField asks one field; ok is false when the person cancelled (or
// gave a bad value twice).
func askField(ctx context.Context, ui ext.UI, title, name string, f fieldSchema) (any, bool, error) {
	label := f.Title
	if label == "" {
		label = name
	}
	if f.Description != "" {
		label += " — " + f.Description
	}
	switch {
	case len(f.Enum) > 0 || len(f.OneOf) > 0:
		var labels []string
		values := map[string]any{}
		if len(f.OneOf) > 0 {
			for _, o := range f.OneOf {
				l := o.Title
				if l == "" {
					l = fmt.Sprint(o.Const)
				}
				labels, values[l] = append(labels, l), o.Const
			}
		} else {
			for i, e := range f.Enum {
				l := fmt.Sprint(e)
				if i < len(f.EnumNames) && f.EnumNames[i] != "" {
					l = f.EnumNames[i]
				}
				labels, values[l] = append(labels, l), e
			}
		}
		a, err := ui.Dialog(ctx, ext.Dialog{Kind: ext.DialogSelect, Title: title + "\n" + label, Options: labels})
		if err != nil || a.Cancelled {
			return nil, false, err
		}
		v, ok := values[a.Value]
		return v, ok, nil
	case f.Type == "boolean":
		a, err := ui.Dialog(ctx, ext.Dialog{Kind: ext.DialogConfirm, Title: title, Message: label})
		if err != nil {
			return nil, false, err
		}
		return !a.Cancelled, true, nil
	}
	placeholder := label
	for try := 0; try < 2; try++ {
		a, err := ui.Dialog(ctx, ext.Dialog{Kind: ext.DialogInput, Title: title, Placeholder: placeholder})
		if err != nil || a.Cancelled {
			return nil, false, err
		}
		if f.Type == "string" {
			return a.Value, true, nil
		}
		v, why := parseNumber(a.Value, f)
		if why == "" {
			return v, true, nil
		}
		placeholder = fmt.Sprintf("%s (%q: %s)", label, a.Value, why)
	}
	return nil, false, nil
}

// parseNumber parses an input as the number or integer field f asks for,
// in its range; why says what is wrong ("" when nothing).
func parseNumber(s string, f fieldSchema) (any, string) {
	var x float64
	var v any
	if f.Type == "integer" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, "not an integer"
		}
		x, v = float64(n), n
	} else {
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, "not a number"
		}
		x, v = n, n
	}
	switch {
	case f.Minimum != nil && x < *f.Minimum:
		return nil, fmt.Sprintf("less than %v", *f.Minimum)
	case f.Maximum != nil && x > *f.Maximum:
		return nil, fmt.Sprintf("more than %v", *f.Maximum)
	}
	return v, ""
}

// propertyOrder is the order of the keys of schema's "properties" object
// as written.
func propertyOrder(schema []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(schema))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if t != "properties" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil
		}
		var names []string
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return names
			}
			names = append(names, fmt.Sprint(t))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return names
			}
		}
		return names
	}
	return nil
}
