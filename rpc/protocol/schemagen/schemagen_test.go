package schemagen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// root is the module root, relative to this package's directory.
var root = filepath.Join("..", "..", "..")

// TestGenerated regenerates every file from the source and compares it with
// the committed one; it also checks that the compiled-in comments give the
// same schema and declarations (what the binary prints).
func TestGenerated(t *testing.T) {
	t.Parallel()
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("Files returned %d files, want 3", len(files))
	}
	for name, got := range files {
		want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%v\nrefresh: make schema (or, from the module root, %s)", err, RefreshCommand)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (-file +generated):\n%s\nrefresh: make schema (or, from the module root, %s)",
				name, cmp.Diff(string(want), string(got)), RefreshCommand)
		}
	}
	schema, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(schema, files[SchemaFile]) {
		t.Errorf("Schema() with the compiled-in comments differs from the generated file; refresh: make schema")
	}
	ts, err := TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ts, files[TypeScriptFile]) {
		t.Errorf("TypeScript() with the compiled-in comments differs from the generated file; refresh: make schema")
	}
}

// TestGenerateDeterministic generates twice and expects the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	t.Parallel()
	a, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs differ:\n%s", diff)
	}
}

// TestWholeDocComments checks that a type's description is its whole doc
// comment, not the first sentence: Error's comment has three paragraphs.
func TestWholeDocComments(t *testing.T) {
	t.Parallel()
	cm, err := Comments(root)
	if err != nil {
		t.Fatal(err)
	}
	got := cm[protocolPath+".Error"]
	for _, want := range []string{"Error is a JSON-RPC error on the wire", "errors.Is(err, &Error{Code: c})", "the exact json.RawMessage that was sent."} {
		if !strings.Contains(got, want) {
			t.Errorf("Error's comment lacks %q: %q", want, got)
		}
	}
	if got, want := cm[protocolPath+".InvalidParamsData.Field"], "Field is the dotted path"; !strings.HasPrefix(got, want) {
		t.Errorf("field comment %q, want prefix %q", got, want)
	}
}

// TestSchemaCoversTable checks that every method of the table has its params
// (and result) defined, that every error code and error data type is there,
// and that $defs resolves every reference.
func TestSchemaCoversTable(t *testing.T) {
	t.Parallel()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Methods map[string]struct {
			Direction string
			Params    struct {
				Ref string `json:"$ref"`
			}
			Result *struct {
				Ref string `json:"$ref"`
			}
		}
		ErrorData map[string]struct {
			Ref string `json:"$ref"`
		}
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, m := range protocol.Methods() {
		md, ok := doc.Methods[m.Name]
		if !ok {
			t.Errorf("method %s missing from the schema", m.Name)
			continue
		}
		if got, want := md.Direction, m.Direction.String(); got != want {
			t.Errorf("%s: direction %q, want %q", m.Name, got, want)
		}
		if got, want := md.Params.Ref, "#/$defs/"+m.Params.Name(); got != want {
			t.Errorf("%s: params ref %q, want %q", m.Name, got, want)
		}
		if (md.Result != nil) != (m.Result != nil) {
			t.Errorf("%s: result present %v, want %v", m.Name, md.Result != nil, m.Result != nil)
		}
	}
	if got, want := len(doc.Methods), len(protocol.Methods()); got != want {
		t.Errorf("%d methods in the schema, %d in the table", got, want)
	}
	for _, d := range errorData {
		if got, want := doc.ErrorData[d.code].Ref, "#/$defs/"+d.typ.Name(); got != want {
			t.Errorf("errorData[%s] = %q, want %q", d.code, got, want)
		}
	}
	var codes struct{ Enum []string }
	if err := json.Unmarshal(doc.Defs[errorCodeDef], &codes); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(codes.Enum, protocol.ErrorCodes); diff != "" {
		t.Errorf("ErrorCode enum (-got +want):\n%s", diff)
	}
	for _, ref := range refs(b) {
		name := ref[len("#/$defs/"):]
		if _, ok := doc.Defs[name]; !ok {
			t.Errorf("dangling reference %s", ref)
		}
	}
}

