package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// resourceTree lays out global and project resources:
//
//	agent/skills/review/SKILL.md      (global, auto)
//	agent/skills/nodesc/SKILL.md      (no description: listed, not loaded)
//	agent/prompts/fix.md              (global template with front matter)
//	agent/prompts/plain.md            (no front matter: first line is the description)
//	agent/themes/dark.json
//	agent/extensions/hello.ts, agent/extensions/pkg/index.js
//	agent/extra/mine/SKILL.md         (named by the global settings "skills": ["extra"])
//	project/.knightcode/skills/review/SKILL.md (project skill of the same name: wins)
//	project/.agents/skills/lint/SKILL.md
//	project/.knightcode/prompts/fix.md (project template of the same name: wins)
func resourceTree(t *testing.T, e *settingsEnv) {
	t.Helper()
	files := map[string]string{
		filepath.Join(e.agent, "skills/review/SKILL.md"):               "---\nname: review\ndescription: Review code\n---\nGlobal review body.\n",
		filepath.Join(e.agent, "skills/nodesc/SKILL.md"):               "---\nname: nodesc\n---\nbody\n",
		filepath.Join(e.agent, "skills/.hidden/SKILL.md"):              "---\nname: hidden\ndescription: x\n---\n",
		filepath.Join(e.agent, "prompts/fix.md"):                       "---\ndescription: Fix an issue\n---\nFix issue $1 in $2; all: $@\n",
		filepath.Join(e.agent, "prompts/plain.md"):                     "\nSummarize the repository in a few words please, keep it very short\nmore\n",
		filepath.Join(e.agent, "prompts/notes.txt"):                    "not a template",
		filepath.Join(e.agent, "themes/dark.json"):                     "{}",
		filepath.Join(e.agent, "extensions/hello.ts"):                  "",
		filepath.Join(e.agent, "extensions/pkg/index.js"):              "",
		filepath.Join(e.agent, "extra/mine/SKILL.md"):                  "---\nname: mine\ndescription: Mine\n---\nmine body\n",
		filepath.Join(e.project, ".knightcode/skills/review/SKILL.md"): "---\nname: review\ndescription: Project review\n---\nProject review body.\n",
		filepath.Join(e.project, ".agents/skills/lint/SKILL.md"):       "---\nname: lint\ndescription: Lint it\n---\nlint body\n",
		filepath.Join(e.project, ".knightcode/prompts/fix.md"):         "Project fix $1\n",
	}
	for p, c := range files {
		writeFile(t, p, c)
	}
	writeFile(t, e.store.GlobalPath(), `{"skills": ["extra", "!nodesc"]}`)
}

