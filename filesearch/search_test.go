package filesearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/coreerr"
)

var ctx = context.Background()

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFiles(t testing.TB, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func requireFd(t testing.TB) {
	t.Helper()
	if _, err := findFd(); err != nil {
		t.Skip("fd is not installed (apt install fd-find)")
	}
}

func TestSearchRanking(t *testing.T) {
	requireFd(t)
	root := tempDir(t)
	writeFiles(t, root,
		"src/config/settings.go", "src/config/trust.go", "src/config/settings_test.go",
		"docs/config.md", "internal/confuse/x.go", "README.md", "cmd/server/main.go",
		"src/settingsmigration/legacy/setup.go", ".hidden/secret.txt", "build/out.txt",
		"docs/ünïcode-settings.md",
	)
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	s := New(Options{})
	t.Cleanup(s.Close)
	tests := []struct {
		query string
		top   string
	}{
		{"settings", "src/config/settings.go"},
		{"src/config", "src/config/trust.go"},
		{"readme", "README.md"},
		{"secret", ".hidden/secret.txt"},
		{"main", "cmd/server/main.go"},
		{"trust", "src/config/trust.go"},
		{"stgs", "src/config/settings.go"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := s.Search(ctx, Request{Cwd: root, Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Files) == 0 || res.Files[0].Path != tt.top {
				t.Fatalf("top hit for %q = %v, want %s", tt.query, res.Files, tt.top)
			}
			for i, m := range res.Files {
				checkIndices(t, tt.query, m)
				if i > 0 && m.Score > res.Files[i-1].Score {
					t.Errorf("scores not descending: %v", res.Files)
				}
			}
		})
	}
	// Ignored files and .git are not listed; hidden files are.
	for _, q := range []string{"out.txt", "HEAD"} {
		res, err := s.Search(ctx, Request{Cwd: root, Query: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Files {
			if strings.HasPrefix(m.Path, "build/") || strings.HasPrefix(m.Path, ".git/") {
				t.Errorf("%q found %s", q, m.Path)
			}
		}
	}
	// File-name matches come before paths that match only across folders.
	res, err := s.Search(ctx, Request{Cwd: root, Query: "setup", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) == 0 || res.Files[0].Path != "src/settingsmigration/legacy/setup.go" {
		t.Errorf("setup: %v", res.Files)
	}
	// Indices count code points.
	res, err = s.Search(ctx, Request{Cwd: root, Query: "ünï"})
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("ünï: %v %v", res, err)
	}
	if diff := cmp.Diff(res.Files[0].Indices, []int{5, 6, 7}); diff != "" {
		t.Errorf("indices: %s", diff)
	}
	// limit
	res, err = s.Search(ctx, Request{Cwd: root, Query: "s", Limit: 2})
	if err != nil || len(res.Files) != 2 {
		t.Errorf("limit 2: %v %v", res, err)
	}
}

func TestGitignoreOutsideARepository(t *testing.T) {
	requireFd(t)
	root := tempDir(t)
	writeFiles(t, root, "build/out.txt", "keep.txt")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(Options{})
	t.Cleanup(s.Close)
	res, err := s.Search(ctx, Request{Cwd: root, Query: "txt"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Files {
		got = append(got, m.Path)
	}
	if diff := cmp.Diff(got, []string{"keep.txt"}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

// checkIndices verifies that m.Indices point at the query's characters in
// order.
func checkIndices(t *testing.T, query string, m Match) {
	t.Helper()
	runes := []rune(m.Path)
	q := []rune(query)
	if len(m.Indices) != len(q) {
		t.Errorf("%s: %d indices for %q", m.Path, len(m.Indices), query)
		return
	}
	for i, at := range m.Indices {
		if at >= len(runes) || unicode.ToLower(runes[at]) != unicode.ToLower(q[i]) || (i > 0 && at <= m.Indices[i-1]) {
			t.Errorf("%s: indices %v do not spell %q", m.Path, m.Indices, query)
			return
		}
	}
}

// fakeFd puts a shell script named fd first in PATH. The script counts its
// runs in <dir>/runs, waits until <dir>/gate exists when the gate is on,
// then prints out (NUL-separated by printf) and exits with code.
func fakeFd(t *testing.T, out []string, code int, gated bool) string {
	t.Helper()
	dir := tempDir(t)
	var b strings.Builder
	b.WriteString("#!/bin/sh\n[ \"$1\" = --help ] && { echo 'usage: fd'; exit 0; }\n")
	b.WriteString("echo run >> " + filepath.Join(dir, "runs") + "\n")
	if gated {
		fmt.Fprintf(&b, "while [ ! -e %s ]; do sleep 0.01; done\n", filepath.Join(dir, "gate"))
	}
	for _, p := range out {
		fmt.Fprintf(&b, "printf '%%s\\0' '%s'\n", p)
	}
	fmt.Fprintf(&b, "exit %d\n", code)
	if err := os.WriteFile(filepath.Join(dir, "fd"), []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+"/usr/bin:/bin")
	return dir
}

func runs(t *testing.T, dir string) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	return strings.Count(string(b), "run")
}

func openGate(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond; it fails the test after a generous bound (the
// condition is an event the test caused, not a timing goal).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestSupersedeBySearchID(t *testing.T) {
	dir := fakeFd(t, []string{"a.txt", "b.txt"}, 0, true)
	cwd := tempDir(t)
	s := New(Options{})
	t.Cleanup(s.Close)
	type answer struct {
		res Result
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := s.Search(ctx, Request{Cwd: cwd, Query: "a", SearchID: "composer"})
		first <- answer{res, err}
	}()
	waitFor(t, "the first search to register", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.searches["composer"] != nil
	})
	second := make(chan answer, 1)
	go func() {
		res, err := s.Search(ctx, Request{Cwd: cwd, Query: "b", SearchID: "composer"})
		second <- answer{res, err}
	}()
	got := <-first // superseded while fd is still blocked
	if got.err != nil || got.res.Files == nil || len(got.res.Files) != 0 || got.res.Truncated {
		t.Errorf("superseded search = %+v, %v; want empty files", got.res, got.err)
	}
	openGate(t, dir)
	got = <-second
	if got.err != nil || len(got.res.Files) != 1 || got.res.Files[0].Path != "b.txt" {
		t.Errorf("second search = %+v, %v", got.res, got.err)
	}
	if n := runs(t, dir); n != 1 {
		t.Errorf("fd ran %d times, want 1 (the listing is shared)", n)
	}
}

func TestCacheTTL(t *testing.T) {
	dir := fakeFd(t, []string{"a.txt"}, 0, false)
	cwd := tempDir(t)
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	s := New(Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	t.Cleanup(s.Close)
	search := func() {
		t.Helper()
		if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	search()
	advance(9 * time.Second)
	search()
	if n := runs(t, dir); n != 1 {
		t.Errorf("within the TTL fd ran %d times, want 1", n)
	}
	advance(2 * time.Second)
	search()
	if n := runs(t, dir); n != 2 {
		t.Errorf("after the TTL fd ran %d times, want 2", n)
	}
}

func TestCacheKeepsEightCwds(t *testing.T) {
	dir := fakeFd(t, []string{"a.txt"}, 0, false)
	s := New(Options{})
	t.Cleanup(s.Close)
	cwds := make([]string, 9)
	for i := range cwds {
		cwds[i] = tempDir(t)
		if _, err := s.Search(ctx, Request{Cwd: cwds[i], Query: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	_, first := s.cache[cwds[0]]
	n := len(s.cache)
	s.mu.Unlock()
	if n != 8 || first {
		t.Errorf("cache holds %d cwds (oldest kept: %v), want the 8 newest", n, first)
	}
	if _, err := s.Search(ctx, Request{Cwd: cwds[8], Query: "a"}); err != nil {
		t.Fatal(err)
	}
	if got := runs(t, dir); got != 9 {
		t.Errorf("fd ran %d times, want 9", got)
	}
}

func TestTruncatedAtPathCap(t *testing.T) {
	dir := fakeFd(t, []string{"a1", "a2", "a3", "a4", "a5"}, 0, false)
	cwd := tempDir(t)
	s := New(Options{MaxPaths: 3})
	t.Cleanup(s.Close)
	res, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Files) != 3 {
		t.Errorf("result = %+v, want 3 files, truncated", res)
	}
	// A truncated listing is retained.
	if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); err != nil {
		t.Fatal(err)
	}
	if n := runs(t, dir); n != 1 {
		t.Errorf("fd ran %d times, want 1", n)
	}
	// Exactly at the cap is not truncated.
	s2 := New(Options{MaxPaths: 5})
	t.Cleanup(s2.Close)
	if res, err := s2.Search(ctx, Request{Cwd: cwd, Query: "a"}); err != nil || res.Truncated || len(res.Files) != 5 {
		t.Errorf("at the cap: %+v, %v", res, err)
	}
}

func TestFailedListing(t *testing.T) {
	cwd := tempDir(t)
	t.Run("partial output is used, not cached", func(t *testing.T) {
		dir := fakeFd(t, []string{"a.txt"}, 1, false)
		s := New(Options{})
		t.Cleanup(s.Close)
		for range 2 {
			res, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"})
			if err != nil || len(res.Files) != 1 {
				t.Fatalf("partial: %+v, %v", res, err)
			}
		}
		if n := runs(t, dir); n != 2 {
			t.Errorf("fd ran %d times, want 2 (not cached)", n)
		}
	})
	t.Run("empty failure rejects", func(t *testing.T) {
		fakeFd(t, nil, 2, false)
		s := New(Options{})
		t.Cleanup(s.Close)
		if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); err == nil {
			t.Errorf("empty failed listing gave no error")
		}
	})
	t.Run("timeout", func(t *testing.T) {
		fakeFd(t, []string{"a.txt"}, 0, true)
		s := New(Options{Timeout: 50 * time.Millisecond})
		t.Cleanup(s.Close)
		if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); !errors.Is(err, ErrTimeout) {
			t.Errorf("err = %v, want ErrTimeout", err)
		}
	})
	t.Run("tool missing", func(t *testing.T) {
		t.Setenv("PATH", tempDir(t))
		s := New(Options{})
		t.Cleanup(s.Close)
		var tm *ToolMissingError
		if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); !errors.As(err, &tm) {
			t.Errorf("err = %v, want ToolMissingError", err)
		}
	})
}

func TestShutdown(t *testing.T) {
	dir := fakeFd(t, []string{"a.txt"}, 0, true)
	cwd := tempDir(t)
	s := New(Options{})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Search(ctx, Request{Cwd: cwd, Query: "a", SearchID: "x"})
		errc <- err
	}()
	waitFor(t, "fd to start", func() bool { return runs(t, dir) == 1 })
	s.Close()
	if err := <-errc; !errors.Is(err, ErrShuttingDown) {
		t.Errorf("waiting search: %v, want ErrShuttingDown", err)
	}
	if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); !errors.Is(err, ErrShuttingDown) {
		t.Errorf("later search: %v, want ErrShuttingDown", err)
	}
}

func TestNoWaiterStopsListing(t *testing.T) {
	dir := fakeFd(t, []string{"a.txt"}, 0, true)
	cwd := tempDir(t)
	s := New(Options{})
	t.Cleanup(s.Close)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.Search(cctx, Request{Cwd: cwd, Query: "a"})
		errc <- err
	}()
	waitFor(t, "fd to start", func() bool { return runs(t, dir) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	s.mu.Lock()
	_, cached := s.cache[cwd]
	s.mu.Unlock()
	if cached {
		t.Errorf("an abandoned listing stayed cached")
	}
	openGate(t, dir)
	if _, err := s.Search(ctx, Request{Cwd: cwd, Query: "a"}); err != nil {
		t.Fatal(err)
	}
	if n := runs(t, dir); n != 2 {
		t.Errorf("fd ran %d times, want 2", n)
	}
}

func TestParams(t *testing.T) {
	cwd := tempDir(t)
	s := New(Options{})
	t.Cleanup(s.Close)
	tests := []struct {
		req   Request
		field string
	}{
		{Request{Query: "a"}, "cwd"},
		{Request{Cwd: "rel", Query: "a"}, "cwd"},
		{Request{Cwd: filepath.Join(cwd, "missing"), Query: "a"}, "cwd"},
		{Request{Cwd: cwd}, "query"},
		{Request{Cwd: cwd, Query: strings.Repeat("é", 257)}, "query"},
		{Request{Cwd: cwd, Query: "a", Limit: 201}, "limit"},
		{Request{Cwd: cwd, Query: "a", Limit: -1}, "limit"},
		{Request{Cwd: cwd, Query: "a", SearchID: strings.Repeat("x", 129)}, "searchId"},
	}
	for _, tt := range tests {
		// The core vocabulary's one ParamError (issue 22: there were two).
		if _, err := s.Search(ctx, tt.req); !errorIsParam(err, tt.field) {
			t.Errorf("%+v: err = %v, want coreerr.ParamError %s", tt.req, err, tt.field)
		}
	}
}

// errorIsParam reports whether err is a *coreerr.ParamError naming field.
func errorIsParam(err error, field string) bool {
	pe, ok := errors.AsType[*coreerr.ParamError](err)
	return ok && pe.Field == field
}
