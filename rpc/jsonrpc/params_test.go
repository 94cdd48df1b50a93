package jsonrpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

type nested struct {
	Path string `json:"path"`
	Kind string `json:"kind,omitempty"`
}

type sampleParams struct {
	ThreadID string            `json:"threadId"`
	HunkID   string            `json:"hunkId,omitempty" jsonschema:"minLength=1"`
	Limit    int               `json:"limit,omitempty"`
	Files    []nested          `json:"files,omitempty"`
	ByName   map[string]nested `json:"byName,omitempty"`
	Opt      *nested           `json:"opt,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	embedded
}

type embedded struct {
	Scope string `json:"scope,omitempty"`
}

func (p sampleParams) Validate() error {
	if p.Limit > 200 {
		return protocol.InvalidParams("limit", "at most 200, got %d", p.Limit)
	}
	if p.Scope == "bad" {
		return errors.New("scope is bad")
	}
	return nil
}

func TestDecodeParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want *Error // nil: accepted
	}{
		{"minimal", `{"threadId":"t"}`, nil},
		{"nested ok", `{"threadId":"t","files":[{"path":"a"}],"byName":{"x":{"path":"b"}},"opt":{"path":"c"},"raw":{"q":1}}`, nil},
		{"free-form raw members are data", `{"threadId":"t","raw":{"anything":{"goes":1}}}`, nil},
		{"embedded member", `{"threadId":"t","scope":"s"}`, nil},
		{"non-empty given", `{"threadId":"t","hunkId":"h"}`, nil},
		{"unknown member", `{"threadId":"t","extra":{"a":1}}`, protocol.InvalidParams("extra", "unknown field; expected threadId, hunkId, limit, files, byName, opt, raw, scope")},
		{"misspelled member", `{"threadId":"t","hunk_id":"h"}`, protocol.InvalidParams("hunk_id", "unknown field; expected threadId, hunkId, limit, files, byName, opt, raw, scope")},
		{"member in another case", `{"threadId":"t","HunkId":"h"}`, protocol.InvalidParams("HunkId", "unknown field; expected threadId, hunkId, limit, files, byName, opt, raw, scope")},
		{"unknown before missing", `{"thread_id":"t"}`, protocol.InvalidParams("thread_id", "unknown field; expected threadId, hunkId, limit, files, byName, opt, raw, scope")},
		{"unknown nested in array", `{"threadId":"t","files":[{"path":"a"},{"path":"b","knd":"x"}]}`, protocol.InvalidParams("files[1].knd", "unknown field; expected path, kind")},
		{"unknown nested in map", `{"threadId":"t","byName":{"k":{"path":"a","pth":"b"}}}`, protocol.InvalidParams("byName.k.pth", "unknown field; expected path, kind")},
		{"unknown nested in pointer", `{"threadId":"t","opt":{"path":"a","x":1}}`, protocol.InvalidParams("opt.x", "unknown field; expected path, kind")},
		{"empty non-empty member", `{"threadId":"t","hunkId":""}`, protocol.InvalidParams("hunkId", "must not be an empty string or null: leave hunkId out when you mean none")},
		{"null non-empty member", `{"threadId":"t","hunkId":null}`, protocol.InvalidParams("hunkId", "must not be an empty string or null: leave hunkId out when you mean none")},
		{"empty params with unknown", `{"x":1}`, protocol.InvalidParams("x", "unknown field; expected threadId, hunkId, limit, files, byName, opt, raw, scope")},
		{"absent params", ``, protocol.InvalidParams("threadId", "required")},
		{"null params", `null`, protocol.InvalidParams("threadId", "required")},
		{"missing required", `{"limit":3}`, protocol.InvalidParams("threadId", "required")},
		{"null required", `{"threadId":null}`, protocol.InvalidParams("threadId", "required")},
		{"wrong type", `{"threadId":5}`, protocol.InvalidParams("threadId", "expected string, got number")},
		{"wrong nested type", `{"threadId":"t","files":[{"path":1}]}`, protocol.InvalidParams("files.path", "expected string, got number")},
		{"missing nested required in array", `{"threadId":"t","files":[{"path":"a"},{"kind":"add"}]}`, protocol.InvalidParams("files[1].path", "required")},
		{"missing nested required in map", `{"threadId":"t","byName":{"k":{}}}`, protocol.InvalidParams("byName.k.path", "required")},
		{"missing nested required in pointer", `{"threadId":"t","opt":{}}`, protocol.InvalidParams("opt.path", "required")},
		{"array params", `[1]`, protocol.InvalidParams("", "params must be a JSON object, got array")},
		{"string params", `"x"`, protocol.InvalidParams("", "params must be a JSON object, got string")},
		{"validate error", `{"threadId":"t","limit":201}`, protocol.InvalidParams("limit", "at most 200, got 201")},
		{"validate plain error", `{"threadId":"t","scope":"bad"}`, protocol.InvalidParams("", "scope is bad")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p sampleParams
			err := decodeParams(json.RawMessage(tt.raw), &p)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("decodeParams: %v", err)
				}
				return
			}
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("decodeParams: got %v, want %v", err, tt.want)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("error (-got +want):\n%s", diff)
			}
		})
	}
}

func TestErrorIsComparesCodes(t *testing.T) {
	t.Parallel()
	err := errors.Join(errors.New("context"), Errorf(protocol.CodeThreadNotFound, "thread %s", "t1"))
	if !IsCode(err, protocol.CodeThreadNotFound) {
		t.Errorf("IsCode(threadNotFound) = false")
	}
	if !errors.Is(err, &Error{Code: protocol.CodeThreadNotFound, Message: "other text"}) {
		t.Errorf("errors.Is with another message = false")
	}
	if IsCode(err, protocol.CodeInternal) {
		t.Errorf("IsCode(internal) = true")
	}
}

var errSentinel = errors.New("sentinel")

type conflictError struct{ reason string }

func (e *conflictError) Error() string { return "conflict: " + e.reason }

func TestToWireError(t *testing.T) {
	t.Parallel()
	mappers := []ErrorMapper{
		MapSentinel(errSentinel, protocol.CodeThreadNotFound),
		MapAs(func(e *conflictError) *Error {
			return &Error{Code: protocol.CodeGitConflict, Message: e.Error(), Data: map[string]string{"reason": e.reason}}
		}),
	}
	tests := []struct {
		name string
		err  error
		want *Error
	}{
		{"nil", nil, nil},
		{"wire error as is", Errorf(protocol.CodeTurnMismatch, "stale"), Errorf(protocol.CodeTurnMismatch, "stale")},
		{"wrapped wire error", errors.Join(errors.New("x"), Errorf(protocol.CodeFileChanged, "f")), Errorf(protocol.CodeFileChanged, "f")},
		{"sentinel", errors.Join(errSentinel, errors.New("more")), &Error{Code: protocol.CodeThreadNotFound, Message: "sentinel\nmore"}},
		{"typed", &conflictError{reason: "diffChanged"}, &Error{Code: protocol.CodeGitConflict, Message: "conflict: diffChanged", Data: map[string]string{"reason": "diffChanged"}}},
		{"unmapped", errors.New("disk on fire"), &Error{Code: protocol.CodeInternal, Message: "internal error"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(ToWireError(tt.err, mappers...), tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tt.name, diff)
		}
	}
}

func TestEncodeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    any
		want string
	}{
		{json.RawMessage("{\n  \"a\": [1,\n 2]\n}"), `{"a":[1,2]}`},
		{map[string]string{"h": "<a&b>\n"}, `{"h":"<a&b>\n"}`},
		{nil, `null`},
	}
	for _, tt := range tests {
		got, err := encodeJSON(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("encodeJSON(%v) = %s, %v; want %s", tt.v, got, err, tt.want)
		}
	}
	if _, err := encodeJSON(json.RawMessage("{bad")); err == nil {
		t.Errorf("encodeJSON(invalid raw) succeeded")
	}
	if got, want := string(requestLine(nil, "a\"b\n", nil)), `{"method":"a\"b\n"}`+"\n"; got != want {
		t.Errorf("requestLine = %q, want %q", got, want)
	}
}

// customParams decodes itself, like protocol.WorktreeListParams; its
// members are still its fields.
type customParams struct {
	Cwd   string `json:"cwd,omitempty"`
	given bool
}

func (p *customParams) UnmarshalJSON(b []byte) error {
	type plain customParams
	p.given = true
	return json.Unmarshal(b, (*plain)(p))
}

type emptyParams struct{}

func TestDecodeParamsCustomAndEmpty(t *testing.T) {
	t.Parallel()
	var c customParams
	if err := decodeParams(json.RawMessage(`{"cwd":"/x"}`), &c); err != nil || !c.given {
		t.Errorf("custom params: %v (given %v)", err, c.given)
	}
	err := decodeParams(json.RawMessage(`{"cdw":"/x"}`), &c)
	if diff := cmp.Diff(err, error(protocol.InvalidParams("cdw", "unknown field; expected cwd"))); diff != "" {
		t.Errorf("custom params with unknown member (-got +want):\n%s", diff)
	}
	var e emptyParams
	for _, raw := range []string{``, `null`, `{}`} {
		if err := decodeParams(json.RawMessage(raw), &e); err != nil {
			t.Errorf("empty params %q: %v", raw, err)
		}
	}
	err = decodeParams(json.RawMessage(`{"x":1}`), &e)
	if diff := cmp.Diff(err, error(protocol.InvalidParams("x", "unknown field; this object takes no members"))); diff != "" {
		t.Errorf("empty params with a member (-got +want):\n%s", diff)
	}
}

type idParams struct {
	ThreadID string   `json:"threadId"`
	QueueID  string   `json:"queueId,omitempty"`
	Message  string   `json:"message,omitempty"`
	Items    []nested `json:"items,omitempty"`
}

// A required enum has no default to leave it out for: its empty value's
// message does not offer one (QA: thread/handoff's "to":"" said "leave to
// out for the default").
func TestDecodeParamsEmptyRequiredEnum(t *testing.T) {
	t.Parallel()
	var p protocol.ThreadHandoffParams
	err := decodeParams(json.RawMessage(`{"threadId":"t","to":""}`), &p)
	if diff := cmp.Diff(err, error(protocol.InvalidParams("to", "must be one of local, worktree, not an empty string"))); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// A member that takes a protocol.Enum's values refuses "" (it is not the
// default: leave the member out for that), whichever type declares it,
// and takes null as the member left out.
func TestDecodeParamsEmptyEnum(t *testing.T) {
	t.Parallel()
	var p protocol.ThreadDiffReadParams
	err := decodeParams(json.RawMessage(`{"threadId":"t","scope":""}`), &p)
	want := protocol.InvalidParams("scope", "must be one of lastTurn, uncommitted, unstaged, staged, committed, branch, not an empty string (leave scope out for the default)")
	if diff := cmp.Diff(err, error(want)); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
	if err := decodeParams(json.RawMessage(`{"threadId":"t","scope":null}`), &p); err != nil {
		t.Errorf("null scope: %v", err)
	}
	var s protocol.ThreadStartParams
	err = decodeParams(json.RawMessage(`{"cwd":"/tmp","workspace":{"mode":""}}`), &s)
	if diff := cmp.Diff(err, error(protocol.InvalidParams("workspace.mode", "must be one of local, worktree, not an empty string"))); diff != "" {
		t.Errorf("nested enum (-got +want):\n%s", diff)
	}
}

// An empty id or enum value is refused (only leaving the member out means
// the default), null is the member left out, an empty free-text member is
// data, and a member given twice is refused at any depth.
func TestDecodeParamsEmptyAndDuplicate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want *Error
	}{
		{"ids given", `{"threadId":"t","queueId":"q"}`, nil},
		{"null optional id", `{"threadId":"t","queueId":null}`, nil},
		{"empty free text", `{"threadId":"t","message":""}`, nil},
		{"empty required id", `{"threadId":""}`, protocol.InvalidParams("threadId", "must not be an empty string")},
		{"empty optional id", `{"threadId":"t","queueId":""}`, protocol.InvalidParams("queueId", "must not be an empty string")},
		{"duplicate member", `{"threadId":"a","threadId":"b"}`, protocol.InvalidParams("threadId", "given more than once")},
		{"duplicate nested member", `{"threadId":"t","items":[{"path":"a","path":"b"}]}`, protocol.InvalidParams("items[0].path", "given more than once")},
		{"same name at two depths", `{"threadId":"t","items":[{"path":"a"}],"message":"path"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p idParams
			err := decodeParams(json.RawMessage(tt.raw), &p)
			var want error
			if tt.want != nil {
				want = tt.want
			}
			if diff := cmp.Diff(err, want); diff != "" {
				t.Errorf("decodeParams(%s) (-got +want):\n%s", tt.raw, diff)
			}
		})
	}
}

