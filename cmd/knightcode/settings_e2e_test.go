package main

// End-to-end tests of the settings families over the built binary (spec:
// Method reference, config/read, config/write, tool/list,
// tool/settings/read and tool/settings/write, command/list, resource/list
// and resource/set, file/search). Each test runs its own server with a
// temporary home and agent directory.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// plainDir is an empty directory, symlinks resolved.
func plainDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// rawErr returns the raw data of an error response.
func rawErr(t *testing.T, err error) (code string, data json.RawMessage) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("not an error response: %v", err)
	}
	raw, _ := e.Data.(json.RawMessage)
	return e.Code, raw
}

// readConfig answers config/read into a fresh result.
func readConfig(t *testing.T, s *diffServer, p protocol.ConfigReadParams) protocol.ConfigReadResult {
	t.Helper()
	var rd protocol.ConfigReadResult
	s.must(t, protocol.ConfigRead.Name, p, &rd)
	return rd
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestE2EConfigReadWrite(t *testing.T) {
	s := startDiffServer(t, nil)
	agent := filepath.Join(s.home, "agent")
	global := filepath.Join(agent, "settings.json")

	rd := readConfig(t, s, protocol.ConfigReadParams{})
	if rd.Versions != (protocol.ConfigVersions{Global: "none"}) || rd.Paths != (protocol.ConfigPaths{Global: global}) || len(rd.Settings) != 0 || len(rd.Errors) != 0 {
		t.Errorf("config/read of nothing: %s", mustJSON(rd))
	}
	if _, ok := rd.Defaults["worktrees"].(map[string]any); !ok {
		t.Errorf("defaults lack worktrees: %s", mustJSON(rd.Defaults))
	}

	// A write with expectedVersion "none" creates the file; a second one
	// with the same stale version is refused naming the current version.
	none := "none"
	var wr protocol.ConfigWriteResult
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "retry.provider.maxRetries", Value: json.RawMessage(`5`), ExpectedVersion: &none}, &wr)
	rd = readConfig(t, s, protocol.ConfigReadParams{})
	if rd.Versions.Global != wr.Version || rd.Origins["retry.provider.maxRetries"] != "global" || mustJSON(rd.Settings) != `{"retry":{"provider":{"maxRetries":5}}}` {
		t.Errorf("config/read after the write (version %s): %s", wr.Version, mustJSON(rd))
	}
	err := s.call(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "theme", Value: json.RawMessage(`"dark"`), ExpectedVersion: &none}, nil)
	if code, data := rawErr(t, err); code != protocol.CodeConfigConflict || string(data) != `{"version":"`+wr.Version+`"}` {
		t.Errorf("stale write: %s %s", code, data)
	}
	// null deletes the leaf and the objects it leaves empty.
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "retry.provider.maxRetries", Value: json.RawMessage(`null`), ExpectedVersion: &wr.Version}, &wr)
	rd = readConfig(t, s, protocol.ConfigReadParams{})
	if len(rd.Settings) != 0 || rd.Versions.Global != wr.Version {
		t.Errorf("config/read after the delete: %s", mustJSON(rd))
	}

	// Project settings: not read nor written until the project is trusted.
	proj := plainDir(t)
	writeFile(t, proj, ".knightcode/settings.json", `{"worktrees": {"keep": 3}}`)
	rd = readConfig(t, s, protocol.ConfigReadParams{Cwd: proj})
	if rd.Versions.Project != "none" || rd.Paths.Project != filepath.Join(proj, ".knightcode", "settings.json") || len(rd.Settings) != 0 {
		t.Errorf("config/read untrusted: %s", mustJSON(rd))
	}
	s.wantErr(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "project", Cwd: proj, Key: "worktrees.keep", Value: json.RawMessage(`4`)},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "untrusted"})
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: proj, Trusted: true}, nil)
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "worktrees.keep", Value: json.RawMessage(`9`)}, nil)
	rd = readConfig(t, s, protocol.ConfigReadParams{Cwd: proj})
	if rd.Origins["worktrees.keep"] != "project" || mustJSON(rd.Settings) != `{"worktrees":{"keep":3}}` || rd.Versions.Project == "none" {
		t.Errorf("config/read trusted: %s", mustJSON(rd))
	}
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "project", Cwd: proj, Key: "worktrees.branchPrefix", Value: json.RawMessage(`"me/"`), ExpectedVersion: &rd.Versions.Project}, &wr)
	if got := readText(t, filepath.Join(proj, ".knightcode", "settings.json")); got != "{\n  \"worktrees\": {\n    \"keep\": 3,\n    \"branchPrefix\": \"me/\"\n  }\n}\n" {
		t.Errorf("project file after the write:\n%s", got)
	}

	// Refusals.
	for _, tt := range []struct {
		params protocol.ConfigWriteParams
		want   wireErr
	}{
		{protocol.ConfigWriteParams{Scope: "user", Key: "a", Value: json.RawMessage(`1`)}, wireErr{Code: protocol.CodeInvalidParams, Field: "scope"}},
		{protocol.ConfigWriteParams{Scope: "project", Key: "a", Value: json.RawMessage(`1`)}, wireErr{Code: protocol.CodeInvalidParams, Field: "cwd"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "a"}, wireErr{Code: protocol.CodeInvalidParams, Field: "value"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "a.__proto__.b", Value: json.RawMessage(`1`)}, wireErr{Code: protocol.CodeInvalidParams, Field: "key"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "a..b", Value: json.RawMessage(`1`)}, wireErr{Code: protocol.CodeInvalidParams, Field: "key"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "a", Value: json.RawMessage(`1`), Cwd: "rel"}, wireErr{Code: protocol.CodeInvalidParams, Field: "cwd"}},
	} {
		s.wantErr(t, protocol.ConfigWrite.Name, tt.params, tt.want)
	}
	s.wantErr(t, protocol.ConfigRead.Name, protocol.ConfigReadParams{Cwd: filepath.Join(proj, "missing")}, wireErr{Code: protocol.CodeInvalidParams, Field: "cwd"})

	// A corrupt global file: read reports where, the project still reads, a
	// write is refused and leaves the file as it was.
	const corrupt = "{\n  \"theme\": \"dark\",\n  oops\n}\n"
	if err := os.WriteFile(global, []byte(corrupt), 0o644); err != nil {
		t.Fatal(err)
	}
	rd = readConfig(t, s, protocol.ConfigReadParams{Cwd: proj})
	if len(rd.Errors) != 1 || rd.Errors[0].Source != "settings" || rd.Errors[0].Path != global || rd.Errors[0].Line != 3 || rd.Errors[0].Column == 0 ||
		rd.Origins["worktrees.keep"] != "project" {
		t.Errorf("config/read with a corrupt global file: %s", mustJSON(rd))
	}
	s.wantErr(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "theme", Value: json.RawMessage(`"light"`)}, wireErr{Code: protocol.CodeInternal})
	if got := readText(t, global); got != corrupt {
		t.Errorf("corrupt file overwritten:\n%s", got)
	}
}

