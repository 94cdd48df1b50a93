package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/agent/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scriptProvider returns a scripted provider with one model "m" playing script.
func scriptProvider(t *testing.T, script string) *scripted.Provider {
	t.Helper()
	s, err := scripted.ParseScript([]byte(script))
	if err != nil {
		t.Fatalf("ParseScript: %v", err)
	}
	return scripted.New(scripted.Model{ID: "m", Script: s})
}

// workdir returns a temporary cwd holding a.txt.
func workdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// recorder records a run's events compactly: consecutive deltas of one kind
// collapse into one entry.
type recorder struct {
	events []string
	usage  []agent.Usage
}

func (r *recorder) onEvent(e agent.Event) {
	var s string
	switch e.Type {
	case agent.EventMessageStart, agent.EventMessageEnd:
		s = fmt.Sprintf("%s %s", e.Type, e.Message.Role)
		if e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant {
			s += "/" + string(e.Message.StopReason)
		}
	case agent.EventTextDelta, agent.EventThinkingDelta:
		s = fmt.Sprintf("%s@%d", e.Type, e.ContentIndex)
		if n := len(r.events); n > 0 && r.events[n-1] == s {
			return
		}
	case agent.EventToolStart:
		s = fmt.Sprintf("toolStart %s %s", e.ToolCall.ID, e.ToolCall.Name)
	case agent.EventToolEnd:
		s = fmt.Sprintf("toolEnd %s %s %s", e.ToolCall.ID, e.ToolCall.Name, e.ToolStatus)
		if e.Message.ToolCallID != e.ToolCall.ID || e.Message.ToolStatus() != e.ToolStatus {
			s += " (result message disagrees)"
		}
	}
	r.events = append(r.events, s)
}

func (r *recorder) options(p agent.Streamer, cwd string) agent.Options {
	return agent.Options{
		Provider: p, Model: "m", Tools: tools.All(cwd), OnEvent: r.onEvent,
		OnUsage: func(u agent.Usage) { r.usage = append(r.usage, u) },
	}
}

// mustRun is agent.Run, which must succeed.
func mustRun(t *testing.T, ctx context.Context, opts agent.Options, history, input []agent.Message) []agent.Message {
	t.Helper()
	got, err := agent.Run(ctx, opts, history, input)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return got
}

// wantMessages compares the summary of got with want.
func wantMessages(t *testing.T, got []agent.Message, want []string) {
	t.Helper()
	if diff := cmp.Diff(summary(got), want); diff != "" {
		t.Errorf("messages (-got +want):\n%s", diff)
	}
}

// summary renders messages as one line each: role, stop reason or tool status,
// and the text.
func summary(msgs []agent.Message) []string {
	var out []string
	for _, m := range msgs {
		var s string
		switch m.Role {
		case agent.RoleUser:
			s = "user: " + m.Text()
		case agent.RoleAssistant:
			s = fmt.Sprintf("assistant/%s: %s", m.StopReason, m.Text())
			for _, c := range m.ToolCalls() {
				s += fmt.Sprintf(" [%s %s]", c.ID, c.Name)
			}
			if m.ErrorMessage != "" {
				s += " error=" + m.ErrorMessage
			}
		case agent.RoleToolResult:
			s = fmt.Sprintf("toolResult %s %s %s: %s", m.ToolCallID, m.ToolName, m.ToolStatus(), m.Text())
		}
		out = append(out, s)
	}
	return out
}

