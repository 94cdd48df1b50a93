package agent

import (
	"regexp"
	"strings"
)

// The error kinds of a failed turn (spec "Threads and turns": error {message,
// kind}).
const (
	ErrorKindAuth            = "auth"
	ErrorKindRateLimit       = "rateLimit"
	ErrorKindContextOverflow = "contextOverflow"
	ErrorKindNetwork         = "network"
	ErrorKindProvider        = "provider"
	ErrorKindOther           = "other"
)

var (
	statusAuth      = regexp.MustCompile(`\b40[13]\b`)
	statusRateLimit = regexp.MustCompile(`\b429\b`)
	statusServer    = regexp.MustCompile(`\b5[0-9][0-9]\b`)
)

// errorPatterns are the lower-case fragments of each kind, checked in order
// after the HTTP status codes.
var errorPatterns = []struct {
	kind      string
	fragments []string
}{
	{ErrorKindAuth, []string{
		"unauthorized", "unauthenticated", "authentication", "forbidden", "api key",
		"api_key", "apikey", "invalid_api_key", "access token", "not signed in", "signed out",
		"permission_error", "credentials",
	}},
	{ErrorKindRateLimit, []string{
		"rate limit", "rate_limit", "ratelimit", "too many requests", "quota",
		"resource_exhausted", "resource exhausted",
	}},
	{ErrorKindContextOverflow, []string{
		"context length", "context_length", "too many tokens", "context window",
		"context_window", "maximum context", "prompt is too long", "input is too long",
		"token limit", "exceeds the context",
	}},
	{ErrorKindNetwork, []string{
		"econnreset", "econnrefused", "econnaborted", "etimedout", "enotfound", "eai_again",
		"enetunreach", "ehostunreach", "timeout", "timed out", "connection refused",
		"connection reset", "connection closed", "network", "dns", "no such host",
		"socket hang up", "broken pipe", "tls handshake", "unexpected eof",
	}},
	{ErrorKindProvider, []string{
		"overloaded", "internal server error", "server error", "server_error",
		"service unavailable", "bad gateway", "api_error", "upstream", "provider",
	}},
}

// ClassifyError maps a provider error text to the spec's turn error kind: auth
// (401, 403, invalid or missing API key, unauthorized), rateLimit (429, rate
// limit, quota), contextOverflow (context length, too many tokens, context
// window), network (ECONNRESET, timeouts, connection refused, DNS), provider
// (5xx, overloaded, server errors, any text naming the provider as the failure,
// such as an exhausted scripted model), else other. HTTP status codes (whole
// numbers in the text) decide first, then the fragments in the order above;
// matching ignores case.
func ClassifyError(msg string) string {
	switch {
	case statusAuth.MatchString(msg):
		return ErrorKindAuth
	case statusRateLimit.MatchString(msg):
		return ErrorKindRateLimit
	case statusServer.MatchString(msg):
		return ErrorKindProvider
	}
	lower := strings.ToLower(msg)
	for _, p := range errorPatterns {
		for _, f := range p.fragments {
			if strings.Contains(lower, f) {
				return p.kind
			}
		}
	}
	return ErrorKindOther
}