func toolNames(ts []protocol.ToolInfo) []string {
	names := []string{}
	for _, t := range ts {
		names = append(names, t.Name)
	}
	return names
}

func TestE2ETools(t *testing.T) {
	s := startDiffServer(t, nil)
	var tl protocol.ToolListResult
	s.must(t, protocol.ToolList.Name, protocol.ToolListParams{}, &tl)
	builtin := []string{"read", "bash", "edit", "write"}
	if diff := cmp.Diff(toolNames(tl.Tools), builtin); diff != "" || !cmp.Equal(tl.DefaultTools, builtin) {
		t.Errorf("tool/list default (-got +want):\n%s%s", diff, mustJSON(tl))
	}
	for _, tool := range tl.Tools {
		if tool.Description == "" || tool.Source != "builtin" {
			t.Errorf("tool %s: %s", tool.Name, mustJSON(tool))
		}
	}

	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "defaultTools", Value: json.RawMessage(`["-bash"]`)}, nil)
	s.must(t, protocol.ToolSettingsWrite.Name, protocol.ToolSettingsWriteParams{Name: "write", Key: "enabled", Value: json.RawMessage(`false`)}, nil)
	s.must(t, protocol.ToolSettingsWrite.Name, protocol.ToolSettingsWriteParams{Name: "read", Key: "braveApiKey", Value: json.RawMessage(`"sk-abcdef1234"`)}, nil)
	tl = protocol.ToolListResult{}
	s.must(t, protocol.ToolList.Name, protocol.ToolListParams{Cwd: plainDir(t)}, &tl)
	if diff := cmp.Diff(toolNames(tl.Tools), []string{"read", "edit"}); diff != "" || !cmp.Equal(tl.DefaultTools, []string{"read", "edit", "write"}) {
		t.Errorf("tool/list after -bash and write disabled (-got +want):\n%s%s", diff, mustJSON(tl))
	}

	var ts protocol.ToolSettingsReadResult
	s.must(t, protocol.ToolSettingsRead.Name, protocol.ToolSettingsReadParams{}, &ts)
	want := protocol.ToolSettingsReadResult{
		Tools: []protocol.ToolState{
			{Name: "read", Enabled: true, Settings: map[string]string{"braveApiKey": "****1234"}},
			{Name: "bash", Enabled: true, Settings: map[string]string{}},
			{Name: "edit", Enabled: true, Settings: map[string]string{}},
			{Name: "write", Enabled: false, Settings: map[string]string{}},
		},
		// The scripted provider needs no credentials.
		Classifiers: []protocol.ClassifierModel{{Provider: "scripted", ID: "demo", Name: "Scripted demo"}},
	}
	if diff := cmp.Diff(ts, want); diff != "" {
		t.Errorf("tool/settings/read (-got +want):\n%s", diff)
	}
	if got := readText(t, filepath.Join(s.home, "agent", "tools.json")); !json.Valid([]byte(got)) || !strings.Contains(got, "sk-abcdef1234") {
		t.Errorf("tools.json: %s", got)
	}

	for _, tt := range []struct {
		params protocol.ToolSettingsWriteParams
		field  string
	}{
		{protocol.ToolSettingsWriteParams{Name: "websearch", Key: "enabled", Value: json.RawMessage(`true`)}, "name"},
		{protocol.ToolSettingsWriteParams{Name: "read", Key: "1x", Value: json.RawMessage(`"a"`)}, "key"},
		{protocol.ToolSettingsWriteParams{Name: "read", Key: "__proto__", Value: json.RawMessage(`"a"`)}, "key"},
		{protocol.ToolSettingsWriteParams{Name: "read", Key: "enabled", Value: json.RawMessage(`"yes"`)}, "value"},
		{protocol.ToolSettingsWriteParams{Name: "read", Key: "enabled"}, "value"},
	} {
		s.wantErr(t, protocol.ToolSettingsWrite.Name, tt.params, wireErr{Code: protocol.CodeInvalidParams, Field: tt.field})
	}
}