func TestRunMultiStep(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [
		{"thinking": "Look first.", "text": "Reading the file.", "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}], "usage": {"input": 10, "output": 1}},
		{"toolCalls": [{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "beta\n", "newText": "BETA\n"}]}}], "usage": {"input": 20, "output": 2}},
		{"toolCalls": [{"name": "bash", "arguments": {"command": "cat a.txt; echo err >&2"}}], "usage": {"input": 30, "output": 3, "cacheRead": 7}},
		{"text": "All done.", "usage": {"input": 40, "output": 4}}
	]}`)
	var rec recorder
	history := []agent.Message{agent.UserText("earlier", 1), {Role: agent.RoleAssistant, Content: []agent.ContentBlock{agent.TextBlock("ok")}, StopReason: agent.StopReasonStop}}
	got := mustRun(t, context.Background(), rec.options(p, dir), history, []agent.Message{agent.UserText("Fix a.txt", 0)})
	want := []string{
		"user: Fix a.txt",
		"assistant/toolUse: Reading the file. [call_1 read]",
		"toolResult call_1 read completed: alpha\nbeta\ngamma\n",
		"assistant/toolUse:  [call_2 edit]",
		"toolResult call_2 edit completed: Applied 1 edit(s) to a.txt.",
		"assistant/toolUse:  [call_3 bash]",
		"toolResult call_3 bash completed: alpha\nBETA\ngamma\nerr\n",
		"assistant/stop: All done.",
	}
	wantMessages(t, got, want)
	wantEvents := []string{
		"messageStart user", "messageEnd user",
		"messageStart assistant", "thinkingDelta@0", "textDelta@1", "messageEnd assistant/toolUse",
		"toolStart call_1 read", "toolEnd call_1 read completed",
		"messageStart assistant", "messageEnd assistant/toolUse",
		"toolStart call_2 edit", "toolEnd call_2 edit completed",
		"messageStart assistant", "messageEnd assistant/toolUse",
		"toolStart call_3 bash", "toolEnd call_3 bash completed",
		"messageStart assistant", "textDelta@0", "messageEnd assistant/stop",
	}
	if diff := cmp.Diff(rec.events, wantEvents); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
	wantUsage := []agent.Usage{{Input: 10, Output: 1}, {Input: 20, Output: 2}, {Input: 30, Output: 3, CacheRead: 7}, {Input: 40, Output: 4}}
	if diff := cmp.Diff(rec.usage, wantUsage); diff != "" {
		t.Errorf("usage (-got +want):\n%s", diff)
	}
	wantChanges := []agent.FileChange{{Path: "a.txt", Kind: agent.FileModify, Diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"}}
	if diff := cmp.Diff(got[4].FileChanges(), wantChanges); diff != "" {
		t.Errorf("edit fileChanges (-got +want):\n%s", diff)
	}
	for i, m := range got {
		if m.Timestamp == 0 {
			t.Errorf("message %d has no timestamp", i)
		}
		if m.Role == agent.RoleAssistant && (m.Provider != "scripted" || m.Model != "m") {
			t.Errorf("reply %d is stamped %s/%s, want scripted/m", i, m.Provider, m.Model)
		}
	}
	if len(history) != 2 {
		t.Errorf("Run changed the caller's history")
	}
}

// TestRunSendsConversationAndTools checks what each model request holds: the
// history, the new messages and every tool result so far, and the tools.
func TestRunSendsConversationAndTools(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	spy := &spyProvider{Streamer: scriptProvider(t, `{"responses": [
		{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
		{"text": "done"}
	]}`)}
	opts := agent.Options{Provider: spy, Model: "m", SystemPrompt: "be brief", ThinkingLevel: agent.ThinkingLow, Tools: tools.All(dir)}
	if _, err := agent.Run(context.Background(), opts, []agent.Message{agent.UserText("old", 1)}, []agent.Message{agent.UserText("new", 2)}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, req := range spy.requests {
		var names []string
		for _, d := range req.Tools {
			names = append(names, d.Name)
		}
		got = append(got, fmt.Sprintf("%s %s %s %d messages, tools %v", req.Model, req.SystemPrompt, req.ThinkingLevel, len(req.Messages), names))
	}
	want := []string{
		"m be brief low 2 messages, tools [read bash edit write]",
		"m be brief low 4 messages, tools [read bash edit write]",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("requests (-got +want):\n%s", diff)
	}
}

type spyProvider struct {
	agent.Streamer
	requests []agent.Request
}

func (s *spyProvider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	s.requests = append(s.requests, req)
	return s.Streamer.Stream(ctx, req)
}

func TestRunApprovalDeclines(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [
		{"toolCalls": [
			{"name": "read", "arguments": {"path": "a.txt"}},
			{"name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]}},
			{"name": "bash", "arguments": {"command": "touch made-by-bash"}},
			{"name": "write", "arguments": {"path": "new.txt", "content": "x"}}
		]},
		{"text": "I could not change anything."}
	]}`)
	var rec recorder
	opts := rec.options(p, dir)
	var asked []string
	opts.Approve = func(ctx context.Context, call agent.ToolCall) agent.Decision {
		asked = append(asked, call.Name)
		switch call.Name {
		case "read":
			return agent.Decision{Allow: true}
		case "write":
			return agent.Decision{}
		}
		return agent.Decision{Reason: "approvalMode is ask: " + call.Name + " is not allowed without approval"}
	}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("change it", 0)})
	want := []string{
		"user: change it",
		"assistant/toolUse:  [call_1 read] [call_2 edit] [call_3 bash] [call_4 write]",
		"toolResult call_1 read completed: alpha\nbeta\ngamma\n",
		"toolResult call_2 edit declined: approvalMode is ask: edit is not allowed without approval",
		"toolResult call_3 bash declined: approvalMode is ask: bash is not allowed without approval",
		"toolResult call_4 write declined: The user declined this tool call.",
		"assistant/stop: I could not change anything.",
	}
	wantMessages(t, got, want)
	if diff := cmp.Diff(asked, []string{"read", "edit", "bash", "write"}); diff != "" {
		t.Errorf("approvals asked (-got +want):\n%s", diff)
	}
	for _, m := range got[3:6] {
		if !m.IsError || m.FileChanges() != nil {
			t.Errorf("declined %s: isError=%v fileChanges=%v, want an error without changes", m.ToolName, m.IsError, m.FileChanges())
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "alpha\nbeta\ngamma\n" {
		t.Errorf("a declined edit changed a.txt to %q", data)
	}
	for _, name := range []string{"made-by-bash", "new.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a declined call created %s (stat: %v)", name, err)
		}
	}
	if !strings.Contains(strings.Join(rec.events, "\n"), "toolEnd call_2 edit declined") {
		t.Errorf("events lack the declined status:\n%s", strings.Join(rec.events, "\n"))
	}
}

