package depcheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The thread engine speaks Go (ARCHITECTURE.md, package threads; issue
// 23): its exported functions and methods take ids and option structs,
// never a method's wire params, and return Go values or the wire views
// (protocol.Thread, Turn, Item, Warning, notification payloads), never a
// method's wire result; it never builds a wire error (a refusal is a
// *coreerr.ParamError or an error of its own, mapped in rpc/errmap.go). rpc
// translates, once, between the two.

// engineUnit is the unit the rule holds for: the thread engine and the
// packages inside it (threads/session, threads/ext, ...).
const engineUnit = "threads"

// protocolPath is the import path of the wire types.
const protocolPath = module + "/rpc/protocol"

// engineAPIViolations returns the places in the Go file src where the
// engine takes a wire params type or returns a wire result type in an
// exported function or method (of an exported type), or builds a wire
// error: a call of protocol.InvalidParams or protocol.Errorf, a
// protocol.Error composite literal, new(protocol.Error). A params type is
// a type of rpc/protocol whose name ends in Params, a result type one
// whose name ends in Result, at any depth of the parameter's or result's
// type (pointer, slice, map, func). The file is read as syntax only (no
// type checking): the protocol package is found by its import path,
// whatever name it is imported under.
func engineAPIViolations(filename string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, is := range f.Imports {
		if path, _ := strconv.Unquote(is.Path.Value); path == protocolPath {
			name = "protocol"
			if is.Name != nil {
				name = is.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil, nil
	}
	// wire reports whether e is protocol.<Sel>; sel is Sel.
	wire := func(e ast.Expr) (sel string, ok bool) {
		se, isSel := e.(*ast.SelectorExpr)
		if !isSel {
			return "", false
		}
		if id, isID := se.X.(*ast.Ident); isID && id.Name == name {
			return se.Sel.Name, true
		}
		return "", false
	}
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	// typesIn reports the wire types named in a field list whose names end
	// in suffix.
	typesIn := func(fl *ast.FieldList, suffix string) []ast.Node {
		var found []ast.Node
		if fl == nil {
			return nil
		}
		for _, field := range fl.List {
			ast.Inspect(field.Type, func(n ast.Node) bool {
				if e, ok := n.(ast.Expr); ok {
					if sel, ok := wire(e); ok && strings.HasSuffix(sel, suffix) {
						found = append(found, n)
						return false
					}
				}
				return true
			})
		}
		return found
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !fd.Name.IsExported() || !exportedReceiver(fd) {
			continue
		}
		what := fd.Name.Name
		if fd.Recv != nil {
			what = receiverName(fd) + "." + what
		}
		for _, n := range typesIn(fd.Type.Params, "Params") {
			sel, _ := wire(n.(ast.Expr))
			report(n, "%s takes protocol.%s: the engine takes ids and option structs; rpc translates", what, sel)
		}
		for _, n := range typesIn(fd.Type.Results, "Result") {
			sel, _ := wire(n.(ast.Expr))
			report(n, "%s returns protocol.%s: the engine returns Go values or wire views; rpc builds the result", what, sel)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if sel, ok := wire(x.Fun); ok && (sel == "InvalidParams" || sel == "Errorf") {
				report(x, "calls protocol.%s: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go", sel)
			}
			if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "new" && len(x.Args) == 1 {
				if sel, ok := wire(x.Args[0]); ok && sel == "Error" {
					report(x, "builds a protocol.Error: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go")
				}
			}
		case *ast.CompositeLit:
			if sel, ok := wire(x.Type); ok && sel == "Error" {
				report(x, "builds a protocol.Error: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go")
			}
		}
		return true
	})
	return out, nil
}

// exportedReceiver reports whether fd is a function or a method of an
// exported type.
func exportedReceiver(fd *ast.FuncDecl) bool {
	return fd.Recv == nil || ast.IsExported(receiverName(fd))
}

// receiverName is the name of fd's receiver type (without * and type
// parameters).
func receiverName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return ""
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestEngineSpeaksGo fails when a package of the thread engine takes wire
// params or returns a wire result in its exported API, or builds a wire
// error, outside its tests.
func TestEngineSpeaksGo(t *testing.T) {
	pick := func(rel string) bool { return topUnit(rel) == engineUnit }
	if checkFiles(t, pick, engineAPIViolations) == 0 {
		t.Fatalf("no file of %s was checked", engineUnit)
	}
}

// TestEngineAPIViolationsDetected checks the rule on a planted file: wire
// params taken and wire results returned by exported functions and
// methods (through a pointer, a slice, an import alias), wire errors
// built; and what stays allowed: views and notification payloads
// returned, unexported helpers, methods of unexported types, and reading
// a client's *protocol.Error.
func TestEngineAPIViolationsDetected(t *testing.T) {
	src := `package threads

import (
	"context"
	"errors"

	wire "github.com/knightcode/knightcode/rpc/protocol"
)

type Manager struct{}

func (m *Manager) Start(ctx context.Context, p wire.ThreadStartParams) (wire.ThreadStartResult, error) {
	return wire.ThreadStartResult{}, nil
}

func (m *Manager) Many(ps []*wire.TurnStartParams) (*wire.ThreadReadResult, error) { return nil, nil }

func List(f func(wire.ThreadListParams)) map[string]wire.ThreadListResult { return nil }

func (m *Manager) Refuse() error {
	if true {
		return wire.InvalidParams("cwd", "must be absolute")
	}
	if false {
		return &wire.Error{Code: wire.CodeInvalidParams}
	}
	e := new(wire.Error)
	return errors.Join(e, wire.Errorf(wire.CodeInternal, "x"))
}

func (m *Manager) Read(ctx context.Context, id string) (wire.Thread, []wire.Turn, wire.ThreadStartedParams, error) {
	var pe *wire.Error
	_ = errors.As(nil, &pe)
	return wire.Thread{}, nil, wire.ThreadStartedParams{}, nil
}

func (m *Manager) start(p wire.ThreadStartParams) wire.ThreadStartResult { return wire.ThreadStartResult{} }

type gate struct{}

func (g *gate) Admit(p wire.TurnStartParams) wire.TurnStartResult { return wire.TurnStartResult{} }
`
	got, err := engineAPIViolations("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"p.go:12:48: Manager.Start takes protocol.ThreadStartParams: the engine takes ids and option structs; rpc translates",
		"p.go:12:73: Manager.Start returns protocol.ThreadStartResult: the engine returns Go values or wire views; rpc builds the result",
		"p.go:16:30: Manager.Many takes protocol.TurnStartParams: the engine takes ids and option structs; rpc translates",
		"p.go:16:54: Manager.Many returns protocol.ThreadReadResult: the engine returns Go values or wire views; rpc builds the result",
		"p.go:18:18: List takes protocol.ThreadListParams: the engine takes ids and option structs; rpc translates",
		"p.go:18:53: List returns protocol.ThreadListResult: the engine returns Go values or wire views; rpc builds the result",
		"p.go:22:10: calls protocol.InvalidParams: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go",
		"p.go:25:11: builds a protocol.Error: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go",
		"p.go:27:7: builds a protocol.Error: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go",
		"p.go:28:24: calls protocol.Errorf: the engine returns *coreerr.ParamError or its own errors, mapped in rpc/errmap.go",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("violations (-got +want):\n%s", diff)
	}
}
