package depcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/knightcode/knightcode"

// rule is where a package sits: its layer (imports point to higher numbers
// only), or one of the special kinds.
type rule struct {
	prefix string // module-relative path; the package or its subtree
	layer  int    // 0 = top
	kind   kind
}

type kind int

const (
	layered       kind = iota
	leaf               // imports only the standard library (and a third-party package restricted to it); every layer may import it
	testHelper         // only _test.go files may import it; may start git for fixtures
	testOnly           // a package of tests; nothing imports it
	clientProgram      // a program that drives the server as a client (the demo): may import client
	shared             // between layers: every import of it and every import it makes (besides leaves and internal/ helpers) is listed in edges
)

// rules is the dependency map; the longest matching prefix wins. A new
// package must be placed here.
var rules = []rule{
	{prefix: "cmd/knightcode", layer: 0},
	{prefix: "cmd/knightcode-demo", kind: clientProgram},
	{prefix: "client", kind: testHelper},
	{prefix: "rpc", layer: 1},
	{prefix: "rpc/protocol", kind: leaf},
	// The transport imports only rpc/protocol (its unit; rpc itself would be
	// a cycle), the standard library and jsontext (restrictedThirdParty):
	// it knows nothing of the layers.
	{prefix: "rpc/jsonrpc", kind: leaf},
	{prefix: "rpc/protocol/internal/genschema", layer: 0},
	{prefix: "rpc/protocol/schemagen", layer: 1},
	{prefix: "rpc/rpctest", kind: testHelper},
	{prefix: "threads", layer: 2},
	// The JavaScript extension runtime and the MCP client sit beside
	// threads: they implement the extension seam (threads/ext), and
	// neither imports the other or threads, nor threads them (cmd wires
	// them in).
	{prefix: "extensions", layer: 2},
	{prefix: "mcp", layer: 2},
	// Plugins and marketplaces: above config (which reads what an
	// installed plugin brings a thread) and internal/gitcli (fetches).
	{prefix: "plugins", layer: 2},
	{prefix: "mcp/mcpauth/authtest", kind: testHelper},
	// The extension seam: below threads (which dispatches it), above the
	// agent's data model; a unit of its own (ownUnits).
	{prefix: "threads/ext", layer: 3},
	{prefix: "agent", layer: 3},
	{prefix: "workspace", layer: 3},
	{prefix: "diffscope", layer: 3},
	{prefix: "handoff", layer: 3},
	{prefix: "config", layer: 3},
	{prefix: "filesearch", layer: 3},
	{prefix: "gitstate", layer: 4, kind: shared},
	{prefix: "internal/gitcli", layer: 4},
	{prefix: "internal/atomicfile", layer: 4},
	{prefix: "internal/coreerr", kind: leaf},
	// A leaf below internal/atomicfile, whose Update reads through it.
	{prefix: "internal/safefile", layer: 5},
	{prefix: "internal/procgroup", layer: 5},
	{prefix: "agent/provider/internal/providertest", kind: testHelper},
	{prefix: "internal/gittest", kind: testHelper},
	{prefix: "internal/proctest", kind: testHelper},
	{prefix: "internal/depcheck", kind: testOnly},
}

// edges are the imports allowed to and from a shared package (importer ->
// imported), and nothing else: the git-state pieces sit below workspace,
// diffscope and handoff and above internal/gitcli (ARCHITECTURE.md,
// issue 8's decisions).
var edges = map[string][]string{
	"workspace": {"gitstate"},
	"diffscope": {"gitstate"},
	"handoff":   {"gitstate"},
	"gitstate":  {"internal/gitcli"},
}

// allowedEdge reports whether edges lists rel -> irel.
func allowedEdge(rel, irel string) bool {
	return slices.Contains(edges[topUnit(rel)], topUnit(irel))
}

// sameLayer declares the imports allowed between units of one layer
// (importer -> imported, by top unit); any other import within a layer is a
// violation, so a new edge between peers is a decision written here.
var sameLayer = map[string][]string{
	"workspace":   {"diffscope"},
	"handoff":     {"workspace"},
	"threads/ext": {"agent"},
}

// ownUnits are packages inside another unit's tree that are units of
// their own: the rule of their unit does not let them import it.
var ownUnits = []string{"threads/ext"}

// forbidden lists, for a package (by prefix), the packages it must not
// import (by prefix) even where the layering would allow it: the
// extension seam speaks Go types of its own, never the wire's, so a
// JavaScript runtime or a Node host can sit behind it.
var forbidden = map[string][]string{
	"threads/ext": {"rpc"},
}

