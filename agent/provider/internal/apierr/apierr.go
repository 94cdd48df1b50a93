// Package apierr turns the HTTP failures of the provider SDKs into
// *agent.APIError values: kind from the status and the API's error code, the
// server's Retry-After, and a message that never holds the API key.
package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/knightcode/knightcode/agent"
)

// RetryAfter reads the server's wait from h: retry-after-ms (milliseconds,
// which OpenAI and Anthropic send), else retry-after in seconds or as an HTTP
// date; 0 when absent or unreadable.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// KindOfCode maps an API error code or type (OpenAI's "code"/"type",
// Anthropic's error.type) to an error kind, "" when it says nothing.
func KindOfCode(code string) string {
	switch strings.ToLower(code) {
	case "invalid_api_key", "authentication_error", "permission_error", "unauthorized":
		return agent.ErrorKindAuth
	case "rate_limit_exceeded", "rate_limit_error", "insufficient_quota":
		return agent.ErrorKindRateLimit
	case "context_length_exceeded", "string_above_max_length":
		return agent.ErrorKindContextOverflow
	case "server_error", "api_error", "overloaded_error", "internal_error":
		return agent.ErrorKindProvider
	}
	return ""
}

// KindOfStatus maps an HTTP status to an error kind, "" for the statuses
// whose kind the message decides (400, 404, 413, ...).
func KindOfStatus(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return agent.ErrorKindAuth
	case status == http.StatusTooManyRequests:
		return agent.ErrorKindRateLimit
	case status == http.StatusRequestTimeout:
		return agent.ErrorKindNetwork
	case status >= 500:
		return agent.ErrorKindProvider
	}
	return ""
}

// New returns the *agent.APIError of an HTTP failure of provider: status,
// the API's code and message, the response headers (for Retry-After). The
// message is "<provider>: <status> <code>: <message>" with secret (the API
// key, when not empty) replaced by "[redacted]". The kind is the status's,
// else the code's, else the message text's (agent.ClassifyError).
func New(provider string, status int, code, message string, h http.Header, secret string) *agent.APIError {
	var b strings.Builder
	b.WriteString(provider)
	b.WriteString(": ")
	if status != 0 {
		fmt.Fprintf(&b, "%d ", status)
	}
	if code != "" {
		b.WriteString(code)
		b.WriteString(": ")
	}
	b.WriteString(message)
	kind := KindOfStatus(status)
	if kind == "" || kind == agent.ErrorKindProvider {
		if k := KindOfCode(code); k != "" {
			kind = k
		}
	}
	if kind == "" || (status == 0 && kind == agent.ErrorKindProvider) {
		if k := agent.ClassifyError(code + " " + message); k != agent.ErrorKindOther {
			kind = k
		}
	}
	if kind == "" {
		kind = agent.ErrorKindProvider
	}
	return &agent.APIError{Kind: kind, StatusCode: status, RetryAfter: RetryAfter(h), Message: Redact(b.String(), secret)}
}

// Transport returns the failure of a request that got no HTTP answer or
// whose stream broke: an error wrapping ctx.Err() when ctx was cancelled (an
// interrupt, never a network failure), else a network *agent.APIError naming
// provider with err's text (secret redacted).
func Transport(ctx context.Context, provider string, err error, secret string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: request cancelled: %w", provider, ctx.Err())
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &agent.APIError{Kind: agent.ErrorKindNetwork, Message: Redact(fmt.Sprintf("%s: request timed out: %v", provider, err), secret)}
	}
	return &agent.APIError{Kind: agent.ErrorKindNetwork, Message: Redact(fmt.Sprintf("%s: %v", provider, err), secret)}
}

// Redact replaces every occurrence of secret in s with "[redacted]" (s
// unchanged when secret is empty).
func Redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}
