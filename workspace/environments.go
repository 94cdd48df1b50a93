package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/procgroup"
	"github.com/knightcode/knightcode/internal/safefile"
)

// EnvironmentsFile is a project's environments file, relative to its root
// (spec, environment/list and environment/save).
const EnvironmentsFile = ".knightcode/environments.json"

// MaxEnvironments is the most environments a project may define.
const MaxEnvironments = 50

// EnvWorktreePath is the variable that tells a setup or cleanup script the
// worktree it runs for.
const EnvWorktreePath = "KNIGHTCODE_WORKTREE_PATH"

// Environment is one entry of .knightcode/environments.json: a name and
// the scripts run when a worktree is set up for it and cleaned up.
type Environment struct {
	Name    string  `json:"name"`
	Setup   Script  `json:"setup"`
	Cleanup *Script `json:"cleanup,omitempty"`
}

// Script is a bash script per platform: Default unless the platform's own
// is set (linux, darwin, win32, as Node names them).
type Script struct {
	Default string `json:"default,omitempty"`
	Linux   string `json:"linux,omitempty"`
	Darwin  string `json:"darwin,omitempty"`
	Win32   string `json:"win32,omitempty"`
}

// For returns the script for goos (runtime.GOOS values): the platform's
// own when set, else Default.
func (s Script) For(goos string) string {
	var own string
	switch goos {
	case "linux":
		own = s.Linux
	case "darwin":
		own = s.Darwin
	case "windows":
		own = s.Win32
	}
	if own != "" {
		return own
	}
	return s.Default
}

