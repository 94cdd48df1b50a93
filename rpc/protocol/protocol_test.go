package protocol

import (
	"encoding/json"
	"errors"
	"reflect"
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
		if err := json.Unmarshal([]byte(`{"id":`+raw+`}`), &p); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil || string(b) != `{"id":`+raw+`}` {
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
