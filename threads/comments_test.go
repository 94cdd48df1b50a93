package threads

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestReviewComments checks review comments on turn/start and
// turn/queue/add (issue 14): the model gets the typed text followed by the
// commented lines quoted from the side of the diff the comment names; the
// userMessage item (live and read back) shows the typed text and the
// comments; the queue counts them as attachments; bad comments are
// invalidParams naming the field and start nothing.
func TestReviewComments(t *testing.T) {
	e := newPromptEnv(t, 3)
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.go", "package a\n\nfunc A() int {\n\treturn 1\n}\n")
	gittest.CommitAll(t, repo, "base")
	gittest.Write(t, repo, "a.go", "package a\n\nfunc A() int {\n\treturn 2 // changed\n}\n")
	ctx := context.Background()
	diff, err := e.m.cfg.Differ.Read(ctx, repo, diffscope.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub := newRecorder()
	res, err := e.m.Start(ctx, sub, StartOptions{Cwd: repo, ApprovalMode: protocol.ApprovalFullAccess, Model: &ModelRef{Provider: scripted.Name, ID: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	thread := res.Thread.ID
	comments := []protocol.ReviewComment{
		{Path: "a.go", Side: "new", StartLine: 3, EndLine: 4, Body: "Why 2?", FromTree: diff.FromTree, ToTree: diff.ToTree},
		{Path: "a.go", Side: "old", StartLine: 4, EndLine: 4, Body: "  The old value was fine.  ", FromTree: diff.FromTree, ToTree: diff.ToTree},
	}

	// The fields alone (side, lines, body) are rpc's checks
	// (rpc.TestTurnInputComments); these need the diff.
	bad := []struct {
		name  string
		edit  func(c *protocol.ReviewComment)
		field string
	}{
		{"endLine past the file", func(c *protocol.ReviewComment) { c.EndLine = 6 }, "comments[0].endLine"},
		{"unknown tree", func(c *protocol.ReviewComment) { c.ToTree = strings.Repeat("1", len(c.ToTree)) }, "comments[0].toTree"},
		{"not a tree id", func(c *protocol.ReviewComment) { c.FromTree = "HEAD" }, "comments[0].fromTree"},
		{"file in neither tree", func(c *protocol.ReviewComment) { c.Path = "nope.go" }, "comments[0].path"},
	}
	for _, b := range bad {
		c := comments[0]
		b.edit(&c)
		_, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "look", Comments: agentComments([]protocol.ReviewComment{c})}, TurnOptions{})
		if got := fieldOfErr(err); got != b.field {
			t.Errorf("%s: error %v, want invalidParams %s", b.name, err, b.field)
		}
	}
	if n := len(e.prov.requests()); n != 0 {
		t.Fatalf("refused comments started %d model requests", n)
	}

	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, thread, Input{Text: "Please look at these.", Comments: agentComments(comments)}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	raw := sub.wait(t, &from, protocol.ItemCompleted.Name, func(raw json.RawMessage) bool {
		var p protocol.ItemCompletedParams
		_ = json.Unmarshal(raw, &p)
		return p.Item.Type == protocol.ItemUserMessage
	})
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread))
	var live protocol.ItemCompletedParams
	if err := json.Unmarshal(raw, &live); err != nil {
		t.Fatal(err)
	}
	if live.Item.Text != "Please look at these." || !cmp.Equal(live.Item.Comments, comments) {
		t.Errorf("live userMessage: text %q, comments %+v", live.Item.Text, live.Item.Comments)
	}
	wantModel := "Please look at these.\n\n" +
		"Review comments on the diff (the commented lines are quoted):\n\n" +
		"a.go, new side, lines 3-4:\n" +
		"     3 | func A() int {\n" +
		"     4 | \treturn 2 // changed\n" +
		"Comment: Why 2?\n\n" +
		"a.go, old side, line 4:\n" +
		"     4 | \treturn 1\n" +
		"Comment: The old value was fine."
	reqs := e.prov.requests()
	if got := userTexts(reqs[0]); len(got) != 1 || got[0] != wantModel {
		t.Errorf("the model received:\n%s\nwant:\n%s", strings.Join(got, "\n---\n"), wantModel)
	}

	// Comments without text go too (turn/queue/add on an idle thread
	// starts at once); the item shows an empty text and the comment.
	from = sub.mark()
	if _, err := e.m.QueueAdd(ctx, 0, thread, Input{Comments: agentComments(comments[:1])}); err != nil {
		t.Fatal(err)
	}
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(thread))
	read, err := e.m.Read(ctx, thread, "")
	if err != nil {
		t.Fatal(err)
	}
	var users []protocol.Item
	for _, turn := range read.Turns {
		for _, it := range turn.Items {
			if it.Type == protocol.ItemUserMessage {
				it.ID, it.Index, it.CompletedAt = "", nil, 0
				users = append(users, it)
			}
		}
	}
	want := []protocol.Item{
		{Type: protocol.ItemUserMessage, Text: "Please look at these.", Comments: comments},
		{Type: protocol.ItemUserMessage, Text: "", Comments: comments[:1]},
	}
	if d := cmp.Diff(users, want); d != "" {
		t.Errorf("thread/read userMessages (-got +want):\n%s", d)
	}
	in := input{text: "x", comments: make([]agent.ReviewComment, 2), images: make([]agent.ContentBlock, 1)}
	if in.attachments() != 3 {
		t.Errorf("attachments = %d, want 3 (an image and two comments)", in.attachments())
	}
}

// agentComments converts wire review comments as rpc does.
func agentComments(cs []protocol.ReviewComment) []agent.ReviewComment {
	out := make([]agent.ReviewComment, len(cs))
	for i, c := range cs {
		out[i] = agent.ReviewComment(c)
	}
	return out
}

// fieldOfErr is the field of an invalidParams error ("" otherwise).
func fieldOfErr(err error) string {
	if pe, ok := errors.AsType[*coreerr.ParamError](err); ok {
		return pe.Field
	}
	return ""
}
