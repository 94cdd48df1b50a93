package threads

import (
	"context"
	"errors"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/internal/coreerr"
)

// ReasonNoModel is the invalidParams data.reason of [Manager.Ask] when the
// thread has no model selected (issue 10's decisions).
const ReasonNoModel = "noModel"

// Ask sends prompt as one user message to the loaded thread's selected
// model (provider, model and thinking level as its next turn would use
// them) and returns the text of the answer. It runs outside the
// conversation: no system prompt, no history, no tools, no item, no
// notification, nothing written to the session; the thread's turns are
// not affected (spec git/commit: the message is written "outside the
// conversation"). Errors: ErrThreadNotFound; invalidParams field
// "message" with reason "noModel" when the thread has no model selected,
// field "model" when its model is no longer available; a [*ModelError]
// for the provider's failure (or an answer that never came); ctx's error.
func (m *Manager) Ask(ctx context.Context, threadID, prompt string) (string, error) {
	t, err := m.lookup(threadID)
	if err != nil {
		return "", err
	}
	var (
		req    agent.Request
		stream agent.Streamer
		model  *ModelError // Provider and Model for a failure
	)
	err = t.call(ctx, func() error {
		if t.settings.Provider == "" || t.settings.Model == "" {
			return coreerr.ParamReason("message", ReasonNoModel, "no model is selected for this thread to write it: give a message, or pick one of model/list with thread/settings/update {threadId, model: {provider, id}}")
		}
		p, mdl, level, err := t.resolveModel()
		if err != nil {
			return err
		}
		stream = p
		model = &ModelError{Provider: t.settings.Provider, Model: mdl.ID}
		req = agent.Request{Model: mdl.ID, ThinkingLevel: level,
			Messages: []agent.Message{agent.UserText(prompt, time.Now().UnixMilli())}}
		return nil
	})
	if err != nil {
		return "", err
	}
	failed := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		model.Err, model.Kind = err, agent.ErrorKind(err)
		return model
	}
	events, err := stream.Stream(ctx, req)
	if err != nil {
		return "", failed(err)
	}
	for e := range events {
		switch e.Type {
		case agent.StreamDone:
			return e.Message.Text(), nil
		case agent.StreamError:
			if e.Err == nil {
				return "", failed(errors.New("the model request failed"))
			}
			return "", failed(e.Err)
		}
	}
	return "", failed(errors.New("the model's stream ended without an answer"))
}

// WorktreeBaseRef is the baseRef the loaded thread's worktree was created
// from, as it was given (the registry's BaseRef, else the session
// header's): "" for a thread in the user's checkout, a worktree created at
// the checkout's HEAD, or an unknown thread. git/pr/create uses it as
// --base when it names a branch (issue 10's decisions).
func (m *Manager) WorktreeBaseRef(threadID string) string {
	t, err := m.lookup(threadID)
	if err != nil {
		return ""
	}
	return m.place.baseRef(t.ws)
}
