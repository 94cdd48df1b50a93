package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/knightcode/knightcode/agent"
)

// AskUserName is the name of the ask_user tool.
const AskUserName = "ask_user"

// Bounds of ask_user's arguments.
const (
	// MaxAskQuestions is the most questions one call may ask.
	MaxAskQuestions = 20
	// MaxAskOptions is the most options one question may offer.
	MaxAskOptions = 20
)

var (
	// ErrNoUI is returned (wrapped) by an AskFunc when no person can be
	// asked (a thread without dialogs); the model gets the error's text.
	ErrNoUI = errors.New("no UI is attached")
	// ErrDismissed is returned (wrapped) by an AskFunc when the person
	// dismissed the questions; the caller stops the turn.
	ErrDismissed = errors.New("the user dismissed the questions")
)

// Question is one ask_user question: ID keys its answer, Text is shown,
// Options are the answers offered (a label ending in "(Recommended)" is the
// recommended one).
type Question struct {
	ID      string      `json:"id"`
	Text    string      `json:"text"`
	Options []AskOption `json:"options"`
}

// AskOption is one answer an ask_user question offers.
type AskOption struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Answer is the person's answer to one question: the chosen option's Label
// with an optional Note, or Other, their own answer (Label empty).
type Answer struct {
	Label string `json:"label,omitempty"`
	Note  string `json:"note,omitempty"`
	Other string `json:"other,omitempty"`
}

// AskFunc asks the person the questions of the call callID all at once and
// returns their answers by question id (a skipped question is absent). It
// returns an error wrapping ErrDismissed when they dismissed the questions,
// one wrapping ErrNoUI when nobody can be asked, or ctx's error.
type AskFunc func(ctx context.Context, callID string, questions []Question) (map[string]Answer, error)

// AskUser is the ask_user tool: {questions: [{id, text, options: [{label,
// description?}]}]}. It asks the person through Ask and gives the model
// their answers as JSON {"answers": {"<id>": {"label", "note"?} |
// {"other"}}}, a skipped question left out (spec: Dialogs and extension
// UI).
type AskUser struct {
	Ask AskFunc
}

// NewAskUser returns the ask_user tool asking through ask.
func NewAskUser(ask AskFunc) *AskUser { return &AskUser{Ask: ask} }

var askUserSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "questions": {
      "type": "array",
      "minItems": 1,
      "maxItems": 20,
      "description": "The questions, asked all at once",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "description": "A short unique id; the answer is keyed by it"},
          "text": {"type": "string", "description": "The question"},
          "options": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "items": {
              "type": "object",
              "properties": {
                "label": {"type": "string", "description": "The answer as shown; end it with \"(Recommended)\" for the one you recommend"},
                "description": {"type": "string", "description": "What choosing it means"}
              },
              "required": ["label"],
              "additionalProperties": false
            }
          }
        },
        "required": ["id", "text", "options"],
        "additionalProperties": false
      }
    }
  },
  "required": ["questions"],
  "additionalProperties": false
}`)

// Definition describes ask_user to the model.
func (t *AskUser) Definition() agent.ToolDefinition {
	return agent.ToolDefinition{
		Name: AskUserName,
		Description: "Ask the user one or more questions at once, each with options to choose from. " +
			"The user may pick an option (with a note), give their own answer, or skip a question. " +
			"Use it when a decision is the user's to make.",
		Parameters: askUserSchema,
	}
}

// ParseQuestions decodes and checks ask_user's arguments: 1 to
// MaxAskQuestions questions, each with a unique non-empty id, a non-empty
// text and 1 to MaxAskOptions options with unique non-empty labels.
func ParseQuestions(raw json.RawMessage) ([]Question, error) {
	var args struct {
		Questions []Question `json:"questions"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("%s: invalid arguments: %v", AskUserName, err)
	}
	qs := args.Questions
	if len(qs) == 0 || len(qs) > MaxAskQuestions {
		return nil, fmt.Errorf("%s: give 1 to %d questions, got %d", AskUserName, MaxAskQuestions, len(qs))
	}
	ids := map[string]bool{}
	for i, q := range qs {
		switch {
		case strings.TrimSpace(q.ID) == "":
			return nil, fmt.Errorf("%s: questions[%d].id is empty", AskUserName, i)
		case ids[q.ID]:
			return nil, fmt.Errorf("%s: questions[%d].id %q is used twice", AskUserName, i, q.ID)
		case strings.TrimSpace(q.Text) == "":
			return nil, fmt.Errorf("%s: questions[%d].text is empty", AskUserName, i)
		case len(q.Options) == 0 || len(q.Options) > MaxAskOptions:
			return nil, fmt.Errorf("%s: questions[%d] needs 1 to %d options, got %d", AskUserName, i, MaxAskOptions, len(q.Options))
		}
		ids[q.ID] = true
		labels := map[string]bool{}
		for j, o := range q.Options {
			if strings.TrimSpace(o.Label) == "" {
				return nil, fmt.Errorf("%s: questions[%d].options[%d].label is empty", AskUserName, i, j)
			}
			if labels[o.Label] {
				return nil, fmt.Errorf("%s: questions[%d].options[%d].label %q is used twice", AskUserName, i, j, o.Label)
			}
			labels[o.Label] = true
		}
	}
	return qs, nil
}

// Execute asks the questions (see AskUser). Bad arguments, no UI and a
// dismissal are error results.
func (t *AskUser) Execute(ctx context.Context, raw json.RawMessage) agent.ToolResult {
	qs, err := ParseQuestions(raw)
	if err != nil {
		return agent.ErrorResult(err.Error())
	}
	if t.Ask == nil {
		return agent.ErrorResult(AskUserName + ": " + ErrNoUI.Error())
	}
	answers, err := t.Ask(ctx, agent.CallID(ctx), qs)
	if err != nil {
		return agent.ErrorResult(AskUserName + ": " + err.Error())
	}
	if answers == nil {
		answers = map[string]Answer{}
	}
	b, err := json.Marshal(map[string]any{"answers": answers})
	if err != nil {
		return agent.ErrorResult(AskUserName + ": " + err.Error())
	}
	return textResult(string(b))
}
