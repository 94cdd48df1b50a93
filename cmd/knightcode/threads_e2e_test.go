package main

// End-to-end tests of threads and turns over the built binary (spec:
// "Threads and turns", "Subscriptions and replacement", "History, listings,
// and large values", "Ownership, unloading, and shutdown"; turn/diff/updated
// of "Workspaces, diffs and git"). Servers run with a temporary home and
// agent directory, scripted models, and real git repositories; the e2e
// harness (harness_e2e_test.go) drives them.

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// shape reduces notifications to "method" or "method:type" for items, with
// runs of the same delta method folded into one "method*" and status
// changes and sidebar rows (broadcasts that follow the status and title)
// left out.
func shape(notes []note) []string {
	var out []string
	for _, n := range notes {
		s := n.Method
		switch n.Method {
		case protocol.ThreadStatusChanged.Name, protocol.ThreadSidebar.Name:
			continue
		case protocol.ItemStarted.Name, protocol.ItemCompleted.Name:
			var p protocol.ItemStartedParams
			_ = json.Unmarshal(n.Params, &p)
			s += ":" + p.Item.Type
		case protocol.ItemAgentMessageDelta.Name, protocol.ItemReasoningDelta.Name:
			s += "*"
			if len(out) > 0 && out[len(out)-1] == s {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// completedItems returns the final items of item/completed notifications in
// order.
func completedItems(t *testing.T, notes []note) []protocol.Item {
	t.Helper()
	var items []protocol.Item
	for _, n := range notes {
		if n.Method != protocol.ItemCompleted.Name {
			continue
		}
		var p protocol.ItemCompletedParams
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		items = append(items, p.Item)
	}
	return items
}

// TestE2EPlainTurnNotifications checks the notifications of a plain text
// turn in the spec's order, what they carry, and that thread/read returns
// the same items.
func TestE2EPlainTurnNotifications(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{
		"plain": script(
			map[string]any{"text": "Hello there, this is a plain reply.", "usage": map[string]any{"input": 10, "output": 5}},
			map[string]any{"thinking": "Let me think about it.", "text": "Thought through.", "usage": map[string]any{"input": 20, "output": 7, "cacheRead": 3}},
		),
	})
	from := s.mark()
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo}, &started)
	thread := started.Thread
	if thread.Status.Type != protocol.ThreadStatusIdle || thread.Workspace.Mode != "local" || thread.Cwd != repo || thread.SessionFile != "" || thread.CreatedAt == "" {
		t.Errorf("thread/start thread = %+v", thread)
	}
	if diff := cmp.Diff(started.UI, protocol.EmptyUI()); diff != "" || started.Warnings == nil {
		t.Errorf("thread/start ui (-got +want):\n%s warnings %v", diff, started.Warnings)
	}
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread.ID, Model: &protocol.ModelRef{Provider: "scripted", ID: "plain"}}, nil)

	var res protocol.TurnStartResult
	s.must(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread.ID, Text: "Say hello", RequestID: "req-1", ClientMessageID: "optimistic-1"}, &res)
	if res != (protocol.TurnStartResult{Status: "started", ThreadID: thread.ID, RequestID: "req-1"}) {
		t.Errorf("turn/start result = %+v", res)
	}
	notes := s.threadNotes(t, from, thread.ID, protocol.TurnDiffUpdated.Name)
	want := []string{
		"turn/started",
		"item/started:userMessage", "item/completed:userMessage",
		"item/started:agentMessage", "item/agentMessage/delta*", "item/completed:agentMessage",
		"thread/tokenUsage/updated",
		"turn/completed", "thread/turn/completed", "turn/diff/updated",
	}
	if diff := cmp.Diff(shape(notes), want); diff != "" {
		t.Errorf("notification order (-got +want):\n%s", diff)
	}
	var deltas strings.Builder
	for _, n := range notes {
		if n.Method == protocol.ItemAgentMessageDelta.Name {
			d := decode[protocol.ItemDeltaParams](t, n.Params)
			if d.ItemID != "item-1" {
				t.Errorf("delta of %s, want item-1", d.ItemID)
			}
			deltas.WriteString(d.Delta)
		}
	}
	var statuses []string
	statusFrom := from
	for range 3 {
		raw := s.waitNote(t, &statusFrom, protocol.ThreadStatusChanged.Name, func(r json.RawMessage) bool { return threadOf(r) == thread.ID })
		statuses = append(statuses, decode[protocol.ThreadStatusChangedParams](t, raw).Status.Type)
	}
	if !slices.Equal(statuses, []string{"idle", "active", "idle"}) {
		t.Errorf("thread/status/changed: %v, want idle (load), active, idle", statuses)
	}
	if deltas.String() != "Hello there, this is a plain reply." {
		t.Errorf("deltas = %q", deltas.String())
	}
	turnStarted := decode[protocol.TurnStartedParams](t, notes[slices.IndexFunc(notes, func(n note) bool { return n.Method == "turn/started" })].Params)
	if turnStarted.RequestID != "req-1" || turnStarted.Turn.Status != "inProgress" || turnStarted.Turn.StartedAt == 0 || turnStarted.Turn.ID == "" {
		t.Errorf("turn/started = %+v", turnStarted)
	}
	items := completedItems(t, notes)
	if len(items) != 2 || items[0].ID != "item-0" || items[0].ClientMessageID != "optimistic-1" || items[0].Text != "Say hello" ||
		items[1].ID != "item-1" || *items[1].Index != 1 || items[1].StartedAt == 0 || items[1].CompletedAt < items[1].StartedAt {
		t.Errorf("completed items = %s", mustJSON(items))
	}
	var done protocol.TurnCompletedParams
	var everyone protocol.ThreadTurnCompletedParams
	var usage protocol.ThreadTokenUsageUpdatedParams
	for _, n := range notes {
		switch n.Method {
		case "turn/completed":
			done = decode[protocol.TurnCompletedParams](t, n.Params)
		case "thread/turn/completed":
			everyone = decode[protocol.ThreadTurnCompletedParams](t, n.Params)
		case "thread/tokenUsage/updated":
			usage = decode[protocol.ThreadTokenUsageUpdatedParams](t, n.Params)
		}
	}
	wantUsage := &protocol.TurnUsage{Input: 10, Output: 5}
	if done.Turn.ID != turnStarted.Turn.ID || done.Turn.Status != "completed" || done.Turn.Items != nil || done.Turn.CompletedAt < done.Turn.StartedAt || !cmp.Equal(done.Turn.Usage, wantUsage) {
		t.Errorf("turn/completed = %s", mustJSON(done))
	}
	if diff := cmp.Diff(everyone.Turn, done.Turn); diff != "" {
		t.Errorf("thread/turn/completed differs from turn/completed:\n%s", diff)
	}
	if usage.TurnID != done.Turn.ID || usage.Usage.Input != 10 || usage.Usage.Output != 5 || usage.Usage.ContextTokens == nil || *usage.Usage.ContextTokens != 15 {
		t.Errorf("thread/tokenUsage/updated = %s", mustJSON(usage))
	}

	// A reply with reasoning: its item comes first, and usage accumulates.
	from = s.mark()
	s.must(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread.ID, Text: "Think first"}, nil)
	notes = s.threadNotes(t, from, thread.ID, protocol.TurnDiffUpdated.Name)
	want = []string{
		"turn/started",
		"item/started:userMessage", "item/completed:userMessage",
		"item/started:reasoning", "item/reasoning/delta*",
		"item/started:agentMessage", "item/agentMessage/delta*",
		"item/completed:reasoning", "item/completed:agentMessage",
		"thread/tokenUsage/updated",
		"turn/completed", "thread/turn/completed", "turn/diff/updated",
	}
	if diff := cmp.Diff(shape(notes), want); diff != "" {
		t.Errorf("notification order with reasoning (-got +want):\n%s", diff)
	}
	second := completedItems(t, notes)
	for _, n := range notes {
		if n.Method == "thread/tokenUsage/updated" {
			usage = decode[protocol.ThreadTokenUsageUpdatedParams](t, n.Params)
		}
	}
	if u := usage.Usage; u.Input != 30 || u.Output != 12 || u.CacheRead != 3 {
		t.Errorf("cumulative usage = %+v, want input 30 output 12 cacheRead 3", u)
	}

	// thread/read gives the same items, and the thread is saved now.
	read := s.readThread(t, thread.ID)
	if len(read.Turns) != 2 {
		t.Fatalf("thread/read turns = %s", mustJSON(read.Turns))
	}
	items[0].ClientMessageID = "" // echoed live only, never persisted
	if diff := cmp.Diff(read.Turns[0].Items, items); diff != "" {
		t.Errorf("read-back items of turn 1 (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(read.Turns[1].Items, second); diff != "" {
		t.Errorf("read-back items of turn 2 (-got +want):\n%s", diff)
	}
	if read.Turns[0].ID != done.Turn.ID || read.Turns[0].Status != "completed" || read.Thread.SessionFile == "" || read.Thread.Status.Type != "idle" {
		t.Errorf("thread/read = %s", mustJSON(read))
	}
}

