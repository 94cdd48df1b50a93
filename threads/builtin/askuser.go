package builtin

import (
	"context"
	"errors"
	"fmt"

	"github.com/knightcode/knightcode/agent/tools"
	"github.com/knightcode/knightcode/threads/ext"
)

// AskUserPath is the Path of the ask_user extension.
const AskUserPath = ext.BuiltinPathPrefix + "ask_user"

// errNoUI is ask_user's answer in a thread with no dialogs.
var errNoUI = fmt.Errorf("%w: no UI is attached to this thread (it was loaded by a terminal-mode connection), so the user cannot be asked; continue without asking", tools.ErrNoUI)

// AskUser is the extension that gives the model the ask_user tool
// (tools.AskUser: its schema, argument checks and result; spec "Dialogs
// and extension UI"). A call asks the person through the thread's
// UI.Questions (item/toolCall/requestUserInput, routed as approvals are);
// on a thread without UI the model is told no one can be asked; when the
// person dismisses the questions (or nobody can be asked) the call fails
// and the turn ends interrupted (Thread.Abort), as turn/interrupt does.
func AskUser() ext.Extension {
	return ext.Extension{Path: AskUserPath, Load: func(api *ext.API) error {
		def := tools.NewAskUser(nil).Definition()
		return api.RegisterTool(ext.Tool{
			Name: def.Name, Label: "Ask the user", Description: def.Description, Parameters: def.Parameters,
			Execute: askUser,
		})
	}}
}

// askUser runs one ask_user call through tools.AskUser, asking with th's
// UI.
func askUser(ctx context.Context, th *ext.Thread, call ext.ToolCall) (ext.ToolResult, error) {
	tool := tools.NewAskUser(func(ctx context.Context, _ string, qs []tools.Question) (map[string]tools.Answer, error) {
		if !th.HasUI {
			return nil, errNoUI
		}
		asked := make([]ext.Question, len(qs))
		for i, q := range qs {
			asked[i] = ext.Question{ID: q.ID, Text: q.Text, Options: make([]ext.QuestionOption, len(q.Options))}
			for j, o := range q.Options {
				asked[i].Options[j] = ext.QuestionOption{Label: o.Label, Description: o.Description}
			}
		}
		answers, err := th.UI.Questions(ctx, call.ID, asked)
		if errors.Is(err, ext.ErrDismissed) {
			// The turn stops before the model reads the result.
			th.Abort()
			return nil, tools.ErrDismissed
		}
		if err != nil {
			return nil, err
		}
		out := make(map[string]tools.Answer, len(answers))
		for id, a := range answers {
			out[id] = tools.Answer{Label: a.Label, Note: a.Note, Other: a.Other}
		}
		return out, nil
	})
	res := tool.Execute(ctx, call.Input)
	return ext.ToolResult{Content: res.Content, IsError: res.IsError}, nil
}
