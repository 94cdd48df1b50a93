package gitcli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Sentinel errors reported through [*Error] (compare with errors.Is).
var (
	// ErrGitMissing means no git binary was found on PATH.
	ErrGitMissing = errors.New("git is not installed")
	// ErrNotRepo means git said the directory is not inside a git
	// repository ("fatal: not a git repository"), or the directory does
	// not exist.
	ErrNotRepo = errors.New("not a git repository")
	// ErrOutputTooLarge means stdout passed the call's MaxOutput.
	ErrOutputTooLarge = errors.New("git output exceeds the limit")
	// ErrObjectMissing means an object id named no object of the
	// repository (cat-file's "missing").
	ErrObjectMissing = errors.New("object not found")
	// ErrLocked means git could not take one of its lock files because it
	// exists: another git process holds the index (index.lock) or a ref
	// (refs/....lock), or one crashed holding it. Git's words, in the C
	// locale every call runs in: "Unable to create '<path>.lock': File
	// exists." (lockfile.c, unable_to_lock_message), also inside
	// "cannot lock ref '<ref>': ..." for refs. Nothing was changed by the
	// failed call; the caller may report a concurrent change.
	ErrLocked = errors.New("a git lock file is held by another process")
	// ErrFileChanging means git read a file while another process
	// changed its size ("short read while indexing <path>", object-file.c
	// index_core): the call failed on a file being written, and the same
	// call a moment later may succeed.
	ErrFileChanging = errors.New("a file changed while git read it")
)

// TimeoutError is the cause (in [Error.Err]) of a git call stopped because
// it ran past its deadline: its [Cmd.Timeout], or for a call running the
// user's hooks the Runner's hook timeout ([Runner.WithHookTimeout]). Hooks
// reports the latter kind of call. errors.Is(err,
// context.DeadlineExceeded) holds for it.
type TimeoutError struct {
	Timeout time.Duration
	Hooks   bool
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("git ran past its deadline of %v and was stopped", e.Timeout)
}

// Is reports context.DeadlineExceeded as the same error.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Error is a failed git call: the args after the pinned -c options, the
// directory, git's exit code (-1 when it did not exit normally) and its
// stderr (at most 64 KiB, trimmed). Err is the underlying cause (an
// *exec.ExitError or an [*ExitCodeError], a context error, [ErrOutputTooLarge], or the error a
// stream reader returned).
type Error struct {
	Args     []string
	Dir      string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "git %s", strings.Join(e.Args, " "))
	var exitErr *exec.ExitError
	var codeErr *ExitCodeError
	switch {
	case e.Err != nil && !errors.As(e.Err, &exitErr) && !errors.As(e.Err, &codeErr):
		fmt.Fprintf(&b, ": %v", e.Err)
	case e.ExitCode >= 0:
		fmt.Fprintf(&b, ": exit %d", e.ExitCode)
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, ": %s", firstLines(e.Stderr, 5))
	}
	return b.String()
}

// Unwrap reports the cause and, where git's words say so, [ErrNotRepo] or
// [ErrLocked].
func (e *Error) Unwrap() []error {
	errs := []error{e.Err}
	if isNotRepo(e) {
		errs = append(errs, ErrNotRepo)
	}
	if isLocked(e.Stderr) {
		errs = append(errs, ErrLocked)
	}
	if strings.Contains(e.Stderr, "short read while indexing") {
		errs = append(errs, ErrFileChanging)
	}
	return errs
}

// isLocked reports git's message for a lock file that already exists:
// "Unable to create '<path>.lock': File exists." (see [ErrLocked]).
func isLocked(stderr string) bool {
	i := strings.Index(stderr, "Unable to create '")
	return i >= 0 && strings.Contains(stderr[i:], ".lock': File exists")
}

func isNotRepo(e *Error) bool {
	s := e.Stderr
	if strings.Contains(s, "not a git repository") {
		return true
	}
	// A Dir that does not exist fails before git starts (the child's
	// chdir, reported as a fork/exec error).
	if e.ExitCode != -1 || e.Dir == "" {
		return false
	}
	_, err := os.Stat(e.Dir)
	return errors.Is(err, fs.ErrNotExist)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