func TestResourcesWithAndWithoutTrust(t *testing.T) {
	e := newSettingsEnv(t)
	resourceTree(t, e)
	a, p := e.agent, e.project
	globalResources := []Resource{
		{Type: "extensions", Path: a + "/extensions/hello.ts", Name: "hello", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "extensions", Path: a + "/extensions/pkg/index.js", Name: "pkg", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "skills", Path: a + "/extra/mine/SKILL.md", Name: "mine", Enabled: true, Scope: "global", Origin: "top-level", Source: "local"},
		{Type: "skills", Path: a + "/skills/nodesc/SKILL.md", Name: "nodesc", Enabled: false, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "skills", Path: a + "/skills/review/SKILL.md", Name: "review", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "prompts", Path: a + "/prompts/fix.md", Name: "fix", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "prompts", Path: a + "/prompts/plain.md", Name: "plain", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "themes", Path: a + "/themes/dark.json", Name: "dark", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
	}

	t.Run("untrusted project: global only", func(t *testing.T) {
		set, err := e.store.Resources(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(set.Resources, globalResources); diff != "" {
			t.Errorf("resources (-got +want):\n%s", diff)
		}
		want := []Command{
			{Name: "fix", Description: "Fix an issue"},
			{Name: "plain", Description: "Summarize the repository in a few words please, keep it very..."},
			{Name: "skill:mine", Description: "Mine"},
			{Name: "skill:review", Description: "Review code"},
		}
		if diff := cmp.Diff(set.Commands(), want); diff != "" {
			t.Errorf("commands (-got +want):\n%s", diff)
		}
	})

	t.Run("trusted project first", func(t *testing.T) {
		e.setTrust(t, true)
		set, err := e.store.Resources(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		want := []Resource{globalResources[0], globalResources[1],
			{Type: "skills", Path: p + "/.knightcode/skills/review/SKILL.md", Name: "review", Enabled: true, Scope: "project", Origin: "top-level", Source: "auto"},
			{Type: "skills", Path: p + "/.agents/skills/lint/SKILL.md", Name: "lint", Enabled: true, Scope: "project", Origin: "top-level", Source: "auto"},
			globalResources[2], globalResources[3], globalResources[4],
			{Type: "prompts", Path: p + "/.knightcode/prompts/fix.md", Name: "fix", Enabled: true, Scope: "project", Origin: "top-level", Source: "auto"},
			globalResources[5], globalResources[6], globalResources[7],
		}
		if diff := cmp.Diff(set.Resources, want); diff != "" {
			t.Errorf("resources (-got +want):\n%s", diff)
		}
		wantCmds := []Command{
			{Name: "fix", Description: "Project fix $1"},
			{Name: "plain", Description: "Summarize the repository in a few words please, keep it very..."},
			{Name: "skill:review", Description: "Project review"},
			{Name: "skill:lint", Description: "Lint it"},
			{Name: "skill:mine", Description: "Mine"},
		}
		if diff := cmp.Diff(set.Commands(), wantCmds); diff != "" {
			t.Errorf("commands (-got +want):\n%s", diff)
		}
		var msgs []string
		for _, w := range set.Warnings {
			msgs = append(msgs, w.Message)
		}
		wantMsgs := []string{
			`skill "review" is also defined by ` + p + `/.knightcode/skills/review/SKILL.md, which is used`,
			`prompt template "fix" is also defined by ` + p + `/.knightcode/prompts/fix.md, which is used`,
		}
		if diff := cmp.Diff(msgs, wantMsgs); diff != "" {
			t.Errorf("warnings (-got +want):\n%s", diff)
		}

		// A prompt template and a skill expand; other text is left alone.
		expands := []struct{ in, want string }{
			{"/fix 12 'the parser'", "Project fix 12\n"},
			{"/plain", "\nSummarize the repository in a few words please, keep it very short\nmore\n"},
			{"/skill:lint please\nnow", "<skill name=\"lint\" location=\"" + p + "/.agents/skills/lint/SKILL.md\">\nReferences are relative to " + p + "/.agents/skills/lint.\n\nlint body\n</skill>\n\nplease\nnow"},
		}
		for _, x := range expands {
			got, ok := set.Expand(x.in)
			if !ok || got != x.want {
				t.Errorf("Expand(%q) = %q, %v; want %q", x.in, got, ok, x.want)
			}
		}
		for _, in := range []string{"/nope", "/skill:nodesc", "fix", "/skill:"} {
			if got, ok := set.Expand(in); ok || got != in {
				t.Errorf("Expand(%q) = %q, %v; want it unchanged", in, got, ok)
			}
		}
	})
}

func TestSetResource(t *testing.T) {
	e := newSettingsEnv(t)
	resourceTree(t, e)
	review := filepath.Join(e.agent, "skills/review/SKILL.md")
	projectReview := filepath.Join(e.project, ".knightcode/skills/review/SKILL.md")
	enabled := func(cwd, p string) bool {
		t.Helper()
		set, err := e.store.Resources(ctx, cwd)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range set.Resources {
			if r.Path == p {
				return r.Enabled
			}
		}
		t.Fatalf("%s not listed", p)
		return false
	}

	if err := e.store.SetResource(ctx, "", "skills", review, false); err != nil {
		t.Fatal(err)
	}
	if enabled("", review) {
		t.Errorf("review still enabled")
	}
	if err := e.store.SetResource(ctx, "", "skills", filepath.Join(e.agent, "skills/nodesc/SKILL.md"), true); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetResource(ctx, "", "skills", review, true); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(e.store.GlobalPath())
	if got, want := compactJSON(t, raw), `{"skills":["extra","!nodesc","+skills/nodesc/SKILL.md","+skills/review/SKILL.md"]}`; got != want {
		t.Errorf("settings = %s, want %s", got, want)
	}
	if !enabled("", review) || !enabled("", filepath.Join(e.agent, "skills/nodesc/SKILL.md")) {
		t.Errorf("+ patterns did not enable")
	}

	// Project resources need trust.
	err := e.store.SetResource(ctx, e.project, "skills", projectReview, false)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != "" || pe.Reason != ReasonUntrusted {
		t.Fatalf("untrusted: err = %v", err)
	}
	e.setTrust(t, true)
	if err := e.store.SetResource(ctx, e.project, "skills", projectReview, false); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(ProjectPath(e.project))
	if got, want := compactJSON(t, raw), `{"skills":["-skills/review/SKILL.md"]}`; got != want {
		t.Errorf("project settings = %s, want %s", got, want)
	}
	if enabled(e.project, projectReview) {
		t.Errorf("project review still enabled")
	}

	for _, tt := range []struct{ typ, path, field string }{
		{"widgets", review, "type"},
		{"skills", "", "path"},
		{"skills", filepath.Join(e.agent, "skills/none/SKILL.md"), "path"},
		{"prompts", review, "path"},
	} {
		err := e.store.SetResource(ctx, "", tt.typ, tt.path, true)
		if !errors.As(err, &pe) || pe.Field != tt.field {
			t.Errorf("SetResource(%s, %s) = %v, want ParamError %s", tt.typ, tt.path, err, tt.field)
		}
	}
}

func TestExpandTemplate(t *testing.T) {
	tests := []struct {
		body string
		args []string
		want string
	}{
		{"a $1 b $2 c $3", []string{"x", "y"}, "a x b y c "},
		{"all: $@ / $ARGUMENTS", []string{"x", "y z"}, "all: x y z / x y z"},
		{"from 2: ${@:2}; two from 1: ${@:1:2}", []string{"a", "b", "c"}, "from 2: b c; two from 1: a b"},
		{"no re-expansion: $1", []string{"$2", "boom"}, "no re-expansion: $2"},
		{"$10", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}, "ten"},
	}
	for _, tt := range tests {
		if got := ExpandTemplate(tt.body, tt.args); got != tt.want {
			t.Errorf("ExpandTemplate(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
	if diff := cmp.Diff(SplitArgs(` a "b c"  'd e'f `), []string{"a", "b c", "d ef"}); diff != "" {
		t.Errorf("SplitArgs: %s", diff)
	}
}

func TestFrontMatter(t *testing.T) {
	tests := []struct {
		in       string
		want     frontMatterFields
		wantBody string
		wantErr  bool
	}{
		{"---\nname: a\ndescription: \"b: c\"\n---\n\nbody\n", frontMatterFields{Name: "a", Description: "b: c"}, "body\n", false},
		{"---\r\nname: a\r\n---\r\nbody\r\n", frontMatterFields{Name: "a"}, "body\n", false},
		{"no front matter\n", frontMatterFields{}, "no front matter\n", false},
		{"---\nname: a\n", frontMatterFields{}, "", true},
		{"---\nname: [\n---\n", frontMatterFields{}, "", true},
	}
	for _, tt := range tests {
		fm, body, err := frontMatter([]byte(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err = %v", tt.in, err)
			continue
		}
		if !tt.wantErr && (fm != tt.want || body != tt.wantBody) {
			t.Errorf("%q: %+v %q, want %+v %q", tt.in, fm, body, tt.want, tt.wantBody)
		}
	}
}