// TestE2EToolTurn runs a fullAccess turn with read, edit, write and bash
// calls: the order of its notifications, the calls' statuses, outputs and
// fileChanges, the turn's file totals (edits by edit and by bash, a new
// untracked file and a deletion) in turn/diff/updated and Turn.files, the
// pinned trees, and the read-back items.
func TestE2EToolTurn(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{
		"tools": script(
			map[string]any{"text": "Working on it.", "toolCalls": []any{
				call("c-read", "read", map[string]any{"path": "b.txt"}),
				call("c-edit", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "line 2\n", "newText": "LINE TWO\n"}}}),
				call("c-write", "write", map[string]any{"path": "written.txt", "content": "one\ntwo\n"}),
				call("c-bash", "bash", map[string]any{"command": "rm gone.txt && printf 'x\\ny\\nz\\n' > made.txt && echo 'more' >> b.txt && echo ok"}),
				call("c-bad", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "not there", "newText": "x"}}}),
			}},
			map[string]any{"text": "All done."},
		),
	})
	thread := s.startThread(t, repo, "tools")
	turnID, from := s.startTurn(t, thread, "change things")
	start := from - 1
	notes := s.threadNotes(t, start, thread, protocol.TurnDiffUpdated.Name)
	want := []string{
		"turn/started",
		"item/started:userMessage", "item/completed:userMessage",
		"item/started:agentMessage", "item/agentMessage/delta*", "item/completed:agentMessage",
		"thread/tokenUsage/updated",
		"item/started:toolCall", "item/completed:toolCall",
		"item/started:toolCall", "item/completed:toolCall",
		"item/started:toolCall", "item/completed:toolCall",
		"item/started:toolCall", "item/completed:toolCall",
		"item/started:toolCall", "item/completed:toolCall",
		"item/started:agentMessage", "item/agentMessage/delta*", "item/completed:agentMessage",
		"thread/tokenUsage/updated",
		"turn/completed", "thread/turn/completed", "turn/diff/updated",
	}
	if diff := cmp.Diff(shape(notes), want); diff != "" {
		t.Errorf("notification order (-got +want):\n%s", diff)
	}
	for _, n := range notes {
		if n.Method == protocol.ItemStarted.Name {
			if it := decode[protocol.ItemStartedParams](t, n.Params).Item; it.Type == "toolCall" && (it.Status != "inProgress" || it.StartedAt == 0) {
				t.Errorf("item/started of a call: %s", mustJSON(it))
			}
		}
	}
	items := completedItems(t, notes)
	type callSummary struct {
		ID, Name, Status string
		Index            int
		Changes          []string
	}
	var calls []callSummary
	for _, it := range items {
		if it.Type != "toolCall" {
			continue
		}
		cs := callSummary{ID: it.ID, Name: it.Name, Status: it.Status, Index: *it.Index}
		for _, fc := range it.FileChanges {
			cs.Changes = append(cs.Changes, fc.Kind+" "+fc.Path+" diff:"+strconv.FormatBool(fc.Diff != ""))
		}
		if it.Output == nil || it.CompletedAt < it.StartedAt {
			t.Errorf("call %s: output %v, times %d..%d", it.ID, it.Output, it.StartedAt, it.CompletedAt)
		}
		calls = append(calls, cs)
	}
	wantCalls := []callSummary{
		{ID: "c-read", Name: "read", Status: "completed", Index: 2},
		{ID: "c-edit", Name: "edit", Status: "completed", Index: 3, Changes: []string{"modify a.txt diff:true"}},
		{ID: "c-write", Name: "write", Status: "completed", Index: 4, Changes: []string{"add written.txt diff:true"}},
		{ID: "c-bash", Name: "bash", Status: "completed", Index: 5},
		{ID: "c-bad", Name: "edit", Status: "failed", Index: 6},
	}
	if diff := cmp.Diff(calls, wantCalls); diff != "" {
		t.Errorf("tool calls (-got +want):\n%s", diff)
	}
	wantFiles := []protocol.FileTotal{
		{Path: "a.txt", Additions: 1, Deletions: 1},
		{Path: "b.txt", Additions: 1},
		{Path: "gone.txt", Deletions: 1},
		{Path: "made.txt", Additions: 3},
		{Path: "written.txt", Additions: 2},
	}
	diffUpdated := decode[protocol.TurnDiffUpdatedParams](t, notes[len(notes)-1].Params)
	if diff := cmp.Diff(diffUpdated, protocol.TurnDiffUpdatedParams{ThreadID: thread, TurnID: turnID, Files: wantFiles}); diff != "" {
		t.Errorf("turn/diff/updated (-got +want):\n%s", diff)
	}
	read := s.readThread(t, thread)
	if len(read.Turns) != 1 {
		t.Fatalf("turns = %s", mustJSON(read.Turns))
	}
	if diff := cmp.Diff(read.Turns[0].Files, wantFiles); diff != "" {
		t.Errorf("Turn.files (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(read.Turns[0].Items, items); diff != "" {
		t.Errorf("read-back items (-got +want):\n%s", diff)
	}
	for _, side := range []string{"before", "after"} {
		ref := "refs/knightcode/turns/" + thread + "/" + turnID + "/" + side
		if typ := strings.TrimSpace(fixtureGit(t, repo, "cat-file", "-t", ref)); typ != "tree" {
			t.Errorf("%s is a %q, want a tree", ref, typ)
		}
	}
	if got := fixtureGit(t, repo, "ls-tree", "--name-only", "refs/knightcode/turns/"+thread+"/"+turnID+"/after"); !strings.Contains(got, "made.txt") || strings.Contains(got, "gone.txt") {
		t.Errorf("after tree lists:\n%s", got)
	}
}

