package main

// Configuration and state files that are not regular files, over the
// binary: a FIFO or a symlink to /dev/zero where settings.json, mcp.json,
// Claude Code's plugin state or Grok Build's config.toml belong is refused
// at once with a message naming the file (internal/safefile.ReadFile),
// never a server that hangs or grows without limit.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// mkfifo makes a FIFO at path (and its folder).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveHome starts the binary on home (its files already written) with
// extra environment entries, and initializes it; a cleanup closes it.
func serveHome(t *testing.T, home string, extra ...string) *diffServer {
	t.Helper()
	cmd := exec.Command(binary, "app-server")
	cmd.Env = append(serverEnv(home), extra...)
	s, _ := serveDiff(t, cmd, home)
	return s
}

// TestReadSafeSettingsFIFO: <agentDir>/settings.json is a FIFO. The server
// starts (an unreadable settings file is a startup warning, README
// "Settings"), and config/read answers at once with an error naming the
// file as a named pipe.
func TestReadSafeSettingsFIFO(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	settings := filepath.Join(home, "agent", "settings.json")
	mkfifo(t, settings)
	// Not serveDiff: a server wedged at startup (as before the fix) ignores
	// SIGTERM and stdin's end, so a failed test kills it.
	cmd := exec.Command(binary, "app-server")
	cmd.Env = serverEnv(home)
	c, stderr := launch(t, cmd)
	t.Cleanup(func() {
		if t.Failed() {
			cmd.Process.Kill()
			t.Logf("server stderr:\n%s", stderr.String())
		}
		c.Close()
	})
	initialize(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := client.Call(ctx, c, protocol.ConfigRead, protocol.ConfigReadParams{})
	if err == nil || !strings.Contains(err.Error(), settings) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("config/read with settings.json a FIFO = %v; want an error naming %s as a named pipe", err, settings)
	}
	_, err = client.Call(ctx, c, protocol.ConfigWrite, protocol.ConfigWriteParams{Scope: "global", Key: "worktrees.keep", Value: json.RawMessage("3")})
	if err == nil || !strings.Contains(err.Error(), settings+" is a named pipe (FIFO)") {
		t.Errorf("config/write with settings.json a FIFO = %v; want an error naming it a named pipe", err)
	}
	if st, err := os.Lstat(settings); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("config/write replaced the FIFO: %v %v", st, err)
	}
}

// TestReadSafeMCPFIFO: <agentDir>/mcp.json is a FIFO. mcp/list answers with
// an errors entry naming it; thread/start answers too.
func TestReadSafeMCPFIFO(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	mcpFile := filepath.Join(home, "agent", "mcp.json")
	mkfifo(t, mcpFile)
	s := serveHome(t, home)
	l := callWithin(t, s.c, 30*time.Second, protocol.McpList, protocol.McpListParams{})
	if len(l.Servers) != 0 || len(l.Errors) != 1 || l.Errors[0].Path != mcpFile || !strings.Contains(l.Errors[0].Message, "named pipe") {
		t.Errorf("mcp/list with mcp.json a FIFO = %s; want one error naming it a named pipe", mustJSON(l))
	}
	callWithin(t, s.c, 30*time.Second, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: t.TempDir()})
}

// TestReadSafeUntrustedProject: an untrusted project carries FIFOs as its
// .knightcode/settings.json and .knightcode/mcp.json (a cloned repository
// can) and as AGENTS.md. None of them is opened: config/read, mcp/list,
// thread/start and a turn answer, and the log has no context-file warning.
func TestReadSafeUntrustedProject(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := threadsRepo(t)
	mkfifo(t, filepath.Join(project, ".knightcode", "settings.json"))
	mkfifo(t, filepath.Join(project, ".knightcode", "mcp.json"))
	mkfifo(t, filepath.Join(project, "AGENTS.md"))
	writeScripts(t, home, map[string]string{"m": script(map[string]any{"text": "done"})})
	cmd := exec.Command(binary, "app-server")
	cmd.Env = serverEnv(home)
	s, stderr := serveDiff(t, cmd, home)
	callWithin(t, s.c, 30*time.Second, protocol.ConfigRead, protocol.ConfigReadParams{Cwd: project})
	if l := callWithin(t, s.c, 30*time.Second, protocol.McpList, protocol.McpListParams{Cwd: project}); len(l.Errors) != 0 {
		t.Errorf("mcp/list of an untrusted project read its file: %s", mustJSON(l))
	}
	thread := s.startThread(t, project, "m")
	if turn, _ := s.runTurn(t, thread, "hi"); turn.Status != "completed" {
		t.Errorf("turn in the untrusted project: %s", mustJSON(turn))
	}
	if strings.Contains(stderr.String(), "AGENTS.md") {
		t.Errorf("the untrusted project's AGENTS.md was opened:\n%s", stderr.String())
	}
}

