package agent_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
)

// flakyProvider plays one attempt per request: each attempt streams its
// deltas, then fails with err or (err nil) ends with the text of its deltas.
type flakyProvider struct {
	mu       sync.Mutex
	attempts []flakyAttempt
	n        int
}

type flakyAttempt struct {
	deltas []string
	err    error
}

func (f *flakyProvider) Name() string { return "flaky" }

func (f *flakyProvider) Stream(ctx context.Context, req agent.Request) (iter.Seq[agent.StreamEvent], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n >= len(f.attempts) {
		return nil, errors.New("flaky provider exhausted")
	}
	a := f.attempts[f.n]
	f.n++
	return func(yield func(agent.StreamEvent) bool) {
		text := ""
		for _, d := range a.deltas {
			text += d
			if !yield(agent.StreamEvent{Type: agent.StreamTextDelta, Delta: d}) {
				return
			}
		}
		if a.err != nil {
			yield(agent.StreamEvent{Type: agent.StreamError, Err: a.err})
			return
		}
		yield(agent.StreamEvent{Type: agent.StreamDone, Message: agent.Message{Content: []agent.ContentBlock{agent.TextBlock(text)}}})
	}, nil
}

func TestRunRetries(t *testing.T) {
	rate := &agent.APIError{StatusCode: 429, RetryAfter: time.Millisecond, Message: "slow down"}
	server := &agent.APIError{StatusCode: 500, Message: "boom"}
	drop := errors.New("read tcp: connection reset by peer")
	auth := &agent.APIError{StatusCode: 401, Message: "bad key"}
	tooLong := &agent.APIError{StatusCode: 429, RetryAfter: time.Hour, Message: "come back later"}
	policy := agent.RetryPolicy{MaxRetries: 3, MaxDelay: time.Second, BaseDelay: time.Millisecond}
	tests := []struct {
		name     string
		attempts []flakyAttempt
		policy   agent.RetryPolicy
		events   []string
		text     string
		kind     string // of the run's error, "" for success
	}{{
		name:     "rateLimitThenServerErrorThenSuccess",
		attempts: []flakyAttempt{{err: rate}, {err: server}, {deltas: []string{"hi"}}},
		policy:   policy,
		events:   []string{"retry 1 1ms slow down", "retry 2 boom", "text hi"},
		text:     "hi",
	}, {
		name:     "dropAfterDeltasWithdrawsThePartialReply",
		attempts: []flakyAttempt{{deltas: []string{"par", "tial"}, err: drop}, {deltas: []string{"whole"}}},
		policy:   policy,
		events:   []string{"text par", "text tial", "reset partial", "retry 1 read tcp: connection reset by peer", "text whole"},
		text:     "whole",
	}, {
		name:     "authIsNotRetried",
		attempts: []flakyAttempt{{err: auth}},
		policy:   policy,
		kind:     agent.ErrorKindAuth,
	}, {
		name:     "retryAfterBeyondTheCapFailsAtOnce",
		attempts: []flakyAttempt{{err: tooLong}},
		policy:   policy,
		kind:     agent.ErrorKindRateLimit,
	}, {
		name:     "retriesAreBounded",
		attempts: []flakyAttempt{{err: server}, {err: server}, {err: server}},
		policy:   agent.RetryPolicy{MaxRetries: 2, BaseDelay: time.Millisecond},
		events:   []string{"retry 1 boom", "retry 2 boom"},
		kind:     agent.ErrorKindProvider,
	}, {
		name:     "zeroPolicyNeverRetries",
		attempts: []flakyAttempt{{err: rate}},
		kind:     agent.ErrorKindRateLimit,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &flakyProvider{attempts: tt.attempts}
			var events []string
			opts := agent.Options{Provider: p, Model: "m", Retry: tt.policy, OnEvent: func(e agent.Event) {
				switch e.Type {
				case agent.EventRetry:
					s := fmt.Sprintf("retry %d %v", e.Attempt, e.Err)
					if e.Attempt == 1 && tt.name == "rateLimitThenServerErrorThenSuccess" {
						s = fmt.Sprintf("retry %d %v %v", e.Attempt, e.Delay, e.Err)
					}
					if e.Delay > tt.policy.MaxDelay && tt.policy.MaxDelay > 0 {
						t.Errorf("delay %v beyond the cap %v", e.Delay, tt.policy.MaxDelay)
					}
					events = append(events, s)
				case agent.EventReplyReset:
					events = append(events, "reset "+e.Message.Text())
				case agent.EventTextDelta:
					events = append(events, "text "+e.Delta)
				}
			}}
			out, err := agent.Run(context.Background(), opts, nil, []agent.Message{agent.UserText("go", 1)})
			if diff := cmp.Diff(tt.events, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := out[len(out)-1].Text(); got != tt.text {
					t.Errorf("reply = %q, want %q", got, tt.text)
				}
				return
			}
			var pe *agent.ProviderError
			if !errors.As(err, &pe) || pe.Kind() != tt.kind {
				t.Fatalf("Run error = %v, want a %s ProviderError", err, tt.kind)
			}
			if p.n != len(tt.attempts) {
				t.Errorf("%d attempts, want %d", p.n, len(tt.attempts))
			}
		})
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	p := agent.RetryPolicy{MaxRetries: 5, MaxDelay: 10 * time.Second, BaseDelay: time.Second}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		jitter     float64
		want       time.Duration
		ok         bool
	}{
		{1, 0, 0, 500 * time.Millisecond, true},
		{1, 0, 0.999999, time.Second - time.Microsecond, true},
		{2, 0, 0, time.Second, true},
		{3, 0, 0.5, 3 * time.Second, true},
		{5, 0, 0.999999, 10 * time.Second, true},
		{6, 0, 0, 0, false},
		{1, 7 * time.Second, 0, 7 * time.Second, true},
		{1, 11 * time.Second, 0, 0, false},
		{0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		got, ok := p.Delay(tt.attempt, tt.retryAfter, tt.jitter)
		if got.Round(time.Millisecond) != tt.want.Round(time.Millisecond) || ok != tt.ok {
			t.Errorf("Delay(%d, %v, %v) = %v, %v; want %v, %v", tt.attempt, tt.retryAfter, tt.jitter, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRunInterruptDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &flakyProvider{attempts: []flakyAttempt{{err: &agent.APIError{StatusCode: 503, Message: "busy"}}}}
	opts := agent.Options{Provider: p, Model: "m", Retry: agent.RetryPolicy{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: 2 * time.Hour},
		OnEvent: func(e agent.Event) {
			if e.Type == agent.EventRetry {
				cancel()
			}
		}}
	out, err := agent.Run(ctx, opts, nil, []agent.Message{agent.UserText("go", 1)})
	if !errors.Is(err, agent.ErrInterrupted) {
		t.Fatalf("Run error = %v, want ErrInterrupted", err)
	}
	if got := out[len(out)-1].StopReason; got != agent.StopReasonAborted {
		t.Errorf("stopReason = %q, want aborted", got)
	}
}

func TestUsageContextTokens(t *testing.T) {
	u := agent.Usage{Input: 100, Output: 20, CacheRead: 1000, CacheWrite: 5}
	if got := u.ContextTokens(); got != 1125 {
		t.Errorf("ContextTokens = %d, want 1125", got)
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&agent.APIError{Kind: agent.ErrorKindContextOverflow, StatusCode: 400, Message: "x"}, agent.ErrorKindContextOverflow},
		{&agent.APIError{StatusCode: 401, Message: "nope"}, agent.ErrorKindAuth},
		{&agent.APIError{StatusCode: 503, Message: "busy"}, agent.ErrorKindProvider},
		{fmt.Errorf("wrapped: %w", &agent.APIError{Kind: agent.ErrorKindNetwork, Message: "reset"}), agent.ErrorKindNetwork},
		{errors.New("prompt is too long"), agent.ErrorKindContextOverflow},
	}
	for _, tt := range tests {
		if got := agent.ErrorKind(tt.err); got != tt.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if got := (&agent.ProviderError{Err: tt.err}).Kind(); got != tt.want {
			t.Errorf("ProviderError.Kind(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
