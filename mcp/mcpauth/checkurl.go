package mcpauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrUnsafeURL is wrapped by every error for an authorization URL or an
// address taken from OAuth discovery that fails [CheckURL]; a sign-in that
// meets one ends with it and opens nothing (EXTENSIBILITY.md §2, "OAuth
// sign-in"; CVE-2025-6514).
var ErrUnsafeURL = errors.New("unsafe URL")

// maxURLBytes is the longest URL CheckURL accepts: 8 KiB.
const maxURLBytes = 8 << 10

// CheckURL reports whether raw may be opened in the browser or requested
// during a sign-in: an absolute https: URL with a host, or an http: URL
// whose host is 127.0.0.1, [::1] or localhost; no user-info part; at most
// 8 KiB. Anything else is an error wrapping [ErrUnsafeURL] that names the
// reason (the URL is quoted, cut at 200 bytes).
func CheckURL(raw string) error {
	unsafe := func(reason string) error {
		shown := raw
		if len(shown) > 200 {
			shown = shown[:200] + "…"
		}
		return fmt.Errorf("%w: %q: %s", ErrUnsafeURL, shown, reason)
	}
	if len(raw) > maxURLBytes {
		return unsafe("longer than 8 KiB")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return unsafe("does not parse")
	}
	if !u.IsAbs() || u.Opaque != "" {
		return unsafe("not an absolute URL")
	}
	if u.User != nil {
		return unsafe("has a user-info part")
	}
	switch u.Scheme {
	case "https":
		if u.Hostname() == "" {
			return unsafe("has no host")
		}
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return unsafe("http: is allowed only on 127.0.0.1, [::1] or localhost")
		}
	default:
		return unsafe("scheme is not https")
	}
	return nil
}

// isLoopbackHost reports whether host (without brackets or port) is one of
// the loopback names CheckURL lets http: use.
func isLoopbackHost(host string) bool {
	return host == "127.0.0.1" || host == "::1" || strings.EqualFold(host, "localhost")
}

// CanonicalURL is the form of a server URL that keys its tokens (and that
// the runtime compares to match a finished sign-in to its connections): scheme and
// host lower-cased, the scheme's default port dropped, no fragment, no
// trailing slash. A URL that does not parse is its own canonical form.
func CanonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.TrimRight(raw, "/")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u.String()
}
