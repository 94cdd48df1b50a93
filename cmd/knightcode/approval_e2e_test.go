package main

// End-to-end tests of approvals and dialogs (spec: Approvals, "Dialogs and
// extension UI", "Subscriptions and replacement"; issue 11): over the
// built binary with the scripted offline model, and over the wired server
// in process with two connections for routing and migration.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// approvals answers item/toolCall/requestApproval by item id and records
// what it was asked.
type approvals struct {
	mu      sync.Mutex
	asked   []protocol.ItemToolCallRequestApprovalParams
	answers map[string]func(ctx context.Context) (any, error)
}

func (a *approvals) answer(ctx context.Context, p protocol.ItemToolCallRequestApprovalParams) (json.RawMessage, error) {
	a.mu.Lock()
	a.asked = append(a.asked, p)
	f := a.answers[p.ItemID]
	a.mu.Unlock()
	if f == nil {
		return json.RawMessage(`{"decision":"decline"}`), nil
	}
	v, err := f(ctx)
	if err != nil {
		return nil, err
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(v)
	return b, err
}

func (a *approvals) askedFor() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []string
	for _, p := range a.asked {
		ids = append(ids, p.ItemID)
	}
	return ids
}

func (a *approvals) params(item string) protocol.ItemToolCallRequestApprovalParams {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.asked {
		if p.ItemID == item {
			return p
		}
	}
	return protocol.ItemToolCallRequestApprovalParams{}
}

func decision(d string) func(context.Context) (any, error) {
	return func(context.Context) (any, error) { return map[string]string{"decision": d}, nil }
}

func raw(s string) func(context.Context) (any, error) {
	return func(context.Context) (any, error) { return json.RawMessage(s), nil }
}

// toolItems returns the toolCall items of a turn by id.
func toolItems(turn protocol.Turn) map[string]protocol.Item {
	out := map[string]protocol.Item{}
	for _, it := range turn.Items {
		if it.Type == protocol.ItemToolCall {
			out[it.ID] = it
		}
	}
	return out
}

func bashCall(id, command string) map[string]any {
	return call(id, "bash", map[string]any{"command": command})
}

func toolReply(calls ...map[string]any) map[string]any {
	return map[string]any{"toolCalls": calls}
}

