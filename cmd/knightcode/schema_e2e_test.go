package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// wireSchema is app-server.schema.json, decoded once.
var wireSchema = sync.OnceValues(func() (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "app-server.schema.json"))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	return doc, json.Unmarshal(b, &doc)
})

// checkWire validates raw, a value the server sent, against the schema:
// the $defs entry def ("TurnStartResult"), or, with def "", the params or
// result of method (which "params" or "result"). It fails the test with
// every mismatch, so the published schema and types stay true to what
// the server sends (a shape of Item that misses a member it carries,
// a value outside an enumeration).
func checkWire(t *testing.T, raw []byte, def, method, which string) {
	t.Helper()
	doc, err := wireSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s any
	if def != "" {
		s = map[string]any{"$ref": "#/$defs/" + def}
	} else {
		m, ok := doc["methods"].(map[string]any)[method].(map[string]any)
		if !ok {
			t.Fatalf("method %s is not in the schema", method)
		}
		s = m[which]
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var errs []string
	validate(doc, s, v, "$", &errs)
	for _, e := range errs {
		t.Errorf("%s %s%s does not fit the schema: %s\n%s", method, def, which, e, raw)
	}
}

// validate checks v against schema s (the keywords the generator writes:
// $ref, type, enum, const, oneOf, anyOf, properties, required,
// additionalProperties, items), appending what does not fit to errs.
func validate(doc map[string]any, s, v any, path string, errs *[]string) {
	switch s := s.(type) {
	case bool:
		if !s {
			*errs = append(*errs, path+": no value is allowed")
		}
		return
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			def := doc["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")]
			if def == nil {
				*errs = append(*errs, path+": dangling "+ref)
				return
			}
			validate(doc, def, v, path, errs)
		}
		if typ, ok := s["type"].(string); ok && !hasType(typ, v) {
			*errs = append(*errs, fmt.Sprintf("%s: %v is not a %s", path, v, typ))
			return
		}
		if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return sameJSON(e, v) }) {
			*errs = append(*errs, fmt.Sprintf("%s: %v is not one of %v", path, v, enum))
		}
		if c, ok := s["const"]; ok && !sameJSON(c, v) {
			*errs = append(*errs, fmt.Sprintf("%s: %v is not %v", path, v, c))
		}
		for _, kw := range []string{"oneOf", "anyOf"} {
			alts, ok := s[kw].([]any)
			if !ok {
				continue
			}
			var fits int
			var why []string
			for _, a := range alts {
				var sub []string
				validate(doc, a, v, path, &sub)
				if len(sub) == 0 {
					fits++
				} else {
					why = append(why, strings.Join(sub, "; "))
				}
			}
			if fits == 0 || kw == "oneOf" && fits > 1 {
				*errs = append(*errs, fmt.Sprintf("%s: fits %d of %s (want %s): %s", path, fits, kw, map[string]string{"oneOf": "one", "anyOf": "one or more"}[kw], strings.Join(why, " | ")))
			}
		}
		if obj, ok := v.(map[string]any); ok {
			props, _ := s["properties"].(map[string]any)
			if req, ok := s["required"].([]any); ok {
				for _, r := range req {
					if _, ok := obj[r.(string)]; !ok {
						*errs = append(*errs, fmt.Sprintf("%s: required member %s is missing", path, r))
					}
				}
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if ps, ok := props[k]; ok {
					validate(doc, ps, obj[k], path+"."+k, errs)
				} else if ap, ok := s["additionalProperties"]; ok {
					validate(doc, ap, obj[k], path+"."+k, errs)
				}
			}
		}
		if arr, ok := v.([]any); ok {
			if items, ok := s["items"]; ok {
				for i, x := range arr {
					validate(doc, items, x, fmt.Sprintf("%s[%d]", path, i), errs)
				}
			}
		}
	}
}

func hasType(typ string, v any) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		return ok && !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

func sameJSON(a, b any) bool {
	if n, ok := b.(json.Number); ok {
		f, err := n.Float64()
		return err == nil && reflect.DeepEqual(a, f)
	}
	return reflect.DeepEqual(a, b)
}

// The validator itself: a shape's member it does not have, a value
// outside an enumeration and a missing required member are caught.
func TestCheckWireCatches(t *testing.T) {
	t.Parallel()
	doc, err := wireSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ def, raw string }{
		{"Item", `{"id":"item-0","type":"userMessage","text":"hi","name":"bash"}`},
		{"Item", `{"id":"c1","type":"toolCall","name":"bash","status":"skipped"}`},
		{"ThreadStatus", `{"type":"active"}`},
		{"TurnStartResult", `{"status":"started"}`},
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(tt.raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var errs []string
		validate(doc, map[string]any{"$ref": "#/$defs/" + tt.def}, v, "$", &errs)
		if len(errs) == 0 {
			t.Errorf("%s %s fits the schema", tt.def, tt.raw)
		}
	}
}
