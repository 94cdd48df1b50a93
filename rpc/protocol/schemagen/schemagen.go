// Package schemagen derives app-server.schema.json (JSON Schema) and
// app-server.d.ts (TypeScript declarations) from the method table and the Go
// types of package protocol (STYLE.md items 3 and 4).
//
// Both are generated at run time from the compiled-in table, so `knightcode
// app-server generate-schema` and `generate-ts` print exactly what the binary
// serves. The types' doc comments cannot be read from source at run time:
// comments_gen.go holds them, extracted by Comments. `make schema` (go run
// ./rpc/protocol/internal/genschema) refreshes all three files, and
// TestGenerated fails when any of them is stale.
//
// What a client reads is written for a client developer in any language
// (TestClientFacingText holds it to that): the doc comments of package
// protocol's types and fields become descriptions with their Go field
// names written as JSON names, and a paragraph of a doc comment that
// starts with "Go:" is for Go readers only and left out (clientText).
// Beyond the types themselves, protocol.Enums become named string
// enumerations (string-literal unions; an open one also accepts any other
// string), protocol.Unions become one definition per shape with the
// struct's name their union, the wire error is named RpcError, and the
// message envelopes are declared (addEnvelopes; the declarations type them
// by the method maps).
//
// It is the only user of github.com/invopop/jsonschema; package protocol
// itself stays standard-library only.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	gopath "path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// RefreshCommand regenerates every generated file; run it from the module
// root.
const RefreshCommand = "go run ./rpc/protocol/internal/genschema"

// Output files, relative to the module root.
const (
	SchemaFile     = "app-server.schema.json"
	TypeScriptFile = "app-server.d.ts"
	CommentsFile   = "rpc/protocol/schemagen/comments_gen.go"
)

const (
	modulePath   = "github.com/knightcode/knightcode"
	protocolPath = modulePath + "/rpc/protocol"
)

// errorData lists the data type of each error code whose data has a fixed
// shape, in the order the schema's errorData and the TypeScript
// ErrorDataByCode list them. A code missing here has no data, or data
// described only in its message.
var errorData = []struct {
	code string
	typ  reflect.Type
}{
	{protocol.CodeInvalidParams, reflect.TypeFor[protocol.InvalidParamsData]()},
	{protocol.CodeTurnInProgress, reflect.TypeFor[protocol.TurnInProgressData]()},
	{protocol.CodeGitConflict, reflect.TypeFor[protocol.GitConflictData]()},
	{protocol.CodeConfigConflict, reflect.TypeFor[protocol.ConfigConflictData]()},
	{protocol.CodeArchiveConflict, reflect.TypeFor[protocol.ArchiveConflictData]()},
	{protocol.CodeExternalFailure, reflect.TypeFor[protocol.ExternalFailureData]()},
	{protocol.CodeMCPUnavailable, reflect.TypeFor[protocol.McpUnavailableData]()},
	{protocol.CodeApprovalRequired, reflect.TypeFor[protocol.ApprovalRequiredData]()},
}

// Schema returns the content of app-server.schema.json, generated from the
// compiled-in method table with the doc comments of comments_gen.go.
func Schema() ([]byte, error) {
	doc, err := build(comments)
	if err != nil {
		return nil, err
	}
	return doc.encode()
}

// TypeScript returns the content of app-server.d.ts, generated from the same
// schema document as Schema.
func TypeScript() ([]byte, error) {
	doc, err := build(comments)
	if err != nil {
		return nil, err
	}
	return typeScript(doc), nil
}

// Files returns every generated file by its path relative to the module
// root, with the doc comments read from the source in root/rpc/protocol
// (not the compiled-in ones, which may be stale).
func Files(root string) (map[string][]byte, error) {
	cm, err := Comments(root)
	if err != nil {
		return nil, err
	}
	doc, err := build(cm)
	if err != nil {
		return nil, err
	}
	schema, err := doc.encode()
	if err != nil {
		return nil, err
	}
	src, err := commentsSource(used(cm, doc))
	if err != nil {
		return nil, err
	}
	return map[string][]byte{SchemaFile: schema, TypeScriptFile: typeScript(doc), CommentsFile: src}, nil
}

// Comments reads the doc comments of package protocol's exported types and
// their fields from the source under root (the module root), keyed as
// jsonschema.Reflector.CommentMap wants: "<import path>.Type" and
// "<import path>.Type.Field". A type's comment is kept whole.
func Comments(root string) (map[string]string, error) {
	r := &jsonschema.Reflector{}
	dir := filepath.Join(root, "rpc", "protocol")
	if err := r.AddGoComments(modulePath, dir, jsonschema.WithFullComment()); err != nil {
		return nil, err
	}
	// AddGoComments keys by the module path joined with each file's
	// directory as walked; keep package protocol's own keys (not its
	// sub-packages') and key them by protocol's import path.
	prefix := gopath.Join(modulePath, filepath.ToSlash(dir)) + "."
	out := map[string]string{}
	for k, v := range r.CommentMap {
		if rest, ok := strings.CutPrefix(k, prefix); ok && v != "" {
			out[protocolPath+"."+rest] = v
		}
	}
	return out, nil
}

