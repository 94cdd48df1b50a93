package protocol

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTable checks every row: names are unique paths, client-sent methods
// have a serialization rule, requests have a result type, params are
// structs (the frame decodes objects only).
func TestTable(t *testing.T) {
	t.Parallel()
	ms := Methods()
	if len(ms) == 0 {
		t.Fatal("empty table")
	}
	for i, m := range ms {
		if i > 0 && ms[i-1].Name >= m.Name {
			t.Errorf("not sorted or duplicate: %s after %s", m.Name, ms[i-1].Name)
		}
		if strings.ContainsAny(m.Name, " \t\n") || strings.HasPrefix(m.Name, "/") || strings.HasSuffix(m.Name, "/") {
			t.Errorf("bad name %q", m.Name)
		}
		clientSent := m.Direction == ClientRequestDir || m.Direction == ClientNotificationDir
		if clientSent != (m.Serialization != 0) {
			t.Errorf("%s: direction %v with serialization %v", m.Name, m.Direction, m.Serialization)
		}
		isRequest := m.Direction == ClientRequestDir || m.Direction == ServerRequestDir
		if isRequest != (m.Result != nil) {
			t.Errorf("%s: direction %v with result type %v", m.Name, m.Direction, m.Result)
		}
		if m.Params.Kind() != reflect.Struct {
			t.Errorf("%s: params type %v is not a struct", m.Name, m.Params)
		}
		if m.Serialization == PerThread {
			if !m.Params.Implements(reflect.TypeFor[ThreadScoped]()) {
				t.Errorf("%s runs per thread but %v has no ThreadKey method (threadkey.go)", m.Name, m.Params)
			} else if f, ok := m.Params.FieldByName("ThreadID"); !ok || f.Tag.Get("json") != "threadId" {
				t.Errorf("%s runs per thread but %v has no required threadId member", m.Name, m.Params)
			} else {
				v := reflect.New(m.Params).Elem()
				v.FieldByName("ThreadID").SetString("t-1")
				if got := v.Interface().(ThreadScoped).ThreadKey(); got != "t-1" {
					t.Errorf("%s: ThreadKey() = %q, want params.threadId", m.Name, got)
				}
			}
		}
		if got, ok := Lookup(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Lookup(%s) = %v, %v", m.Name, got, ok)
		}
	}
	if _, ok := Lookup("no/such"); ok {
		t.Errorf("Lookup(no/such) found a row")
	}
}

// TestNotificationWith checks that With carries a notification's method and
// params.
func TestNotificationWith(t *testing.T) {
	t.Parallel()
	p := TurnQueueUpdatedParams{ThreadID: "t"}
	n := TurnQueueUpdated.With(p)
	if n.Method() != "turn/queue/updated" || !reflect.DeepEqual(n.Params(), p) {
		t.Errorf("With = %q %v", n.Method(), n.Params())
	}
}

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	var e Error
	if err := json.Unmarshal([]byte(`{"code":"gitConflict","message":"m","data":{"reason":"diffChanged","n":1.50}}`), &e); err != nil {
		t.Fatal(err)
	}
	want := Error{Code: CodeGitConflict, Message: "m", Data: json.RawMessage(`{"reason":"diffChanged","n":1.50}`)}
	if diff := cmp.Diff(e, want); diff != "" {
		t.Errorf("decoded (-got +want):\n%s", diff)
	}
	b, err := json.Marshal(&e)
	if err != nil || string(b) != `{"code":"gitConflict","message":"m","data":{"reason":"diffChanged","n":1.50}}` {
		t.Errorf("re-encoded %s, %v", b, err)
	}
	if !errors.Is(&e, &Error{Code: CodeGitConflict}) || errors.Is(&e, &Error{Code: CodeInternal}) {
		t.Errorf("Is does not compare codes")
	}
	if got := e.Error(); got != "gitConflict: m" {
		t.Errorf("Error() = %q", got)
	}
	var noData Error
	if err := json.Unmarshal([]byte(`{"code":"internal","message":""}`), &noData); err != nil || noData.Data != nil {
		t.Errorf("no data: %+v, %v", noData, err)
	}
}

func TestRequestID(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{`"a\u0041"`, `1.50`, `-3`} {
		var p ServerRequestCancelledParams
		if err := json.Unmarshal([]byte(`{"requestId":`+raw+`}`), &p); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil || string(b) != `{"requestId":`+raw+`}` {
			t.Errorf("round trip of %s: %s, %v", raw, b, err)
		}
	}
	b, _ := json.Marshal(ErrorParams{Message: "m"})
	if string(b) != `{"message":"m"}` {
		t.Errorf("empty id not omitted: %s", b)
	}
}

