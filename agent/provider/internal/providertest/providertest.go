// Package providertest holds what the tests of the HTTP model providers
// (anthropic, openai) share: a server that answers each request with the
// next scripted step and records what was sent, and Collect, which reduces
// a stream to short text lines. Only tests import it (internal/depcheck).
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent"
)

// Step answers one request.
type Step func(w http.ResponseWriter, r *http.Request)

// Server replays its steps, one per request, and records each request's
// JSON body and headers in order. Read Bodies and Headers once the
// requests are answered.
type Server struct {
	mu      sync.Mutex
	steps   []Step
	Bodies  []map[string]any
	Headers []http.Header
}

// NewServer starts a Server; a request past the last step, or (when path
// is not "") to another URL path, is answered 418 with "unexpected request"
// and its path. A cleanup closes it.
func NewServer(t testing.TB, path string, steps ...Step) (*Server, *httptest.Server) {
	t.Helper()
	s := &Server{steps: steps}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		s.mu.Lock()
		n := len(s.Bodies)
		s.Bodies = append(s.Bodies, m)
		s.Headers = append(s.Headers, r.Header.Clone())
		s.mu.Unlock()
		if n >= len(s.steps) || (path != "" && r.URL.Path != path) {
			http.Error(w, "unexpected request "+r.URL.Path, http.StatusTeapot)
			return
		}
		s.steps[n](w, r)
	}))
	t.Cleanup(hs.Close)
	return s, hs
}

// Collect streams one request and returns its events in a short text form
// ("textDelta hi", "toolCall id name {args}") and the final message or
// error.
func Collect(ctx context.Context, p agent.Streamer, req agent.Request) ([]string, *agent.Message, error) {
	seq, err := p.Stream(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var evs []string
	for ev := range seq {
		switch ev.Type {
		case agent.StreamThinkingDelta, agent.StreamTextDelta:
			evs = append(evs, string(ev.Type)+" "+ev.Delta)
		case agent.StreamToolCall:
			evs = append(evs, fmt.Sprintf("toolCall %s %s %s", ev.ToolCall.ID, ev.ToolCall.Name, ev.ToolCall.Arguments))
		case agent.StreamDone:
			return evs, &ev.Message, nil
		case agent.StreamError:
			return evs, nil, ev.Err
		}
	}
	return evs, nil, errors.New("stream ended without done or error")
}

// WantAPIError fails t unless err is an *agent.APIError of kind with
// RetryAfter retry whose text does not hold secret.
func WantAPIError(t testing.TB, err error, kind string, retry time.Duration, secret string) {
	t.Helper()
	var ae *agent.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v (%T), want an *agent.APIError", err, err)
	}
	if got := agent.ErrorKind(err); got != kind {
		t.Errorf("kind = %q, want %q (%v)", got, kind, err)
	}
	if ae.RetryAfter != retry {
		t.Errorf("RetryAfter = %v, want %v", ae.RetryAfter, retry)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error text holds the API key: %v", err)
	}
}

// RunInterrupted runs agent.Run with p and model under a context cancelled
// at the first text delta, and fails t unless it ends with
// agent.ErrInterrupted; it returns the messages.
func RunInterrupted(t testing.TB, p agent.Streamer, model string) []agent.Message {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := agent.Options{Provider: p, Model: model, Retry: agent.DefaultRetryPolicy(),
		OnEvent: func(e agent.Event) {
			if e.Type == agent.EventTextDelta {
				cancel()
			}
		}}
	out, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("hi", 1)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run error = %v, want ErrInterrupted", err)
	}
	return out
}

// Status answers with an HTTP error code, a JSON body and the headers
// (name, value pairs).
func Status(code int, body string, headers ...string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// Drop writes the events as an event stream (each with write, the
// provider's framing), then closes the connection mid-stream.
func Drop(write func(w http.ResponseWriter, event string), events ...string) Step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			write(w, e)
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}
}
