package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// packageEnv lays out a local package folder with two skills and an
// extension, an npm package on disk, and global settings naming them with
// a git package that is not installed.
func packageEnv(t *testing.T) (e *settingsEnv, dir string) {
	t.Helper()
	e = newSettingsEnv(t)
	dir = filepath.Join(tempDir(t), "pkg")
	writeFile(t, filepath.Join(dir, "skills/a/SKILL.md"), "---\nname: a\ndescription: Skill a\n---\nA\n")
	writeFile(t, filepath.Join(dir, "skills/b/SKILL.md"), "---\nname: b\ndescription: Skill b\n---\nB\n")
	writeFile(t, filepath.Join(dir, "extensions/hello.ts"), "")
	writeFile(t, filepath.Join(e.agent, "npm/node_modules/@scope/x/package.json"), `{"name":"@scope/x","pi":{"prompts":["./p"],"skills":[]}}`)
	writeFile(t, filepath.Join(e.agent, "npm/node_modules/@scope/x/p/go.md"), "Go\n")
	writeFile(t, filepath.Join(e.agent, "npm/node_modules/@scope/x/skills/s/SKILL.md"), "---\nname: s\ndescription: S\n---\n")
	writeFile(t, e.store.GlobalPath(), `{
  "packages": [
    "npm:@scope/x@1.2.3",
    {"source": "git:github.com/o/r@v1", "skills": ["-x"]},
    "`+dir+`"
  ]
}`)
	return e, dir
}

func TestPackageResources(t *testing.T) {
	t.Parallel()
	e, dir := packageEnv(t)
	set, err := e.store.Resources(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	npm := filepath.Join(e.agent, "npm/node_modules/@scope/x")
	want := []Resource{
		{Type: "extensions", Path: dir + "/extensions/hello.ts", Name: "hello", Enabled: true, Scope: "global", Origin: "package", Source: dir},
		{Type: "skills", Path: dir + "/skills/a/SKILL.md", Name: "a", Enabled: true, Scope: "global", Origin: "package", Source: dir},
		{Type: "skills", Path: dir + "/skills/b/SKILL.md", Name: "b", Enabled: true, Scope: "global", Origin: "package", Source: dir},
		{Type: "prompts", Path: npm + "/p/go.md", Name: "go", Enabled: true, Scope: "global", Origin: "package", Source: "npm:@scope/x@1.2.3"},
	}
	if d := cmp.Diff(want, set.Resources); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
	if len(set.Skills) != 2 || len(set.Prompts) != 1 {
		t.Errorf("loaded %d skills and %d prompts, want 2 and 1", len(set.Skills), len(set.Prompts))
	}
	missing := filepath.Join(e.agent, "packages/git/github.com/o/r")
	if len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0].Message, `package "git:github.com/o/r@v1" is not installed: `+missing) {
		t.Errorf("warnings = %+v, want one naming the missing git package", set.Warnings)
	}
}

