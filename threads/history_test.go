package threads

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/session"
)

func msgEntry(t *testing.T, m agent.Message) session.Entry {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	e, err := session.NewMessage(b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestAgentHistory checks the conversation a turn sends: failed and aborted
// replies left out, other entries ignored, and a call left without a
// result (a crash mid-turn) answered with an error result.
func TestAgentHistory(t *testing.T) {
	call := agent.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}
	lost := agent.ToolCall{ID: "c2", Name: "bash", Arguments: json.RawMessage(`{"command":"x"}`)}
	reply := func(stop agent.StopReason, calls ...agent.ToolCall) agent.Message {
		m := agent.Message{Role: agent.RoleAssistant, StopReason: stop, Content: []agent.ContentBlock{agent.TextBlock(string(stop))}}
		for _, c := range calls {
			m.Content = append(m.Content, agent.ToolCallBlock(c))
		}
		return m
	}
	result := agent.Message{Role: agent.RoleToolResult, ToolCallID: "c1", ToolName: "read", Content: []agent.ContentBlock{agent.TextBlock("ok")}}
	branch := []session.Entry{
		session.NewModelChange("scripted", "m"),
		session.NewTurnStart("t1", 1),
		msgEntry(t, agent.UserText("one", 1)),
		msgEntry(t, reply(agent.StopReasonError)),
		session.NewTurnEnd(session.TurnEnd{TurnID: "t1", Status: "failed"}),
		msgEntry(t, agent.UserText("two", 2)),
		msgEntry(t, reply(agent.StopReasonToolUse, call)),
		msgEntry(t, result),
		msgEntry(t, reply(agent.StopReasonAborted, lost)),
		msgEntry(t, reply(agent.StopReasonToolUse, lost)),
		msgEntry(t, agent.UserText("three", 3)),
	}
	got := agentHistory(branch)
	var shape []string
	for _, m := range got {
		s := string(m.Role) + ":" + m.Text()
		if m.Role == agent.RoleToolResult {
			s = "result " + m.ToolCallID + " error=" + map[bool]string{true: "yes", false: "no"}[m.IsError]
		}
		shape = append(shape, s)
	}
	want := []string{"user:one", "user:two", "assistant:toolUse", "result c1 error=no", "assistant:toolUse", "result c2 error=yes", "user:three"}
	if diff := cmp.Diff(shape, want); diff != "" {
		t.Errorf("history (-got +want):\n%s", diff)
	}
}

// TestRestoreSettings checks the settings read back from a branch: the
// last entries win and an invalid approval mode restores as ask.
func TestRestoreSettings(t *testing.T) {
	for _, c := range []struct {
		name   string
		branch []session.Entry
		want   threadSettings
	}{
		{"none", nil, threadSettings{Approval: "ask", Thinking: "off"}},
		{"last wins", []session.Entry{
			session.NewModelChange("a", "1"), session.NewApprovalMode("fullAccess"), session.NewThinkingLevelChange("high"),
			session.NewModelChange("b", "2"),
		}, threadSettings{Provider: "b", Model: "2", Thinking: "high", Approval: "fullAccess"}},
		{"invalid approval", []session.Entry{session.NewApprovalMode("fullAccess"), session.NewApprovalMode("yolo")}, threadSettings{Approval: "ask", Thinking: "off"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(restoreSettings(c.branch, "ask"), c.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}