// A member given twice inside a free-form value (config/write's value, a
// map of strings) is refused too, naming where (final QA: config/write
// {"key":"retry","value":{"maxRetries":1,"maxRetries":2}} stored 2).
func TestDecodeParamsDuplicateInsideFreeFormValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw   string
		dst   any
		field string
	}{
		{`{"scope":"global","key":"retry","value":{"maxRetries":1,"maxRetries":2}}`, new(protocol.ConfigWriteParams), "value.maxRetries"},
		{`{"scope":"global","key":"x","value":[{"a":{"b":1,"b":2}}]}`, new(protocol.ConfigWriteParams), "value[0].a.b"},
		{`{"name":"bash","key":"k","value":{"a":1,"a":1}}`, new(protocol.ToolSettingsWriteParams), "value.a"},
		{`{"scope":"global","key":"x","value":{"l":[1,[2]],"m":{"n":1,"n":2}}}`, new(protocol.ConfigWriteParams), "value.m.n"},
	}
	for _, tt := range tests {
		err := decodeParams(json.RawMessage(tt.raw), tt.dst)
		e, ok := errors.AsType[*Error](err)
		if !ok || e.Code != protocol.CodeInvalidParams || !reflect.DeepEqual(e.Data, protocol.InvalidParamsData{Field: tt.field}) {
			t.Errorf("decodeParams(%s) into %T = %v, want invalidParams %s", tt.raw, tt.dst, err, tt.field)
		}
	}
}