// TestE2EAskModeDeclines checks that a thread in ask mode (the default)
// asks before edit and bash calls and runs read without asking: this
// client answers no server request (methodNotFound), which is an answer of
// the wrong shape, so both are declined (issue 11).
func TestE2EAskModeDeclines(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{
		"ask": script(
			map[string]any{"toolCalls": []any{
				call("r1", "read", map[string]any{"path": "a.txt"}),
				call("e1", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "line 1\n", "newText": "changed\n"}}}),
				call("b1", "bash", map[string]any{"command": "touch made-by-bash.txt"}),
			}},
			map[string]any{"text": "I could not change anything."},
		),
	})
	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "ask"}}, &started)
	thread := started.Thread.ID
	done, files := s.runTurn(t, thread, "try to edit")
	if done.Status != "completed" || len(files) != 0 {
		t.Errorf("turn %s, files %v", done.Status, files)
	}
	read := s.readThread(t, thread)
	got := map[string]string{}
	for _, it := range read.Turns[0].Items {
		if it.Type == "toolCall" {
			got[it.ID] = it.Status
			if it.Status == "declined" && (it.Output == nil || !strings.Contains(*it.Output, "declined") || it.FileChanges != nil) {
				t.Errorf("declined %s: output %v, changes %v", it.ID, it.Output, it.FileChanges)
			}
		}
	}
	if diff := cmp.Diff(got, map[string]string{"r1": "completed", "e1": "declined", "b1": "declined"}); diff != "" {
		t.Errorf("call statuses (-got +want):\n%s", diff)
	}
	if readFile(t, repo, "a.txt") != threadsA || exists(repo, "made-by-bash.txt") {
		t.Errorf("ask mode changed the checkout")
	}
}

