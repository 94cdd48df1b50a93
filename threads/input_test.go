package threads

import (
	"testing"

	"github.com/knightcode/knightcode/agent"
)

// TestInputMessage checks the user message of an input: its text first,
// then its images; the typed text is kept apart when review comments were
// quoted after it, and images and comments count as attachments.
func TestInputMessage(t *testing.T) {
	img := agent.ContentBlock{Type: agent.ContentImage, Data: "ZGF0YQ==", MimeType: "image/png"}
	in := input{text: "look", images: []agent.ContentBlock{img, img}}
	msg := in.message()
	if msg.Role != agent.RoleUser || msg.Text() != "look" || len(msg.Content) != 3 || msg.Typed != "" {
		t.Errorf("message %+v", msg)
	}
	in.comments, in.quoted = make([]agent.ReviewComment, 1), "Review comments on the diff"
	msg = in.message()
	if msg.Text() != "look\n\nReview comments on the diff" || msg.Typed != "look" || len(msg.Comments) != 1 {
		t.Errorf("message with comments %+v", msg)
	}
	if n := in.attachments(); n != 3 {
		t.Errorf("attachments = %d, want 3", n)
	}
}