func TestRunSteering(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		steer  map[int]string // call number of Steer -> text it returns
		polls  int
		want   []string
	}{
		{
			name: "afterToolBatch",
			script: `{"responses": [
				{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
				{"text": "Noted, and here is the summary."}
			]}`,
			steer: map[int]string{2: "also mention gamma"},
			polls: 3, // before each request, after the last reply
			want: []string{
				"user: go",
				"assistant/toolUse:  [call_1 read]",
				"toolResult call_1 read completed: alpha\nbeta\ngamma\n",
				"user: also mention gamma",
				"assistant/stop: Noted, and here is the summary.",
			},
		},
		{
			name: "afterFinalReplyContinues",
			script: `{"responses": [
				{"text": "first answer"},
				{"text": "second answer"}
			]}`,
			steer: map[int]string{2: "one more thing"},
			polls: 4, // before and after each reply
			want: []string{
				"user: go",
				"assistant/stop: first answer",
				"user: one more thing",
				"assistant/stop: second answer",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := workdir(t)
			var rec recorder
			opts := rec.options(scriptProvider(t, tc.script), dir)
			calls := 0
			opts.Steer = func() []agent.Message {
				calls++
				if text, ok := tc.steer[calls]; ok {
					return []agent.Message{agent.UserText(text, 0)}
				}
				return nil
			}
			got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
			wantMessages(t, got, tc.want)
			if calls != tc.polls {
				t.Errorf("Steer was polled %d times, want %d", calls, tc.polls)
			}
		})
	}
}

// TestRunInterruptDuringReply cancels the run at the first text delta of a
// reply scripted to take an hour: Run must return at once with the partial
// reply marked aborted.
func TestRunInterruptDuringReply(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [{"text": "one two three four five six", "toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}], "delayMs": 3600000}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	opts := rec.options(p, dir)
	opts.OnEvent = func(e agent.Event) {
		rec.onEvent(e)
		if e.Type == agent.EventTextDelta {
			cancel()
		}
	}
	got, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("go", 0)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run error = %v, want ErrInterrupted", err)
	}
	want := []string{"user: go", "assistant/aborted: one "}
	wantMessages(t, got, want)
	wantEvents := []string{"messageStart user", "messageEnd user", "messageStart assistant", "textDelta@0", "messageEnd assistant/aborted"}
	if diff := cmp.Diff(rec.events, wantEvents); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}

// TestRunInterruptDuringBash interrupts while a long bash command runs: the
// command is killed, its result says so, the next call of the batch is not run,
// and no further model request is made.
func TestRunInterruptDuringBash(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [
		{"toolCalls": [
			{"name": "bash", "arguments": {"command": "touch started; sleep 100 & sleep 100"}},
			{"name": "write", "arguments": {"path": "after.txt", "content": "x"}}
		]},
		{"text": "never requested"}
	]}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	opts := rec.options(p, dir)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	opts.OnEvent = func(e agent.Event) {
		rec.onEvent(e)
		if e.Type == agent.EventToolStart && e.ToolCall.Name == "bash" {
			wg.Add(1)
			go func() { // ends when the command has started or Run is over
				defer wg.Done()
				for {
					if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
						cancel()
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
		}
	}
	got, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("go", 0)})
	close(stop)
	wg.Wait()
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run error = %v, want ErrInterrupted", err)
	}
	want := []string{
		"user: go",
		"assistant/toolUse:  [call_1 bash] [call_2 write]",
		"toolResult call_1 bash failed: Command aborted: the turn was interrupted.",
		"toolResult call_2 write failed: Tool call not run: the turn was interrupted.",
	}
	wantMessages(t, got, want)
	if _, err := os.Stat(filepath.Join(dir, "after.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call after the interrupt ran (stat after.txt: %v)", err)
	}
}

func TestRunProviderFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		wantKind string
		want     []string
	}{
		{
			name:     "scriptedError",
			script:   `{"responses": [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, {"text": "half", "error": "429 rate limit exceeded"}]}`,
			wantKind: agent.ErrorKindRateLimit,
			want: []string{
				"user: go",
				"assistant/toolUse:  [call_1 read]",
				"toolResult call_1 read completed: alpha\nbeta\ngamma\n",
				"assistant/error: half error=429 rate limit exceeded",
			},
		},
		{
			name:     "exhausted",
			script:   `{"responses": [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}]}`,
			wantKind: agent.ErrorKindProvider,
			want: []string{
				"user: go",
				"assistant/toolUse:  [call_1 read]",
				"toolResult call_1 read completed: alpha\nbeta\ngamma\n",
				`assistant/error:  error=scripted provider: the script of model "m" is exhausted: all 1 responses were used`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			got, err := agent.Run(context.Background(), rec.options(scriptProvider(t, tc.script), workdir(t)), nil, []agent.Message{agent.UserText("go", 0)})
			var perr *agent.ProviderError
			if !errors.As(err, &perr) {
				t.Fatalf("Run error = %v, want a *ProviderError", err)
			}
			if errors.Is(err, agent.ErrInterrupted) {
				t.Errorf("a provider failure reads as an interruption")
			}
			if got := perr.Kind(); got != tc.wantKind {
				t.Errorf("Kind = %q, want %q", got, tc.wantKind)
			}
			wantMessages(t, got, tc.want)
			if n := len(rec.events); n == 0 || rec.events[n-1] != "messageEnd assistant/error" {
				t.Errorf("events end with %v, want messageEnd assistant/error", rec.events[max(n-2, 0):])
			}
			if len(rec.usage) != 2 {
				t.Errorf("OnUsage called %d times, want 2 (every reply, failed ones too)", len(rec.usage))
			}
		})
	}
}

// fakeTool is a test tool whose Execute is the given function.
type fakeTool struct {
	name string
	run  func() agent.ToolResult
}

func (f fakeTool) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{Name: f.name, Description: "test tool", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeTool) Execute(context.Context, json.RawMessage) agent.ToolResult { return f.run() }

func TestRunToolFailuresGoBackToTheModel(t *testing.T) {
	t.Parallel()
	p := scriptProvider(t, `{"responses": [
		{"toolCalls": [{"name": "nosuch"}, {"name": "boom"}, {"name": "failing"}]},
		{"text": "recovered"}
	]}`)
	opts := agent.Options{Provider: p, Model: "m", Tools: []agent.Tool{
		fakeTool{"boom", func() agent.ToolResult { panic("kaboom") }},
		fakeTool{"failing", func() agent.ToolResult {
			r := agent.ErrorResult("it failed")
			r.Details.FileChanges = []agent.FileChange{{Path: "x", Kind: agent.FileAdd}}
			return r
		}},
	}}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
	want := []string{
		"user: go",
		"assistant/toolUse:  [call_1 nosuch] [call_2 boom] [call_3 failing]",
		`toolResult call_1 nosuch failed: Tool "nosuch" not found.`,
		"toolResult call_2 boom failed: Tool boom failed unexpectedly: kaboom",
		"toolResult call_3 failing failed: it failed",
		"assistant/stop: recovered",
	}
	wantMessages(t, got, want)
	if got[4].Details != nil {
		t.Errorf("a failed call kept details %s, want its fileChanges dropped", got[4].Details)
	}
}

func TestRunInterruptedBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	spy := &spyProvider{Streamer: scriptProvider(t, `{"responses": [{"text": "x"}]}`)}
	got, err := agent.Run(ctx, agent.Options{Provider: spy, Model: "m"}, nil, []agent.Message{agent.UserText("go", 0)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run error = %v, want ErrInterrupted", err)
	}
	wantMessages(t, got, []string{"user: go"})
	if len(spy.requests) != 0 {
		t.Errorf("an interrupted run made %d model requests", len(spy.requests))
	}
}

// TestRunDemo plays the built-in scripted/demo model in a git repository that
// holds this repository's testdata/demo/notes.md, as the README demo does.
func TestRunDemo(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("KNIGHTCODE_CODING_AGENT_DIR", filepath.Join(home, "agent"))

	notes, err := os.ReadFile(filepath.Join("..", "testdata", "demo", "notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "testdata", "demo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "testdata", "demo", "notes.md"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", ".")
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")

	var rec recorder
	opts := rec.options(scripted.New(scripted.Demo()), repo)
	opts.Model = scripted.DemoID
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("Tidy the demo notes", 0)})
	var shape []string
	for _, m := range got {
		s := string(m.Role)
		if m.Role == agent.RoleToolResult {
			s += " " + m.ToolName + " " + string(m.ToolStatus())
		}
		shape = append(shape, s)
	}
	want := []string{"user", "assistant", "toolResult read completed", "assistant", "toolResult edit completed", "assistant", "toolResult bash completed", "assistant"}
	if diff := cmp.Diff(shape, want); diff != "" {
		t.Fatalf("demo messages (-got +want):\n%s\n%s", diff, strings.Join(summary(got), "\n"))
	}
	if got[2].Text() != string(notes) {
		t.Errorf("read returned %q, want notes.md verbatim", got[2].Text())
	}
	changes := got[4].FileChanges()
	if len(changes) != 1 || changes[0].Path != "testdata/demo/notes.md" || changes[0].Kind != agent.FileModify {
		t.Fatalf("edit fileChanges = %+v, want one modify of testdata/demo/notes.md", changes)
	}
	if n := strings.Count(changes[0].Diff, "\n@@ "); n != 2 {
		t.Errorf("the demo edit made %d hunks, want 2:\n%s", n, changes[0].Diff)
	}
	out := got[6].Text()
	for _, s := range []string{"39 testdata/demo/notes.md", " M testdata/demo/notes.md"} {
		if !strings.Contains(out, s) {
			t.Errorf("bash output %q lacks %q", out, s)
		}
	}
	if got[7].StopReason != agent.StopReasonStop || got[7].Text() == "" {
		t.Errorf("the demo does not end with a text summary: %+v", got[7])
	}
}