func commandNames(t *testing.T, s *diffServer, p protocol.CommandListParams) []string {
	t.Helper()
	var res protocol.CommandListResult
	s.must(t, protocol.CommandList.Name, p, &res)
	names := []string{}
	for _, c := range res.Commands {
		names = append(names, c.Name)
	}
	return names
}

func listResources(t *testing.T, s *diffServer, cwd string) []protocol.ResourceInfo {
	t.Helper()
	var res protocol.ResourceListResult
	s.must(t, protocol.ResourceList.Name, protocol.ResourceListParams{Cwd: cwd}, &res)
	return res.Resources
}

func TestE2ECommandsAndResources(t *testing.T) {
	s := startDiffServer(t, nil)
	agent := filepath.Join(s.home, "agent")
	writeFile(t, agent, "skills/review/SKILL.md", "---\nname: review\ndescription: Review code\n---\nReview body.\n")
	writeFile(t, agent, "prompts/fix.md", "---\ndescription: Fix it\n---\nFix $1 now.\n")
	proj := plainDir(t)
	writeFile(t, proj, ".knightcode/prompts/ship.md", "Ship the change\n")
	skill := filepath.Join(agent, "skills", "review", "SKILL.md")
	fix := filepath.Join(agent, "prompts", "fix.md")
	ship := filepath.Join(proj, ".knightcode", "prompts", "ship.md")

	// Untrusted: the project's template is neither listed nor offered.
	if diff := cmp.Diff(commandNames(t, s, protocol.CommandListParams{Cwd: proj}), []string{"fix", "skill:review"}); diff != "" {
		t.Errorf("command/list untrusted (-got +want):\n%s", diff)
	}
	want := []protocol.ResourceInfo{
		{Type: "skills", Path: skill, Name: "review", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
		{Type: "prompts", Path: fix, Name: "fix", Enabled: true, Scope: "global", Origin: "top-level", Source: "auto"},
	}
	if diff := cmp.Diff(listResources(t, s, proj), want); diff != "" {
		t.Errorf("resource/list untrusted (-got +want):\n%s", diff)
	}
	s.wantErr(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Cwd: proj, Type: "prompts", Path: ship, Enabled: false},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "untrusted"})

	// Trusted: the project's template joins; turning the skill off removes
	// its command and is kept in the global settings.
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: proj, Trusted: true}, nil)
	s.must(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Type: "skills", Path: skill, Enabled: false}, nil)
	if diff := cmp.Diff(commandNames(t, s, protocol.CommandListParams{Cwd: proj}), []string{"ship", "fix"}); diff != "" {
		t.Errorf("command/list trusted, skill off (-got +want):\n%s", diff)
	}
	want[0].Enabled = false
	want = append([]protocol.ResourceInfo{{Type: "prompts", Path: ship, Name: "ship", Enabled: true, Scope: "project", Origin: "top-level", Source: "auto"}}, want...)
	got := listResources(t, s, proj)
	if diff := cmp.Diff(got, want, cmpSortResources); diff != "" {
		t.Errorf("resource/list trusted (-got +want):\n%s", diff)
	}
	if rd := readConfig(t, s, protocol.ConfigReadParams{}); mustJSON(rd.Settings["skills"]) != `["-skills/review/SKILL.md"]` {
		t.Errorf("global skills setting: %s", mustJSON(rd.Settings))
	}
	s.must(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Cwd: proj, Type: "prompts", Path: ship, Enabled: false}, nil)
	s.must(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Type: "skills", Path: skill, Enabled: true}, nil)
	if diff := cmp.Diff(commandNames(t, s, protocol.CommandListParams{Cwd: proj}), []string{"fix", "skill:review"}); diff != "" {
		t.Errorf("command/list, project template off (-got +want):\n%s", diff)
	}

	// A thread's commands are those of its cwd, then its extensions' (the
	// MCP runtime's /mcp).
	repo := diffRepo(t)
	id := s.startThread(t, repo, "")
	if diff := cmp.Diff(commandNames(t, s, protocol.CommandListParams{ThreadID: id}), []string{"fix", "skill:review", "mcp"}); diff != "" {
		t.Errorf("command/list of a thread (-got +want):\n%s", diff)
	}

	// Exactly one of threadId and cwd; the refusal names the field.
	s.wantErr(t, protocol.CommandList.Name, protocol.CommandListParams{}, wireErr{Code: protocol.CodeInvalidParams, Field: "cwd"})
	s.wantErr(t, protocol.CommandList.Name, protocol.CommandListParams{ThreadID: id, Cwd: proj}, wireErr{Code: protocol.CodeInvalidParams, Field: "threadId"})
	s.wantErr(t, protocol.CommandList.Name, protocol.CommandListParams{ThreadID: "nope"}, wireErr{Code: protocol.CodeThreadNotFound})
	s.wantErr(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Type: "skills", Path: filepath.Join(agent, "nope.md"), Enabled: true},
		wireErr{Code: protocol.CodeInvalidParams, Field: "path"})
	s.wantErr(t, protocol.ResourceSet.Name, protocol.ResourceSetParams{Type: "agents", Path: skill, Enabled: true},
		wireErr{Code: protocol.CodeInvalidParams, Field: "type"})
	s.wantErr(t, protocol.ResourceList.Name, protocol.ResourceListParams{Cwd: "relative"}, wireErr{Code: protocol.CodeInvalidParams, Field: "cwd"})
}

