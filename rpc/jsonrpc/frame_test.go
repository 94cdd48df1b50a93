package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readAll reads every line of input with limit max, rendering a dropped line
// as "TOO LONG <size>" and the final error as "ERR <text>".
func readAll(input string, max int) []string {
	lr := newLineReader(strings.NewReader(input), max)
	var out []string
	for {
		line, err := lr.next()
		var tl *lineTooLongError
		switch {
		case errors.As(err, &tl):
			out = append(out, "TOO LONG "+itoa(tl.size))
		case err != nil:
			if !errors.Is(err, io.EOF) {
				out = append(out, "ERR "+err.Error())
			}
			return out
		default:
			out = append(out, string(line))
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestLineReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		max   int
		want  []string
	}{
		{"lines", "a\nbb\n", 10, []string{"a", "bb"}},
		{"crlf", "a\r\nb\r\n", 10, []string{"a", "b"}},
		{"final line without newline", "a\nb", 10, []string{"a", "b"}},
		{"empty lines kept", "\n\na\n", 10, []string{"", "", "a"}},
		{"exactly the limit", "12345\n", 5, []string{"12345"}},
		{"one over the limit", "123456\nok\n", 5, []string{"TOO LONG 6", "ok"}},
		{"oversized at end of input", "ok\n1234567", 5, []string{"ok", "TOO LONG 7"}},
		{"oversized then more", "x\n" + strings.Repeat("y", 200000) + "\nz\n", 1000, []string{"x", "TOO LONG 200000", "z"}},
		{"long line under a big limit", strings.Repeat("q", 150000) + "\n", 200000, []string{strings.Repeat("q", 150000)}},
		{"empty input", "", 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := readAll(tt.input, tt.max)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("lines (-got +want):\n%s", diff)
			}
		})
	}
}

// TestLineReaderKeepsPrefix checks that an oversized line's first bytes are
// kept so its id can be recovered.
func TestLineReaderKeepsPrefix(t *testing.T) {
	t.Parallel()
	line := `{"id":"big-1","method":"x","params":"` + strings.Repeat("a", 100000) + `"}` + "\n"
	lr := newLineReader(strings.NewReader(line), 1000)
	_, err := lr.next()
	var tl *lineTooLongError
	if !errors.As(err, &tl) {
		t.Fatalf("next: got %v, want a lineTooLongError", err)
	}
	if got, want := string(recoverID(tl.prefix)), `"big-1"`; got != want {
		t.Errorf("recovered id %s, want %s", got, want)
	}
	if got, want := len(tl.prefix), idPrefixBytes; got != want {
		t.Errorf("prefix length %d, want %d", got, want)
	}
}

func TestDecodeLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line     string
		wantKind msgKind
		wantID   string // request/response id, or the recovered id of a bad line
		wantErr  bool
	}{
		{`{"id":1,"method":"m"}`, kindRequest, `1`, false},
		{`{"id":"a b","method":"m","params":{}}`, kindRequest, `"a b"`, false},
		{`{"jsonrpc":"2.0","id":-2.5e3,"method":"m"}`, kindRequest, `-2.5e3`, false},
		{`{"method":"m"}`, kindNotification, ``, false},
		{`{"id":3,"result":{}}`, kindResponse, `3`, false},
		{`{"id":3,"result":null}`, kindResponse, `3`, false},
		{`{"id":3,"error":{"code":"x","message":"y"}}`, kindResponse, `3`, false},
		// JSON-RPC 2.0's numeric code, or an error of any other shape, is
		// still an error reply (issue 22), and a null error is no error.
		{`{"id":3,"error":{"code":-32000,"message":"no"}}`, kindResponse, `3`, false},
		{`{"id":3,"error":"no"}`, kindResponse, `3`, false},
		{`{"id":3,"result":{},"error":null}`, kindResponse, `3`, false},
		{`{"id":3,"error":null}`, 0, `3`, true},
		// A "method" member makes a request even when empty (QA H1): it is
		// answered methodNotFound, never taken for a reply.
		{`{"id":77,"method":""}`, kindRequest, `77`, false},
		{`{"id":78,"method":"","params":{}}`, kindRequest, `78`, false},
		{`{"method":""}`, kindNotification, ``, false},
		// A reply with a null id (the peer could not read our request) is
		// a response to nobody: logged and dropped by routeReply.
		{`{"id":null,"error":{"code":"parseError","message":"y"}}`, kindResponse, ``, false},
		// An id with neither method, result nor error is malformed; its id
		// is kept so the line is answered parseError (QA H1).
		{`{"id":79}`, 0, `79`, true},
		{`{"id":"q","params":{}}`, 0, `"q"`, true},
		// A request with a null id cannot be answered by id: an error
		// notification, never silence (QA E3).
		{`{"id":null,"method":"m"}`, 0, ``, true},
		{`{"id":null,"method":"thread/start","params":{"cwd":"/"}}`, 0, ``, true},
		{`{"id":null}`, 0, ``, true},
		{`{"id":true,"method":"m"}`, 0, ``, true},
		{`{"id":{},"method":"m"}`, 0, ``, true},
		{`{}`, 0, ``, true},
		{`[1,2]`, 0, ``, true},
		{`garbage`, 0, ``, true},
		{`{"id":7,"method":`, 0, `7`, true},
		{`{"id":"x\"y","method":5}`, 0, `"x\"y"`, true},
		{`{"method":"m","params":{"a":[1,2]},"id":  42 , "x":`, 0, `42`, true},
		{`{"id":1} trailing`, 0, `1`, true},
		{`{"params":{"id":9},"method":`, 0, ``, true},
		// A member of the message given twice has no one meaning
		// (encoding/json keeps the last; final QA: a second "method" ran
		// thread/archive, a second "result" consented): a bad line, with
		// its id unless the id is what is given twice; a reply's is
		// marked reply, so a pending call settles as an error (decline).
		{`{"id":5,"method":"git/status","method":"thread/archive","params":{}}`, 0, `5`, true},
		{`{"id":5,"method":"m","params":{"a":1},"params":{"a":2}}`, 0, `5`, true},
		{`{"id":1,"result":{"decision":"decline"},"result":{"decision":"accept"}}`, 0, `1`, true},
		{`{"id":1,"error":{"code":"x","message":"y"},"error":{"code":"x","message":"z"}}`, 0, `1`, true},
		{`{"id":9001,"id":9002,"method":"m"}`, 0, ``, true},
		{`{"method":"m","method":"n"}`, 0, ``, true},
		{`{"id":5,"method":"m","params":{"a":1,"a":2}}`, kindRequest, `5`, false}, // params' own: decodeParams
	}
	for _, tt := range tests {
		m, kind, err := decodeLine([]byte(tt.line))
		if (err != nil) != tt.wantErr {
			t.Errorf("decodeLine(%s): error %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		var gotID string
		if err != nil {
			bl := err.(*badLineError)
			gotID = string(bl.id)
			if wantReply := strings.Contains(tt.line, `"result"`) || strings.Contains(tt.line, `"error"`); strings.Contains(bl.reason, "more than once") && bl.reply != wantReply {
				t.Errorf("decodeLine(%s): reply %v, want %v", tt.line, bl.reply, wantReply)
			}
		} else {
			gotID = string(m.ID)
		}
		if kind != tt.wantKind || gotID != tt.wantID {
			t.Errorf("decodeLine(%s) = kind %d id %q, want kind %d id %q", tt.line, kind, gotID, tt.wantKind, tt.wantID)
		}
	}
}

// FuzzReadFrame feeds arbitrary input to the line reader and decoder. It
// checks that lines never exceed the limit or contain a newline, that the
// bytes read add up to the input, and that a recovered id is a JSON string
// or number found in the line.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"initialize","params":{}}`+"\n"), 64)
	f.Add([]byte("garbage\n{\"id\":\"a\",\"method\":\n"), 16)
	f.Add([]byte("\r\n\n{\"method\":\"initialized\"}"), 8)
	f.Fuzz(func(t *testing.T, input []byte, max int) {
		if max < 1 || max > 1<<16 {
			return
		}
		lr := newLineReader(bytes.NewReader(input), max)
		var total int64
		for range len(input) + 2 {
			line, err := lr.next()
			var tl *lineTooLongError
			if errors.As(err, &tl) {
				if tl.size <= int64(max) {
					t.Fatalf("dropped a line of %d bytes under the limit %d", tl.size, max)
				}
				total += tl.size
				continue
			}
			if err != nil {
				break
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("bad line %q (limit %d)", line, max)
			}
			total += int64(len(line))
			m, kind, derr := decodeLine(line)
			if derr != nil {
				if id := derr.(*badLineError).id; id != nil && (!validID(id) || !bytes.Contains(line, id)) {
					t.Fatalf("recovered id %q from %q", id, line)
				}
				continue
			}
			if kind == kindRequest && !validID(m.ID) {
				t.Fatalf("request with id %q", m.ID)
			}
		}
		newlines := int64(bytes.Count(input, []byte("\n")))
		crs := int64(bytes.Count(input, []byte("\r\n")))
		if total > int64(len(input))-newlines || total < int64(len(input))-newlines-crs {
			t.Fatalf("read %d content bytes of %d input bytes with %d newlines", total, len(input), newlines)
		}
	})
}