// TestE2EInterrupt interrupts a slow reply and a long bash command: each
// turn completes interrupted at once, the bash command's process group is
// gone, and read-back agrees.
func TestE2EInterrupt(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	pgidFile := filepath.Join(t.TempDir(), "pgid")
	s := startDiffServer(t, map[string]string{
		"slow": script(map[string]any{"text": "This reply streams very slowly so that it can be interrupted halfway through.", "delayMs": 60000}),
		"bash": script(map[string]any{"toolCalls": []any{call("long", "bash", map[string]any{"command": "echo $$ > " + pgidFile + "; sleep 120 & sleep 120; echo never"})}}),
	})

	thread := s.startThread(t, repo, "slow")
	turnID, from := s.startTurn(t, thread, "stream slowly")
	s.waitNote(t, &from, protocol.ItemAgentMessageDelta.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	var resumed protocol.ThreadResumeResult
	s.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if rt := resumed.RunningTurn; rt == nil || rt.ID != turnID || rt.Status != "inProgress" || len(rt.Items) != 2 || rt.Items[1].Type != "agentMessage" || rt.Items[1].Text == "" {
		t.Errorf("runningTurn snapshot: %s", mustJSON(rt))
	}
	if resumed.Thread.Status.Type != "active" || len(resumed.Turns) != 1 || resumed.Turns[0].Status != "inProgress" {
		t.Errorf("resume during a turn: thread %+v, turns %s", resumed.Thread.Status, mustJSON(resumed.Turns))
	}
	s.wantErr(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: "not-the-turn"}, wireErr{Code: protocol.CodeTurnMismatch})
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turnID}, nil)
	if done := s.waitTurnCompleted(t, &from, thread); done.Status != "interrupted" || done.Error != nil {
		t.Errorf("slow turn ended %s", mustJSON(done))
	}
	read := s.readThread(t, thread)
	last := read.Turns[len(read.Turns)-1]
	if last.Status != "interrupted" || len(last.Items) != 2 || last.Items[1].Type != "agentMessage" || !strings.HasPrefix("This reply streams very slowly so that it can be interrupted halfway through.", last.Items[1].Text) || last.Items[1].Text == "" {
		t.Errorf("read-back of the interrupted reply: %s", mustJSON(last))
	}

	other := s.startThread(t, repo, "bash")
	_, from = s.startTurn(t, other, "run something long")
	s.waitNote(t, &from, protocol.ItemStarted.Name, func(r json.RawMessage) bool {
		return threadOf(r) == other && decode[protocol.ItemStartedParams](t, r).Item.Type == "toolCall"
	})
	var pgid int
	deadline := time.Now().Add(rpctest.DefaultTimeout)
	for {
		b, err := os.ReadFile(pgidFile)
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && n > 0 {
			pgid = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bash command never wrote its process id")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if live := proctest.GroupMembers(pgid); len(live) == 0 {
		t.Fatalf("process group %d not running before the interrupt", pgid)
	}
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: other}, nil)
	if done := s.waitTurnCompleted(t, &from, other); done.Status != "interrupted" {
		t.Errorf("bash turn ended %s", mustJSON(done))
	}
	if live := proctest.GroupMembers(pgid); len(live) > 0 {
		t.Errorf("process group %d still has running members after the turn ended: %q", pgid, live)
	}
	read = s.readThread(t, other)
	if it := read.Turns[0].Items[1]; it.ID != "long" || it.Status != "failed" {
		t.Errorf("interrupted bash call reads back %s", mustJSON(it))
	}
}