// cmpSortResources compares resource lists whatever their order.
var cmpSortResources = cmpopts.SortSlices(func(a, b protocol.ResourceInfo) bool { return a.Path < b.Path })

// haveFd skips the test when neither fd nor fdfind is installed (.ci/run
// installs it).
func haveFd(t *testing.T) {
	t.Helper()
	for _, name := range []string{"fd", "fdfind"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	t.Skip("fd is not installed")
}

func search(t *testing.T, s *diffServer, p protocol.FileSearchParams) protocol.FileSearchResult {
	t.Helper()
	var res protocol.FileSearchResult
	s.must(t, protocol.FileSearch.Name, p, &res)
	return res
}

func TestE2EFileSearch(t *testing.T) {
	haveFd(t)
	s := startDiffServer(t, nil)
	repo := diffRepo(t)
	for _, f := range []string{"src/config/settings.go", "src/main.go", "docs/configuration.md", "README.md", "build/settings_gen.go", ".github/workflows/ci.yml"} {
		writeFile(t, repo, f, "x\n")
	}
	writeFile(t, repo, ".gitignore", "build/\n")

	for _, tt := range []struct{ query, top string }{
		{"settings", "src/config/settings.go"},
		{"main", "src/main.go"},
		{"ci.yml", ".github/workflows/ci.yml"}, // hidden folders are searched
		{"docconf", "docs/configuration.md"},
	} {
		res := search(t, s, protocol.FileSearchParams{Cwd: repo, Query: tt.query})
		if len(res.Files) == 0 || res.Files[0].Path != tt.top || res.Truncated {
			t.Errorf("file/search %q: want %s first, got %s", tt.query, tt.top, mustJSON(res))
			continue
		}
		// The indices spell the query in the path.
		top := []rune(res.Files[0].Path)
		var spelled []rune
		for _, i := range res.Files[0].Indices {
			spelled = append(spelled, top[i])
		}
		if !strings.EqualFold(string(spelled), tt.query) {
			t.Errorf("file/search %q: indices %v spell %q in %s", tt.query, res.Files[0].Indices, string(spelled), string(top))
		}
		for _, f := range res.Files {
			if strings.HasPrefix(f.Path, "build/") || strings.HasPrefix(f.Path, ".git/") {
				t.Errorf("file/search %q lists ignored %s", tt.query, f.Path)
			}
		}
	}
	one := 1
	if res := search(t, s, protocol.FileSearchParams{Cwd: repo, Query: "s", Limit: &one}); len(res.Files) != 1 {
		t.Errorf("file/search limit 1: %s", mustJSON(res))
	}

	// Outside a repository the cwd's own .gitignore applies too.
	plain := plainDir(t)
	writeFile(t, plain, ".gitignore", "secret/\n")
	writeFile(t, plain, "secret/notes.txt", "x\n")
	writeFile(t, plain, "open/notes.txt", "x\n")
	res := search(t, s, protocol.FileSearchParams{Cwd: plain, Query: "notes"})
	if got := mustJSON(res); len(res.Files) != 1 || res.Files[0].Path != "open/notes.txt" {
		t.Errorf("file/search outside a repository: %s", got)
	}

	zero, many := 0, 201
	for _, tt := range []struct {
		params protocol.FileSearchParams
		field  string
	}{
		{protocol.FileSearchParams{Cwd: repo}, "query"},
		{protocol.FileSearchParams{Cwd: repo, Query: strings.Repeat("a", 257)}, "query"},
		{protocol.FileSearchParams{Cwd: repo, Query: "a", Limit: &zero}, "limit"},
		{protocol.FileSearchParams{Cwd: repo, Query: "a", Limit: &many}, "limit"},
		{protocol.FileSearchParams{Cwd: repo, Query: "a", SearchID: strings.Repeat("i", 129)}, "searchId"},
		{protocol.FileSearchParams{Cwd: "relative", Query: "a"}, "cwd"},
		{protocol.FileSearchParams{Cwd: filepath.Join(repo, "missing"), Query: "a"}, "cwd"},
	} {
		s.wantErr(t, protocol.FileSearch.Name, tt.params, wireErr{Code: protocol.CodeInvalidParams, Field: tt.field})
	}
}

// TestE2EFileSearchToolMissing runs the server with a PATH holding git but
// neither fd nor fdfind: file/search answers toolMissing.
func TestE2EFileSearchToolMissing(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(git, filepath.Join(bin, "git")); err != nil {
		t.Fatal(err)
	}
	s := startEnvServer(t, "PATH="+bin)
	s.wantErr(t, protocol.FileSearch.Name, protocol.FileSearchParams{Cwd: plainDir(t), Query: "a"}, wireErr{Code: protocol.CodeToolMissing})
}

// TestE2EConfigWriteTwoServers has two server processes sharing one agent
// directory write the global settings at once, each write carrying the
// version it read: every write either lands or answers configConflict (and
// is read and tried again), so no update is lost.
func TestE2EConfigWriteTwoServers(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "agent")
	servers := []*diffServer{
		startEnvServer(t, "KNIGHTCODE_CODING_AGENT_DIR="+shared),
		startEnvServer(t, "KNIGHTCODE_CODING_AGENT_DIR="+shared),
	}
	const writes = 10
	errs := make(chan error, len(servers))
	conflicts := make(chan int, len(servers))
	for si, s := range servers {
		go func() {
			n := 0
			for i := range writes {
				for {
					var rd protocol.ConfigReadResult
					ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
					err := s.c.Request(ctx, protocol.ConfigRead.Name, protocol.ConfigReadParams{}, &rd)
					if err == nil {
						key := "s" + string(rune('a'+si)) + ".k" + string(rune('a'+i))
						err = s.c.Request(ctx, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{
							Scope: "global", Key: key, Value: json.RawMessage(`true`), ExpectedVersion: &rd.Versions.Global}, nil)
					}
					cancel()
					if e, ok := errors.AsType[*client.Error](err); ok && e.Code == protocol.CodeConfigConflict {
						n++
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
			conflicts <- n
			errs <- nil
		}()
	}
	for range servers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rd := readConfig(t, servers[0], protocol.ConfigReadParams{})
	if len(rd.Origins) != 2*writes {
		t.Errorf("after %d writes from each server, %d keys: %s", writes, len(rd.Origins), mustJSON(rd.Settings))
	}
	t.Logf("conflicts answered: %d, %d", <-conflicts, <-conflicts)
}

// TestE2EConfigWriteValidated checks that config/write refuses a value the
// server would ignore (issue 22: worktrees.keep "abc", -1, 1e308,
// recovery.keep 0, a worktrees.root in the project file, which only the
// global file sets) as invalidParams naming the key and what it takes,
// writing nothing; and that a legacy key (retry.maxRetries) lands on its
// canonical key instead of being dropped beside it.
func TestE2EConfigWriteValidated(t *testing.T) {
	t.Parallel()
	s := startDiffServer(t, nil)
	global := filepath.Join(s.home, "agent", "settings.json")
	proj := plainDir(t)
	s.must(t, protocol.ProjectTrustSet.Name, protocol.ProjectTrustSetParams{Cwd: proj, Trusted: true}, nil)
	for _, tt := range []struct {
		params protocol.ConfigWriteParams
		field  string
		words  []string
	}{
		{protocol.ConfigWriteParams{Scope: "global", Key: "worktrees.keep", Value: json.RawMessage(`"abc"`)}, "value", []string{"worktrees.keep", "an integer from 0 to 1000"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "worktrees.keep", Value: json.RawMessage(`-1`)}, "value", []string{"worktrees.keep", "an integer from 0 to 1000"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "worktrees.keep", Value: json.RawMessage(`1e308`)}, "value", []string{"worktrees.keep", "an integer from 0 to 1000"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "recovery.keep", Value: json.RawMessage(`0`)}, "value", []string{"recovery.keep", "an integer from 1 to 100000"}},
		{protocol.ConfigWriteParams{Scope: "global", Key: "worktrees", Value: json.RawMessage(`{"keep": -1}`)}, "value", []string{"worktrees.keep"}},
		{protocol.ConfigWriteParams{Scope: "project", Cwd: proj, Key: "worktrees.root", Value: json.RawMessage(`"trees"`)}, "scope", []string{"worktrees.root", "global settings only"}},
	} {
		err := s.call(t, protocol.ConfigWrite.Name, tt.params, nil)
		got := toWireErr(t, err)
		if got.Code != protocol.CodeInvalidParams || got.Field != tt.field {
			t.Errorf("config/write %s: %+v, want invalidParams field %s", mustJSON(tt.params), got, tt.field)
			continue
		}
		var e *client.Error
		errors.As(err, &e)
		for _, w := range tt.words {
			if !strings.Contains(e.Message, w) {
				t.Errorf("config/write %s: message %q lacks %q", mustJSON(tt.params), e.Message, w)
			}
		}
	}
	for _, p := range []string{global, filepath.Join(proj, ".knightcode", "settings.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused write created %s", p)
		}
	}

	// A legacy key beside its canonical one is not lost.
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "retry.provider.maxRetries", Value: json.RawMessage(`1`)}, nil)
	s.must(t, protocol.ConfigWrite.Name, protocol.ConfigWriteParams{Scope: "global", Key: "retry.maxRetries", Value: json.RawMessage(`5`)}, nil)
	if rd := readConfig(t, s, protocol.ConfigReadParams{}); mustJSON(rd.Settings) != `{"retry":{"provider":{"maxRetries":5}}}` {
		t.Errorf("config/read after writing retry.maxRetries: %s", mustJSON(rd.Settings))
	}
}
