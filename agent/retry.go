package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// APIError is a provider failure already classified from the API's typed
// error and HTTP status (providers return it, wrapped or not, from Stream or
// in a StreamError). Kind is one of the ErrorKind constants, or "" to classify
// Message by its text (ClassifyError); StatusCode is the HTTP status (0 when
// the failure had none, such as an error event inside a stream, unless the
// event names one); RetryAfter is the server's Retry-After (retry-after-ms
// or retry-after header), 0 when absent. Message never holds a credential.
type APIError struct {
	Kind       string
	StatusCode int
	RetryAfter time.Duration
	Message    string
}

// Error returns Message.
func (e *APIError) Error() string { return e.Message }

// ErrorKind classifies err: the Kind of an *APIError in its chain when set,
// else ClassifyError of an APIError's status-prefixed message or of
// err.Error().
func ErrorKind(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		if ae.Kind != "" {
			return ae.Kind
		}
		if ae.StatusCode != 0 {
			return ClassifyError(fmt.Sprintf("%d %s", ae.StatusCode, ae.Message))
		}
	}
	return ClassifyError(err.Error())
}

// retryable reports whether a failed request may be retried (rateLimit,
// network, or an HTTP 5xx status) and the server's Retry-After.
func retryable(err error) (bool, time.Duration) {
	var ae *APIError
	var after time.Duration
	status := 0
	if errors.As(err, &ae) {
		after, status = ae.RetryAfter, ae.StatusCode
	}
	switch ErrorKind(err) {
	case ErrorKindRateLimit, ErrorKindNetwork:
		return true, after
	}
	return status >= 500 && status <= 599, after
}

// Retry settings defaults (settings retry.provider.maxRetries and
// retry.provider.maxRetryDelayMs).
const (
	DefaultMaxRetries     = 3
	DefaultMaxRetryDelay  = 60 * time.Second
	DefaultRetryBaseDelay = time.Second
)

// RetryPolicy says how Run retries a model request that failed with a
// rateLimit or network error or an HTTP 5xx status. The zero value retries
// nothing (MaxRetries 0). Use DefaultRetryPolicy for the defaults.
type RetryPolicy struct {
	// MaxRetries is how many times one request is retried after its first
	// attempt (0: never).
	MaxRetries int
	// MaxDelay caps every wait (DefaultMaxRetryDelay when zero). A server's
	// Retry-After longer than MaxDelay ends the retries at once: the request
	// fails with the server's error.
	MaxDelay time.Duration
	// BaseDelay is the first backoff (DefaultRetryBaseDelay when zero); the
	// n-th retry waits BaseDelay·2^(n-1), jittered to between half and all of
	// it, capped at MaxDelay.
	BaseDelay time.Duration
}

// DefaultRetryPolicy returns the default policy: 3 retries, at most 60 s each,
// starting at 1 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: DefaultMaxRetries, MaxDelay: DefaultMaxRetryDelay, BaseDelay: DefaultRetryBaseDelay}
}

// Delay returns the wait before retry number attempt (1-based) and whether to
// retry at all: false when attempt exceeds MaxRetries or retryAfter exceeds
// MaxDelay. A positive retryAfter is waited exactly; otherwise the wait is the
// exponential backoff with jitter (jitter in [0,1) picks the point between half
// and all of BaseDelay·2^(attempt-1)), capped at MaxDelay.
func (p RetryPolicy) Delay(attempt int, retryAfter time.Duration, jitter float64) (time.Duration, bool) {
	if attempt < 1 || attempt > p.MaxRetries {
		return 0, false
	}
	maxDelay := p.MaxDelay
	if maxDelay <= 0 {
		maxDelay = DefaultMaxRetryDelay
	}
	if retryAfter > 0 {
		if retryAfter > maxDelay {
			return 0, false
		}
		return retryAfter, true
	}
	base := p.BaseDelay
	if base <= 0 {
		base = DefaultRetryBaseDelay
	}
	d := base
	for i := 1; i < attempt && d < maxDelay; i++ {
		d *= 2
	}
	d = d/2 + time.Duration(float64(d/2)*jitter)
	return min(d, maxDelay), true
}

// sleep waits d or until ctx is done; false means ctx was cancelled.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func jitter() float64 { return rand.Float64() }