// forbiddenImport returns the forbidden prefix rel -> irel falls under,
// or "".
func forbiddenImport(rel, irel string) string {
	for prefix, banned := range forbidden {
		if rel != prefix && !strings.HasPrefix(rel, prefix+"/") {
			continue
		}
		for _, b := range banned {
			if irel == b || strings.HasPrefix(irel, b+"/") {
				return b
			}
		}
	}
	return ""
}

// restrictedImporters limits who may import a package of the module (by
// prefix): the transport belongs to rpc, the wiring and the Go client; the
// layers below rpc send notifications through protocol's descriptors and
// never see a connection.
var restrictedImporters = map[string][]string{
	"rpc/jsonrpc": {"rpc", "cmd/knightcode", "client"},
}

// mayImport reports whether rel may import the restricted package irel.
func mayImport(rel, irel string) bool {
	for prefix, importers := range restrictedImporters {
		if irel != prefix && !strings.HasPrefix(irel, prefix+"/") {
			continue
		}
		return slices.ContainsFunc(importers, func(p string) bool {
			return rel == p || strings.HasPrefix(rel, p+"/")
		})
	}
	return true
}

// restrictedThirdParty limits who may import a package outside the standard
// library and this module: jsonschema is for the schema generator only, and
// jsontext (the json/v2 engine) for the transport only, which reads each
// input line with it (issue 24). goja and esbuild are the JavaScript
// extension runtime's (package extensions; issue 25). A leaf may import a
// package restricted to it.
var restrictedThirdParty = map[string]string{
	"github.com/dop251/goja":                      "extensions",
	"github.com/evanw/esbuild/pkg/api":            "extensions",
	"github.com/invopop/jsonschema":               "rpc/protocol/schemagen",
	"github.com/go-json-experiment/json/jsontext": "rpc/jsonrpc",
}

// lookup returns the rule of a module-relative path and the prefix matched.
func lookup(rel string) (rule, bool) {
	best, ok := rule{}, false
	for _, r := range rules {
		if rel == r.prefix || strings.HasPrefix(rel, r.prefix+"/") {
			if !ok || len(r.prefix) > len(best.prefix) {
				best, ok = r, true
			}
		}
	}
	return best, ok
}

// topUnit is the first path element: imports inside one unit (threads and
// threads/session) are allowed whatever their layer.
func topUnit(rel string) string {
	for _, u := range ownUnits {
		if rel == u || strings.HasPrefix(rel, u+"/") {
			return u
		}
	}
	if strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "cmd/") {
		parts := strings.SplitN(rel, "/", 3)
		if len(parts) >= 2 {
			return parts[0] + "/" + parts[1]
		}
	}
	first, _, _ := strings.Cut(rel, "/")
	return first
}

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// pkg is what `go list -json` reports of a package, as far as the test
// needs.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// violations checks the non-test imports of pkgs against the rules.
func violations(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		r, ok := lookup(rel)
		if !ok {
			out = append(out, fmt.Sprintf("%s is not in the dependency map: add it to rules in internal/depcheck", rel))
			continue
		}
		for _, imp := range p.Imports {
			if isStd(imp) {
				continue
			}
			irel, inModule := strings.CutPrefix(imp, module+"/")
			if !inModule {
				if owner, restricted := restrictedThirdParty[imp]; restricted && rel != owner && !strings.HasPrefix(rel, owner+"/") {
					out = append(out, fmt.Sprintf("%s imports %s, which only %s may use", rel, imp, owner))
				} else if r.kind == leaf && !restricted {
					out = append(out, fmt.Sprintf("%s is a leaf of standard-library imports but imports %s", rel, imp))
				}
				continue
			}
			ir, ok := lookup(irel)
			switch {
			case !ok:
				continue // reported for the imported package itself
			case forbiddenImport(rel, irel) != "":
				out = append(out, fmt.Sprintf("%s imports %s: it must not import %s", rel, irel, forbiddenImport(rel, irel)))
			case r.kind == clientProgram && irel == "client":
			case !mayImport(rel, irel):
				out = append(out, fmt.Sprintf("%s imports %s, which only %s may import", rel, irel, strings.Join(restrictedImporters[restrictedPrefix(irel)], ", ")))
			case ir.kind == shared || r.kind == shared:
				if topUnit(irel) == topUnit(rel) || allowedEdge(rel, irel) || ir.kind == leaf ||
					(r.kind == shared && strings.HasPrefix(irel, "internal/") && ir.kind == layered && ir.layer >= r.layer) {
					continue
				}
				out = append(out, fmt.Sprintf("%s imports %s: not an edge listed in internal/depcheck's edges", rel, irel))
			case ir.kind == testHelper || ir.kind == testOnly:
				out = append(out, fmt.Sprintf("%s imports %s, which only tests may import", rel, irel))
			case r.kind == leaf && topUnit(irel) != topUnit(rel):
				out = append(out, fmt.Sprintf("%s is a leaf of standard-library imports but imports %s", rel, irel))
			case ir.kind == leaf, topUnit(irel) == topUnit(rel):
			case r.kind == testHelper:
			case r.layer > ir.layer:
				out = append(out, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports point down only", rel, r.layer, irel, ir.layer))
			case r.layer == ir.layer && !slices.Contains(sameLayer[topUnit(rel)], topUnit(irel)):
				out = append(out, fmt.Sprintf("%s imports %s of its own layer %d: declare the edge in sameLayer or move a package", rel, irel, r.layer))
			}
		}
	}
	slices.Sort(out)
	return out
}

