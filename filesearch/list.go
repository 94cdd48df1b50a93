package filesearch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// fdNames are the names fd goes by, looked up in PATH in this order
// (Debian and Ubuntu install it as fdfind).
var fdNames = []string{"fd", "fdfind"}

// fdArgs list every regular file under the working directory, hidden ones
// included, .git excluded, NUL-separated, without a "./" prefix (checked
// against fd 8.6 and 10.x).
var fdArgs = []string{"-t", "f", "--hidden", "--exclude", ".git", "--print0", "--strip-cwd-prefix", "--color", "never"}

// listing is one fd run over a cwd and its outcome, shared by the searches
// waiting for it. paths, truncated and err are written before done closes.
type listing struct {
	cwd    string
	done   chan struct{}
	cancel context.CancelFunc

	// under Searcher.mu
	waiters int
	at      time.Time // when it finished
	used    time.Time // last handed to a search

	paths     []string
	truncated bool
	err       error

	baseOnce sync.Once
	bases    []string // path.Base of each path, computed on first rank
	baseOff  []int    // byte offset of each base in its path
}

// noRequireGit caches, per fd path, whether that fd has --no-require-git
// (fd 9 and later): it applies .gitignore outside git repositories too.
var noRequireGit sync.Map // string -> bool

// hasNoRequireGit reports whether fd's --help lists --no-require-git.
func hasNoRequireGit(ctx context.Context, fd string) bool {
	if v, ok := noRequireGit.Load(fd); ok {
		return v.(bool)
	}
	out, err := exec.CommandContext(ctx, fd, "--help").Output()
	has := err == nil && bytes.Contains(out, []byte("--no-require-git"))
	if err == nil {
		noRequireGit.Store(fd, has)
	}
	return has
}

// inGitRepo reports whether dir or one of its ancestors holds a .git
// entry (a folder, or a worktree's .git file), without starting git.
func inGitRepo(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// argsFor returns fd's arguments for a listing of cwd. Outside a git
// repository an fd without --no-require-git ignores .gitignore files, so
// cwd's own .gitignore is passed with --ignore-file (nested ones are then
// not applied).
func argsFor(ctx context.Context, fd, cwd string) []string {
	args := slices.Clone(fdArgs)
	if hasNoRequireGit(ctx, fd) {
		return append(args, "--no-require-git")
	}
	if !inGitRepo(cwd) {
		if gi := filepath.Join(cwd, ".gitignore"); isRegular(gi) {
			args = append(args, "--ignore-file", gi)
		}
	}
	return args
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// findFd returns the path of fd or fdfind.
func findFd() (string, error) {
	for _, n := range fdNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", &ToolMissingError{Tools: fdNames}
}

// run lists l.cwd with fd: it waits for one of the MaxActive slots, reads
// fd's output up to the caps and records the outcome. It is started by
// listingLocked and ends when fd exits (or is killed: no waiter left,
// Close, timeout).
func (s *Searcher) run(ctx context.Context, l *listing) {
	defer l.cancel()
	cacheable := false
	defer func() { s.finish(l, cacheable) }()

	select {
	case s.active <- struct{}{}:
		defer func() { <-s.active }()
	case <-ctx.Done():
		l.err = ctx.Err()
		return
	}
	fd, err := findFd()
	if err != nil {
		l.err = err
		return
	}
	tctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, fd, argsFor(tctx, fd, l.cwd)...)
	cmd.Dir = l.cwd
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		l.err = fmt.Errorf("filesearch: %w", err)
		return
	}
	if err := cmd.Start(); err != nil {
		l.err = fmt.Errorf("filesearch: start %s: %w", fd, err)
		if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			// The timeout ran out before fd started (asking fd for its
			// version takes from the same time): a timeout all the same.
			l.err = ErrTimeout
		}
		return
	}
	capped := s.read(out, l)
	if capped {
		cancel() // enough: stop fd
	}
	werr := cmd.Wait()
	switch {
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && !capped:
		l.paths, l.err = nil, ErrTimeout
	case ctx.Err() != nil:
		l.err = ctx.Err() // no waiter left, or Close
	case capped:
		l.truncated, cacheable = true, true
	case werr != nil:
		// Partial output is usable but not cached; empty output is the error.
		l.err = fmt.Errorf("filesearch: %s failed: %w: %s", fd, werr, strings.TrimSpace(stderr.String()))
	default:
		cacheable = true
	}
}

// read collects NUL-separated paths from out into l.paths until EOF or a
// cap (MaxPaths paths, MaxBytes bytes), which it reports.
func (s *Searcher) read(out io.Reader, l *listing) (capped bool) {
	r := bufio.NewReaderSize(out, 64<<10)
	var total int64
	for {
		p, err := r.ReadString(0)
		total += int64(len(p))
		if total > s.opt.MaxBytes {
			return true
		}
		if p = strings.TrimSuffix(p, "\x00"); p != "" {
			l.paths = append(l.paths, p)
			if len(l.paths) >= s.opt.MaxPaths {
				// Capped only if fd had more to say.
				_, perr := r.Peek(1)
				return perr == nil
			}
		}
		if err != nil {
			return false
		}
	}
}

// basenames returns the file names of l's paths and their offsets.
func (l *listing) basenames() ([]string, []int) {
	l.baseOnce.Do(func() {
		l.bases = make([]string, len(l.paths))
		l.baseOff = make([]int, len(l.paths))
		for i, p := range l.paths {
			b := path.Base(p)
			l.bases[i], l.baseOff[i] = b, len(p)-len(b)
		}
	})
	return l.bases, l.baseOff
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (lw *limitedWriter) Write(p []byte) (int, error) {
	if lw.n > 0 {
		k := min(len(p), lw.n)
		lw.w.Write(p[:k])
		lw.n -= k
	}
	return len(p), nil
}
