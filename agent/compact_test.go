package agent_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/agent"
)

// blockingSummarizer streams nothing until ctx is cancelled, counting its
// requests: a model stuck in a summarizing request.
type blockingSummarizer struct {
	requests int
	started  chan struct{}
}

func (b *blockingSummarizer) Name() string { return "block" }

func (b *blockingSummarizer) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	b.requests++
	return func(yield func(agent.StreamEvent) bool) {
		close(b.started)
		<-ctx.Done()
		yield(agent.StreamEvent{Type: agent.StreamError, Err: ctx.Err()})
	}, nil
}

// TestRunInterruptedDuringCompaction checks the spec's "a start
// interrupted ... during compaction before the run ... completes
// interrupted without a model request": a history over the window less
// the reserve is compacted before the first request; interrupting the
// summarizing request ends the run with ErrInterrupted, the failed
// compaction reported, and no reply requested.
func TestRunInterruptedDuringCompaction(t *testing.T) {
	t.Parallel()
	history := []agent.Message{
		agent.UserText(strings.Repeat("old question ", 400), 1),
		{Role: agent.RoleAssistant, StopReason: agent.StopReasonStop, Content: []agent.ContentBlock{agent.TextBlock(strings.Repeat("old answer ", 400))}},
	}
	p := &blockingSummarizer{started: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-p.started
		cancel()
	}()
	var events []agent.EventType
	var endErr error
	opts := agent.Options{
		Provider: p, Model: "m",
		Compaction: agent.Compaction{Enabled: true, ContextWindow: 1000, ReserveTokens: 100, KeepRecentTokens: 10},
		OnEvent: func(e agent.Event) {
			events = append(events, e.Type)
			if e.Type == agent.EventCompactionEnd {
				endErr = e.Err
			}
		},
	}
	_, err := agent.Run(ctx, opts, history, []agent.Message{agent.UserText("new", 0)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run = %v, want ErrInterrupted", err)
	}
	if p.requests != 1 {
		t.Errorf("%d requests, want only the summarizing one", p.requests)
	}
	want := []agent.EventType{agent.EventMessageStart, agent.EventMessageEnd, agent.EventCompactionStart, agent.EventCompactionEnd}
	if len(events) != len(want) {
		t.Fatalf("events %v, want %v", events, want)
	}
	for i := range want {
		if events[i] != want[i] {
			t.Errorf("events %v, want %v", events, want)
			break
		}
	}
	if endErr == nil {
		t.Error("EventCompactionEnd has no error")
	}
}