// TestE2EQueueAndSteer queues inputs behind a running turn (they start in
// order; a removed one never does) and steers a running turn (a stale id is
// refused; an accepted steer reaches the model within the same turn).
func TestE2EQueueAndSteer(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	flag := filepath.Join(t.TempDir(), "go-on")
	s := startDiffServer(t, map[string]string{
		"queue": script(
			map[string]any{"text": "first reply, slowly", "delayMs": 60000},
			map[string]any{"text": "reply to two"},
			map[string]any{"text": "reply to four"},
		),
		"steer": script(
			map[string]any{"toolCalls": []any{call("wait", "bash", map[string]any{"command": "while [ ! -f " + flag + " ]; do sleep 0.05; done; echo go"})}},
			map[string]any{"text": "steered reply"},
		),
	})

	thread := s.startThread(t, repo, "queue")
	first, from := s.startTurn(t, thread, "one")
	s.waitNote(t, &from, protocol.ItemAgentMessageDelta.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	qfrom := s.mark()
	ids := map[string]string{}
	for _, text := range []string{"two", "three", "four"} {
		var res protocol.TurnQueueAddResult
		s.must(t, protocol.TurnQueueAdd.Name, protocol.TurnQueueAddParams{ThreadID: thread, Text: text, ClientMessageID: "cm-" + text}, &res)
		ids[text] = res.QueueID
	}
	var removed protocol.TurnQueueRemoveResult
	s.must(t, protocol.TurnQueueRemove.Name, protocol.TurnQueueRemoveParams{ThreadID: thread, QueueID: ids["three"]}, &removed)
	if !removed.Removed {
		t.Error("removing a queued input: removed false")
	}
	s.must(t, protocol.TurnQueueRemove.Name, protocol.TurnQueueRemoveParams{ThreadID: thread, QueueID: ids["three"]}, &removed)
	if removed.Removed {
		t.Error("removing it again: removed true")
	}
	var queues [][]string
	for range 4 {
		q := decode[protocol.TurnQueueUpdatedParams](t, s.waitNote(t, &qfrom, protocol.TurnQueueUpdated.Name, func(r json.RawMessage) bool { return threadOf(r) == thread }))
		var texts []string
		for _, f := range q.FollowUp {
			texts = append(texts, f.Text)
		}
		queues = append(queues, texts)
	}
	if diff := cmp.Diff(queues, [][]string{{"two"}, {"two", "three"}, {"two", "three", "four"}, {"two", "four"}}); diff != "" {
		t.Errorf("turn/queue/updated follow-ups (-got +want):\n%s", diff)
	}
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "again"}, wireErr{Code: protocol.CodeTurnInProgress})
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: first}, nil)
	s.waitTurnCompleted(t, &from, thread)
	// The interrupt dropped the queue: nothing else starts. Queue two more
	// on the idle thread: the first starts at once, the second after it.
	for _, text := range []string{"two", "four"} {
		s.must(t, protocol.TurnQueueAdd.Name, protocol.TurnQueueAddParams{ThreadID: thread, Text: text, ClientMessageID: "cm-" + text}, nil)
	}
	var userItems []protocol.Item
	for range 2 {
		done := s.waitTurnCompleted(t, &from, thread)
		if done.Status != "completed" {
			t.Errorf("queued turn ended %s", mustJSON(done))
		}
	}
	read := s.readThread(t, thread)
	var replies []string
	for _, turn := range read.Turns {
		for _, it := range turn.Items {
			switch it.Type {
			case "userMessage":
				userItems = append(userItems, it)
			case "agentMessage":
				replies = append(replies, it.Text)
			}
		}
	}
	if len(read.Turns) != 3 || len(userItems) != 3 || userItems[1].Text != "two" || userItems[2].Text != "four" || replies[len(replies)-2] != "reply to two" || replies[len(replies)-1] != "reply to four" {
		t.Errorf("turns after the queue: users %s replies %q", mustJSON(userItems), replies)
	}

	steered := s.startThread(t, repo, "steer")
	s.wantErr(t, protocol.TurnSteer.Name, protocol.TurnSteerParams{ThreadID: steered, Text: "no turn", ExpectedTurnID: "x"}, wireErr{Code: protocol.CodeTurnMismatch})
	turnID, from := s.startTurn(t, steered, "start working")
	s.waitNote(t, &from, protocol.ItemStarted.Name, func(r json.RawMessage) bool {
		return threadOf(r) == steered && decode[protocol.ItemStartedParams](t, r).Item.Type == "toolCall"
	})
	s.wantErr(t, protocol.TurnSteer.Name, protocol.TurnSteerParams{ThreadID: steered, Text: "stale", ExpectedTurnID: "an-old-turn"}, wireErr{Code: protocol.CodeTurnMismatch})
	sfrom := s.mark()
	s.must(t, protocol.TurnSteer.Name, protocol.TurnSteerParams{ThreadID: steered, Text: "also do this", ExpectedTurnID: turnID}, nil)
	q := decode[protocol.TurnQueueUpdatedParams](t, s.waitNote(t, &sfrom, protocol.TurnQueueUpdated.Name, func(r json.RawMessage) bool { return threadOf(r) == steered }))
	if !slices.Equal(q.Steering, []string{"also do this"}) {
		t.Errorf("steering in turn/queue/updated = %q", q.Steering)
	}
	// Let the tool call end: the agent takes the steer before its next
	// request.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if done := s.waitTurnCompleted(t, &from, steered); done.Status != "completed" || done.ID != turnID {
		t.Errorf("steered turn ended %s", mustJSON(done))
	}
	read = s.readThread(t, steered)
	var got []string
	for _, it := range read.Turns[0].Items {
		got = append(got, it.Type+": "+it.Text)
	}
	wantItems := []string{"userMessage: start working", "toolCall: ", "userMessage: also do this", "agentMessage: steered reply"}
	if len(read.Turns) != 1 || !slices.Equal(got, wantItems) {
		t.Errorf("steered turn items = %q, want %q", got, wantItems)
	}
}

