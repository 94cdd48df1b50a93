package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestGenerated regenerates the schema in memory and compares it with the
// committed file.
func TestGenerated(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "..", ".."))
	got, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v\nrun from the module root: %s", err, refreshCommand)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale (-file +generated):\n%s\nrun from the module root: %s",
			schemaFile, cmp.Diff(string(want), string(got)), refreshCommand)
	}
}

// TestGenerateDeterministic generates twice and expects the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "..", ".."))
	a, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("two runs differ:\n%s", cmp.Diff(string(a), string(b)))
	}
}

// TestSchemaCoversTable checks that every method of the table has its params
// (and result) defined, and that $defs resolves every reference.
func TestSchemaCoversTable(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", "..", ".."))
	b, err := generate()
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
	for _, ref := range refs(b) {
		name := ref[len("#/$defs/"):]
		if _, ok := doc.Defs[name]; !ok {
			t.Errorf("dangling reference %s", ref)
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
