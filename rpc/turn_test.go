package rpc

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// invalidField is the field an invalidParams error names ("" for no
// error).
func invalidField(err error) string {
	if pe, ok := errors.AsType[*protocol.Error](err); ok && pe.Code == protocol.CodeInvalidParams {
		if d, ok := pe.Data.(protocol.InvalidParamsData); ok {
			return d.Field
		}
		return "(no field)"
	}
	if err != nil {
		return "not invalidParams: " + err.Error()
	}
	return ""
}

// TestTurnInput checks the input rules of turn/start and turn/queue/add:
// images inline or by path (PNG, JPEG, GIF, WebP by their first bytes, at
// most 20 MiB, absolute regular files), clientMessageId length, text.
func TestTurnInput(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"a.png":   append([]byte("\x89PNG\r\n\x1a\n"), 1, 2, 3),
		"a.jpg":   {0xFF, 0xD8, 0xFF, 0xE0, 0},
		"a.gif":   []byte("GIF89a..."),
		"a.webp":  []byte("RIFF\x10\x00\x00\x00WEBPVP8 "),
		"png.txt": append([]byte("\x89PNG\r\n\x1a\n"), 9), // the name does not matter
		"riff":    []byte("RIFF\x10\x00\x00\x00WAVEfmt "),
		"text":    []byte("hello"),
		"empty":   {},
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a.png"), filepath.Join(dir, "link.png")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, append(files["a.png"], make([]byte, protocol.MaxImageBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	limit := filepath.Join(dir, "limit.png")
	if err := os.WriteFile(limit, append(files["a.png"], make([]byte, protocol.MaxImageBytes-len(files["a.png"]))...), 0o644); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("data"))
	path := func(n string) protocol.ImageInput { return protocol.ImageInput{Path: filepath.Join(dir, n)} }
	for _, c := range []struct {
		name      string
		text, cid string
		images    []protocol.ImageInput
		field     string
		mimeTypes []string
	}{
		{name: "text only", text: "hi"},
		{name: "images only", images: []protocol.ImageInput{path("a.png")}, mimeTypes: []string{"image/png"}},
		{name: "every format", text: "x", images: []protocol.ImageInput{path("a.png"), path("a.jpg"), path("a.gif"), path("a.webp"), path("png.txt"), path("link.png"), {Path: limit}},
			mimeTypes: []string{"image/png", "image/jpeg", "image/gif", "image/webp", "image/png", "image/png", "image/png"}},
		{name: "inline", text: "x", images: []protocol.ImageInput{{MimeType: "image/svg+xml", Data: b64}}, mimeTypes: []string{"image/svg+xml"}},
		{name: "empty", text: " \n", field: "text"},
		{name: "clientMessageId 128", text: "x", cid: strings.Repeat("ü", 128)},
		{name: "clientMessageId 129", text: "x", cid: strings.Repeat("ü", 129), field: "clientMessageId"},
		{name: "missing", text: "x", images: []protocol.ImageInput{path("a.png"), path("nope.png")}, field: "images[1].path"},
		{name: "relative", text: "x", images: []protocol.ImageInput{{Path: "a.png"}}, field: "images[0].path"},
		{name: "directory", text: "x", images: []protocol.ImageInput{{Path: dir}}, field: "images[0].path"},
		{name: "not an image", text: "x", images: []protocol.ImageInput{path("text")}, field: "images[0].path"},
		{name: "RIFF but not WebP", text: "x", images: []protocol.ImageInput{path("riff")}, field: "images[0].path"},
		{name: "empty file", text: "x", images: []protocol.ImageInput{path("empty")}, field: "images[0].path"},
		{name: "oversized", text: "x", images: []protocol.ImageInput{{Path: big}}, field: "images[0].path"},
		{name: "device", text: "x", images: []protocol.ImageInput{{Path: "/dev/null"}}, field: "images[0].path"},
		{name: "inline text type", text: "x", images: []protocol.ImageInput{{MimeType: "text/plain", Data: b64}}, field: "images[0].mimeType"},
		{name: "inline bare image/", text: "x", images: []protocol.ImageInput{{MimeType: "image/", Data: b64}}, field: "images[0].mimeType"},
		{name: "inline no data", text: "x", images: []protocol.ImageInput{{MimeType: "image/png"}}, field: "images[0].data"},
		{name: "inline bad base64", text: "x", images: []protocol.ImageInput{{MimeType: "image/png", Data: "a b"}}, field: "images[0].data"},
		{name: "both", text: "x", images: []protocol.ImageInput{{MimeType: "image/png", Data: b64, Path: filepath.Join(dir, "a.png")}}, field: "images[0]"},
		{name: "neither", text: "x", images: []protocol.ImageInput{{}}, field: "images[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := turnInput(c.text, c.cid, c.images, nil)
			if got := invalidField(err); got != c.field {
				t.Fatalf("field %q, want %q (err %v)", got, c.field, err)
			}
			if err != nil {
				return
			}
			var mts []string
			for _, b := range in.Images {
				if b.Type != agent.ContentImage || b.Data == "" {
					t.Errorf("block %+v", b)
				}
				mts = append(mts, b.MimeType)
			}
			if diff := cmp.Diff(mts, c.mimeTypes); diff != "" {
				t.Errorf("mime types (-got +want):\n%s", diff)
			}
			if in.Text != c.text || in.ClientMessageID != c.cid || len(in.Images) != len(c.images) {
				t.Errorf("input %+v", in)
			}
		})
	}
}

// TestTurnInputComments checks the field rules of review comments on
// turn/start and turn/queue/add (issue 14): bad fields are invalidParams
// naming the field (whether a comment fits its diff is the thread
// manager's check: threads.TestReviewComments); comments alone are an
// input.
func TestTurnInputComments(t *testing.T) {
	good := protocol.ReviewComment{Path: "a.go", Side: "new", StartLine: 3, EndLine: 4, Body: "Why 2?", FromTree: strings.Repeat("a", 40), ToTree: strings.Repeat("b", 40)}
	bad := []struct {
		name  string
		edit  func(c *protocol.ReviewComment)
		field string
	}{
		{"side", func(c *protocol.ReviewComment) { c.Side = "left" }, "comments[0].side"},
		{"startLine", func(c *protocol.ReviewComment) { c.StartLine = 0 }, "comments[0].startLine"},
		{"endLine before start", func(c *protocol.ReviewComment) { c.EndLine = 2 }, "comments[0].endLine"},
		{"empty body", func(c *protocol.ReviewComment) { c.Body = " " }, "comments[0].body"},
		{"empty path", func(c *protocol.ReviewComment) { c.Path = "" }, "comments[0].path"},
	}
	for _, b := range bad {
		c := good
		b.edit(&c)
		_, err := turnInput("look", "", nil, []protocol.ReviewComment{c})
		if got := invalidField(err); got != b.field {
			t.Errorf("%s: error %v, want invalidParams %s", b.name, err, b.field)
		}
	}
	many := make([]protocol.ReviewComment, protocol.MaxReviewComments+1)
	for i := range many {
		many[i] = good
	}
	if _, err := turnInput("look", "", nil, many); invalidField(err) != "comments" {
		t.Errorf("%d comments: %v, want invalidParams comments", len(many), err)
	}
	in, err := turnInput("", "", nil, []protocol.ReviewComment{good})
	if err != nil {
		t.Fatalf("comments without text: %v", err)
	}
	if diff := cmp.Diff(in.Comments, []agent.ReviewComment{agent.ReviewComment(good)}); diff != "" {
		t.Errorf("comments (-got +want):\n%s", diff)
	}
}
