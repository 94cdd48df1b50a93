package threads

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// recordingProvider is a scripted provider that keeps every request it
// streams: what the model received.
type recordingProvider struct {
	*scripted.Provider
	mu   sync.Mutex
	reqs []agent.Request
}

func (p *recordingProvider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	return p.Provider.Stream(ctx, req)
}

func (p *recordingProvider) requests() []agent.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.Request(nil), p.reqs...)
}

// promptEnv is a Manager with a trust store and a recording scripted model
// "echo" answering "ok" to every request.
type promptEnv struct {
	m        *Manager
	prov     *recordingProvider
	agentDir string
	trust    *config.TrustStore
}

func newPromptEnv(t *testing.T, replies int) *promptEnv {
	t.Helper()
	var sc scripted.Script
	for range replies {
		sc.Responses = append(sc.Responses, scripted.Response{Text: "ok"})
	}
	return newRecordingEnv(t, scripted.Model{ID: "echo", Script: sc}, "")
}

// newRecordingEnv is a Manager with a trust store and the recording
// scripted model mdl (its id must be "echo"); settings, when not empty, is
// written to the agent directory's settings.json.
func newRecordingEnv(t *testing.T, mdl scripted.Model, settings string) *promptEnv {
	t.Helper()
	home := t.TempDir()
	agentDir := filepath.Join(home, "agent")
	if err := os.MkdirAll(agentDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if settings != "" {
		mkfile(t, filepath.Join(agentDir, config.SettingsFile), settings)
	}
	prov := &recordingProvider{Provider: scripted.New(mdl)}
	git, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	trust := config.NewTrustStore(agentDir, nil)
	dirs := session.Dirs{AgentDir: agentDir, Override: filepath.Join(home, "sessions"), Source: session.SourceFlag}
	m := New(Config{Git: git, Differ: diffscope.New(git), Models: provider.NewRegistry(prov), Dirs: dirs, Trust: trust})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return &promptEnv{m: m, prov: prov, agentDir: agentDir, trust: trust}
}

// turn runs one turn of text in a new or given thread and returns the
// thread id and the userMessage item of its turn/completed... as thread/read
// shows it, plus the live item/completed userMessage.
func (e *promptEnv) turn(t *testing.T, sub *recorder, threadID, cwd, text string) (string, protocol.Item) {
	t.Helper()
	ctx := context.Background()
	if threadID == "" {
		res, err := e.m.Start(ctx, sub, StartOptions{Cwd: cwd, ApprovalMode: protocol.ApprovalFullAccess, Model: &ModelRef{Provider: scripted.Name, ID: "echo"}})
		if err != nil {
			t.Fatal(err)
		}
		threadID = res.Thread.ID
	}
	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, threadID, Input{Text: text}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := sub.wait(t, &from, protocol.ItemCompleted.Name, func(raw json.RawMessage) bool {
		var p protocol.ItemCompletedParams
		_ = json.Unmarshal(raw, &p)
		return p.ThreadID == threadID && p.Item.Type == protocol.ItemUserMessage
	})
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(threadID))
	var p protocol.ItemCompletedParams
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return threadID, p.Item
}

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// userTexts returns the text of each user message of req.
func userTexts(req agent.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == agent.RoleUser {
			out = append(out, m.Text())
		}
	}
	return out
}

// TestTurnExpandsTemplatesAndSkills checks issue 13's input expansion: a
// turn whose text starts with /name of a prompt template or /skill:name of
// a skill sends the model the expansion, while the userMessage item (live
// and read back) shows what the user typed; the next turn's history holds
// the expansion too. Text naming no template goes as it is.
func TestTurnExpandsTemplatesAndSkills(t *testing.T) {
	e := newPromptEnv(t, 4)
	mkfile(t, filepath.Join(e.agentDir, "prompts", "review.md"), "---\ndescription: Review a file\n---\nReview $1 for bugs.\nFocus: ${@:2}\n")
	skillPath := filepath.Join(e.agentDir, "skills", "lint", "SKILL.md")
	mkfile(t, skillPath, "---\nname: lint\ndescription: Lint Go code with go vet.\n---\nRun go vet ./... and fix what it reports.\n")
	cwd := t.TempDir()
	sub := newRecorder()

	steps := []struct {
		typed, model string
	}{
		{`/review main.go "error paths" locking`, "Review main.go for bugs.\nFocus: error paths locking\n"},
		{"/skill:lint only the agent package", "<skill name=\"lint\" location=\"" + skillPath + "\">\nReferences are relative to " + filepath.Dir(skillPath) + ".\n\nRun go vet ./... and fix what it reports.\n</skill>\n\nonly the agent package"},
		{"/nosuch stays as typed", "/nosuch stays as typed"},
		{"/skill:nosuch stays too", "/skill:nosuch stays too"},
	}
	var thread string
	var wantUsers []string
	for i, st := range steps {
		var item protocol.Item
		thread, item = e.turn(t, sub, thread, cwd, st.typed)
		if item.Text != st.typed {
			t.Errorf("step %d: live userMessage text = %q, want what was typed %q", i, item.Text, st.typed)
		}
		reqs := e.prov.requests()
		if len(reqs) != i+1 {
			t.Fatalf("step %d: %d model requests, want %d", i, len(reqs), i+1)
		}
		wantUsers = append(wantUsers, st.model)
		if diff := cmp.Diff(userTexts(reqs[i]), wantUsers); diff != "" {
			t.Errorf("step %d: user messages the model received (-got +want):\n%s", i, diff)
		}
	}
	read, err := e.m.Read(context.Background(), thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, turn := range read.Turns {
		for _, it := range turn.Items {
			if it.Type == protocol.ItemUserMessage {
				got = append(got, it.Text)
			}
		}
	}
	want := []string{steps[0].typed, steps[1].typed, steps[2].typed, steps[3].typed}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("thread/read userMessage texts (-got +want):\n%s", diff)
	}
}

