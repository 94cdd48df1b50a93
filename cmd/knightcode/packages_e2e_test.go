package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// packageFixture is the absolute path of the project's pi package
// fixture testdata/packages/demo: an extension registering /demo (and
// appending " P" to every input) and two skills, a and b.
func packageFixture(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "packages", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tagExtension is an extension appending " <tag>" to every input.
func tagExtension(tag string) string {
	return `export default function (pi: any) { pi.on("input", async (e: any) => ({ action: "transform", text: e.text + " ` + tag + `" })); }` + "\n"
}

// TestE2EExtensionOrderAndPackages (EXTENSIBILITY.md §7 "Order", §8): a
// global extension, one the settings' extensions name, a -e one and a
// package's transform the input in that order; the package's skills are
// listed with origin "package" and its command in command/list
// {threadId}; a package that is not on disk is a resource/list warning;
// resource/set on a package skill writes that package's filter.
func TestE2EExtensionOrderAndPackages(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	dir := t.TempDir()
	writeFile(t, dir, "cli.ts", tagExtension("E"))
	writeFile(t, dir, "set.ts", tagExtension("S"))
	writeFile(t, dir, "off.ts", tagExtension("X"))
	s := startDiffServer(t, map[string]string{"w": script(map[string]any{"text": "ok"})}, "-e", filepath.Join(dir, "cli.ts"))
	agent := filepath.Join(s.home, "agent")
	writeFile(t, agent, "extensions/g.ts", tagExtension("G"))
	writeFile(t, agent, "extensions/off.ts", tagExtension("Y"))
	pkg := packageFixture(t)
	settings := `{
  "extensions": [` + strings.Join([]string{quote(filepath.Join(dir, "set.ts")), quote(filepath.Join(dir, "off.ts")),
		quote("-" + filepath.Join(dir, "off.ts")), `"-extensions/off.ts"`}, ", ") + `],
  "packages": [
    "npm:@nowhere/missing@1.0.0",
    ` + quote(pkg) + `
  ]
}`
	writeFile(t, agent, "settings.json", settings)

	thread := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess,
		Model: &protocol.ModelRef{Provider: "scripted", ID: "w"}}).Thread.ID
	from := s.mark()
	if res := mustCall(t, s, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "x"}); res.Status != protocol.TurnStartStarted {
		t.Fatalf("turn/start %+v", res)
	}
	user, _ := turnItems(t, s.threadNotes(t, from, thread, protocol.TurnCompletedNotification.Name))
	if len(user) != 1 || user[0].Text != "x G S E P" {
		t.Errorf("userMessage items %+v, want the text \"x G S E P\" (global, settings, -e, package; the disabled ones not at all)", user)
	}
	cmds := mustCall(t, s, protocol.CommandList, protocol.CommandListParams{ThreadID: thread})
	if !slices.ContainsFunc(cmds.Commands, func(c protocol.CommandInfo) bool { return c.Name == "demo" }) {
		t.Errorf("command/list {threadId} lacks the package's /demo: %+v", cmds.Commands)
	}

	var res protocol.ResourceListResult
	s.must(t, protocol.ResourceList.Name, protocol.ResourceListParams{}, &res)
	var skills []string
	for _, r := range res.Resources {
		if r.Origin == "package" && r.Type == "skills" && r.Source == pkg && r.Scope == "global" && r.Enabled {
			skills = append(skills, r.Name)
		}
	}
	if !slices.Equal(skills, []string{"a", "b"}) {
		t.Errorf("package skills %v, want [a b]; resources %+v", skills, res.Resources)
	}
	if !slices.ContainsFunc(res.Warnings, func(w protocol.Warning) bool {
		return strings.Contains(w.Message, `package "npm:@nowhere/missing@1.0.0" is not installed`)
	}) {
		t.Errorf("resource/list warnings %+v, want the missing package's", res.Warnings)
	}
	if _, err := os.Stat(filepath.Join(agent, "npm")); err == nil {
		t.Error("resource/list installed something under npm/")
	}

	s.must(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Type: "skills", Path: filepath.Join(pkg, "skills", "a", "SKILL.md"), Enabled: false}, nil)
	var got struct{ Packages []json.RawMessage }
	if err := json.Unmarshal([]byte(readFile(t, agent, "settings.json")), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"source":` + quote(pkg) + `,"skills":["-skills/a/SKILL.md"]}`
	if len(got.Packages) != 2 || compact(got.Packages[0]) != `"npm:@nowhere/missing@1.0.0"` || compact(got.Packages[1]) != want {
		t.Errorf("packages after resource/set %s, want the first unchanged and %s", got.Packages, want)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	_ = json.Compact(&b, raw)
	return b.String()
}