// A required member given as "" is refused without the advice to leave it
// out, which would answer "required" (final QA: git/branch/create
// {"name":""} said "leave name out when you mean none").
func TestDecodeParamsEmptyRequiredName(t *testing.T) {
	t.Parallel()
	for _, dst := range []any{new(protocol.GitBranchCreateParams), new(protocol.GitBranchSwitchParams)} {
		err := decodeParams(json.RawMessage(`{"threadId":"t","name":""}`), dst)
		if diff := cmp.Diff(err, error(protocol.InvalidParams("name", "must not be an empty string"))); diff != "" {
			t.Errorf("%T (-got +want):\n%s", dst, diff)
		}
	}
}

// An empty cursor or baseRef is refused, as every empty string that
// could be read as "from the start" or "the default" is (QA): leave the
// member out for that.
func TestDecodeParamsEmptyCursorAndBaseRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw   string
		dst   any
		field string
	}{
		{`{"threadId":"t","cursor":""}`, new(protocol.ThreadResumeParams), "cursor"},
		{`{"threadId":"t","cursor":""}`, new(protocol.ThreadReadParams), "cursor"},
		{`{"cursor":""}`, new(protocol.ThreadListParams), "cursor"},
		{`{"cwd":"/tmp","workspace":{"mode":"worktree","baseRef":""}}`, new(protocol.ThreadStartParams), "workspace.baseRef"},
		{`{"cwd":"/tmp","workspace":{"mode":"worktree","environment":""}}`, new(protocol.ThreadStartParams), "workspace.environment"},
		// An empty cwd is not "every project" (thread/list listed every
		// thread) nor "no project" (final QA): leave cwd out for that.
		{`{"cwd":""}`, new(protocol.ThreadListParams), "cwd"},
		{`{"cwd":""}`, new(protocol.ConfigReadParams), "cwd"},
		{`{"cwd":""}`, new(protocol.ToolListParams), "cwd"},
		{`{"threadId":"t","path":""}`, new(protocol.FileListParams), "path"},
		{`{"cwd":""}`, new(protocol.ResourceListParams), "cwd"},
		{`{"cwd":""}`, new(protocol.CommandListParams), "cwd"},
		{`{"scope":"global","key":"k","value":1,"cwd":""}`, new(protocol.ConfigWriteParams), "cwd"},
	}
	for _, tt := range tests {
		err := decodeParams(json.RawMessage(tt.raw), tt.dst)
		e, ok := errors.AsType[*Error](err)
		if !ok || e.Code != protocol.CodeInvalidParams || !reflect.DeepEqual(e.Data, protocol.InvalidParamsData{Field: tt.field}) {
			t.Errorf("decodeParams(%s) into %T = %v, want invalidParams %s", tt.raw, tt.dst, err, tt.field)
		}
	}
}
