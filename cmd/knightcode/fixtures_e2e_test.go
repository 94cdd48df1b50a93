package main

// Fixtures of the end-to-end tests: git repositories made in t.TempDir()
// with git isolated from the user's configuration, files in them, and
// scripted models in a server's agent directory.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// fixtureGit runs git in dir to build or check a fixture, isolated from the
// user's configuration; it returns stdout.
func fixtureGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".no-config"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.invalid",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// baseLines is a.txt of diffRepo: "line 1\n" ... "line 20\n".
var baseLines = func() string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}()

// threadsA is a.txt of threadsRepo: "line 1\n" ... "line 10\n".
const threadsA = "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\n"

// diffRepo makes a repository with a.txt (baseLines), b.txt, gone.txt and
// sub/c.txt committed on main, core.autocrlf false, and returns its root
// (symlinks resolved).
func diffRepo(t *testing.T) string {
	t.Helper()
	return baseRepo(t, baseLines, "core.autocrlf", "false")
}

// threadsRepo makes a repository with a.txt (threadsA), b.txt, gone.txt
// and sub/c.txt committed, and returns its root (symlinks resolved).
func threadsRepo(t *testing.T) string {
	t.Helper()
	return baseRepo(t, threadsA)
}

// baseRepo makes a repository on main with the configuration config (key,
// value pairs) and a.txt (a), b.txt, gone.txt and sub/c.txt committed, and
// returns its root (symlinks resolved).
func baseRepo(t *testing.T, a string, config ...string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, dir, "init", "-q", "-b", "main")
	for i := 0; i+1 < len(config); i += 2 {
		fixtureGit(t, dir, "config", config[i], config[i+1])
	}
	writeFile(t, dir, "a.txt", a)
	writeFile(t, dir, "b.txt", "b\n")
	writeFile(t, dir, "gone.txt", "gone\n")
	writeFile(t, dir, "sub/c.txt", "c\n")
	fixtureGit(t, dir, "add", "-A")
	fixtureGit(t, dir, "commit", "-q", "-m", "base")
	return dir
}

// writeFile writes content to dir/path, keeping an existing file's mode.
var writeFile = gittest.WriteFile

func readFile(t *testing.T, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(dir, path string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(path)))
	return err == nil
}

// replaceLines returns baseLines with line n (1-based) replaced by s for
// each n -> s.
func replaceLines(repl map[int]string) string {
	lines := strings.SplitAfter(baseLines, "\n")
	for n, s := range repl {
		lines[n-1] = s + "\n"
	}
	return strings.Join(lines, "")
}

// script renders scripted responses as a script file's JSON.
func script(responses ...map[string]any) string {
	if responses == nil {
		responses = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"responses": responses})
	return string(b)
}

// call is a scripted tool call.
func call(id, name string, args map[string]any) map[string]any {
	return map[string]any{"id": id, "name": name, "arguments": args}
}

// writeScripts writes scripted models id -> script into home's agent
// directory (models.json and the script files).
func writeScripts(t *testing.T, home string, scripts map[string]string) {
	t.Helper()
	models := []map[string]string{}
	for id, sc := range scripts {
		path := filepath.Join(home, "script-"+id+".json")
		if err := os.WriteFile(path, []byte(sc), 0o644); err != nil {
			t.Fatal(err)
		}
		models = append(models, map[string]string{"id": id, "script": path})
	}
	cfg, _ := json.Marshal(map[string]any{"providers": map[string]any{"scripted": map[string]any{"models": models}}})
	writeAgentFile(t, home, "models.json", cfg)
}

// writeAgentFile writes data as name in home's agent directory, making the
// directory.
func writeAgentFile(t *testing.T, home, name string, data []byte) {
	t.Helper()
	writeFile(t, filepath.Join(home, "agent"), name, string(data))
}
