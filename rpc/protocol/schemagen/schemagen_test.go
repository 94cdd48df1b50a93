package schemagen

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

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
// comment, not the first sentence, made client-facing: Error's comment has
// a paragraph for Go readers, which its description (renamed RpcError)
// leaves out.
func TestWholeDocComments(t *testing.T) {
	t.Parallel()
	cm, err := Comments(root)
	if err != nil {
		t.Fatal(err)
	}
	got := cm[protocolPath+".Error"]
	for _, want := range []string{"Error is the error of an error response", "depends on the code.", "Go: package jsonrpc names it", "errors.Is(err, &Error{Code:"} {
		if !strings.Contains(got, want) {
			t.Errorf("Error's comment lacks %q: %q", want, got)
		}
	}
	if got, want := cm[protocolPath+".InvalidParamsData.Field"], "Field is the dotted path"; !strings.HasPrefix(got, want) {
		t.Errorf("field comment %q, want prefix %q", got, want)
	}
	doc, err := build(cm)
	if err != nil {
		t.Fatal(err)
	}
	desc := doc.Defs["RpcError"].Description
	if !strings.HasPrefix(desc, "RpcError is the error of an error response") || !strings.HasSuffix(desc, "code names the error; data, when present, is\nstructured detail whose shape depends on the code.") {
		t.Errorf("RpcError's description %q, want the comment's first paragraph, renamed, with JSON member names", desc)
	}
	if _, ok := doc.Defs["Error"]; ok {
		t.Errorf("the wire error is still defined as Error")
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
	var codes struct{ AnyOf []struct{ Enum []string } }
	if err := json.Unmarshal(doc.Defs["ErrorCode"], &codes); err != nil {
		t.Fatal(err)
	}
	if len(codes.AnyOf) != 2 {
		t.Fatalf("ErrorCode is not open (anyOf the codes and a string): %s", doc.Defs["ErrorCode"])
	}
	if diff := cmp.Diff(codes.AnyOf[0].Enum, protocol.ErrorCodes); diff != "" {
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
	// M and R are the envelopes' type parameters.
	builtin := []string{"string", "number", "boolean", "null", "unknown", "key", "params", "result", "keyof", "M", "R"}
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
		"  code: ErrorCode;\n", // required ref
		"  data?: unknown;\n",  // any
		"  id?: RequestId;\n",  // RequestID in ErrorParams, optional
		"export type RequestId = string | number;\n",
		"export interface RpcError {\n", // renamed wire error
		"export type PlatformOS = \"win32\" | \"darwin\" | \"linux\" | (string & {});\n", // open enum
		"export type ApprovalMode = \"ask\" | \"fullAccess\";\n",                         // closed enum
		"  approvalMode?: ApprovalMode;\n",                                               // enum member
		"  decisions: ApprovalDecision[];\n",                                             // list of an enum
		"  origins: { [key: string]: SettingsScope };\n",                                 // map to an enum
		"export type ThreadStatus = NotLoadedThreadStatus | IdleThreadStatus | ActiveThreadStatus | SystemErrorThreadStatus;\n",
		"export interface ActiveThreadStatus {\n  type: \"active\";\n  waitingOn: WaitingOn[];\n}\n", // a shape: its tag, its required member
		"export type ServerRequestMessage = {\n  [M in ServerRequestMethod]: { id: RequestId; method: M; params: ServerRequests[M][\"params\"] };\n}[ServerRequestMethod];\n",
		"export interface ResponseMessage<R = unknown> {\n",
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

// TestClientFacingText checks that the generated descriptions are written
// for a client developer in any language: no pointer to a document the
// client does not have ("spec: ...", issue numbers, design documents), no
// Go API (errors.Is, json.RawMessage, nil, Go's own words) and no Go
// identifier of the server or its Go client (constant, variable and
// function names, Go field names, Type.Field selectors). The declarations
// carry the same text as the schema, plus their own header.
func TestClientFacingText(t *testing.T) {
	t.Parallel()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	texts := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "description" {
					texts[s] = true
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path, x)
			}
		}
	}
	walk("", v)
	// The declarations' comments (their header and JSDoc).
	for _, m := range regexp.MustCompile(`(?s)/\*\*.*?\*/|(?m)^//.*$`).FindAllString(string(ts), -1) {
		texts[m] = true
	}
	doc, err := build(comments)
	if err != nil {
		t.Fatal(err)
	}
	ids := goIdentifiers(t, doc)
	for i, id := range ids {
		ids[i] = regexp.QuoteMeta(id)
	}
	checks := append(slices.Clone(forbidden), forbiddenText{regexp.MustCompile(`\b(` + strings.Join(ids, "|") + `)\b`), "a Go identifier"})
	for text := range texts {
		for _, f := range checks {
			if m := f.re.FindString(text); m != "" {
				t.Errorf("%s %q in generated text: %q", f.what, m, text)
			}
		}
	}
}

type forbiddenText struct {
	re   *regexp.Regexp
	what string
}

// forbidden are the texts no generated description may hold.
var forbidden = []forbiddenText{
	{regexp.MustCompile(`(?i)\bspec\b|\bspec's\b`), "a pointer to the spec"},
	{regexp.MustCompile(`(?i)\bissues?\s*#?\d+|#\d+\b`), "an issue number"},
	{regexp.MustCompile(`\b(ARCHITECTURE|STYLE|SHELL-PREFIX|app-server)\.md\b`), "a design document"},
	{regexp.MustCompile(`\berrors\.(Is|As|AsType)\b|\bjson\.[A-Z]\w*|\bRawMessage\b|\bruntime\.\w+|\btime\.Layout\b`), "Go API"},
	{regexp.MustCompile(`\bnil\b|\bomitempty\b|\bomitzero\b|\bstruct\b|\bgoroutines?\b|\bGo\b|\bGOOS\b|\bGOARCH\b|\bjsonrpc\.\w|(?i)\bpackage (protocol|client|rpc|jsonrpc|threads|agent)\b`), "Go's words"},
	{regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\.[A-Z][A-Za-z0-9]*\b`), "a Go selector"},
	{regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\*`), "a Go name pattern"},
}

// goIdentifiers returns the Go identifiers a description must not name:
// the exported constants, variables, functions and methods of package
// protocol, the Go client and the transport, and the Go names of the
// documented types' fields, each with at least two capitals and neither
// all capitals nor a $defs name (a type name is a declared type of the
// client too).
func goIdentifiers(t *testing.T, doc *document) []string {
	t.Helper()
	names := map[string]bool{}
	for _, dir := range []string{"rpc/protocol", "client", "rpc/jsonrpc"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, filepath.Join(root, filepath.FromSlash(dir)), func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						names[d.Name.Name] = true
					case *ast.GenDecl:
						for _, s := range d.Specs {
							switch s := s.(type) {
							case *ast.ValueSpec:
								for _, n := range s.Names {
									names[n.Name] = true
								}
							case *ast.TypeSpec:
								st, ok := s.Type.(*ast.StructType)
								if !ok {
									continue
								}
								for _, fl := range st.Fields.List {
									for _, n := range fl.Names {
										names[n.Name] = true
									}
								}
							}
						}
					}
				}
			}
		}
	}
	var out []string
	for n := range names {
		caps := 0
		for _, r := range n {
			if unicode.IsUpper(r) {
				caps++
			}
		}
		if !ast.IsExported(n) || caps < 2 || caps == len(n) || doc.Defs[n] != nil {
			continue
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