// TestTypeScriptSanity checks the declarations' structure without a
// TypeScript compiler: every $defs entry is declared exactly once, every
// type name used is declared or built in, braces balance, each method is in
// the map of its direction with its params and result types, and no comment
// is left open.
func TestTypeScriptSanity(t *testing.T) {
	t.Parallel()
	b, err := TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	ts := string(b)
	doc, err := build(comments)
	if err != nil {
		t.Fatal(err)
	}
	// Strip comments first; they may hold any text.
	code := regexp.MustCompile(`(?s)/\*\*.*?\*/`).ReplaceAllString(ts, "")
	code = regexp.MustCompile(`(?m)^//.*$`).ReplaceAllString(code, "")
	if strings.Contains(code, "/*") || strings.Contains(code, "*/") {
		t.Errorf("an unterminated comment is left in the code")
	}
	declared := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^export (?:interface|type) ([A-Za-z_][A-Za-z0-9_]*)\b`).FindAllStringSubmatch(code, -1) {
		declared[m[1]]++
	}
	for name, n := range declared {
		if n != 1 {
			t.Errorf("%s declared %d times", name, n)
		}
	}
	for name := range doc.Defs {
		if declared[name] != 1 {
			t.Errorf("$defs/%s is not declared", name)
		}
	}
	for _, name := range []string{"ErrorDataByCode", "ClientRequests", "ClientRequestMethod", "ClientNotifications",
		"ClientNotificationMethod", "ServerRequests", "ServerRequestMethod", "ServerNotifications", "ServerNotificationMethod"} {
		if declared[name] != 1 {
			t.Errorf("%s is not declared", name)
		}
	}
	builtin := []string{"string", "number", "boolean", "null", "unknown", "key", "params", "result", "keyof"}
	// Type positions: after ": " or "= " or "| " or "keyof ", a word starting
	// an identifier; property names are followed by ":" or "?:".
	for _, m := range regexp.MustCompile(`(?:[:=|]|keyof) \(?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(code, -1) {
		if declared[m[1]] == 0 && !slices.Contains(builtin, m[1]) {
			t.Errorf("type %s is used but not declared", m[1])
		}
	}
	if o, c := strings.Count(code, "{"), strings.Count(code, "}"); o != c {
		t.Errorf("%d { and %d }", o, c)
	}
	for _, m := range protocol.Methods() {
		want := `"` + m.Name + `": { params: ` + m.Params.Name()
		if m.Result != nil {
			want += "; result: " + m.Result.Name()
		}
		want += " };"
		section := map[protocol.Direction]string{protocol.ClientRequestDir: "ClientRequests", protocol.ClientNotificationDir: "ClientNotifications",
			protocol.ServerRequestDir: "ServerRequests", protocol.ServerNotificationDir: "ServerNotifications"}[m.Direction]
		_, body, _ := strings.Cut(code, "export interface "+section+" {\n")
		body, _, _ = strings.Cut(body, "\n}")
		if !strings.Contains(body, want) {
			t.Errorf("%s lacks %s", section, want)
		}
	}
	if !strings.HasPrefix(ts, "// Code generated by "+RefreshCommand+". DO NOT EDIT.\n") {
		t.Errorf("no generated-code line")
	}
}

// TestTypeScriptShapes pins the rendering of each kind of schema.
func TestTypeScriptShapes(t *testing.T) {
	t.Parallel()
	b, err := TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	ts := string(b)
	for _, want := range []string{
		"export type ErrorCode = \"notInitialized\" | \"methodNotFound\" |", // enum
		"  code: ErrorCode;\n",                    // required ref
		"  data?: unknown;\n",                     // any
		"  id?: string | number;\n",               // RequestID in ErrorParams, optional
		"  fileChanges?: FileChange[];\n",         // array of refs
		"export interface InitializedParams {}\n", // empty params
		"  invalidParams: InvalidParamsData;\n",   // error data
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("declarations lack %q", want)
		}
	}
}

// refs returns every "$ref" value in a JSON document.
func refs(b []byte) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		walk(v)
	}
	return out
}
