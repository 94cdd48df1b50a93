package threads

import "github.com/knightcode/knightcode/agent"

// Input is a user input for a turn (turn/start, turn/queue/add), as the
// caller checked it (package rpc checks the wire's fields and reads the
// images given by path): Text is what the user typed; Images are content
// blocks of type agent.ContentImage (base64 Data, MimeType);
// ClientMessageID is echoed on the turn's first live userMessage item;
// Comments are review comments whose fields were checked (path and body
// not empty, side "old" or "new", 1 <= startLine <= endLine): the manager
// quotes their lines from the diff they name (quoteComments).
type Input struct {
	Text            string
	ClientMessageID string
	Images          []agent.ContentBlock
	Comments        []agent.ReviewComment
}

// input is a validated user input: its text, images as content blocks, the
// client's message id, and its review comments with the block quoting
// their lines for the model (quoteComments). intercepted says the
// thread's extensions already had it (extensions.go): text and images are
// as their input handlers left them.
type input struct {
	text            string
	images          []agent.ContentBlock
	clientMessageID string
	comments        []agent.ReviewComment
	quoted          string
	intercepted     bool
}

// queuedInput is an input waiting in the thread's queue.
type queuedInput struct {
	input
	id string
}

// message returns the user message of the input, stamped now by the agent.
func (in input) message() agent.Message { return in.messageWith(in.text) }

// messageWith returns the user message of the input with text (the typed
// text, or its expansion) as what the model gets, followed by the quoted
// review comments; Typed keeps the typed text when the two differ, and
// Comments the comments, for the userMessage item.
func (in input) messageWith(text string) agent.Message {
	body := text
	if in.quoted != "" {
		if body != "" {
			body += "\n\n"
		}
		body += in.quoted
	}
	content := make([]agent.ContentBlock, 0, 1+len(in.images))
	content = append(content, agent.TextBlock(body))
	content = append(content, in.images...)
	msg := agent.Message{Role: agent.RoleUser, Content: content, Comments: in.comments}
	if body != in.text {
		msg.Typed = in.text
	}
	return msg
}

// attachments counts what the input carries that its text alone does not:
// images and review comments (turn/queue/updated's attachments).
func (in input) attachments() int { return len(in.images) + len(in.comments) }