// TestSetPackageResource: turning off one skill of a package given as a
// string makes the entry the object form with a "-<path>" filter; the
// other entries keep their bytes; turning it on again replaces the
// pattern.
func TestSetPackageResource(t *testing.T) {
	t.Parallel()
	e, dir := packageEnv(t)
	entries := func() []json.RawMessage {
		t.Helper()
		data, err := os.ReadFile(e.store.GlobalPath())
		if err != nil {
			t.Fatal(err)
		}
		var s struct{ Packages []json.RawMessage }
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		for i := range s.Packages {
			var b bytes.Buffer
			_ = json.Compact(&b, s.Packages[i])
			s.Packages[i] = b.Bytes()
		}
		return s.Packages
	}
	before := entries()
	if err := e.store.SetResource(ctx, "", "skills", filepath.Join(dir, "skills/a/SKILL.md"), false); err != nil {
		t.Fatal(err)
	}
	after := entries()
	wantEntry := `{"source":` + string(must(json.Marshal(dir))) + `,"skills":["-skills/a/SKILL.md"]}`
	if len(after) != 3 || string(after[2]) != wantEntry || string(after[0]) != string(before[0]) || string(after[1]) != string(before[1]) {
		t.Fatalf("packages = %s, want entries 0 and 1 unchanged and %s", after, wantEntry)
	}
	set, err := e.store.Resources(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Resources {
		if r.Type == "skills" && r.Enabled != (r.Name == "b") {
			t.Errorf("%s enabled = %v", r.Path, r.Enabled)
		}
	}
	if err := e.store.SetResource(ctx, "", "skills", filepath.Join(dir, "skills/a/SKILL.md"), true); err != nil {
		t.Fatal(err)
	}
	if got, want := string(entries()[2]), strings.Replace(wantEntry, "-skills", "+skills", 1); got != want {
		t.Errorf("after enabling, entry = %s, want %s", got, want)
	}
}

func TestPackageFilters(t *testing.T) {
	t.Parallel()
	root := filepath.Join(tempDir(t), "p")
	for _, f := range []string{"extensions/a.ts", "extensions/b.ts", "extensions/legacy.ts"} {
		writeFile(t, filepath.Join(root, f), "")
	}
	for _, tt := range []struct {
		filter []string
		want   string // enabled of a, b, legacy
	}{
		{nil, "111"},
		{[]string{}, "000"},
		{[]string{"extensions/*.ts", "!extensions/legacy.ts"}, "110"},
		{[]string{"extensions/a.ts"}, "100"},
		{[]string{"-extensions/b.ts"}, "101"},
		{[]string{"!extensions/*.ts", "+extensions/b.ts"}, "010"},
	} {
		p := pkg{root: root, filters: map[string][]string{}}
		if tt.filter != nil {
			p.filters["extensions"] = tt.filter
		}
		_, enabled := p.resources("extensions")
		got := ""
		for _, on := range enabled {
			got += map[bool]string{true: "1", false: "0"}[on]
		}
		if got != tt.want {
			t.Errorf("filter %q: enabled %s, want %s", tt.filter, got, tt.want)
		}
	}
}

func TestPackageLocation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ source, identity, root string }{
		{"npm:@scope/x@1.2.3", "npm:@scope/x", "/a/npm/node_modules/@scope/x"},
		{"npm:pkg", "npm:pkg", "/a/npm/node_modules/pkg"},
		{"git:github.com/o/r@v1", "git:github.com/o/r", "/a/packages/git/github.com/o/r"},
		{"git:git@github.com:o/r.git@v2", "git:github.com/o/r", "/a/packages/git/github.com/o/r"},
		{"https://github.com/o/r", "git:github.com/o/r", "/a/packages/git/github.com/o/r"},
		{"./local", "/a/local", "/a/local"},
	} {
		id, root, err := packageLocation("/a", tt.source)
		if err != nil || id != tt.identity || root != tt.root {
			t.Errorf("packageLocation(%q) = %q, %q, %v; want %q, %q", tt.source, id, root, err, tt.identity, tt.root)
		}
	}
	for _, bad := range []string{"npm:../x", "npm:a/b", "git:github.com/../x", "git:github.com"} {
		if _, _, err := packageLocation("/a", bad); err == nil {
			t.Errorf("packageLocation(%q) = nil error", bad)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestProjectPackageWins: a package named in both scopes is listed once,
// as the trusted project's entry; an untrusted project's packages are not
// looked at.
func TestProjectPackageWins(t *testing.T) {
	t.Parallel()
	e, dir := packageEnv(t)
	writeFile(t, ProjectPath(e.project), `{"packages": [`+string(must(json.Marshal(dir)))+`]}`)
	scopes := func() map[Scope]int {
		set, err := e.store.Resources(ctx, e.project)
		if err != nil {
			t.Fatal(err)
		}
		n := map[Scope]int{}
		for _, r := range set.Resources {
			if r.Origin == OriginPackage && r.Source == dir {
				n[r.Scope]++
			}
		}
		return n
	}
	if got := scopes(); got[ScopeGlobal] != 3 || got[ScopeProject] != 0 {
		t.Errorf("untrusted project: package resources by scope %v, want 3 global", got)
	}
	e.setTrust(t, true)
	if got := scopes(); got[ScopeGlobal] != 0 || got[ScopeProject] != 3 {
		t.Errorf("trusted project: package resources by scope %v, want 3 project", got)
	}
}

// TestSettingsExtensionFolder: a folder the settings' extensions name
// gives the entries its package.json lists, as a -e folder does.
func TestSettingsExtensionFolder(t *testing.T) {
	t.Parallel()
	e := newSettingsEnv(t)
	dir := filepath.Join(tempDir(t), "ext")
	writeFile(t, filepath.Join(dir, "package.json"), `{"pi": {"extensions": ["src/main.ts", "src/missing.ts"]}}`)
	writeFile(t, filepath.Join(dir, "src/main.ts"), "")
	writeFile(t, filepath.Join(dir, "index.ts"), "")
	writeFile(t, e.store.GlobalPath(), `{"extensions": [`+string(must(json.Marshal(dir)))+`]}`)
	set, err := e.store.Resources(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Resource{{Type: "extensions", Path: dir + "/src/main.ts", Name: "main", Enabled: true, Scope: "global", Origin: "top-level", Source: "local"}}
	if d := cmp.Diff(want, set.Resources); d != "" {
		t.Errorf("resources (-want +got):\n%s", d)
	}
}
