package rpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// The turn family (spec: "Threads and turns"): turn/start, turn/steer,
// turn/queue/add, turn/queue/remove and turn/interrupt. The handlers check
// the input (text, clientMessageId, images, the fields of review
// comments), read images given by path, and call the thread manager with
// a threads.Input; the manager quotes the comments from the thread's
// checkout and runs the turn.
//
// turn/start subscribes the caller. turn/start, turn/steer and
// turn/queue/add make the caller the thread's most recent initiating
// connection, asked first for approvals and dialogs (issue 11).
// turn/interrupt is a Concurrent method in the table so it never waits
// behind the thread's perThread queue; it answers as soon as the turn is
// cancelled, without waiting for it to end.

// registerTurn installs the turn/* handlers.
func registerTurn(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.TurnStart, core.turnStart)
	jsonrpc.Handle(srv, protocol.TurnSteer, core.turnSteer)
	jsonrpc.Handle(srv, protocol.TurnQueueAdd, core.turnQueueAdd)
	jsonrpc.Handle(srv, protocol.TurnQueueRemove, core.turnQueueRemove)
	jsonrpc.Handle(srv, protocol.TurnInterrupt, core.turnInterrupt)
}

// turnStart answers turn/start: threads.Manager.StartTurn of the checked
// input (turnInput), without waiting for the turn; its status is started,
// or handled or cancelled when the thread's extensions took the input. Errors: invalidParams
// for bad input; the manager's (threadNotFound, turnInProgress,
// worktreeDeleted, invalidParams "comments[i]..." for comments that do
// not fit the diff they name, "model" without a usable model).
func (c Core) turnStart(ctx context.Context, conn *jsonrpc.Conn, p protocol.TurnStartParams) (protocol.TurnStartResult, error) {
	in, err := turnInput(p.Text, p.ClientMessageID, p.Images, p.Comments)
	if err != nil {
		return protocol.TurnStartResult{}, err
	}
	status, threadID, err := c.Threads.StartTurn(ctx, conn, p.ThreadID, in, threads.TurnOptions{RequestID: p.RequestID})
	if err != nil {
		return protocol.TurnStartResult{}, err
	}
	// threadID is the effective target: a session-replacing command's new
	// thread (spec "Threads and turns").
	return protocol.TurnStartResult{Status: status, ThreadID: threadID, RequestID: p.RequestID}, nil
}

// turnSteer answers turn/steer with threads.Manager.Steer.
func (c Core) turnSteer(ctx context.Context, conn *jsonrpc.Conn, p protocol.TurnSteerParams) (protocol.TurnSteerResult, error) {
	return protocol.TurnSteerResult{}, c.Threads.Steer(ctx, conn.ID(), p.ThreadID, p.Text, p.ExpectedTurnID)
}

// turnQueueAdd answers turn/queue/add: threads.Manager.QueueAdd of the
// checked input (turnInput).
func (c Core) turnQueueAdd(ctx context.Context, conn *jsonrpc.Conn, p protocol.TurnQueueAddParams) (protocol.TurnQueueAddResult, error) {
	in, err := turnInput(p.Text, p.ClientMessageID, p.Images, p.Comments)
	if err != nil {
		return protocol.TurnQueueAddResult{}, err
	}
	id, err := c.Threads.QueueAdd(ctx, conn.ID(), p.ThreadID, in)
	if err != nil {
		return protocol.TurnQueueAddResult{}, err
	}
	return protocol.TurnQueueAddResult{QueueID: id}, nil
}

// turnQueueRemove answers turn/queue/remove with
// threads.Manager.QueueRemove.
func (c Core) turnQueueRemove(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnQueueRemoveParams) (protocol.TurnQueueRemoveResult, error) {
	removed, err := c.Threads.QueueRemove(ctx, p.ThreadID, p.QueueID)
	return protocol.TurnQueueRemoveResult{Removed: removed}, err
}

// turnInterrupt answers turn/interrupt with threads.Manager.Interrupt.
func (c Core) turnInterrupt(ctx context.Context, _ *jsonrpc.Conn, p protocol.TurnInterruptParams) (protocol.TurnInterruptResult, error) {
	return protocol.TurnInterruptResult{}, c.Threads.Interrupt(ctx, p.ThreadID, p.TurnID)
}

// turnInput checks the input of turn/start or turn/queue/add and returns it
// as the thread manager takes it. Errors are invalidParams naming the
// field: "text" when text, images and comments are all empty;
// "clientMessageId" beyond 128 characters; images[i] (or images[i].path,
// images[i].mimeType, images[i].data) as checkImage says; comments and
// comments[i].<field> as checkComments says.
func turnInput(text, clientMessageID string, images []protocol.ImageInput, comments []protocol.ReviewComment) (threads.Input, error) {
	in := threads.Input{Text: text, ClientMessageID: clientMessageID}
	if n := utf8.RuneCountInString(clientMessageID); n > protocol.MaxClientMessageIDChars {
		return threads.Input{}, protocol.InvalidParams("clientMessageId", "must be 1 to %d characters, got %d", protocol.MaxClientMessageIDChars, n)
	}
	if strings.TrimSpace(text) == "" && len(images) == 0 && len(comments) == 0 {
		return threads.Input{}, protocol.InvalidParams("text", "must not be empty")
	}
	for i, img := range images {
		b, err := checkImage(fmt.Sprintf("images[%d]", i), img)
		if err != nil {
			return threads.Input{}, err
		}
		in.Images = append(in.Images, b)
	}
	cs, err := checkComments(comments)
	if err != nil {
		return threads.Input{}, err
	}
	in.Comments = cs
	return in, nil
}

