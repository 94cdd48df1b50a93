package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// chatMessages decodes the messages of a Chat Completions request body as
// {role, text}: a content given as parts is their text joined.
func chatMessages(t *testing.T, body []byte) [][2]string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("chat request body: %v\n%s", err, body)
	}
	var out [][2]string
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		out = append(out, [2]string{m.Role, text})
	}
	return out
}

// TestE2EPromptTemplatesSkillsAndContextFiles runs the binary against an
// OpenAI-compatible httptest server and checks what the model received
// (issue 13): a prompt template and /skill:name expanded in the user
// message while the userMessage items show what the user typed; the skills
// listed in the system prompt; the project's AGENTS.md in the system prompt
// only once the project is trusted.
func TestE2EPromptTemplatesSkillsAndContextFiles(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	writeFile(t, repo, "AGENTS.md", "Project rule: answer in French.\n")
	text := func(s string) func(w http.ResponseWriter) {
		return sse(chunk(`{"role":"assistant","content":`+strconvQuote(s)+`}`, ""), chunk(`{}`, "stop"), usageChunk(10, 2))
	}
	chat := newChatServer(t, text("one"), text("two"))
	s, stderr := startProviderServer(t, chat)
	agentDir := filepath.Join(s.home, "agent")
	writeFile(t, agentDir, "prompts/explain.md", "---\ndescription: Explain a file\n---\nExplain $1 to a $2.\n")
	skillPath := filepath.Join(agentDir, "skills", "tidy", "SKILL.md")
	writeFile(t, agentDir, "skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy a Go file.\n---\nRun gofmt -w on it.\n")

	commands := mustCall(t, s, protocol.CommandList, protocol.CommandListParams{Cwd: repo})
	wantCommands := []protocol.CommandInfo{{Name: "explain", Description: "Explain a file"}, {Name: "skill:tidy", Description: "Tidy a Go file."}}
	if diff := cmp.Diff(wantCommands, commands.Commands); diff != "" {
		t.Errorf("command/list (-want +got):\n%s", diff)
	}

	run := func(typed string) string {
		t.Helper()
		res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "fullAccess"})
		thread := res.Thread.ID
		mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "local", ID: "m1"}})
		_, from := s.startTurn(t, thread, typed)
		start := from
		if turn := s.waitTurnCompleted(t, &from, thread); turn.Status != protocol.TurnCompleted {
			t.Fatalf("turn %q: status %q, error %+v", typed, turn.Status, turn.Error)
		}
		for _, it := range completedItems(t, s.threadNotes(t, start, thread, protocol.TurnCompletedNotification.Name)) {
			if it.Type == protocol.ItemUserMessage && it.Text != typed {
				t.Errorf("userMessage item text = %q, want what was typed %q", it.Text, typed)
			}
		}
		read := mustCall(t, s, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: thread})
		for _, turn := range read.Turns {
			for _, it := range turn.Items {
				if it.Type == protocol.ItemUserMessage && it.Text != typed {
					t.Errorf("thread/read userMessage text = %q, want what was typed %q", it.Text, typed)
				}
			}
		}
		return thread
	}

	run("/explain a.txt child")
	mustCall(t, s, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: repo, Trusted: true})
	run("/skill:tidy main.go please")

	chat.mu.Lock()
	bodies := chat.bodies
	chat.mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("%d chat requests, want 2", len(bodies))
	}
	skillsList := "<available_skills>\n  <skill>\n    <name>tidy</name>\n    <description>Tidy a Go file.</description>\n    <location>" + skillPath + "</location>\n  </skill>\n</available_skills>"
	agentsSection := "## " + filepath.Join(repo, "AGENTS.md") + "\n\nProject rule: answer in French."
	for i, want := range []struct {
		user          string
		agentsPresent bool
	}{
		{"Explain a.txt to a child.\n", false},
		{"<skill name=\"tidy\" location=\"" + skillPath + "\">\nReferences are relative to " + filepath.Dir(skillPath) + ".\n\nRun gofmt -w on it.\n</skill>\n\nmain.go please", true},
	} {
		msgs := chatMessages(t, bodies[i])
		if len(msgs) != 2 || msgs[0][0] != "system" || msgs[1][0] != "user" {
			t.Fatalf("request %d messages = %q, want a system and a user message", i, msgs)
		}
		if msgs[1][1] != want.user {
			t.Errorf("request %d: the model received the user text %q, want %q", i, msgs[1][1], want.user)
		}
		sys := msgs[0][1]
		if !strings.Contains(sys, skillsList) {
			t.Errorf("request %d: system prompt lists no skill tidy:\n%s", i, sys)
		}
		if got := strings.Contains(sys, agentsSection); got != want.agentsPresent {
			t.Errorf("request %d: project AGENTS.md in the system prompt = %v, want %v (trusted only):\n%s", i, got, want.agentsPresent, sys)
		}
	}
	noSecrets(t, stderr)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
