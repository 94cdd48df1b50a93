package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
)

func TestParseQuestions(t *testing.T) {
	t.Parallel()
	opts := `[{"label":"A (Recommended)","description":"d"},{"label":"B"}]`
	cases := []struct {
		args, err string
	}{
		{`{"questions":[{"id":"q","text":"Q?","options":` + opts + `}]}`, ""},
		{`{"questions":[]}`, "give 1 to 20 questions"},
		{`{}`, "give 1 to 20 questions"},
		{`{"questions":[{"id":"","text":"Q?","options":` + opts + `}]}`, "questions[0].id is empty"},
		{`{"questions":[{"id":"q","text":"Q?","options":` + opts + `},{"id":"q","text":"R?","options":` + opts + `}]}`, `questions[1].id "q" is used twice`},
		{`{"questions":[{"id":"q","text":" ","options":` + opts + `}]}`, "questions[0].text is empty"},
		{`{"questions":[{"id":"q","text":"Q?","options":[]}]}`, "needs 1 to 20 options"},
		{`{"questions":[{"id":"q","text":"Q?","options":[{"label":"A"},{"label":"A"}]}]}`, `options[1].label "A" is used twice`},
		{`{"questions":[{"id":"q","text":"Q?","options":[{"label":""}]}]}`, "options[0].label is empty"},
		{`{"questions":[{"id":"q","text":"Q?","options":` + opts + `,"extra":1}]}`, "unknown field"},
	}
	for _, c := range cases {
		_, err := ParseQuestions(json.RawMessage(c.args))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.args, err, c.err)
		}
	}
}

func TestAskUserExecute(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"questions":[{"id":"q","text":"Q?","options":[{"label":"A"}]},{"id":"r","text":"R?","options":[{"label":"B"}]}]}`)
	var gotID string
	var gotQs []Question
	tool := NewAskUser(func(_ context.Context, callID string, qs []Question) (map[string]Answer, error) {
		gotID, gotQs = callID, qs
		return map[string]Answer{"q": {Label: "A", Note: "n"}}, nil
	})
	res := tool.Execute(context.Background(), args)
	if res.IsError || res.Content[0].Text != `{"answers":{"q":{"label":"A","note":"n"}}}` {
		t.Errorf("result %+v", res)
	}
	if gotID != "" || len(gotQs) != 2 || gotQs[1].Options[0].Label != "B" {
		t.Errorf("asked %q %+v", gotID, gotQs)
	}
	for _, err := range []error{fmt.Errorf("x: %w", ErrNoUI), ErrDismissed} {
		res := NewAskUser(func(context.Context, string, []Question) (map[string]Answer, error) { return nil, err }).Execute(context.Background(), args)
		if !res.IsError || !strings.Contains(res.Content[0].Text, err.Error()) {
			t.Errorf("%v: %+v", err, res)
		}
	}
	if diff := cmp.Diff(tool.Definition().Name, AskUserName); diff != "" {
		t.Error(diff)
	}
	var _ agent.Tool = tool
}