// TestSystemPromptSkillsAndContextFiles checks what the system prompt of a
// turn holds (issue 13): the skills listed, and AGENTS.md / CLAUDE.md of
// the project root and its ancestors only in a trusted project's threads;
// the agent directory's own AGENTS.md in every thread. A project skill
// loads only when trusted.
func TestSystemPromptSkillsAndContextFiles(t *testing.T) {
	repo := gittest.Init(t)
	parent := filepath.Dir(repo)
	for d := filepath.Dir(parent); ; d = filepath.Dir(d) {
		for _, name := range config.ContextFileNames {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				t.Skipf("%s exists above the test directories", filepath.Join(d, name))
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	mkfile(t, filepath.Join(repo, "AGENTS.md"), "Use tabs.\n")
	mkfile(t, filepath.Join(repo, "CLAUDE.md"), "Not read: AGENTS.md wins in its folder.\n")
	mkfile(t, filepath.Join(parent, "CLAUDE.md"), "Parent rules.\n")
	mkfile(t, filepath.Join(repo, ".knightcode", "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy <the> app & check.\n---\nSteps.\n")

	e := newPromptEnv(t, 2)
	mkfile(t, filepath.Join(e.agentDir, "AGENTS.md"), "Global rules.\n")
	globalSkill := filepath.Join(e.agentDir, "skills", "lint", "SKILL.md")
	mkfile(t, globalSkill, "---\nname: lint\ndescription: Lint Go code.\n---\nRun go vet.\n")
	projectSkill := filepath.Join(repo, ".knightcode", "skills", "deploy", "SKILL.md")

	skill := func(name, desc, path string) string {
		return "  <skill>\n    <name>" + name + "</name>\n    <description>" + desc + "</description>\n    <location>" + path + "</location>\n  </skill>\n"
	}
	skillsSection := func(entries ...string) string {
		return skillsPreamble + "\n\n<available_skills>\n" + strings.Join(entries, "") + "</available_skills>"
	}
	untrusted := DefaultSystemPrompt + "\n\n" +
		skillsSection(skill("lint", "Lint Go code.", globalSkill)) + "\n\n" +
		contextPreamble + "\n\n## " + filepath.Join(e.agentDir, "AGENTS.md") + "\n\nGlobal rules."
	trusted := DefaultSystemPrompt + "\n\n" +
		skillsSection(skill("deploy", "Deploy &lt;the&gt; app &amp; check.", projectSkill), skill("lint", "Lint Go code.", globalSkill)) + "\n\n" +
		contextPreamble +
		"\n\n## " + filepath.Join(e.agentDir, "AGENTS.md") + "\n\nGlobal rules." +
		"\n\n## " + filepath.Join(parent, "CLAUDE.md") + "\n\nParent rules." +
		"\n\n## " + filepath.Join(repo, "AGENTS.md") + "\n\nUse tabs."

	sub := newRecorder()
	e.turn(t, sub, "", repo, "hello")
	if _, err := e.trust.Set(context.Background(), repo, true); err != nil {
		t.Fatal(err)
	}
	e.turn(t, sub, "", repo, "hello")
	reqs := e.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if diff := cmp.Diff(reqs[0].SystemPrompt, untrusted); diff != "" {
		t.Errorf("untrusted project's system prompt (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(reqs[1].SystemPrompt, trusted); diff != "" {
		t.Errorf("trusted project's system prompt (-got +want):\n%s", diff)
	}
}

// TestSystemPromptPlain checks that without skills or context files the
// system prompt is the configured one, unchanged.
func TestSystemPromptPlain(t *testing.T) {
	if got := systemPrompt("base\n", nil, nil); got != "base" {
		t.Errorf("systemPrompt = %q, want %q", got, "base")
	}
}