// TestE2EOwnershipRestartAndCrash shares one agent directory between
// servers: a second process is refused ownership of a loaded thread but can
// read it; after a restart the thread reads back the same turns, items and
// files and resumes; a server killed mid-turn leaves a turn that reads back
// interrupted.
func TestE2EOwnershipRestartAndCrash(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	home := t.TempDir()
	writeScripts(t, home, map[string]string{
		"edit": script(
			map[string]any{"toolCalls": []any{call("e", "edit", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"oldText": "line 3\n", "newText": "LINE 3\n"}}})}},
			map[string]any{"text": "edited"},
		),
		"slow": script(map[string]any{"text": "a reply the crash cuts short", "delayMs": 60000}),
	})
	a := startIn(t, home)
	thread := a.startThread(t, repo, "edit")
	a.runTurn(t, thread, "edit a.txt")
	before := a.readThread(t, thread)

	b := startIn(t, home)
	b.wantErr(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, wireErr{Code: protocol.CodeThreadLockedElsewhere})
	fromB := b.readThread(t, thread)
	if fromB.Thread.Status.Type != "notLoaded" {
		t.Errorf("thread/read in the other process: status %+v", fromB.Thread.Status)
	}
	if diff := cmp.Diff(fromB.Turns, before.Turns); diff != "" {
		t.Errorf("thread/read in the other process (-got +want):\n%s", diff)
	}
	a.close(t)

	var resumed protocol.ThreadResumeResult
	b.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if diff := cmp.Diff(resumed.Turns, before.Turns); diff != "" {
		t.Errorf("turns after the restart (-got +want):\n%s", diff)
	}
	if resumed.RunningTurn != nil || resumed.Queue.Steering == nil || resumed.Queue.FollowUp == nil || resumed.Usage.ContextWindow == 0 || resumed.Thread.Status.Type != "idle" {
		t.Errorf("resume snapshots: %s", mustJSON(resumed))
	}
	if len(before.Turns) != 1 || len(before.Turns[0].Files) != 1 || before.Turns[0].Files[0].Path != "a.txt" {
		t.Errorf("files of the saved turn: %s", mustJSON(before.Turns))
	}

	// Crash mid-turn, then read and resume in a new process.
	b.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "slow"}}, nil)
	_, from := b.startTurn(t, thread, "this turn crashes")
	b.waitNote(t, &from, protocol.ItemAgentMessageDelta.Name, nil)
	b.kill9(t)

	c := startIn(t, home)
	after := c.readThread(t, thread)
	if len(after.Turns) != 2 {
		t.Fatalf("turns after the crash: %s", mustJSON(after.Turns))
	}
	crashed := after.Turns[1]
	if crashed.Status != "interrupted" || crashed.CompletedAt != 0 || len(crashed.Items) != 1 || crashed.Items[0].Text != "this turn crashes" {
		t.Errorf("crashed turn reads back %s", mustJSON(crashed))
	}
	if diff := cmp.Diff(after.Turns[0], before.Turns[0]); diff != "" {
		t.Errorf("the first turn changed (-got +want):\n%s", diff)
	}
	c.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if len(resumed.Turns) != 2 || resumed.Turns[1].Status != "interrupted" {
		t.Errorf("resume after the crash: %s", mustJSON(resumed.Turns))
	}
}