// TestE2EApprovals runs bash, edit and ask_user calls in an ask-mode
// thread (the default) over the binary: accept runs a call, decline does
// not and its message reaches the model, acceptPrefixForSession approves
// a later command of the same prefix without asking and not one outside
// it, an answer of the wrong shape and an unoffered decision decline,
// acceptForSession covers later edits, cancel ends the turn interrupted,
// an interrupt withdraws the open request (serverRequest/cancelled), the
// thread waits on the approval meanwhile, and ask_user's answer reaches
// the model.
func TestE2EApprovals(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	longDecline := strings.Repeat("é", protocol.MaxDeclineMessageChars+10)
	s := startDiffServer(t, map[string]string{
		"appr": script(
			// turn 1
			toolReply(bashCall("b1", "touch accepted.txt")),
			toolReply(bashCall("b2", "touch declined.txt")),
			toolReply(bashCall("b3", "touch long.txt")),
			map[string]any{"text": "turn 1 done"},
			// turn 2
			toolReply(bashCall("g1", "git status")),
			toolReply(bashCall("g2", "git status --short")),
			toolReply(bashCall("g3", "git log -1")),
			toolReply(bashCall("g4", "touch unoffered.txt")),
			map[string]any{"text": "turn 2 done"},
			// turn 3
			toolReply(call("e1", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "line 1\n", "newText": "edited 1\n"}}})),
			toolReply(call("e2", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "line 2\n", "newText": "edited 2\n"}}})),
			toolReply(call("q1", "ask_user", map[string]any{"questions": []any{
				map[string]any{"id": "color", "text": "Which color?", "options": []any{
					map[string]any{"label": "Blue (Recommended)", "description": "calm"}, map[string]any{"label": "Red"}}},
				map[string]any{"id": "size", "text": "Which size?", "options": []any{map[string]any{"label": "S"}}},
			}})),
			map[string]any{"text": "turn 3 done"},
			// turn 4: cancel (the turn ends: no further request)
			toolReply(bashCall("c1", "touch cancelled.txt")),
			// turn 5: interrupt while asking
			toolReply(bashCall("i1", "touch interrupted.txt")),
		),
	})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "appr"}}, &started)
	thread := started.Thread.ID
	interrupted := make(chan error, 1)
	a := &approvals{answers: map[string]func(context.Context) (any, error){
		"b1": decision("accept"),
		"b2": func(context.Context) (any, error) {
			return map[string]string{"decision": "decline", "message": "Use the project-local file instead"}, nil
		},
		"b3": func(context.Context) (any, error) {
			return map[string]string{"decision": "decline", "message": longDecline}, nil
		},
		"g1": decision("acceptPrefixForSession"),
		"g3": raw(`{"decision":"accept","unknown":true}`),
		"g4": decision("acceptForSession"), // not offered for bash
		"e1": decision("acceptForSession"),
		"c1": decision("cancel"),
		"i1": func(ctx context.Context) (any, error) {
			go func() {
				ictx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
				defer cancel()
				_, err := client.Call(ictx, s.c, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: thread})
				interrupted <- err
			}()
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}}
	// Approvals are answered raw (some answers have the wrong shape),
	// ask_user through the typed client.Answer.
	s.c.OnRequest(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != protocol.ItemToolCallRequestApproval.Name {
			return nil, &client.Error{Code: protocol.CodeMethodNotFound, Message: method}
		}
		return a.answer(ctx, decode[protocol.ItemToolCallRequestApprovalParams](t, params))
	})
	var userInput []protocol.ItemToolCallRequestUserInputParams
	var uiMu sync.Mutex
	client.Answer(s.c, protocol.ItemToolCallRequestUserInput, func(_ context.Context, p protocol.ItemToolCallRequestUserInputParams) (protocol.ItemToolCallRequestUserInputResult, error) {
		uiMu.Lock()
		userInput = append(userInput, p)
		uiMu.Unlock()
		blue, dark := "Blue (Recommended)", "dark"
		return protocol.ItemToolCallRequestUserInputResult{Answers: map[string]protocol.UserInputAnswer{"color": {Label: &blue, Note: &dark}}}, nil
	})

	// Turn 1: accept runs, decline does not and its message reaches the
	// model (bounded to 4,000 code points); the thread waits meanwhile.
	from := s.mark()
	done, _ := s.runTurn(t, thread, "one")
	if done.Status != protocol.TurnCompleted {
		t.Fatalf("turn 1 %s", done.Status)
	}
	if !exists(repo, "accepted.txt") || exists(repo, "declined.txt") || exists(repo, "long.txt") {
		t.Errorf("accepted.txt %v, declined.txt %v, long.txt %v", exists(repo, "accepted.txt"), exists(repo, "declined.txt"), exists(repo, "long.txt"))
	}
	waiting := protocol.ThreadStatus{Type: protocol.ThreadStatusActive, WaitingOn: []string{protocol.WaitingOnApproval}}
	s.waitNote(t, &from, protocol.ThreadStatusChanged.Name, func(r json.RawMessage) bool {
		p := decode[protocol.ThreadStatusChangedParams](t, r)
		return p.ThreadID == thread && cmp.Equal(p.Status, waiting)
	})
	s.waitNote(t, &from, protocol.ThreadStatusChanged.Name, func(r json.RawMessage) bool {
		p := decode[protocol.ThreadStatusChangedParams](t, r)
		return p.ThreadID == thread && p.Status.Type == protocol.ThreadStatusActive && len(p.Status.WaitingOn) == 0
	})
	p := a.params("b1")
	if diff := cmp.Diff(p, protocol.ItemToolCallRequestApprovalParams{
		ThreadID: thread, TurnID: done.ID, ItemID: "b1", Tool: "bash",
		Input:     json.RawMessage(`{"command":"touch accepted.txt"}`),
		Decisions: []string{"accept", "decline", "cancel"},
	}); diff != "" {
		t.Errorf("b1 request (-got +want):\n%s", diff)
	}

	// Turn 2: prefix grants.
	done, _ = s.runTurn(t, thread, "two")
	if done.Status != protocol.TurnCompleted {
		t.Fatalf("turn 2 %s", done.Status)
	}
	if g1 := a.params("g1"); g1.Prefix != "git status" || !slices.Contains(g1.Decisions, "acceptPrefixForSession") || slices.Contains(g1.Decisions, "acceptForSession") {
		t.Errorf("g1 offered %v prefix %q", g1.Decisions, g1.Prefix)
	}
	if g3 := a.params("g3"); g3.Prefix != "git log" {
		t.Errorf("g3 offered prefix %q", g3.Prefix)
	}
	if exists(repo, "unoffered.txt") {
		t.Errorf("an unoffered decision ran the call")
	}

	// Turn 3: acceptForSession for edit; ask_user.
	done, _ = s.runTurn(t, thread, "three")
	if done.Status != protocol.TurnCompleted {
		t.Fatalf("turn 3 %s", done.Status)
	}
	if got := readFile(t, repo, "a.txt"); !strings.HasPrefix(got, "edited 1\nedited 2\n") {
		t.Errorf("a.txt after the session grant:\n%s", got)
	}
	if e1 := a.params("e1"); !slices.Contains(e1.Decisions, "acceptForSession") || e1.Prefix != "" {
		t.Errorf("e1 offered %v prefix %q", e1.Decisions, e1.Prefix)
	}
	uiMu.Lock()
	if len(userInput) != 1 || userInput[0].ItemID != "q1" || userInput[0].ThreadID != thread || len(userInput[0].Questions) != 2 || userInput[0].Questions[0].Options[0].Label != "Blue (Recommended)" {
		t.Errorf("requestUserInput: %s", mustJSON(userInput))
	}
	uiMu.Unlock()

	// Turn 4: cancel blocks the call and ends the turn interrupted.
	tid, from := s.startTurn(t, thread, "four")
	end := decode[protocol.TurnCompletedParams](t, s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == thread }))
	if end.Turn.ID != tid || end.Turn.Status != protocol.TurnInterrupted || exists(repo, "cancelled.txt") {
		t.Errorf("cancel: turn %s, cancelled.txt %v", end.Turn.Status, exists(repo, "cancelled.txt"))
	}

	// Turn 5: an interrupt withdraws the open request.
	tid, from = s.startTurn(t, thread, "five")
	end = decode[protocol.TurnCompletedParams](t, s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == thread }))
	if err := <-interrupted; err != nil {
		t.Errorf("turn/interrupt: %v", err)
	}
	if end.Turn.ID != tid || end.Turn.Status != protocol.TurnInterrupted || exists(repo, "interrupted.txt") {
		t.Errorf("interrupt: turn %s, interrupted.txt %v", end.Turn.Status, exists(repo, "interrupted.txt"))
	}
	from = 0
	s.waitNote(t, &from, protocol.ServerRequestCancelled.Name, func(r json.RawMessage) bool {
		return len(decode[protocol.ServerRequestCancelledParams](t, r).RequestID) > 0
	})

	if diff := cmp.Diff(a.askedFor(), []string{"b1", "b2", "b3", "g1", "g3", "g4", "e1", "c1", "i1"}); diff != "" {
		t.Errorf("asked for (-got +want):\n%s", diff)
	}
	read := s.readThread(t, thread)
	items := map[string]protocol.Item{}
	for _, turn := range read.Turns {
		for id, it := range toolItems(turn) {
			items[id] = it
		}
	}
	want := map[string]string{
		"b1": "completed", "b2": "declined", "b3": "declined",
		"g1": "completed", "g2": "completed", "g3": "declined", "g4": "declined",
		"e1": "completed", "e2": "completed", "q1": "completed",
		"c1": "failed", // not run: the turn was interrupted
	}
	for id, status := range want {
		if items[id].Status != status {
			t.Errorf("%s: status %q, want %q (output %v)", id, items[id].Status, status, ptrString(items[id].Output))
		}
	}
	if out := ptrString(items["b2"].Output); out != "Use the project-local file instead" {
		t.Errorf("b2 output (the model's decline reason) %q", out)
	}
	if out := ptrString(items["b3"].Output); out != strings.Repeat("é", protocol.MaxDeclineMessageChars) {
		t.Errorf("b3 output has %d code points, want %d", len([]rune(out)), protocol.MaxDeclineMessageChars)
	}
	if out := ptrString(items["q1"].Output); out != `{"answers":{"color":{"label":"Blue (Recommended)","note":"dark"}}}` {
		t.Errorf("q1 output (ask_user's answer to the model) %q", out)
	}
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// connect connects and initializes a client of srv whose approvals are
// answered by answer.
func connect(t *testing.T, srv *jsonrpc.Server, answer func(ctx context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error)) *diffServer {
	t.Helper()
	c := client.NewInProcess(srv)
	s := record(c, "")
	client.Answer(c, protocol.ItemToolCallRequestApproval, answer)
	initialize(t, c)
	return s
}