// restrictedPrefix returns the key of restrictedImporters that irel falls
// under.
func restrictedPrefix(irel string) string {
	for prefix := range restrictedImporters {
		if irel == prefix || strings.HasPrefix(irel, prefix+"/") {
			return prefix
		}
	}
	return ""
}

// gitStarts returns the positions of calls in src that start git: a call of
// os/exec's Command, CommandContext or LookPath with the literal "git".
func gitStarts(filename string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	execName := ""
	for _, is := range f.Imports {
		if path, _ := strconv.Unquote(is.Path.Value); path == "os/exec" {
			execName = "exec"
			if is.Name != nil {
				execName = is.Name.Name
			}
		}
	}
	if execName == "" {
		return nil, nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != execName {
			return true
		}
		prog := 0 // index of the program argument
		switch sel.Sel.Name {
		case "Command", "LookPath":
		case "CommandContext":
			prog = 1
		default:
			return true
		}
		if len(call.Args) <= prog {
			return true
		}
		if lit, ok := call.Args[prog].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, _ := strconv.Unquote(lit.Value); s == "git" || strings.HasSuffix(s, "/git") {
				out = append(out, fset.Position(call.Pos()).String())
			}
		}
		return true
	})
	return out, nil
}

// listPackages runs go list on the whole module.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// TestDependencyDirection fails on an import against the layering.
func TestDependencyDirection(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestOnlyGitcliStartsGit fails when a package other than internal/gitcli
// (and the test helpers) starts git outside its tests.
func TestOnlyGitcliStartsGit(t *testing.T) {
	checkFiles(t, func(rel string) bool {
		r, _ := lookup(rel)
		return rel != "internal/gitcli" && r.kind != testHelper
	}, func(path string, src []byte) ([]string, error) {
		calls, err := gitStarts(path, src)
		for i, c := range calls {
			calls[i] = c + " starts git; only internal/gitcli may"
		}
		return calls, err
	})
}

// checkFiles runs check on each non-test Go file of the module's packages
// whose module-relative path pick accepts, and reports every violation it
// returns; it returns how many files it checked.
func checkFiles(t *testing.T, pick func(rel string) bool, check func(path string, src []byte) ([]string, error)) int {
	t.Helper()
	checked := 0
	for _, p := range listPackages(t) {
		if !pick(strings.TrimPrefix(p.ImportPath, module+"/")) {
			continue
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			found, err := check(path, src)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range found {
				t.Error(v)
			}
			checked++
		}
	}
	return checked
}

// TestViolationsDetected checks the checker on made-up packages.
func TestViolationsDetected(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	pkgs := []pkg{
		{ImportPath: m("cmd/knightcode"), Imports: []string{"fmt", m("rpc"), m("threads"), m("rpc/protocol")}},
		{ImportPath: m("rpc"), Imports: []string{m("rpc/protocol"), m("threads"), m("diffscope"), m("client")}},
		{ImportPath: m("rpc/protocol"), Imports: []string{"encoding/json", m("threads"), "github.com/google/uuid", "github.com/go-json-experiment/json/jsontext"}},
		{ImportPath: m("rpc/protocol/schemagen"), Imports: []string{m("rpc/protocol"), "github.com/invopop/jsonschema"}},
		{ImportPath: m("threads"), Imports: []string{m("threads/session"), m("agent"), m("rpc"), m("rpc/jsonrpc")}},
		{ImportPath: m("threads/session"), Imports: []string{m("internal/gitcli"), "github.com/invopop/jsonschema"}},
		{ImportPath: m("handoff"), Imports: []string{m("workspace"), m("diffscope"), m("internal/gitcli"), m("internal/gittest")}},
		{ImportPath: m("internal/gitcli"), Imports: []string{m("diffscope")}},
		{ImportPath: m("rpc/rpctest"), Imports: []string{"github.com/google/go-cmp/cmp"}},
		{ImportPath: m("client"), Imports: []string{m("rpc"), m("rpc/protocol")}},
		{ImportPath: m("cmd/knightcode-demo"), Imports: []string{m("client"), m("internal/gitcli"), m("rpc/protocol"), m("rpc/rpctest")}},
		{ImportPath: m("rpc/jsonrpc"), Imports: []string{m("rpc/protocol"), m("threads"), "github.com/go-json-experiment/json/jsontext"}},
		{ImportPath: m("workspace"), Imports: []string{m("diffscope"), m("config")}},
		{ImportPath: m("newpkg"), Imports: nil},
		{ImportPath: m("threads/ext"), Imports: []string{m("agent"), m("threads"), m("threads/session"), m("rpc/protocol")}},
		{ImportPath: m("threads/builtin"), Imports: []string{m("threads/ext"), m("threads/session"), m("agent/tools"), m("rpc/protocol")}},
		{ImportPath: m("extensions"), Imports: []string{m("threads/ext"), m("threads"), m("agent")}},
		{ImportPath: m("mcp"), Imports: []string{m("threads/ext"), m("extensions")}},
		{ImportPath: m("threads/x"), Imports: []string{m("mcp"), m("threads/ext")}},
		{ImportPath: "example.com/other", Imports: []string{m("rpc")}},
	}
	got := violations(pkgs)
	want := []string{
		"cmd/knightcode-demo imports rpc/rpctest, which only tests may import",
		"extensions imports threads of its own layer 2: declare the edge in sameLayer or move a package",
		"handoff imports diffscope of its own layer 3: declare the edge in sameLayer or move a package",
		"handoff imports internal/gittest, which only tests may import",
		"internal/gitcli (layer 4) imports diffscope (layer 3): imports point down only",
		"mcp imports extensions of its own layer 2: declare the edge in sameLayer or move a package",
		"newpkg is not in the dependency map: add it to rules in internal/depcheck",
		"rpc imports client, which only tests may import",
		"rpc/jsonrpc is a leaf of standard-library imports but imports threads",
		"rpc/protocol imports github.com/go-json-experiment/json/jsontext, which only rpc/jsonrpc may use",
		"rpc/protocol is a leaf of standard-library imports but imports github.com/google/uuid",
		"rpc/protocol is a leaf of standard-library imports but imports threads",
		"threads (layer 2) imports rpc (layer 1): imports point down only",
		"threads imports rpc/jsonrpc, which only rpc, cmd/knightcode, client may import",
		"threads/ext (layer 3) imports threads (layer 2): imports point down only",
		"threads/ext (layer 3) imports threads/session (layer 2): imports point down only",
		"threads/ext imports rpc/protocol: it must not import rpc",
		"threads/session imports github.com/invopop/jsonschema, which only rpc/protocol/schemagen may use",
		"threads/x imports mcp of its own layer 2: declare the edge in sameLayer or move a package",
		"workspace imports config of its own layer 3: declare the edge in sameLayer or move a package",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("violations (-got +want):\n%s", diff)
	}
}

// TestSharedEdges checks that a shared package is imported and imports
// only through the edges listed.
func TestSharedEdges(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	pkgs := []pkg{
		{ImportPath: m("workspace"), Imports: []string{m("gitstate"), m("internal/gitcli")}},
		{ImportPath: m("diffscope"), Imports: []string{m("gitstate")}},
		{ImportPath: m("gitstate"), Imports: []string{m("internal/gitcli"), m("internal/atomicfile"), m("rpc/protocol")}},
		{ImportPath: m("threads"), Imports: []string{m("gitstate")}},
		{ImportPath: m("config"), Imports: []string{m("gitstate")}},
		{ImportPath: m("gitstate/x"), Imports: []string{m("gitstate"), m("workspace")}},
	}
	got := violations(pkgs)
	want := []string{
		"config imports gitstate: not an edge listed in internal/depcheck's edges",
		"gitstate/x imports workspace: not an edge listed in internal/depcheck's edges",
		"threads imports gitstate: not an edge listed in internal/depcheck's edges",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("violations (-got +want):\n%s", diff)
	}
}

func TestGitStartsDetected(t *testing.T) {
	src := `package p
import (
	x "os/exec"
	"context"
)
func a(ctx context.Context) {
	x.Command("git", "status")
	x.CommandContext(ctx, "/usr/bin/git", "log")
	x.LookPath("git")
	x.Command("gh", "pr")
	x.Command("ls", "git")
}
`
	got, err := gitStarts("p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p.go:7:2", "p.go:8:2", "p.go:9:2"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}