// git runs git in dir to build a fixture.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestRunToolHooks: CheckTool runs before the approval with the model's
// arguments; its Arguments replace them for the approval and the run;
// a block keeps the call from being approved or run (failed, with the
// reason, or a default text); AfterTool replaces the result of a call
// that ran, never of a blocked or declined one; TurnEnd gets each reply
// with its results before Steer is polled, and a steer it queues goes
// into that poll.
func TestRunToolHooks(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [
		{"toolCalls": [
			{"id": "r1", "name": "read", "arguments": {"path": "missing.txt"}},
			{"id": "b1", "name": "bash", "arguments": {"command": "touch blocked"}},
			{"id": "b2", "name": "bash", "arguments": {"command": "touch blocked2"}},
			{"id": "w1", "name": "write", "arguments": {"path": "w.txt", "content": "x"}}
		]},
		{"text": "done"}
	]}`)
	var rec recorder
	opts := rec.options(p, dir)
	var log []string
	opts.CheckTool = func(ctx context.Context, call agent.ToolCall) agent.ToolCheck {
		log = append(log, "check "+call.ID+" "+string(call.Arguments))
		switch call.ID {
		case "r1":
			return agent.ToolCheck{Arguments: json.RawMessage(`{"path":"a.txt"}`)}
		case "b1":
			return agent.ToolCheck{Block: true, Reason: "no shell here"}
		case "b2":
			return agent.ToolCheck{Block: true}
		}
		return agent.ToolCheck{}
	}
	opts.Approve = func(ctx context.Context, call agent.ToolCall) agent.Decision {
		log = append(log, "approve "+call.ID+" "+string(call.Arguments))
		return agent.Decision{Allow: call.ID != "w1"}
	}
	opts.AfterTool = func(ctx context.Context, call agent.ToolCall, res agent.ToolResult) agent.ToolResult {
		log = append(log, "after "+call.ID+" "+string(call.Arguments))
		res.Content = append(res.Content, agent.TextBlock("(checked)"))
		return res
	}
	var queued []agent.Message
	opts.TurnEnd = func(ctx context.Context, reply agent.Message, results []agent.Message) {
		var ids []string
		for _, r := range results {
			ids = append(ids, r.ToolCallID)
		}
		log = append(log, fmt.Sprintf("turnEnd %s %v", reply.StopReason, ids))
		if reply.StopReason == agent.StopReasonToolUse {
			queued = append(queued, agent.UserText("steered", 0))
		}
	}
	polls := 0
	opts.Steer = func() []agent.Message {
		polls++
		log = append(log, fmt.Sprintf("steer %d", polls))
		msgs := queued
		queued = nil
		return msgs
	}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
	wantLog := []string{
		"steer 1",
		`check r1 {"path": "missing.txt"}`,
		`approve r1 {"path":"a.txt"}`,
		`after r1 {"path":"a.txt"}`,
		`check b1 {"command": "touch blocked"}`,
		`check b2 {"command": "touch blocked2"}`,
		`check w1 {"path": "w.txt", "content": "x"}`,
		`approve w1 {"path": "w.txt", "content": "x"}`,
		"turnEnd toolUse [r1 b1 b2 w1]",
		"steer 2",
		"turnEnd stop []",
		"steer 3",
	}
	if diff := cmp.Diff(log, wantLog); diff != "" {
		t.Errorf("hook calls (-got +want):\n%s", diff)
	}
	want := []string{
		"user: go",
		"assistant/toolUse:  [r1 read] [b1 bash] [b2 bash] [w1 write]",
		"toolResult r1 read completed: alpha\nbeta\ngamma\n(checked)",
		"toolResult b1 bash failed: no shell here",
		"toolResult b2 bash failed: The call was blocked before it ran.",
		"toolResult w1 write declined: The user declined this tool call.",
		"user: steered",
		"assistant/stop: done",
	}
	wantMessages(t, got, want)
	for _, name := range []string{"blocked", "blocked2", "w.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a blocked or declined call made %s (stat: %v)", name, err)
		}
	}
}

// TestRunCheckToolInterrupted: a CheckTool that sees the run interrupted
// keeps the call from running.
func TestRunCheckToolInterrupted(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	p := scriptProvider(t, `{"responses": [{"toolCalls": [{"id": "b", "name": "bash", "arguments": {"command": "touch ran"}}]}, {"text": "never"}]}`)
	var rec recorder
	opts := rec.options(p, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.CheckTool = func(ctx context.Context, call agent.ToolCall) agent.ToolCheck {
		cancel()
		return agent.ToolCheck{}
	}
	approved := false
	opts.Approve = func(context.Context, agent.ToolCall) agent.Decision {
		approved = true
		return agent.Decision{Allow: true}
	}
	got, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("go", 0)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run: %v, want interrupted", err)
	}
	if approved {
		t.Error("the call was approved after the interrupt")
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the call ran (stat: %v)", err)
	}
	if s := summary(got); len(s) != 3 || !strings.Contains(s[2], "interrupted") {
		t.Errorf("messages %q, want the call failed as interrupted", s)
	}
}

// TestRunLiveTools: Options.LiveTools is taken again before each model
// request (a tool added during the run reaches the next request and its
// call runs) and when a call runs: a call of a tool the request offered
// that was withdrawn since answers the model an error and does not run.
func TestRunLiveTools(t *testing.T) {
	t.Parallel()
	spy := &spyProvider{Streamer: scriptProvider(t, `{"responses": [
		{"toolCalls": [{"id": "c1", "name": "add"}]},
		{"toolCalls": [{"id": "c2", "name": "late"}, {"id": "c3", "name": "drop"}, {"id": "c4", "name": "late"}]},
		{"text": "done"}
	]}`)}
	var live []agent.Tool
	ran := 0
	late := fakeTool{"late", func() agent.ToolResult {
		ran++
		return agent.ToolResult{Content: []agent.ContentBlock{agent.TextBlock("late ran")}}
	}}
	live = []agent.Tool{
		fakeTool{"add", func() agent.ToolResult { live = append(live, late); return agent.ToolResult{} }},
		fakeTool{"drop", func() agent.ToolResult { live = live[:1]; return agent.ToolResult{} }},
	}
	opts := agent.Options{Provider: spy, Model: "m", Tools: []agent.Tool{fakeTool{"own", nil}},
		LiveTools: func() []agent.Tool { return live }}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
	var offered []string
	for _, req := range spy.requests {
		var names []string
		for _, d := range req.Tools {
			names = append(names, d.Name)
		}
		offered = append(offered, strings.Join(names, " "))
	}
	if diff := cmp.Diff(offered, []string{"own add drop", "own add drop late", "own add"}); diff != "" {
		t.Errorf("tools of each request (-got +want):\n%s", diff)
	}
	wantMessages(t, got, []string{
		"user: go",
		"assistant/toolUse:  [c1 add]",
		"toolResult c1 add completed: ",
		"assistant/toolUse:  [c2 late] [c3 drop] [c4 late]",
		"toolResult c2 late completed: late ran",
		"toolResult c3 drop completed: ",
		`toolResult c4 late failed: Tool "late" is no longer available: it was withdrawn after this request was made (its MCP server or extension removed it). Do not call it again.`,
		"assistant/stop: done",
	})
	if ran != 1 {
		t.Errorf("the withdrawn tool ran %d times, want once (before it was withdrawn)", ran)
	}
}

// TestRunToolWithdrawnDuringApproval: a tool withdrawn while its call
// waited for approval does not run; the model reads that it was
// withdrawn.
func TestRunToolWithdrawnDuringApproval(t *testing.T) {
	t.Parallel()
	p := scriptProvider(t, `{"responses": [
		{"toolCalls": [{"id": "c1", "name": "gone"}]},
		{"text": "ok"}
	]}`)
	ran := false
	live := []agent.Tool{fakeTool{"gone", func() agent.ToolResult { ran = true; return agent.ToolResult{} }}}
	opts := agent.Options{Provider: p, Model: "m", LiveTools: func() []agent.Tool { return live },
		Approve: func(context.Context, agent.ToolCall) agent.Decision { live = nil; return agent.Decision{Allow: true} }}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
	wantMessages(t, got, []string{
		"user: go",
		"assistant/toolUse:  [c1 gone]",
		`toolResult c1 gone failed: Tool "gone" is no longer available: it was withdrawn after this request was made (its MCP server or extension removed it). Do not call it again.`,
		"assistant/stop: ok",
	})
	if ran {
		t.Error("the withdrawn tool ran")
	}
}

// TestRunMessageHooks: TurnStart, MessageStart, MessageUpdate, MessageEnd
// and Context come in pi's order (turn_start before the turn's messages;
// the context before the reply's message_start; a toolResult's
// message_start and message_end after its call); MessageEnd's replacement
// is what the conversation, the output and the events hold, and a
// reply's calls are the replacement's; Context changes one request only.
func TestRunMessageHooks(t *testing.T) {
	t.Parallel()
	dir := workdir(t)
	spy := &spyProvider{Streamer: scriptProvider(t, `{"responses": [
		{"text": "reading", "toolCalls": [{"id": "r1", "name": "read", "arguments": {"path": "a.txt"}},
			{"id": "r2", "name": "read", "arguments": {"path": "missing.txt"}}]},
		{"text": "secret answer"},
		{"text": "after steering"}
	]}`)}
	var rec recorder
	opts := rec.options(spy, dir)
	var log []string
	opts.TurnStart = func(ctx context.Context) { log = append(log, "turnStart") }
	opts.MessageStart = func(ctx context.Context, m agent.Message) {
		log = append(log, fmt.Sprintf("start %s %q", m.Role, m.Text()))
	}
	opts.MessageUpdate = func(ctx context.Context, partial agent.Message, i int, ev agent.StreamEvent) {
		s := fmt.Sprintf("update %s@%d", ev.Type, i)
		if n := len(log); n > 0 && log[n-1] == s {
			return
		}
		log = append(log, s)
	}
	opts.MessageEnd = func(ctx context.Context, m agent.Message) agent.Message {
		log = append(log, fmt.Sprintf("end %s %q", m.Role, m.Text()))
		switch {
		case m.Role == agent.RoleAssistant && len(m.ToolCalls()) == 2:
			// Keep the first call only: the second never runs.
			m.Content = []agent.ContentBlock{agent.TextBlock("reading a.txt"), m.Content[1]}
		case m.Role == agent.RoleAssistant && m.Text() == "secret answer":
			m.Content = []agent.ContentBlock{agent.TextBlock("[redacted]")}
			m.Timestamp = 0
		case m.Role == agent.RoleToolResult:
			m.Content = []agent.ContentBlock{agent.TextBlock("three lines")}
		case m.Role == agent.RoleUser:
			return agent.Message{Role: agent.RoleAssistant} // another role: ignored
		}
		return m
	}
	opts.Context = func(ctx context.Context, msgs []agent.Message) []agent.Message {
		log = append(log, fmt.Sprintf("context %d", len(msgs)))
		msgs[0].Content[0].Text = "changed in place" // a copy: the conversation keeps "go"
		return msgs[1:]
	}
	opts.TurnEnd = func(ctx context.Context, reply agent.Message, results []agent.Message) {
		log = append(log, fmt.Sprintf("turnEnd %q %d", reply.Text(), len(results)))
	}
	steered := false
	opts.Steer = func() []agent.Message {
		if len(spy.requests) == 2 && !steered {
			steered = true
			return []agent.Message{agent.UserText("more", 0)}
		}
		return nil
	}
	got := mustRun(t, context.Background(), opts, nil, []agent.Message{agent.UserText("go", 0)})
	wantLog := []string{
		"turnStart",
		`start user "go"`, `end user "go"`,
		"context 1",
		`start assistant ""`, "update textDelta@0", "update toolCall@1", "update toolCall@2", `end assistant "reading"`,
		`start toolResult "alpha\nbeta\ngamma\n"`, `end toolResult "alpha\nbeta\ngamma\n"`,
		`turnEnd "reading a.txt" 1`,
		"turnStart",
		"context 3",
		`start assistant ""`, "update textDelta@0", `end assistant "secret answer"`,
		`turnEnd "[redacted]" 0`,
		"turnStart",
		`start user "more"`, `end user "more"`,
		"context 5",
		`start assistant ""`, "update textDelta@0", `end assistant "after steering"`,
		`turnEnd "after steering" 0`,
	}
	if diff := cmp.Diff(log, wantLog); diff != "" {
		t.Errorf("hook calls (-got +want):\n%s", diff)
	}
	want := []string{
		"user: go",
		"assistant/toolUse: reading a.txt [r1 read]",
		"toolResult r1 read completed: three lines",
		"assistant/stop: [redacted]",
		"user: more",
		"assistant/stop: after steering",
	}
	wantMessages(t, got, want)
	if got[3].Timestamp == 0 {
		t.Error("a replacement without a timestamp lost the message's")
	}
	if len(spy.requests) != 3 {
		t.Fatalf("%d requests", len(spy.requests))
	}
	if diff := cmp.Diff(summary(spy.requests[1].Messages), want[1:3]); diff != "" {
		t.Errorf("the second request's messages (-got +want):\n%s", diff)
	}
	var ended []string
	for _, e := range rec.events {
		if strings.HasPrefix(e, "toolEnd") || strings.HasPrefix(e, "messageEnd") {
			ended = append(ended, e)
		}
	}
	wantEnded := []string{"messageEnd user", "messageEnd assistant/toolUse", "toolEnd r1 read completed",
		"messageEnd assistant/stop", "messageEnd user", "messageEnd assistant/stop"}
	if diff := cmp.Diff(ended, wantEnded); diff != "" {
		t.Errorf("end events (-got +want):\n%s", diff)
	}
}

// TestRunSteeringTakenAtInterrupt: steering taken after the last reply is
// recorded even when the run was interrupted as it was taken (it left
// the caller's queue), and the run ends interrupted without a new turn.
func TestRunSteeringTakenAtInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	opts := rec.options(scriptProvider(t, `{"responses": [{"text": "done"}, {"text": "never"}]}`), workdir(t))
	polls, turns := 0, 0
	opts.TurnStart = func(context.Context) { turns++ }
	opts.Steer = func() []agent.Message {
		polls++
		if polls == 2 {
			cancel()
			return []agent.Message{agent.UserText("late", 0)}
		}
		return nil
	}
	got, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("go", 0)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run: %v", err)
	}
	wantMessages(t, got, []string{"user: go", "assistant/stop: done", "user: late"})
	if turns != 1 {
		t.Errorf("%d turns began, want 1", turns)
	}
}