// TestApprovalRouting runs two connections to the wired server in
// process: the connection that started the turn is asked first; when it
// disconnects mid-approval the request migrates to the other subscriber,
// whose accept runs the call; a grant is gone after the thread unloads and
// loads again; with no subscriber left a request is cancelled and the turn
// ends interrupted.
func TestApprovalRouting(t *testing.T) {
	home := inProcessHome(t)
	writeScripts(t, home, map[string]string{"route": script(
		toolReply(bashCall("m1", "touch migrated.txt")),
		map[string]any{"text": "one"},
		toolReply(bashCall("g1", "git status")),
		map[string]any{"text": "two"},
		toolReply(bashCall("g2", "git status --short")),
		map[string]any{"text": "three"},
		toolReply(bashCall("n1", "touch nobody.txt")),
	)})
	repo := threadsRepo(t)
	srv := wiredServerShutAtCleanup(t)

	askedA := make(chan protocol.ItemToolCallRequestApprovalParams, 1)
	a := connect(t, srv, func(ctx context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		askedA <- p
		<-ctx.Done() // never answers: it disconnects
		return protocol.ItemToolCallRequestApprovalResult{}, ctx.Err()
	})
	var (
		mu     sync.Mutex
		askedB []string
	)
	b := connect(t, srv, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		mu.Lock()
		askedB = append(askedB, p.ItemID)
		mu.Unlock()
		if p.ItemID == "g1" {
			return protocol.ItemToolCallRequestApprovalResult{Decision: "acceptPrefixForSession"}, nil
		}
		return protocol.ItemToolCallRequestApprovalResult{Decision: "accept"}, nil
	})
	defer b.c.Close()

	started := mustCall(t, a, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "route"}})
	thread := started.Thread.ID
	mustCall(t, b, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	// b subscribed last, but a starts the turn: a is asked first.
	from := b.mark()
	mustCall(t, a, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "go"})
	select {
	case p := <-askedA:
		if p.ItemID != "m1" {
			t.Fatalf("a was asked for %s", p.ItemID)
		}
	case <-time.After(rpctest.DefaultTimeout):
		t.Fatal("the initiating connection was not asked")
	}
	if err := a.c.Close(); err != nil {
		t.Errorf("closing a: %v", err)
	}
	end := decode[protocol.TurnCompletedParams](t, b.waitNote(t, &from, protocol.TurnCompletedNotification.Name, func(r json.RawMessage) bool { return threadOf(r) == thread }))
	if end.Turn.Status != protocol.TurnCompleted || !exists(repo, "migrated.txt") {
		t.Errorf("after migration: turn %s, migrated.txt %v", end.Turn.Status, exists(repo, "migrated.txt"))
	}

	// A prefix grant lasts for the load only.
	b.runTurn(t, thread, "grant")
	mustCall(t, b, protocol.ThreadUnsubscribe, protocol.ThreadUnsubscribeParams{ThreadID: thread})
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	if _, err := client.Call(ctx, b.c, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread}); err != nil {
		t.Fatalf("archive (unloads the thread): %v", err)
	}
	mustCall(t, b, protocol.ThreadUnarchive, protocol.ThreadUnarchiveParams{ThreadID: thread})
	mustCall(t, b, protocol.ThreadResume, protocol.ThreadResumeParams{ThreadID: thread})
	b.runTurn(t, thread, "asks again")
	mu.Lock()
	if diff := cmp.Diff(askedB, []string{"m1", "g1", "g2"}); diff != "" {
		t.Errorf("b asked for (-got +want):\n%s", diff)
	}
	mu.Unlock()

	// No subscriber: the request is cancelled and the turn interrupted.
	from = b.mark()
	mustCall(t, b, protocol.TurnStart, protocol.TurnStartParams{ThreadID: thread, Text: "nobody"})
	mustCall(t, b, protocol.ThreadUnsubscribe, protocol.ThreadUnsubscribeParams{ThreadID: thread})
	b.waitNote(t, &from, protocol.ThreadTurnCompleted.Name, func(r json.RawMessage) bool {
		p := decode[protocol.ThreadTurnCompletedParams](t, r)
		return p.ThreadID == thread && p.Turn.Status == protocol.TurnInterrupted
	})
	if exists(repo, "nobody.txt") {
		t.Error("a call nobody approved ran")
	}
}