func TestInitializeValidate(t *testing.T) {
	t.Parallel()
	names := func(n int) *ClientCapabilities {
		return &ClientCapabilities{OptOutNotifications: make([]string, n)}
	}
	tests := []struct {
		p    InitializeParams
		want *Error
	}{
		{InitializeParams{}, nil},
		{InitializeParams{Capabilities: names(MaxOptOutNotifications)}, nil},
		{InitializeParams{Capabilities: names(MaxOptOutNotifications + 1)}, &Error{Code: CodeInvalidParams,
			Message: "capabilities.optOutNotifications: at most 256 method names, got 257",
			Data:    InvalidParamsData{Field: "capabilities.optOutNotifications"}}},
	}
	for _, tt := range tests {
		var got *Error
		if err := tt.p.Validate(); err != nil && !errors.As(err, &got) {
			t.Fatalf("Validate: %v is not an *Error", err)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("Validate (-got +want):\n%s", diff)
		}
	}
}

// TestEnums checks the enumerations: names and values unique and not
// empty, every member a string, list or map of strings of its type, and no
// jsonschema enum tag left on any field of a message (the Enums are the
// one list of fixed values).
func TestEnums(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, e := range Enums() {
		if e.Name == "" || names[e.Name] {
			t.Errorf("enum name %q empty or used twice", e.Name)
		}
		names[e.Name] = true
		if e.Doc == "" {
			t.Errorf("enum %s has no doc", e.Name)
		}
		seen := map[string]bool{}
		for _, v := range e.Values {
			if v == "" || seen[v] {
				t.Errorf("enum %s: value %q empty or twice", e.Name, v)
			}
			seen[v] = true
		}
		for _, m := range e.Members {
			f, ok := jsonField(m.Type, m.Name)
			if !ok {
				t.Errorf("enum %s: %s has no member %s", e.Name, m.Type.Name(), m.Name)
				continue
			}
			k := f.Type.Kind()
			if k == reflect.Slice || k == reflect.Map {
				k = f.Type.Elem().Kind()
			}
			if k != reflect.String {
				t.Errorf("enum %s: %s.%s is a %v", e.Name, m.Type.Name(), m.Name, f.Type)
			}
			if got, ok := EnumOf(m.Type, m.Name); !ok || got.Name != e.Name {
				t.Errorf("EnumOf(%s, %s) = %s, %v", m.Type.Name(), m.Name, got.Name, ok)
			}
		}
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if strings.Contains(f.Tag.Get("jsonschema"), "enum=") {
				t.Errorf("%s.%s has a jsonschema enum tag: list its values in an Enum (enums.go)", typ.Name(), f.Name)
			}
			walk(f.Type)
		}
	}
	for _, m := range Methods() {
		walk(m.Params)
		if m.Result != nil {
			walk(m.Result)
		}
	}
	if got := Enums()[0]; got.Name != "ErrorCode" || !slices.Equal(got.Values, ErrorCodes) || !got.Open {
		t.Errorf("ErrorCode enum = %+v, want the open list of ErrorCodes", got)
	}
}

// jsonField finds the field of struct t whose JSON name is name.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// TestUnions checks that every shape of a union names members its struct
// has and requires only members it carries, and that tags are the union
// type's distinct values.
func TestUnions(t *testing.T) {
	t.Parallel()
	for _, u := range Unions() {
		if _, ok := jsonField(u.Type, u.Tag); !ok {
			t.Errorf("%s has no tag member %s", u.Type.Name(), u.Tag)
		}
		tags := map[string]bool{}
		for _, sh := range u.Shapes {
			if sh.Tag == "" || tags[sh.Tag] || sh.Doc == "" {
				t.Errorf("%s: shape %s tag %q empty, twice or without a doc", u.Type.Name(), sh.Name, sh.Tag)
			}
			tags[sh.Tag] = true
			for _, m := range sh.Members {
				if _, ok := jsonField(u.Type, m); !ok || m == u.Tag {
					t.Errorf("%s: shape %s names %s", u.Type.Name(), sh.Name, m)
				}
			}
			for _, m := range sh.Required {
				if !slices.Contains(sh.Members, m) {
					t.Errorf("%s: shape %s requires %s, which it does not carry", u.Type.Name(), sh.Name, m)
				}
			}
		}
	}
}
