package threads

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Input limits (spec: "Threads and turns").
const (
	// MaxClientMessageIDChars bounds clientMessageId, in characters (1-128).
	MaxClientMessageIDChars = 128
	// MaxImageBytes bounds an image file given by path: 20 MiB.
	MaxImageBytes = 20 << 20
)

// input is a validated user input: its text, images as content blocks, the
// client's message id, and its review comments with the block quoting
// their lines for the model (reviewComments).
type input struct {
	text            string
	images          []agent.ContentBlock
	clientMessageID string
	comments        []agent.ReviewComment
	quoted          string
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

// parseInput validates the text, clientMessageId and images of turn/start
// or turn/queue/add (hasComments: it carries review comments, checked by
// reviewComments). Errors are invalidParams naming the field: "text" when
// text, images and comments are all empty; "clientMessageId" beyond 128 characters;
// images[i] (or images[i].path, images[i].mimeType, images[i].data) as
// checkImage says.
func parseInput(text, clientMessageID string, images []protocol.ImageInput, hasComments bool) (input, error) {
	in := input{text: text, clientMessageID: clientMessageID}
	if n := utf8.RuneCountInString(clientMessageID); n > MaxClientMessageIDChars {
		return input{}, coreerr.Param("clientMessageId", "must be 1 to %d characters, got %d", MaxClientMessageIDChars, n)
	}
	if strings.TrimSpace(text) == "" && len(images) == 0 && !hasComments {
		return input{}, coreerr.Param("text", "must not be empty")
	}
	for i, img := range images {
		b, err := checkImage(fmt.Sprintf("images[%d]", i), img)
		if err != nil {
			return input{}, err
		}
		in.images = append(in.images, b)
	}
	return in, nil
}

// checkImage validates one image and returns its content block. An inline
// image needs an image/* mimeType and non-empty standard base64 data; a
// path image must be an absolute path of a regular PNG, JPEG, GIF or WebP
// file (recognized by its first bytes, whatever its name) of at most
// MaxImageBytes. Exactly one of the two forms may be used.
func checkImage(field string, img protocol.ImageInput) (agent.ContentBlock, error) {
	inline := img.MimeType != "" || img.Data != ""
	switch {
	case img.Path != "" && inline:
		return agent.ContentBlock{}, coreerr.Param(field, "give either {path} or {mimeType, data}, not both")
	case img.Path == "" && !inline:
		return agent.ContentBlock{}, coreerr.Param(field, "needs {path} or {mimeType, data}")
	case inline:
		mt := strings.ToLower(strings.TrimSpace(img.MimeType))
		if !strings.HasPrefix(mt, "image/") || len(mt) == len("image/") {
			return agent.ContentBlock{}, coreerr.Param(field+".mimeType", "must be an image MIME type such as image/png, got %q", img.MimeType)
		}
		if img.Data == "" {
			return agent.ContentBlock{}, coreerr.Param(field+".data", "must be non-empty base64")
		}
		if _, err := base64.StdEncoding.DecodeString(img.Data); err != nil {
			return agent.ContentBlock{}, coreerr.Param(field+".data", "is not valid base64: %v", err)
		}
		return agent.ContentBlock{Type: agent.ContentImage, Data: img.Data, MimeType: mt}, nil
	}
	pf := field + ".path"
	if !filepath.IsAbs(img.Path) {
		return agent.ContentBlock{}, coreerr.Param(pf, "must be an absolute path, got %q", img.Path)
	}
	fi, err := os.Stat(img.Path)
	switch {
	case err != nil:
		return agent.ContentBlock{}, coreerr.Param(pf, "%s does not exist or cannot be read", img.Path)
	case fi.IsDir():
		return agent.ContentBlock{}, coreerr.Param(pf, "%s is a directory", img.Path)
	case !fi.Mode().IsRegular():
		return agent.ContentBlock{}, coreerr.Param(pf, "%s is not a regular file", img.Path)
	case fi.Size() > MaxImageBytes:
		return agent.ContentBlock{}, coreerr.Param(pf, "%s is %d bytes, more than the %d-byte limit", img.Path, fi.Size(), MaxImageBytes)
	}
	f, err := os.Open(img.Path)
	if err != nil {
		return agent.ContentBlock{}, coreerr.Param(pf, "%s cannot be read", img.Path)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxImageBytes+1))
	if err != nil {
		return agent.ContentBlock{}, coreerr.Param(pf, "%s cannot be read", img.Path)
	}
	if len(data) > MaxImageBytes {
		return agent.ContentBlock{}, coreerr.Param(pf, "%s is more than the %d-byte limit", img.Path, MaxImageBytes)
	}
	mt := sniffImage(data)
	if mt == "" {
		return agent.ContentBlock{}, coreerr.Param(pf, "%s is not a PNG, JPEG, GIF or WebP image", img.Path)
	}
	return agent.ContentBlock{Type: agent.ContentImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mt}, nil
}

// sniffImage returns the MIME type of PNG, JPEG, GIF and WebP data by their
// signatures, else "".
func sniffImage(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	}
	return ""
}