// TestE2EApprovalInputRef asks for a write whose arguments are over the
// 64 KiB inline limit: the approval request carries inputRef instead of
// input, payload/read gives back exactly the call's arguments, and the
// accepted write lands (issue 11: "switch to inputRef for inputs over
// 64 KiB").
func TestE2EApprovalInputRef(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	content := strings.Repeat("0123456789abcdef\n", 70<<10/17)
	args := map[string]any{"path": "big.txt", "content": content}
	s := startDiffServer(t, map[string]string{
		"big": script(toolReply(call("w1", "write", args)), map[string]any{"text": "done"}),
	})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "big"}}, &started)
	var asked []protocol.ItemToolCallRequestApprovalParams
	var mu sync.Mutex
	client.Answer(s.c, protocol.ItemToolCallRequestApproval, func(_ context.Context, p protocol.ItemToolCallRequestApprovalParams) (protocol.ItemToolCallRequestApprovalResult, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return protocol.ItemToolCallRequestApprovalResult{Decision: "accept"}, nil
	})
	if done, _ := s.runTurn(t, started.Thread.ID, "write it"); done.Status != protocol.TurnCompleted {
		t.Fatalf("turn %s", done.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].InputRef == nil || asked[0].Input != nil {
		t.Fatalf("approval requests %+v, want one with inputRef and no input", asked)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	got, err := s.c.ReadPayloadRef(ctx, *asked[0].InputRef)
	if err != nil {
		t.Fatal(err)
	}
	var gotArgs map[string]any
	if err := json.Unmarshal(got, &gotArgs); err != nil {
		t.Fatalf("the payload is not the arguments' JSON: %v", err)
	}
	if diff := cmp.Diff(gotArgs, args); diff != "" {
		t.Errorf("inputRef's payload (-got +want):\n%s", diff)
	}
	if b := readFile(t, repo, "big.txt"); b != content {
		t.Errorf("big.txt holds %d bytes, want %d", len(b), len(content))
	}
}

// TestE2EPrefixGrantsR12 runs SHELL-PREFIX.md R12's chains through the
// approval flow over the binary: a command that reconfigures what later
// commands run (git config, go env, npm config, kubectl config) is asked
// without a prefix, an acceptPrefixForSession sent anyway is a decline, so
// the follow-up that would arm a granted command (git config
// core.fsmonitor) is asked again and never runs; and an option that runs an
// unnamed program (git log --ext-diff, git rebase -x) is asked even under a
// grant of its prefix, while the grant still covers its ordinary forms.
func TestE2EPrefixGrantsR12(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{
		"r12": script(
			toolReply(bashCall("cfg", "git config user.name")),
			toolReply(bashCall("arm", "git config core.fsmonitor ./x.sh")),
			toolReply(bashCall("goenv", "go env GOPATH")),
			toolReply(bashCall("npmcfg", "npm config get registry")),
			toolReply(bashCall("kube", "kubectl config view")),
			toolReply(bashCall("log1", "git log -1")),
			toolReply(bashCall("log2", "git log --oneline -1")),
			toolReply(bashCall("log3", "git log --ext-diff -1")),
			toolReply(bashCall("rb1", "git rebase --abort")),
			toolReply(bashCall("rb2", "git rebase -x 'touch rebased.txt' HEAD~1")),
			map[string]any{"text": "done"},
		),
	})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "r12"}}, &started)
	thread := started.Thread.ID
	a := &approvals{answers: map[string]func(context.Context) (any, error){
		"cfg":  decision("acceptPrefixForSession"), // not offered: a decline
		"log1": decision("acceptPrefixForSession"),
		"rb1":  decision("acceptPrefixForSession"),
	}}
	s.c.OnRequest(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != protocol.ItemToolCallRequestApproval.Name {
			return nil, &client.Error{Code: protocol.CodeMethodNotFound, Message: method}
		}
		return a.answer(ctx, decode[protocol.ItemToolCallRequestApprovalParams](t, params))
	})
	done, _ := s.runTurn(t, thread, "go")
	if done.Status != protocol.TurnCompleted {
		t.Fatalf("turn %s", done.Status)
	}
	for _, id := range []string{"cfg", "arm", "goenv", "npmcfg", "kube", "log3", "rb2"} {
		p := a.params(id)
		if p.ItemID != id {
			t.Errorf("%s: never asked", id)
			continue
		}
		if p.Prefix != "" || slices.Contains(p.Decisions, "acceptPrefixForSession") {
			t.Errorf("%s: offered prefix %q with %v", id, p.Prefix, p.Decisions)
		}
	}
	if p := a.params("log1"); p.Prefix != "git log" {
		t.Errorf("log1 offered prefix %q", p.Prefix)
	}
	if diff := cmp.Diff(a.askedFor(), []string{"cfg", "arm", "goenv", "npmcfg", "kube", "log1", "log3", "rb1", "rb2"}); diff != "" {
		t.Errorf("asked for (-got +want): log2 runs under the git log grant, nothing else does\n%s", diff)
	}
	if cfg := readFile(t, repo, ".git/config"); strings.Contains(cfg, "fsmonitor") {
		t.Errorf(".git/config was changed:\n%s", cfg)
	}
	if exists(repo, "rebased.txt") {
		t.Errorf("git rebase -x ran its command under a git rebase grant")
	}
	items := toolItems(s.readThread(t, thread).Turns[0])
	for id, status := range map[string]string{"cfg": "declined", "arm": "declined", "log2": "completed", "log3": "declined", "rb2": "declined"} {
		if items[id].Status != status {
			t.Errorf("%s: status %q, want %q", id, items[id].Status, status)
		}
	}
}
