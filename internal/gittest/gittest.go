package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Main isolates the test process from the user's environment and runs the
// tests: HOME, XDG_CONFIG_HOME and KNIGHTCODE_CODING_AGENT_DIR point into a
// fresh temporary directory, GIT_CONFIG_NOSYSTEM=1, KNIGHTCODE_BENCH_* (benchmark sizes) is kept, a fixed author and
// committer, and every inherited GIT_DIR-like variable is removed. Call it
// from TestMain: `func TestMain(m *testing.M) { gittest.Main(m) }`.
func Main(m *testing.M) {
	home, err := os.MkdirTemp("", "knightcode-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gittest:", err)
		os.Exit(1)
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || (strings.HasPrefix(k, "KNIGHTCODE_") && !strings.HasPrefix(k, "KNIGHTCODE_BENCH_")) {
			os.Unsetenv(k)
		}
	}
	for k, v := range map[string]string{
		"HOME":                        home,
		"XDG_CONFIG_HOME":             filepath.Join(home, ".config"),
		"KNIGHTCODE_CODING_AGENT_DIR": filepath.Join(home, ".knightcode", "agent"),
		"GIT_CONFIG_NOSYSTEM":         "1",
		"GIT_AUTHOR_NAME":             "Test Author",
		"GIT_AUTHOR_EMAIL":            "author@example.invalid",
		"GIT_COMMITTER_NAME":          "Test Committer",
		"GIT_COMMITTER_EMAIL":         "committer@example.invalid",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// Init creates a repository with branch main in a new temporary directory and
// returns its path (symlinks resolved, as git reports paths).
func Init(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "config", "core.autocrlf", "false")
	return dir
}

// Git runs git in dir and returns its stdout; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return GitStdin(t, dir, nil, args...)
}

// GitStdin is [Git] with stdin.
func GitStdin(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	out, err := Run(dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Run runs git in dir and returns stdout, or an error carrying stderr.
func Run(dir string, stdin []byte, args ...string) (string, error) {
	return RunEnv(dir, nil, stdin, args...)
}

// RunEnv is [Run] with env (KEY=VALUE) added to the environment.
func RunEnv(dir string, env []string, stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// Write writes content to dir/path with mode 0644, creating folders.
func Write(t testing.TB, dir, path, content string) {
	t.Helper()
	WriteMode(t, dir, path, content, 0o644)
}

// WriteMode writes content to dir/path with the given mode, creating folders.
func WriteMode(t testing.TB, dir, path, content string, mode os.FileMode) {
	t.Helper()
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(full, mode); err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes content to dir/path (a slash path) as os.WriteFile
// does, creating folders: a new file gets mode 0644, an existing one keeps
// its mode (Write sets it).
func WriteFile(t testing.TB, dir, path, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Read returns the bytes of dir/path as a string; a failure fails the test.
func Read(t testing.TB, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// CommitAll stages everything in dir and commits it with message msg,
// returning the new commit id.
func CommitAll(t testing.TB, dir, msg string) string {
	t.Helper()
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return strings.TrimSpace(Git(t, dir, "rev-parse", "HEAD"))
}

// InitCommit is Init with files (path, content pairs: Write's arguments)
// written and committed as "init"; it returns the repository's path.
func InitCommit(t testing.TB, files ...string) string {
	t.Helper()
	if len(files)%2 != 0 {
		t.Fatalf("InitCommit: %d arguments, want path, content pairs", len(files))
	}
	dir := Init(t)
	for i := 0; i < len(files); i += 2 {
		Write(t, dir, files[i], files[i+1])
	}
	CommitAll(t, dir, "init")
	return dir
}

// CopyCheckout copies a test repository (work tree and .git) into a new
// temporary folder (symlinks resolved) and refreshes the copy's index, so
// that it reads as the source does; it returns the copy's path.
func CopyCheckout(t testing.TB, src string) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	Git(t, dst, "update-index", "-q", "--refresh")
	return dst
}

// OplogLeftovers lists what an operation-log action must not leave behind
// once it finished or was recovered: knightcode-* entries and index.lock
// in dir's .git, as ".git/<name>", and any file in oplogDir, as
// "oplog/<name>".
func OplogLeftovers(dir, oplogDir string) []string {
	var out []string
	ents, _ := os.ReadDir(filepath.Join(dir, ".git"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "knightcode-") || e.Name() == "index.lock" {
			out = append(out, ".git/"+e.Name())
		}
	}
	ents, _ = os.ReadDir(oplogDir)
	for _, e := range ents {
		out = append(out, "oplog/"+e.Name())
	}
	return out
}