// TestReadSafeTrustedProject: a trusted project's .knightcode/mcp.json and
// .knightcode/settings.json are FIFOs. mcp/list answers with an errors
// entry naming the MCP file; config/read answers internal naming the
// settings file; thread/start answers (an error, not a hang).
func TestReadSafeTrustedProject(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	project := t.TempDir()
	mcpFile := filepath.Join(project, ".knightcode", "mcp.json")
	settings := filepath.Join(project, ".knightcode", "settings.json")
	mkfifo(t, mcpFile)
	mkfifo(t, settings)
	s := serveHome(t, home)
	callWithin(t, s.c, 30*time.Second, protocol.ProjectTrustSet, protocol.ProjectTrustSetParams{Cwd: project, Trusted: true})
	l := callWithin(t, s.c, 30*time.Second, protocol.McpList, protocol.McpListParams{Cwd: project})
	if len(l.Errors) != 1 || l.Errors[0].Path != mcpFile || !strings.Contains(l.Errors[0].Message, "named pipe") {
		t.Errorf("mcp/list of the trusted project = %s; want one error naming its mcp.json a named pipe", mustJSON(l))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := client.Call(ctx, s.c, protocol.ConfigRead, protocol.ConfigReadParams{Cwd: project})
	if err == nil || !strings.Contains(err.Error(), settings+" is a named pipe (FIFO)") {
		t.Errorf("config/read of the trusted project = %v; want an error naming its settings.json a named pipe", err)
	}
	if _, err := client.Call(ctx, s.c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: project}); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("thread/start in the trusted project did not answer: %v", err)
	}
}

// TestReadSafeClaudeStateFIFO: ~/.claude/plugins/installed_plugins.json is
// a FIFO (in one home), known_marketplaces.json is (in another, beside a
// valid installed_plugins.json). plugin/list answers with a diagnostic
// naming the FIFO, and plugin/marketplace/list answers.
func TestReadSafeClaudeStateFIFO(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"installed_plugins.json", "known_marketplaces.json"} {
		home := t.TempDir()
		fifo := filepath.Join(home, ".claude", "plugins", name)
		mkfifo(t, fifo)
		if name != "installed_plugins.json" {
			writeFiles(t, filepath.Join(home, ".claude", "plugins"), map[string]string{"installed_plugins.json": `{"version":2,"plugins":{}}`})
		}
		s := serveHome(t, home)
		l := callWithin(t, s.c, 30*time.Second, protocol.PluginList, protocol.PluginListParams{})
		found := false
		for _, d := range l.Diagnostics {
			if d.Path == fifo && strings.Contains(d.Message, fifo+" is a named pipe (FIFO)") {
				found = true
			}
		}
		if !found {
			t.Errorf("plugin/list diagnostics %s lack %s as a named pipe", mustJSON(l.Diagnostics), fifo)
		}
		callWithin(t, s.c, 30*time.Second, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{})
	}
}

// TestReadSafeGrokConfigDevZero: $GROK_HOME/config.toml is a symlink to
// /dev/zero. plugin/marketplace/list answers at once (before, it read
// without end: 1.5 GB in 6 s), and plugin/list has a diagnostic naming the
// file.
func TestReadSafeGrokConfigDevZero(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	grok := filepath.Join(home, "grok")
	if err := os.MkdirAll(grok, 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(grok, "config.toml")
	if err := os.Symlink("/dev/zero", config); err != nil {
		t.Fatal(err)
	}
	s := serveHome(t, home, "GROK_HOME="+grok)
	callWithin(t, s.c, 30*time.Second, protocol.PluginMarketplaceList, protocol.PluginMarketplaceListParams{})
	l := callWithin(t, s.c, 30*time.Second, protocol.PluginList, protocol.PluginListParams{})
	found := false
	for _, d := range l.Diagnostics {
		if strings.Contains(d.Message, config) && strings.Contains(d.Message, "/dev") {
			found = true
		}
	}
	if !found {
		t.Errorf("plugin/list diagnostics %s lack %s", mustJSON(l.Diagnostics), config)
	}
}
