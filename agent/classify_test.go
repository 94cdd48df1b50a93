package agent

import "testing"

func TestClassifyError(t *testing.T) {
	t.Parallel()
	tests := []struct{ msg, want string }{
		{"401 Unauthorized", ErrorKindAuth},
		{"Error: 403 {\"type\":\"permission_error\"}", ErrorKindAuth},
		{"Invalid API key provided: sk-abc***", ErrorKindAuth},
		{"No API key found for anthropic", ErrorKindAuth},
		{"request unauthorized", ErrorKindAuth},
		{"429 Too Many Requests", ErrorKindRateLimit},
		{"Rate limit reached for requests", ErrorKindRateLimit},
		{"You exceeded your current quota", ErrorKindRateLimit},
		{"This model's maximum context length is 128000 tokens", ErrorKindContextOverflow},
		{"prompt is too long: 210000 tokens > 200000 maximum", ErrorKindContextOverflow},
		{"Request has too many tokens", ErrorKindContextOverflow},
		{"input exceeds the context window of this model", ErrorKindContextOverflow},
		{"read tcp 10.0.0.1:443: ECONNRESET", ErrorKindNetwork},
		{"dial tcp: lookup api.example.com: no such host", ErrorKindNetwork},
		{"connect ECONNREFUSED 127.0.0.1:8080", ErrorKindNetwork},
		{"connection refused", ErrorKindNetwork},
		{"request timed out", ErrorKindNetwork},
		{"context deadline exceeded (Client.Timeout exceeded while awaiting headers)", ErrorKindNetwork},
		{"DNS resolution failed", ErrorKindNetwork},
		{"network is unreachable", ErrorKindNetwork},
		{"500 Internal Server Error", ErrorKindProvider},
		{"503 Service Unavailable: upstream connect error, connection reset", ErrorKindProvider},
		{`{"type":"overloaded_error","message":"Overloaded"}`, ErrorKindProvider},
		{`scripted provider: the script of model "m" is exhausted: all 2 responses were used`, ErrorKindProvider},
		{"something odd happened", ErrorKindOther},
		{"", ErrorKindOther},
		{"took 500ms then failed oddly", ErrorKindOther},
		{"line 4013 is invalid", ErrorKindOther},
	}
	for _, tc := range tests {
		if got := ClassifyError(tc.msg); got != tc.want {
			t.Errorf("ClassifyError(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
