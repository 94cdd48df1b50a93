//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/knightcode/knightcode/internal/proctest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// escapeCommand is a bash command whose processes leave the command without
// the thread's tag (issue 22, item 3): `setsid -f env -u KNIGHTCODE_PROCTAG
// sleep A` (a new session, the tag removed) and `env -i setsid -f sleep B`
// (a new session, an empty environment). It returns the command and the
// two sleeps' unique arguments, by which the test finds them in /proc.
func escapeCommand(t *testing.T) (command string, sleeps []string) {
	t.Helper()
	for _, tool := range []string{"setsid", "env", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	a, b := proctest.UniqueSleep(t, 3132), proctest.UniqueSleep(t, 3131)
	return fmt.Sprintf("setsid -f env -u KNIGHTCODE_PROCTAG sleep %s; env -i setsid -f sleep %s; echo started", a, b), []string{a, b}
}

// escapeScripts returns scripted models, one per name, each running its own
// escapeCommand in bash, and the sleeps of each.
func escapeScripts(t *testing.T, names ...string) (map[string]string, map[string][]string) {
	t.Helper()
	scripts, sleeps := map[string]string{}, map[string][]string{}
	for _, name := range names {
		command, args := escapeCommand(t)
		scripts[name] = script(
			map[string]any{"toolCalls": []any{call("bg", "bash", map[string]any{"command": command})}},
			map[string]any{"text": "left them running"},
		)
		sleeps[name] = args
	}
	return scripts, sleeps
}

// TestE2EEscapedProcessesEndAtServerExit: processes a bash call started in
// a new session with the thread's tag removed or the whole environment
// cleared (issue 22, item 3: they survived the server) end when the server
// exits, on stdin EOF or SIGTERM (spec, thread/backgroundShells:
// background commands "end with the session").
func TestE2EEscapedProcessesEndAtServerExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		exit func(t *testing.T, s *diffServer, server *os.Process)
	}{
		{"stdin EOF", func(t *testing.T, s *diffServer, _ *os.Process) {
			if err := s.c.Close(); err != nil {
				t.Fatalf("server exit: %v", err)
			}
		}},
		{"SIGTERM", func(t *testing.T, s *diffServer, server *os.Process) {
			if err := server.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-s.c.Done():
			case <-time.After(rpctest.DefaultTimeout):
				t.Fatal("the server did not exit on SIGTERM")
			}
			if err := s.c.Close(); err != nil {
				t.Fatalf("server exit: %v", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scripts, sleeps := escapeScripts(t, "escape")
			env, home := testEnv(t)
			writeScripts(t, home, scripts)
			cmd := exec.Command(binary, "app-server")
			cmd.Env = env
			s, _ := serveDiff(t, cmd, home)
			thread := s.startThread(t, threadsRepo(t), "escape")
			s.runTurn(t, thread, "leave something running")
			proctest.WaitSleeping(t, sleeps["escape"]...)

			tc.exit(t, s, cmd.Process)

			if left := proctest.Survivors(sleeps["escape"]...); len(left) > 0 {
				t.Errorf("processes the thread's bash call started outlived the server: %q", left)
			}
		})
	}
}

// TestE2EEscapedProcessesEndWhenTheServerIsKilled: the same escaped
// processes end when the server is killed with SIGKILL, which runs no
// shutdown: each command's reaper sees the server go and ends what it
// holds.
func TestE2EEscapedProcessesEndWhenTheServerIsKilled(t *testing.T) {
	t.Parallel()
	scripts, sleeps := escapeScripts(t, "escape")
	env, home := testEnv(t)
	writeScripts(t, home, scripts)
	c, cmd := crashServer(t, env)
	notes := record(c, home)
	th := crashCall(t, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: threadsRepo(t), ApprovalMode: "fullAccess",
		Model: &protocol.ModelRef{Provider: "scripted", ID: "escape"}}).Thread.ID
	crashCall(t, c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: th, Text: "leave something running"})
	from := 0
	notes.waitNote(t, &from, protocol.TurnCompletedNotification.Name, nil) // the turn completed
	proctest.WaitSleeping(t, sleeps["escape"]...)

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	if left := proctest.Survivors(sleeps["escape"]...); len(left) > 0 {
		t.Errorf("processes the thread's bash call started outlived the killed server: %q", left)
	}
}

// TestE2EEscapedProcessesEndWithTheirThread: the same escaped processes end
// when their thread is archived or unloaded (issue 22, item 3), and only
// theirs: another thread's stay running until the server exits.
func TestE2EEscapedProcessesEndWithTheirThread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(t *testing.T, s *diffServer, thread string)
	}{
		{"thread/archive", func(t *testing.T, s *diffServer, thread string) {
			mustCall(t, s, protocol.ThreadArchive, protocol.ThreadArchiveParams{ThreadID: thread})
		}},
		{"unload (session file ownership lost)", func(t *testing.T, s *diffServer, thread string) {
			// The session file is replaced: the next write finds it is no
			// longer the file the server owns and unloads the thread.
			file := s.readThread(t, thread).Thread.SessionFile
			if file == "" {
				t.Fatal("thread/read: no session file")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			from := s.mark()
			s.call(t, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: thread, Text: "again"}, nil)
			s.waitNote(t, &from, protocol.ThreadStatusChanged.Name, func(raw json.RawMessage) bool {
				var p protocol.ThreadStatusChangedParams
				return json.Unmarshal(raw, &p) == nil && p.ThreadID == thread && p.Status.Type == protocol.ThreadStatusSystemError
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scripts, sleeps := escapeScripts(t, "ended", "other")
			s := startDiffServer(t, scripts)
			ended := s.startThread(t, threadsRepo(t), "ended")
			other := s.startThread(t, threadsRepo(t), "other")
			s.runTurn(t, ended, "leave something running")
			s.runTurn(t, other, "leave something running")
			proctest.WaitSleeping(t, append(sleeps["ended"], sleeps["other"]...)...)

			tc.end(t, s, ended)

			if left := proctest.Survivors(sleeps["ended"]...); len(left) > 0 {
				t.Errorf("processes the thread's bash call started outlived the thread: %q", left)
			}
			for _, arg := range sleeps["other"] {
				if len(proctest.Sleeping(arg)) == 0 {
					t.Errorf("sleep %s of the other thread ended with the first thread", arg)
				}
			}
			if err := s.c.Close(); err != nil {
				t.Fatalf("server exit: %v", err)
			}
			if left := proctest.Survivors(sleeps["other"]...); len(left) > 0 {
				t.Errorf("processes of the other thread outlived the server: %q", left)
			}
		})
	}
}
