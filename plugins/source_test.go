package plugins

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/coreerr"
)

func TestParseSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "acme", "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		source, ref, path, cwd string
		canonical              string
		reason, field          string
	}{
		{source: "acme/review-tools", canonical: "github:acme/review-tools"},
		{source: "github:acme/review-tools", path: "plugins/review", canonical: "github:acme/review-tools#plugins/review"},
		{source: "https://git.example.com/x.git", canonical: "git:https://git.example.com/x.git"},
		{source: "git@github.com:acme/x.git", canonical: "git:git@github.com:acme/x.git"},
		{source: dir, canonical: "path:" + dir},
		{source: "review-tools@acme", canonical: "review-tools@acme"},
		// The canonical forms plugin/list shows install as they read.
		{source: "path:" + dir, canonical: "path:" + dir},
		{source: "path:" + dir + "#acme/tools", canonical: "path:" + dir + "#acme/tools"},
		{source: "git:https://git.example.com/x.git#p", canonical: "git:https://git.example.com/x.git#p"},
		{source: "git:git@github.com:acme/x.git", canonical: "git:git@github.com:acme/x.git"},
		{source: "git://example.com/x.git", canonical: "git:git://example.com/x.git"},
		{source: "github:acme/x#plugins/y", canonical: "github:acme/x#plugins/y"},
		{source: "github:acme/x#plugins/y", path: "plugins/y", canonical: "github:acme/x#plugins/y"},
		{source: "github:acme/x#plugins/y", path: "other", field: "path"},
		{source: "path:relative/dir", reason: coreerr.ReasonRelativePath, field: "source"},
		{source: "git:https://tok@example.com/x.git", reason: coreerr.ReasonCredentialsInURL, field: "source"},
		{source: "./x", reason: coreerr.ReasonRelativePath, field: "source"},
		{source: "~/x", reason: coreerr.ReasonRelativePath, field: "source"},
		{source: "a/b/c", reason: coreerr.ReasonRelativePath, field: "source"},
		{source: `a\b`, reason: coreerr.ReasonRelativePath, field: "source"},
		{source: "acme/tools", cwd: dir, reason: coreerr.ReasonRelativePath, field: "source"},
		{source: "https://user:tok@example.com/x.git", reason: coreerr.ReasonCredentialsInURL, field: "source"},
		{source: "https://tok@example.com/x.git", reason: coreerr.ReasonCredentialsInURL, field: "source"},
		{source: "ssh://git:pw@example.com/x.git", reason: coreerr.ReasonCredentialsInURL, field: "source"},
		{source: "acme/x", path: "../up", field: "path"},
		{source: "acme/x", ref: "--upload-pack=x", field: "ref"},
		{source: filepath.Join(dir, "missing"), field: "source"},
	} {
		s, err := ParseSource(tt.source, tt.ref, tt.path, tt.cwd, true)
		if tt.field == "" {
			if err != nil || s.Canonical() != tt.canonical {
				t.Errorf("ParseSource(%q) = %q, %v; want %q", tt.source, s.Canonical(), err, tt.canonical)
			}
			continue
		}
		pe, ok := errors.AsType[*coreerr.ParamError](err)
		if !ok || pe.Field != tt.field || pe.Reason != tt.reason {
			t.Errorf("ParseSource(%q) error = %v, want field %s reason %q", tt.source, err, tt.field, tt.reason)
		}
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"github:acme/x", "github:acme/x#plugins/y", "git:file:///tmp/a.git#p", "path:/abs/dir"} {
		s, err := ParseCanonical(c)
		if err != nil || s.Canonical() != c {
			t.Errorf("ParseCanonical(%q) = %q, %v", c, s.Canonical(), err)
		}
	}
	for _, c := range []string{"acme/x", "path:rel", "github:a/b/c", "git:x#../up"} {
		if _, err := ParseCanonical(c); err == nil {
			t.Errorf("ParseCanonical(%q) succeeded", c)
		}
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	got := Redact("fatal: unable to access 'https://user:tok@example.com/x.git?token=abc': 403 and git:https://a@b.c/y")
	want := "fatal: unable to access 'https://***@example.com/x.git?***': 403 and git:https://***@b.c/y"
	if got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// Each built-in marketplace's source is a valid canonical source and its
// name follows the naming rule (EXTENSIBILITY.md §5 "Known names").
func TestBuiltinMarketplaces(t *testing.T) {
	t.Parallel()
	for _, b := range builtinMarketplaces {
		s, err := ParseCanonical(b.Source)
		if err != nil || s.Canonical() != b.Source || s.Kind == KindPath {
			t.Errorf("%s: source %q: %v", b.Name, b.Source, err)
		}
		if !marketEntryRE.MatchString("x@" + b.Name) {
			t.Errorf("%s: not a valid marketplace name", b.Name)
		}
	}
}

func TestReadCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, ".claude-plugin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".claude-plugin", "marketplace.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk := Source{Kind: KindGitHub, Repo: "acme/plugins"}
	write(`{"name":"acme","owner":{"name":"Acme"},"metadata":{"pluginRoot":"./plugins"},"plugins":[
		{"name":"a","source":"./a","version":"1"},
		{"name":"b","source":{"source":"github","repo":"acme/b","sha":"0123456789012345678901234567890123456789"}},
		{"name":"c","source":{"source":"git-subdir","url":"https://example.com/c.git","path":"sub/c","ref":"v2"}},
		{"name":"d","source":{"source":"npm","package":"d"}},
		{"name":"e","source":"../escape"},
		{"name":"Bad Name","source":"./x"},
		{"name":"root","source":"./"},
		{"name":"local","source":{"type":"local","path":"./local"}},
		{"name":"local-escape","source":{"type":"local","path":"../out"}}]}`)
	c, err := readCatalog(dir, mk)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Plugins {
		got = append(got, p.Name+"="+p.Source.Canonical()+"@"+p.Source.Ref)
	}
	want := []string{"a=github:acme/plugins#plugins/a@", "b=github:acme/b@0123456789012345678901234567890123456789", "c=git:https://example.com/c.git#sub/c@v2", "root=github:acme/plugins#plugins@", "local=github:acme/plugins#plugins/local@"}
	if diff := cmp.Diff(want, got); diff != "" || len(c.Diagnostics) != 4 {
		t.Errorf("plugins (-want +got):\n%s\ndiagnostics %q", diff, c.Diagnostics)
	}
	for _, bad := range []string{`{"owner":{"name":"x"},"plugins":[]}`, `{"name":"x","plugins":[]}`, `{"name":"x","owner":{"name":"x"}}`, `{"name":"X Y","owner":{"name":"x"},"plugins":[]}`, `{`} {
		write(bad)
		if _, err := readCatalog(dir, mk); err == nil {
			t.Errorf("catalog %s accepted", bad)
		}
	}
}
