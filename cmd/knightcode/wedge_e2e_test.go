package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// responseTo reads lines until the response to id (notifications are
// skipped) and returns it.
func responseTo(t *testing.T, peer *rpctest.Peer, id string) map[string]json.RawMessage {
	t.Helper()
	return nextMessage(t, peer, func(m map[string]json.RawMessage) bool { return string(m["id"]) == id })
}

// TestE2EPipelinedRequestsAllAnswered sends 2,000 server/diagnostics
// requests in one write without reading: every one is answered with a
// result (issue 15: 426 were refused with "too many requests in flight
// (limit 1024)").
func TestE2EPipelinedRequestsAllAnswered(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	peer := p.peer(t)
	rpctest.Handshake(t, peer)
	const n = 2000
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, `{"id":%d,"method":"server/diagnostics"}`+"\n", 100+i)
	}
	go peer.SendBytes(buf.Bytes())
	seen := map[string]bool{}
	for range n {
		var m map[string]json.RawMessage
		line := peer.Next()
		if err := json.Unmarshal(line, &m); err != nil || m["result"] == nil {
			t.Fatalf("not a result: %.300s", line)
		}
		seen[string(m["id"])] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct ids answered, want %d", len(seen), n)
	}
}

// TestE2EWedgeInputs sends the inputs issue 15 found wedging or confusing
// the server over the binary: a 9 MiB path (invalidParams, and the log
// holds no more than a bounded piece of it) and a file/write path that is
// not UTF-8 (invalidParams, and no file named with U+FFFD is created).
func TestE2EWedgeInputs(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	p := start(t, "app-server")
	peer := p.peer(t)
	rpctest.Handshake(t, peer)
	peer.Send(`{"id":2,"method":"thread/start","params":{"cwd":` + mustJSON(repo) + `}}`)
	var started struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(responseTo(t, peer, "2")["result"], &started); err != nil || started.Thread.ID == "" {
		t.Fatalf("thread/start: %v", err)
	}
	thread := mustJSON(started.Thread.ID)

	huge := strings.Repeat("x", 9<<20)
	peer.Send(`{"id":3,"method":"file/read","params":{"threadId":` + thread + `,"path":"` + huge + `"}}`)
	res := responseTo(t, peer, "3")
	var e struct {
		Code string `json:"code"`
		Data struct {
			Field string `json:"field"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res["error"], &e); err != nil || e.Code != protocol.CodeInvalidParams || e.Data.Field != "path" {
		t.Errorf("9 MiB path: %.300s, want invalidParams path", res["error"])
	}

	peer.SendBytes([]byte(`{"id":4,"method":"file/write","params":{"threadId":` + thread + `,"path":"caf` + "\xe9" + `.txt","text":"x"}}` + "\n"))
	res = responseTo(t, peer, "4")
	if err := json.Unmarshal(res["error"], &e); err != nil || e.Code != protocol.CodeInvalidParams || e.Data.Field != "path" {
		t.Errorf("Latin-1 path: %.300s, want invalidParams path", res["error"])
	}
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), "caf") {
			t.Errorf("a file was created: %q", filepath.Join(repo, de.Name()))
		}
	}
	// A request with a 9 MiB unknown method name is answered, and neither
	// answer nor log holds it whole.
	peer.Send(`{"id":5,"method":"` + huge + `"}`)
	if line := responseTo(t, peer, "5"); len(line["error"]) > 1024 {
		t.Errorf("unknown method answered with %d bytes", len(line["error"]))
	}
	peer.CloseInput()
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if n := len(p.stderr.String()); n > 64<<10 {
		t.Errorf("the log holds %d bytes after two 9 MiB values; each logged value must be bounded", n)
	}
}

// nextMessage reads lines until one satisfies ok (decoded as a JSON
// object) and returns it.
func nextMessage(t *testing.T, peer *rpctest.Peer, ok func(m map[string]json.RawMessage) bool) map[string]json.RawMessage {
	t.Helper()
	for {
		line := peer.Next()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("bad line %s: %v", line, err)
		}
		if ok(m) {
			return m
		}
	}
}

// methodIs matches a request or notification of method.
func methodIs(method string) func(m map[string]json.RawMessage) bool {
	return func(m map[string]json.RawMessage) bool { return string(m["method"]) == mustJSON(method) }
}

// replyThread starts the binary with the scripted model "reply" (a bash
// call that touches touched, a text reply, then an ask_user question and
// a text never reached), handshakes over a raw peer and starts a thread of
// it in a threadsRepo. It returns the process, the peer, the repository,
// the thread id as JSON, and turnEnd, which waits for the next
// turn/completed and returns its turn.
func replyThread(t *testing.T, touched string) (p *proc, peer *rpctest.Peer, repo, thread string, turnEnd func() protocol.Turn) {
	t.Helper()
	repo = threadsRepo(t)
	p = startPrepared(t, func(home string) {
		writeScripts(t, home, map[string]string{"reply": script(
			toolReply(bashCall("b1", "touch "+touched)),
			map[string]any{"text": "turn 1 done"},
			toolReply(call("q1", "ask_user", map[string]any{"questions": []any{map[string]any{
				"id": "color", "text": "Which color?", "options": []any{map[string]any{"label": "red"}, map[string]any{"label": "blue"}}}}})),
			map[string]any{"text": "not reached"},
		)})
	}, "app-server")
	peer = p.peer(t)
	rpctest.Handshake(t, peer)
	peer.Send(`{"id":2,"method":"thread/start","params":{"cwd":` + mustJSON(repo) + `,"model":{"provider":"scripted","id":"reply"}}}`)
	var started protocol.ThreadStartResult
	if err := json.Unmarshal(responseTo(t, peer, "2")["result"], &started); err != nil || started.Thread.ID == "" {
		t.Fatalf("thread/start: %v", err)
	}
	turnEnd = func() protocol.Turn {
		t.Helper()
		var done protocol.TurnCompletedParams
		if err := json.Unmarshal(nextMessage(t, peer, methodIs(protocol.TurnCompletedNotification.Name))["params"], &done); err != nil {
			t.Fatal(err)
		}
		return done.Turn
	}
	return p, peer, repo, mustJSON(started.Thread.ID), turnEnd
}

// TestE2EServerRequestErrorReplies answers an approval with a JSON-RPC 2.0
// error (a numeric code) and an ask_user with a bare {"id":N} over the
// binary: each settles its request (issue 22: both were logged as bad
// lines and the turn waited until interrupted). The error declines the
// call and the turn goes on; the bare id dismisses the questions, which
// stops the turn.
func TestE2EServerRequestErrorReplies(t *testing.T) {
	t.Parallel()
	p, peer, repo, thread, turnEnd := replyThread(t, "declined.txt")

	peer.Send(`{"id":3,"method":"turn/start","params":{"threadId":` + thread + `,"text":"go"}}`)
	ask := nextMessage(t, peer, methodIs(protocol.ItemToolCallRequestApproval.Name))
	peer.Send(`{"jsonrpc":"2.0","id":` + string(ask["id"]) + `,"error":{"code":-32000,"message":"no"}}`)
	if turn := turnEnd(); turn.Status != protocol.TurnCompleted {
		t.Errorf("turn after an error reply to the approval: %s, want completed", turn.Status)
	}
	if exists(repo, "declined.txt") {
		t.Error("a call answered with an error ran")
	}

	peer.Send(`{"id":4,"method":"turn/start","params":{"threadId":` + thread + `,"text":"ask"}}`)
	ask = nextMessage(t, peer, methodIs(protocol.ItemToolCallRequestUserInput.Name))
	peer.Send(`{"id":` + string(ask["id"]) + `}`)
	if turn := turnEnd(); turn.Status != protocol.TurnInterrupted {
		t.Errorf("turn after a bare {\"id\"} reply to ask_user: %s, want interrupted (dismissed)", turn.Status)
	}
	peer.CloseInput()
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if strings.Contains(p.stderr.String(), "bad input line") {
		t.Errorf("a reply was logged as a bad line:\n%s", p.stderr.String())
	}
}

// TestE2EServerRequestDuplicateMembers answers an approval with
// {"decision":"decline","decision":"accept"} and an ask_user with an
// answer whose label is given twice, over the binary (issue 22 QA, L6: the
// last key won and the command ran): a reply whose result gives a member
// twice, at any depth, is malformed: the call is declined and the turn
// goes on; the questions are dismissed, which stops the turn.
func TestE2EServerRequestDuplicateMembers(t *testing.T) {
	t.Parallel()
	p, peer, repo, thread, turnEnd := replyThread(t, "accepted.txt")

	peer.Send(`{"id":3,"method":"turn/start","params":{"threadId":` + thread + `,"text":"go"}}`)
	ask := nextMessage(t, peer, methodIs(protocol.ItemToolCallRequestApproval.Name))
	peer.Send(`{"id":` + string(ask["id"]) + `,"result":{"decision":"decline","decision":"accept"}}`)
	if turn := turnEnd(); turn.Status != protocol.TurnCompleted {
		t.Errorf("turn after a duplicate-member reply to the approval: %s, want completed", turn.Status)
	}
	if exists(repo, "accepted.txt") {
		t.Error("a call answered with a decision given twice ran")
	}

	peer.Send(`{"id":4,"method":"turn/start","params":{"threadId":` + thread + `,"text":"ask"}}`)
	ask = nextMessage(t, peer, methodIs(protocol.ItemToolCallRequestUserInput.Name))
	peer.Send(`{"id":` + string(ask["id"]) + `,"result":{"answers":{"color":{"label":"red","label":"blue"}}}}`)
	if turn := turnEnd(); turn.Status != protocol.TurnInterrupted {
		t.Errorf("turn after a duplicate-member reply to ask_user: %s, want interrupted (dismissed)", turn.Status)
	}
	peer.CloseInput()
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestE2EMessageMemberGivenTwice sends lines whose own members repeat, over
// the binary (final QA: encoding/json kept the last, so a line naming
// git/status and then thread/archive archived the thread, and a reply
// giving "result" twice, a decline and then an accept, ran the command):
// a request's line is answered parseError and nothing runs; a reply's
// settles the approval as a decline.
func TestE2EMessageMemberGivenTwice(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	p := startPrepared(t, func(home string) {
		writeScripts(t, home, map[string]string{"reply": script(
			toolReply(bashCall("b1", "touch accepted.txt")),
			map[string]any{"text": "turn 1 done"},
		)})
	}, "app-server")
	peer := p.peer(t)
	rpctest.Handshake(t, peer)
	peer.Send(`{"id":2,"method":"thread/start","params":{"cwd":` + mustJSON(repo) + `,"model":{"provider":"scripted","id":"reply"}}}`)
	var started protocol.ThreadStartResult
	if err := json.Unmarshal(responseTo(t, peer, "2")["result"], &started); err != nil || started.Thread.ID == "" {
		t.Fatalf("thread/start: %v", err)
	}
	thread := mustJSON(started.Thread.ID)

	peer.Send(`{"id":3,"method":"git/status","method":"thread/archive","params":{"threadId":` + thread + `}}`)
	if e := responseTo(t, peer, "3")["error"]; !strings.Contains(string(e), `"parseError"`) || !strings.Contains(string(e), "method") {
		t.Errorf("a request giving method twice: error %s, want parseError naming method", e)
	}
	peer.Send(`{"id":4,"method":"git/status","params":{"threadId":` + thread + `}}`)
	if r := responseTo(t, peer, "4"); r["result"] == nil {
		t.Errorf("git/status after it: %s (the thread was archived?)", mustJSON(r))
	}

	peer.Send(`{"id":5,"method":"turn/start","params":{"threadId":` + thread + `,"text":"go"}}`)
	ask := nextMessage(t, peer, methodIs(protocol.ItemToolCallRequestApproval.Name))
	peer.Send(`{"id":` + string(ask["id"]) + `,"result":{"decision":"decline"},"result":{"decision":"accept"}}`)
	var done protocol.TurnCompletedParams
	if err := json.Unmarshal(nextMessage(t, peer, methodIs(protocol.TurnCompletedNotification.Name))["params"], &done); err != nil {
		t.Fatal(err)
	}
	if done.Turn.Status != protocol.TurnCompleted {
		t.Errorf("turn after a reply giving result twice: %s, want completed", done.Turn.Status)
	}
	if exists(repo, "accepted.txt") {
		t.Error("a call answered with result given twice ran")
	}
	peer.CloseInput()
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