// used keeps the comments the document's generation looked up.
func used(cm map[string]string, doc *document) map[string]string {
	out := map[string]string{}
	for k, v := range cm {
		if doc.lookedUp[k] {
			out[k] = v
		}
	}
	return out
}

// commentsSource renders comments_gen.go.
func commentsSource(cm map[string]string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s. DO NOT EDIT.\n\npackage schemagen\n\n", RefreshCommand)
	b.WriteString("// comments are the doc comments of package protocol's types and fields,\n")
	b.WriteString("// keyed as jsonschema.Reflector.CommentMap wants (see Comments).\n")
	b.WriteString("var comments = map[string]string{\n")
	keys := make([]string, 0, len(cm))
	for k := range cm {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%s: %s,\n", strconv.Quote(k), strconv.Quote(cm[k]))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// document is the schema file's top level. methods is keyed by method name;
// $defs holds every params, result and nested type by Go type name;
// errorData maps an error code to the $defs entry of its data.
type document struct {
	Schema      string                        `json:"$schema"`
	Comment     string                        `json:"$comment"`
	Title       string                        `json:"title"`
	Description string                        `json:"description"`
	Methods     map[string]methodDoc          `json:"methods"`
	ErrorData   map[string]*jsonschema.Schema `json:"errorData"`
	Defs        map[string]*jsonschema.Schema `json:"$defs"`

	// lookedUp holds the comment keys the reflector asked for.
	lookedUp map[string]bool
}

// methodDoc is one row of the method table.
type methodDoc struct {
	Direction     string             `json:"direction"`
	Serialization string             `json:"serialization,omitempty"`
	Params        *jsonschema.Schema `json:"params"`
	Result        *jsonschema.Schema `json:"result,omitempty"`
}

// build reflects the method table into a schema document, describing types
// and fields with the doc comments cm (keyed as Comments keys them) made
// client-facing by clientText. Then every member with an Enum refers to its
// enumeration, every Union becomes its shapes, and the message envelopes
// are added.
func build(cm map[string]string) (*document, error) {
	lookedUp := map[string]bool{}
	r := &jsonschema.Reflector{
		Anonymous:                 true,
		AllowAdditionalProperties: false, // params with unknown members are refused (invalidParams naming them); the server sends none
		Namer:                     func(t reflect.Type) string { return wireNames[t] },
		// Records the keys asked for (as the reflector forms them from
		// the type's package path and name) and answers from cm.
		LookupComment: func(t reflect.Type, field string) string {
			k := t.PkgPath() + "." + t.Name()
			if field != "" {
				k += "." + field
			}
			lookedUp[k] = true
			return clientText(t, field, cm[k])
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			if t == reflect.TypeFor[protocol.RequestID]() {
				return &jsonschema.Schema{Ref: "#/$defs/" + requestIDDef}
			}
			return nil
		},
	}
	doc := &document{
		Schema:      "https://json-schema.org/draft/2020-12/schema",
		Comment:     "Code generated by " + RefreshCommand + ". DO NOT EDIT.",
		Title:       "knightcode app-server protocol",
		Description: overview,
		Methods:     map[string]methodDoc{},
		ErrorData:   map[string]*jsonschema.Schema{},
		Defs:        map[string]*jsonschema.Schema{},
		lookedUp:    lookedUp,
	}
	types := map[string]reflect.Type{}
	add := func(t reflect.Type) (*jsonschema.Schema, error) {
		s := r.ReflectFromType(t)
		for name, def := range s.Definitions {
			if old, ok := doc.Defs[name]; ok && !sameSchema(old, def) {
				return nil, fmt.Errorf("two types named %s", name)
			}
			doc.Defs[name] = def
		}
		collectTypes(t, types)
		return &jsonschema.Schema{Ref: s.Ref}, nil
	}
	for _, m := range protocol.Methods() {
		md := methodDoc{Direction: m.Direction.String()}
		if m.Serialization != 0 {
			md.Serialization = m.Serialization.String()
		}
		var err error
		if md.Params, err = add(m.Params); err != nil {
			return nil, err
		}
		if m.Result != nil {
			if md.Result, err = add(m.Result); err != nil {
				return nil, err
			}
		}
		doc.Methods[m.Name] = md
	}
	if _, err := add(reflect.TypeFor[protocol.Error]()); err != nil {
		return nil, err
	}
	for _, d := range errorData {
		ref, err := add(d.typ)
		if err != nil {
			return nil, err
		}
		doc.ErrorData[d.code] = ref
	}
	if err := applyEnums(doc, types); err != nil {
		return nil, err
	}
	if err := applyUnions(doc); err != nil {
		return nil, err
	}
	if err := addEnvelopes(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// encode writes the document as the schema file: indented JSON, keys of
// maps sorted, <, > and & as themselves.
func (doc *document) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sameSchema(a, b *jsonschema.Schema) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