// checkImage checks one image and returns its content block. An inline
// image needs an image/* mimeType and non-empty standard base64 data; a
// path image must be an absolute path of a regular PNG, JPEG, GIF or WebP
// file (recognized by its first bytes, whatever its name) of at most
// protocol.MaxImageBytes, read here. Exactly one of the two forms may be used.
func checkImage(field string, img protocol.ImageInput) (agent.ContentBlock, error) {
	inline := img.MimeType != "" || img.Data != ""
	switch {
	case img.Path != "" && inline:
		return agent.ContentBlock{}, protocol.InvalidParams(field, "give either {path} or {mimeType, data}, not both")
	case img.Path == "" && !inline:
		return agent.ContentBlock{}, protocol.InvalidParams(field, "needs {path} or {mimeType, data}")
	case inline:
		mt := strings.ToLower(strings.TrimSpace(img.MimeType))
		if !strings.HasPrefix(mt, "image/") || len(mt) == len("image/") {
			return agent.ContentBlock{}, protocol.InvalidParams(field+".mimeType", "must be an image MIME type such as image/png, got %q", img.MimeType)
		}
		if img.Data == "" {
			return agent.ContentBlock{}, protocol.InvalidParams(field+".data", "must be non-empty base64")
		}
		if _, err := base64.StdEncoding.DecodeString(img.Data); err != nil {
			return agent.ContentBlock{}, protocol.InvalidParams(field+".data", "is not valid base64: %v", err)
		}
		return agent.ContentBlock{Type: agent.ContentImage, Data: img.Data, MimeType: mt}, nil
	}
	pf := field + ".path"
	if !filepath.IsAbs(img.Path) {
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "must be an absolute path, got %q", img.Path)
	}
	fi, err := os.Stat(img.Path)
	switch {
	case err != nil:
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s does not exist or cannot be read", img.Path)
	case fi.IsDir():
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s is a directory", img.Path)
	case !fi.Mode().IsRegular():
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s is not a regular file", img.Path)
	case fi.Size() > protocol.MaxImageBytes:
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s is %d bytes, more than the %d-byte limit", img.Path, fi.Size(), protocol.MaxImageBytes)
	}
	f, err := os.Open(img.Path)
	if err != nil {
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s cannot be read", img.Path)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, protocol.MaxImageBytes+1))
	if err != nil {
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s cannot be read", img.Path)
	}
	if len(data) > protocol.MaxImageBytes {
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s is more than the %d-byte limit", img.Path, protocol.MaxImageBytes)
	}
	mt := sniffImage(data)
	if mt == "" {
		return agent.ContentBlock{}, protocol.InvalidParams(pf, "%s is not a PNG, JPEG, GIF or WebP image", img.Path)
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

// checkComments checks the fields of review comments (spec: "Workspaces,
// diffs and git"; whether they fit the diff they name is the thread
// manager's check, when it quotes them). Errors are invalidParams naming
// the field: "comments" for more than protocol.MaxReviewComments;
// comments[i].path or .body when empty, .side other than "old" or "new",
// .startLine below 1, .endLine before startLine.
func checkComments(comments []protocol.ReviewComment) ([]agent.ReviewComment, error) {
	if len(comments) == 0 {
		return nil, nil
	}
	if len(comments) > protocol.MaxReviewComments {
		return nil, protocol.InvalidParams("comments", "at most %d comments, got %d", protocol.MaxReviewComments, len(comments))
	}
	out := make([]agent.ReviewComment, len(comments))
	for i, c := range comments {
		field := fmt.Sprintf("comments[%d]", i)
		switch {
		case c.Path == "":
			return nil, protocol.InvalidParams(field+".path", "must not be empty")
		case strings.TrimSpace(c.Body) == "":
			return nil, protocol.InvalidParams(field+".body", "must not be empty")
		case c.Side != protocol.ReviewSideOld && c.Side != protocol.ReviewSideNew:
			return nil, protocol.InvalidParams(field+".side", `must be "old" or "new", got %q`, c.Side)
		case c.StartLine < 1:
			return nil, protocol.InvalidParams(field+".startLine", "must be at least 1, got %d", c.StartLine)
		case c.EndLine < c.StartLine:
			return nil, protocol.InvalidParams(field+".endLine", "must not be before startLine %d, got %d", c.StartLine, c.EndLine)
		}
		out[i] = agent.ReviewComment(c)
	}
	return out, nil
}