// ReadEnvironments reads <projectRoot>/.knightcode/environments.json. A
// missing file is no environments. Errors: a file that is not valid JSON
// of that shape (reported, never rewritten by a read), read failures
// (safefile.ReadFile: not a regular file, or over safefile.ConfigLimit).
func ReadEnvironments(projectRoot string) ([]Environment, error) {
	data, err := safefile.ReadFile(filepath.Join(projectRoot, EnvironmentsFile), safefile.ConfigLimit)
	if errors.Is(err, os.ErrNotExist) {
		return []Environment{}, nil
	}
	if err != nil {
		return nil, errorf("environments: %v", err)
	}
	var f struct {
		Environments []Environment `json:"environments"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, errorf("environments: %s: %v", filepath.Join(projectRoot, EnvironmentsFile), err)
	}
	if f.Environments == nil {
		f.Environments = []Environment{}
	}
	return f.Environments, nil
}

// ValidateEnvironments checks envs as environment/save requires and returns
// them with names trimmed: every name non-empty after trimming spaces and
// unique, at most [MaxEnvironments] entries. Errors: [*ParamError] naming
// the field ("environments", "environments[3].name").
func ValidateEnvironments(envs []Environment) ([]Environment, error) {
	if len(envs) > MaxEnvironments {
		return nil, paramErr("environments", "at most %d environments, got %d", MaxEnvironments, len(envs))
	}
	out := make([]Environment, len(envs))
	seen := map[string]int{}
	for i, e := range envs {
		e.Name = strings.TrimSpace(e.Name)
		field := fmt.Sprintf("environments[%d].name", i)
		if e.Name == "" {
			return nil, paramErr(field, "must not be empty")
		}
		if j, dup := seen[e.Name]; dup {
			return nil, paramErr(field, "%q is already the name of environments[%d]", e.Name, j)
		}
		seen[e.Name] = i
		out[i] = e
	}
	return out, nil
}

// SaveEnvironments validates envs ([ValidateEnvironments]) and writes them
// to <projectRoot>/.knightcode/environments.json atomically, keeping any
// other top-level key the file has. The read-modify-write holds a
// gofrs/flock on the .knightcode folder itself (atomicfile.Update; no lock
// file is left in the user's project), so concurrent saves, from this
// process or another, never lose one another's other keys. Errors:
// [*ParamError]; a current file that is not valid JSON (left as it is);
// lock, read and write failures (waiting for the lock at most
// environmentsLockWait).
func SaveEnvironments(projectRoot string, envs []Environment) ([]Environment, error) {
	envs, err := ValidateEnvironments(envs)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(envs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(projectRoot, EnvironmentsFile)
	ctx, cancel := context.WithTimeout(context.Background(), environmentsLockWait)
	defer cancel()
	var invalid error // the current file is not valid JSON
	err = atomicfile.Update(ctx, filepath.Dir(path), path, 0o644, func(old []byte) ([]byte, error) {
		doc := map[string]json.RawMessage{}
		if len(bytes.TrimSpace(old)) > 0 {
			if err := json.Unmarshal(old, &doc); err != nil {
				invalid = errorf("environments: %s is not valid JSON (left as it is): %v", path, err)
				return nil, invalid
			}
		}
		doc["environments"] = raw
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(data, '\n'), nil
	})
	switch {
	case invalid != nil:
		return nil, invalid
	case err != nil:
		return nil, errorf("environments: %v", err)
	}
	return envs, nil
}

// environmentsLockWait bounds SaveEnvironments' wait for the lock.
const environmentsLockWait = 30 * time.Second

// scriptOutputGrace is how long RunScript keeps reading output after the
// script exited, for what its background processes still print.
const scriptOutputGrace = 2 * time.Second

// Script phases, passed to the progress callback.
const (
	PhaseSetup   = "setup"
	PhaseCleanup = "cleanup"
)

// ScriptRun describes one run of an environment's script.
type ScriptRun struct {
	// Environment is the environment whose script runs.
	Environment Environment
	// Phase is [PhaseSetup] or [PhaseCleanup].
	Phase string
	// WorktreePath is the worktree the script is for
	// ($KNIGHTCODE_WORKTREE_PATH); Cwd is where it runs ("" means
	// WorktreePath).
	WorktreePath, Cwd string
	// Trusted is the project's trust decision; an untrusted project's
	// script never runs.
	Trusted bool
	// Progress, when set, receives the script's output (stdout and
	// stderr interleaved as written) in chunks, each valid UTF-8 up to
	// where a character was cut (the rest comes with the next chunk). It
	// is called from one goroutine, in order, before Run returns.
	Progress func(phase, output string)
}

// ScriptError is a script that ran and failed: ExitCode is its exit status
// (-1 when killed, e.g. by ctx); Output is the last 4 KiB it printed.
type ScriptError struct {
	Phase    string
	ExitCode int
	Output   string
	Err      error
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("workspace: %s script failed (exit %d): %v", e.Phase, e.ExitCode, e.Err)
}

func (e *ScriptError) Unwrap() error { return e.Err }

// RunScript runs the environment's script for r.Phase with `bash -c` in
// r.Cwd, with KNIGHTCODE_WORKTREE_PATH set and GIT_DIR-like variables
// removed, streaming its output to r.Progress. The script and every process
// it starts in its process group are killed when ctx ends. A phase without a
// script for this platform does nothing. Errors: [ErrUntrusted] when
// r.Trusted is false (nothing runs); [*ParamError] (field "phase") for an
// unknown phase; [*ScriptError] for a failing script; start failures.
func RunScript(ctx context.Context, r ScriptRun) error {
	var s *Script
	switch r.Phase {
	case PhaseSetup:
		s = &r.Environment.Setup
	case PhaseCleanup:
		s = r.Environment.Cleanup
	default:
		return paramErr("phase", "unknown phase %q", r.Phase)
	}
	script := ""
	if s != nil {
		script = s.For(runtime.GOOS)
	}
	if strings.TrimSpace(script) == "" {
		return nil
	}
	if !r.Trusted {
		return ErrUntrusted
	}
	dir := r.Cwd
	if dir == "" {
		dir = r.WorktreePath
	}
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(scriptEnv(os.Environ()), EnvWorktreePath+"="+r.WorktreePath)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	procgroup.Setup(cmd) // a cancelled script's background jobs end with it
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return err
	}
	pw.Close() // the children hold the write end now
	done := make(chan string, 1)
	go func() {
		// Started here, ends at EOF (every writer gone) or when pr is
		// closed below; RunScript waits for it.
		done <- streamOutput(pr, r.Phase, r.Progress)
	}()
	err = cmd.Wait()
	var tail string
	select {
	case tail = <-done:
	case <-time.After(scriptOutputGrace):
		// A background process the script left holds the output open:
		// stop reading it.
		pr.Close()
		tail = <-done
	}
	pr.Close()
	if err != nil {
		code := -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return &ScriptError{Phase: r.Phase, ExitCode: code, Output: tail, Err: err}
	}
	return nil
}

// streamOutput copies r to progress in UTF-8-whole chunks until EOF and
// returns the last 4 KiB read.
func streamOutput(r io.Reader, phase string, progress func(phase, output string)) string {
	const keep = 4 << 10
	var tail []byte
	buf := make([]byte, 32<<10)
	var pending []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			tail = append(tail, buf[:n]...)
			if len(tail) > 2*keep {
				tail = append([]byte(nil), tail[len(tail)-keep:]...)
			}
			pending = append(pending, buf[:n]...)
			cut := utf8Prefix(pending)
			if progress != nil && cut > 0 {
				progress(phase, string(pending[:cut]))
			}
			pending = append([]byte(nil), pending[cut:]...)
		}
		if err != nil {
			break
		}
	}
	if progress != nil && len(pending) > 0 {
		progress(phase, string(pending))
	}
	if len(tail) > keep {
		tail = tail[len(tail)-keep:]
	}
	return string(tail)
}

// utf8Prefix is the length of b without a trailing incomplete UTF-8
// sequence (at most 3 bytes held back).
func utf8Prefix(b []byte) int {
	for i := 1; i <= 3 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return len(b)
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return len(b) - i
			}
			return len(b)
		}
	}
	return len(b)
}

// scriptEnv drops the variables that would redirect git calls a script
// makes to another repository.
func scriptEnv(environ []string) []string {
	drop := map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
		"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true,
		"GIT_PREFIX": true, EnvWorktreePath: true}
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return out
}