// TestE2EThreadErrors covers the refusals of the thread and turn methods:
// parameters, images, models and settings, turnInProgress, threadNotFound,
// unsubscribe statuses, cursors, failed turns, listings and model/list.
func TestE2EThreadErrors(t *testing.T) {
	t.Parallel()
	rateLimited := map[string]any{"error": "429 Too Many Requests: rate limit reached"}
	repo := threadsRepo(t)
	s := startDiffServer(t, map[string]string{
		"slow":  script(map[string]any{"text": "slow", "delayMs": 60000}),
		"empty": script(),
		// A rate limit is retried (retry.provider.maxRetries, default 3)
		// before the turn fails.
		"fail": script(rateLimited, rateLimited, rateLimited, rateLimited),
	})
	var models protocol.ModelListResult
	s.must(t, protocol.ModelList.Name, protocol.ModelListParams{}, &models)
	var names []string
	for _, m := range models.Models {
		names = append(names, m.Provider+"/"+m.ID+" "+strings.Join(m.ThinkingLevels, ","))
	}
	for _, want := range []string{"scripted/demo off,minimal,low,medium,high", "scripted/slow off", "scripted/empty off"} {
		if !slices.Contains(names, want) {
			t.Errorf("model/list lacks %q: %q", want, names)
		}
	}

	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	aFile := filepath.Join(repo, "a.txt")
	for _, c := range []struct {
		p     protocol.ThreadStartParams
		field string
	}{
		{protocol.ThreadStartParams{Cwd: "relative/dir"}, "cwd"},
		{protocol.ThreadStartParams{Cwd: filepath.Join(repo, "missing")}, "cwd"},
		{protocol.ThreadStartParams{Cwd: aFile}, "cwd"},
		{protocol.ThreadStartParams{Cwd: repo, ApprovalMode: "sometimes"}, "approvalMode"},
		{protocol.ThreadStartParams{Cwd: repo, Model: &protocol.ModelRef{Provider: "scripted", ID: "nope"}}, "model"},
		{protocol.ThreadStartParams{Cwd: repo, Workspace: &protocol.ThreadStartWorkspace{Mode: "elsewhere"}}, "workspace.mode"},
	} {
		s.wantErr(t, protocol.ThreadStart.Name, c.p, invalid(c.field))
	}

	var started protocol.ThreadStartResult
	s.must(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Workspace: &protocol.ThreadStartWorkspace{Mode: "local"}}, &started)
	thread := started.Thread.ID
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "no model yet"},
		wireErr{Code: protocol.CodeInvalidParams, Reason: "noModel"}) // turn/start has no model member to blame
	// A queued input that cannot start is dropped with an error notification.
	efrom := s.mark()
	var queued protocol.TurnQueueAddResult
	s.must(t, protocol.TurnQueueAdd.Name, protocol.TurnQueueAddParams{ThreadID: thread, Text: "queued", ClientMessageID: "cm-1"}, &queued)
	if note := decode[protocol.ErrorParams](t, s.waitNote(t, &efrom, protocol.ErrorNotification.Name, nil)); note.ClientMessageID != "cm-1" || note.ThreadID != thread || note.Code != protocol.CodeInvalidParams || queued.QueueID == "" {
		t.Errorf("error notification %+v for queue id %q", note, queued.QueueID)
	}
	for _, c := range []struct {
		p     protocol.ThreadSettingsUpdateParams
		field string
	}{
		{protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "nope"}}, "model"},
		{protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "nobody", ID: "slow"}}, "model"},
		{protocol.ThreadSettingsUpdateParams{ThreadID: thread, ThinkingLevel: "high"}, "thinkingLevel"},
		{protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "slow"}, ThinkingLevel: "medium"}, "thinkingLevel"},
		{protocol.ThreadSettingsUpdateParams{ThreadID: thread, ApprovalMode: "never"}, "approvalMode"},
	} {
		s.wantErr(t, protocol.ThreadSettingsUpdate.Name, c.p, invalid(c.field))
	}
	s.wantErr(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: "no-such-thread", ApprovalMode: "ask"}, wireErr{Code: protocol.CodeThreadNotFound})
	s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "slow"}, ThinkingLevel: "off", ApprovalMode: "fullAccess"}, nil)

	// Images: inline and by path, each refusal naming its field.
	dir := t.TempDir()
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32)...)
	writeFile(t, dir, "ok.png", string(png))
	writeFile(t, dir, "fake.png", "not an image at all")
	writeFile(t, dir, "big.png", string(png)+strings.Repeat("x", 20<<20))
	if err := os.Mkdir(filepath.Join(dir, "folder.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(png)
	for _, c := range []struct {
		name   string
		images []protocol.ImageInput
		field  string
	}{
		{"missing", []protocol.ImageInput{{Path: filepath.Join(dir, "missing.png")}}, "images[0].path"},
		{"relative", []protocol.ImageInput{{Path: "ok.png"}}, "images[0].path"},
		{"not an image", []protocol.ImageInput{{Path: filepath.Join(dir, "ok.png")}, {Path: filepath.Join(dir, "fake.png")}}, "images[1].path"},
		{"directory", []protocol.ImageInput{{Path: filepath.Join(dir, "folder.png")}}, "images[0].path"},
		{"oversized", []protocol.ImageInput{{Path: filepath.Join(dir, "big.png")}}, "images[0].path"},
		{"inline not an image type", []protocol.ImageInput{{MimeType: "text/plain", Data: b64}}, "images[0].mimeType"},
		{"inline bad base64", []protocol.ImageInput{{MimeType: "image/png", Data: "%%%"}}, "images[0].data"},
		{"both forms", []protocol.ImageInput{{MimeType: "image/png", Data: b64, Path: filepath.Join(dir, "ok.png")}}, "images[0]"},
		{"neither form", []protocol.ImageInput{{}}, "images[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "look", Images: c.images}, invalid(c.field))
		})
	}
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "x", ClientMessageID: strings.Repeat("é", 129)}, invalid("clientMessageId"))
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: " "}, invalid("text"))
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: "no-such-thread", Text: "x"}, wireErr{Code: protocol.CodeThreadNotFound})

	// A turn with both image forms starts; a second start is refused.
	turnID, from := s.startTurnImages(t, thread, []protocol.ImageInput{{Path: filepath.Join(dir, "ok.png")}, {MimeType: "image/png", Data: b64}})
	s.wantErr(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "second"}, wireErr{Code: protocol.CodeTurnInProgress})
	s.must(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread}, nil)
	s.waitTurnCompleted(t, &from, thread)
	s.wantErr(t, protocol.TurnInterrupt.Name, protocol.TurnInterruptParams{ThreadID: thread, TurnID: turnID}, wireErr{Code: protocol.CodeTurnMismatch})
	if it := s.readThread(t, thread).Turns[0].Items[0]; it.Images != 2 {
		t.Errorf("user item images = %d, want 2", it.Images)
	}

	// Failed turns carry the classified error; an exhausted script is a
	// provider failure.
	for model, kind := range map[string]string{"fail": protocol.ErrorKindRateLimit, "empty": protocol.ErrorKindProvider} {
		s.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: model}}, nil)
		_, from := s.startTurn(t, thread, "fail please")
		done := s.waitTurnCompleted(t, &from, thread)
		if done.Status != "failed" || done.Error == nil || done.Error.Kind != kind || done.Error.Message == "" {
			t.Errorf("model %s: turn ended %s, want failed with kind %s", model, mustJSON(done), kind)
		}
	}

	// thread/read and thread/resume refusals.
	s.wantErr(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: "no-such-thread"}, wireErr{Code: protocol.CodeThreadNotFound})
	s.wantErr(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: "no-such-thread"}, wireErr{Code: protocol.CodeThreadNotFound})
	s.wantErr(t, protocol.ThreadRead.Name, protocol.ThreadReadParams{ThreadID: thread, Cursor: "bogus"}, wireErr{Code: protocol.CodeInvalidCursor})
	s.wantErr(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread, Cursor: "bogus"}, wireErr{Code: protocol.CodeInvalidCursor})

	// Listing: the saved thread, newest first, with its live status.
	var list protocol.ThreadListResult
	s.must(t, protocol.ThreadList.Name, protocol.ThreadListParams{Cwd: repo}, &list)
	if len(list.Threads) != 1 || list.Threads[0].ID != thread || list.Threads[0].Status == nil || list.Threads[0].Status.Type != "idle" || list.Threads[0].WorkspaceMode != "" {
		t.Errorf("thread/list = %s", mustJSON(list))
	}
	s.wantErr(t, protocol.ThreadList.Name, protocol.ThreadListParams{Cursor: "nope:1"}, wireErr{Code: protocol.CodeInvalidCursor})
	s.wantErr(t, protocol.ThreadList.Name, protocol.ThreadListParams{Limit: intp(500)}, invalid("limit"))
	s.wantErr(t, protocol.ThreadList.Name, protocol.ThreadListParams{Limit: intp(0)}, invalid("limit"))

	// Unsubscribe: once unsubscribed, then notSubscribed; an unknown thread
	// is notSubscribed.
	for _, c := range []struct{ thread, want string }{{thread, "unsubscribed"}, {thread, "notSubscribed"}, {"no-such-thread", "notSubscribed"}} {
		var res protocol.ThreadUnsubscribeResult
		s.must(t, protocol.ThreadUnsubscribe.Name, protocol.ThreadUnsubscribeParams{ThreadID: c.thread}, &res)
		if res.Status != c.want {
			t.Errorf("unsubscribe %s: %s, want %s", c.thread, res.Status, c.want)
		}
	}
}

