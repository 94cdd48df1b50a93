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
	"sync"
	"testing"

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