// startTurnImages starts a turn with images and returns its id.
func (s *diffServer) startTurnImages(t *testing.T, threadID string, images []protocol.ImageInput) (string, int) {
	t.Helper()
	from := s.mark()
	s.must(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: threadID, Text: "look at these", Images: images}, nil)
	raw := s.waitNote(t, &from, protocol.TurnStarted.Name, func(r json.RawMessage) bool { return threadOf(r) == threadID })
	return decode[protocol.TurnStartedParams](t, raw).Turn.ID, from
}

// TestE2EShutdownAndNonGit closes stdin while a turn runs: the turn ends
// interrupted with its end entry written and the lock released (a new
// server resumes it). A thread outside git runs turns without file totals.
// server/diagnostics counts the loaded threads.
func TestE2EShutdownAndNonGit(t *testing.T) {
	t.Parallel()
	plain, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	writeScripts(t, home, map[string]string{
		"write": script(
			map[string]any{"toolCalls": []any{call("w", "write", map[string]any{"path": "notes.txt", "content": "hi\n"})}},
			map[string]any{"text": "written"},
		),
		"slow": script(map[string]any{"text": "a reply the shutdown interrupts", "delayMs": 60000}),
	})
	a := startIn(t, home)
	thread := a.startThread(t, plain, "write")
	from := a.mark()
	a.must(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "write a file"}, nil)
	if done := a.waitTurnCompleted(t, &from, thread); done.Status != "completed" || done.Files != nil {
		t.Errorf("turn outside git: %s", mustJSON(done))
	}
	// thread/turn/completed went out before; nothing about diffs follows.
	a.waitNote(t, &from, protocol.ThreadTurnCompleted.Name, func(r json.RawMessage) bool { return threadOf(r) == thread })
	if readFile(t, plain, "notes.txt") != "hi\n" {
		t.Error("the write did not happen")
	}
	var diag protocol.ServerDiagnosticsResult
	a.must(t, protocol.ServerDiagnostics.Name, protocol.ServerDiagnosticsParams{}, &diag)
	if diag.LoadedThreads != 1 || diag.LoadingThreads != 0 {
		t.Errorf("diagnostics: %+v", diag.ThreadCounters)
	}

	a.must(t, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{ThreadID: thread, Model: &protocol.ModelRef{Provider: "scripted", ID: "slow"}}, nil)
	_, from = a.startTurn(t, thread, "this turn is shut down")
	a.waitNote(t, &from, protocol.ItemAgentMessageDelta.Name, nil)
	a.close(t)
	var methods []string
	for _, n := range a.since(0) {
		methods = append(methods, n.Method)
	}
	if !slices.Contains(methods, protocol.TurnCompletedNotification.Name) {
		t.Errorf("no turn/completed before the server exited: %q", methods)
	}
	if slices.Contains(methods, protocol.TurnDiffUpdated.Name) {
		t.Errorf("turn/diff/updated outside git: %q", methods)
	}

	b := startIn(t, home)
	var resumed protocol.ThreadResumeResult
	b.must(t, protocol.ThreadResume.Name, protocol.ThreadResumeParams{ThreadID: thread}, &resumed)
	if len(resumed.Turns) != 2 {
		t.Fatalf("turns after the shutdown: %s", mustJSON(resumed.Turns))
	}
	last := resumed.Turns[1]
	if last.Status != "interrupted" || last.CompletedAt == 0 || last.Files != nil {
		t.Errorf("the shut-down turn reads back %s", mustJSON(last))
	}
}
