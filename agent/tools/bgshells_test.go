package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type bgCall struct {
	Command         string   `json:"command"`
	Timeout         *float64 `json:"timeout,omitempty"`
	RunInBackground bool     `json:"run_in_background"`
}

// eventLog records a registry's events.
type eventLog struct {
	mu     sync.Mutex
	events []ShellEvent
}

func (l *eventLog) add(e ShellEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) of(id string) []ShellEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ShellEvent
	for _, e := range l.events {
		if e.Shell.ID == id {
			out = append(out, e)
		}
	}
	return out
}

// startBG runs command with run_in_background and returns the shell id.
func startBG(t *testing.T, bash *Bash, command string, timeout *float64) string {
	t.Helper()
	res, text := execute(t, context.Background(), bash, bgCall{Command: command, Timeout: timeout, RunInBackground: true})
	id := res.Details.BackgroundShellID
	if res.IsError || id == "" || !strings.Contains(text, id) {
		t.Fatalf("run_in_background: isError %v, id %q, text %q", res.IsError, id, text)
	}
	return id
}

func waitShell(t *testing.T, s *BackgroundShells, id string) ShellInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Wait(ctx, id); err != nil {
		t.Fatalf("waiting for shell %s: %v", id, err)
	}
	for _, sh := range s.List() {
		if sh.ID == id {
			return sh
		}
	}
	t.Fatalf("shell %s not listed", id)
	return ShellInfo{}
}

func newBGBash(t *testing.T) (*Bash, *ProcessGroups, *eventLog) {
	t.Helper()
	g := NewProcessGroups()
	stopAllCleanup(t, g)
	bash := NewBash(t.TempDir())
	bash.Groups = g
	bash.KillGrace = 500 * time.Millisecond
	log := &eventLog{}
	g.Shells().SetOnChange(log.add)
	return bash, g, log
}

// TestBackgroundShellStatuses runs commands in the background and checks
// how each ends: status, exit code, error, the output kept after the end,
// and one start and one end event each.
func TestBackgroundShellStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		command  string
		timeout  *float64
		status   ShellStatus
		exitCode *int
		errText  string
		output   string
	}{
		{"completed", "printf 'a\\033[31mred\\033[0m\\n'", nil, ShellCompleted, ptr(0), "", "a\x1b[31mred\x1b[0m\n"},
		{"failed", "echo no; exit 3", nil, ShellFailed, ptr(3), "", "no\n"},
		{"killed", "echo x; kill -9 $$", nil, ShellFailed, nil, "killed: signal: killed", "x\n"},
		{"timed_out", "echo begun; sleep 100", seconds(0.3), ShellTimedOut, nil, "timed out", "begun\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bash, g, log := newBGBash(t)
			id := startBG(t, bash, tc.command, tc.timeout)
			got := waitShell(t, g.Shells(), id)
			if got.Status != tc.status || got.Error != tc.errText || got.Command != tc.command || got.Cwd != bash.cwd {
				t.Errorf("shell = %+v, want status %s, error %q", got, tc.status, tc.errText)
			}
			if diff := cmp.Diff(got.ExitCode, tc.exitCode); diff != "" {
				t.Errorf("exitCode (-got +want):\n%s", diff)
			}
			if got.StartedAt == 0 || got.EndedAt < got.StartedAt {
				t.Errorf("startedAt %d, endedAt %d", got.StartedAt, got.EndedAt)
			}
			out, err := g.Shells().Output(id)
			if err != nil || out != tc.output {
				t.Errorf("Output = %q, %v; want %q", out, err, tc.output)
			}
			// The end event is delivered after the status is final: wait for it.
			evs := log.of(id)
			for deadline := time.Now().Add(5 * time.Second); len(evs) < 2 && time.Now().Before(deadline); evs = log.of(id) {
				time.Sleep(5 * time.Millisecond)
			}
			if len(evs) != 2 || evs[0].Ended || evs[0].Shell.Status != ShellRunning || !evs[1].Ended ||
				evs[1].Shell.Status != tc.status || evs[1].Shell.OutputTail != tc.output || evs[1].ByUser || evs[1].SessionEnded {
				t.Errorf("events = %+v", evs)
			}
			if ok, err := g.Shells().Stop(id); ok || err != nil {
				t.Errorf("Stop after the end = %v, %v; want false, nil", ok, err)
			}
		})
	}
}

// TestBackgroundShellStop stops a running command with a background child:
// the first Stop answers true, a second false, the command ends stopped by
// the user and its whole process group is gone.
func TestBackgroundShellStop(t *testing.T) {
	t.Parallel()
	bash, g, log := newBGBash(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	id := startBG(t, bash, "echo $$ > "+pidFile+"; sleep 100 & trap '' TERM; sleep 100", nil)
	pgid, ok := waitForPID(t, pidFile, nil)
	if !ok {
		t.Fatal("no pid")
	}
	if n := g.Shells().Running(); n != 1 {
		t.Errorf("Running = %d, want 1", n)
	}
	if ok, err := g.Shells().Stop(id); !ok || err != nil {
		t.Fatalf("Stop = %v, %v; want true", ok, err)
	}
	if ok, err := g.Shells().Stop(id); ok || err != nil {
		t.Errorf("second Stop = %v, %v; want false, nil", ok, err)
	}
	got := waitShell(t, g.Shells(), id)
	if got.Status != ShellStopped || got.ExitCode != nil || got.Error == "" {
		t.Errorf("shell = %+v, want stopped without exit code", got)
	}
	if live := liveMembers(t, pgid); len(live) > 0 {
		t.Errorf("process group %d still alive: %q", pgid, live)
	}
	if evs := log.of(id); len(evs) != 2 || !evs[1].ByUser {
		t.Errorf("events = %+v, want start and an end by the user", evs)
	}
	if n := g.Shells().Running(); n != 0 {
		t.Errorf("Running = %d, want 0", n)
	}
}

// TestBackgroundShellUnknownID: Output, Stop and Wait refuse an id the
// registry does not know.
func TestBackgroundShellUnknownID(t *testing.T) {
	t.Parallel()
	s := NewProcessGroups().Shells()
	if _, err := s.Output("nope"); !errors.Is(err, ErrUnknownShell) {
		t.Errorf("Output: %v", err)
	}
	if _, err := s.Stop("nope"); !errors.Is(err, ErrUnknownShell) {
		t.Errorf("Stop: %v", err)
	}
	if err := s.Wait(context.Background(), "nope"); !errors.Is(err, ErrUnknownShell) {
		t.Errorf("Wait: %v", err)
	}
	// Without a ProcessGroups there is no registry: the call fails.
	res, _ := execute(t, context.Background(), NewBash(t.TempDir()), bgCall{Command: "true", RunInBackground: true})
	if !res.IsError {
		t.Error("run_in_background without ProcessGroups succeeded")
	}
}

// TestBackgroundShellsEndWithTheSession: StopAll stops a running
// background shell (stopped, SessionEnded, its group gone) and refuses
// new ones.
func TestBackgroundShellsEndWithTheSession(t *testing.T) {
	t.Parallel()
	bash, g, log := newBGBash(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	id := startBG(t, bash, "echo $$ > "+pidFile+"; sleep 100", nil)
	pgid, ok := waitForPID(t, pidFile, nil)
	if !ok {
		t.Fatal("no pid")
	}
	if err := g.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if live := liveMembers(t, pgid); len(live) > 0 {
		t.Errorf("process group %d still alive: %q", pgid, live)
	}
	got := waitShell(t, g.Shells(), id)
	if got.Status != ShellStopped {
		t.Errorf("status = %s, want stopped", got.Status)
	}
	if evs := log.of(id); len(evs) != 2 || !evs[1].SessionEnded {
		t.Errorf("events = %+v", evs)
	}
	res, _ := execute(t, context.Background(), bash, bgCall{Command: "true", RunInBackground: true})
	if !res.IsError {
		t.Error("a background shell started after StopAll")
	}
}

// TestBackgroundShellsKeepTheLastEnded: past MaxEndedShells ended shells,
// the oldest go; the list stays oldest first.
func TestBackgroundShellsKeepTheLastEnded(t *testing.T) {
	t.Parallel()
	bash, g, _ := newBGBash(t)
	var ids []string
	for i := 0; i < MaxEndedShells+3; i++ {
		id := startBG(t, bash, fmt.Sprintf("echo %d", i), nil)
		waitShell(t, g.Shells(), id)
		ids = append(ids, id)
	}
	var got []string
	for _, sh := range g.Shells().List() {
		got = append(got, sh.ID)
	}
	if diff := cmp.Diff(got, ids[3:]); diff != "" {
		t.Errorf("listed ids (-got +want):\n%s", diff)
	}
	if _, err := g.Shells().Output(ids[0]); !errors.Is(err, ErrUnknownShell) {
		t.Errorf("Output of a dropped shell: %v", err)
	}
}

// TestRingBufferBounds: the output kept is the last MaxLines lines within
// MaxBytes, whatever the writes' sizes; a cut never splits a UTF-8
// sequence.
func TestRingBufferBounds(t *testing.T) {
	t.Parallel()
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	long := strings.Repeat("é", 40*1024) // 80 KB on one line
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"few lines", []string{"a\n", "b", "c\n"}, "a\nbc\n"},
		{"lines bound", []string{lines(1, 3000)}, lines(1001, 3000)},
		{"lines bound, partial last line", []string{lines(1, 3000), "tail"}, lines(1002, 3000) + "tail"},
		{"lines bound, many writes", strings.SplitAfter(lines(1, 3000), "\n"), lines(1001, 3000)},
		{"bytes bound", []string{long}, long[len(long)-MaxBytes:]},
		{"bytes bound, odd cut", []string{"x" + long + "y"}, long[len(long)-MaxBytes+2:] + "y"},
		{"escapes kept", []string{"\x1b[1mbold\x1b[0m\r\n"}, "\x1b[1mbold\x1b[0m\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newRingBuffer(MaxBytes)
			for _, w := range tc.writes {
				b.Write([]byte(w))
			}
			got := b.tail(MaxLines, MaxBytes)
			if got != tc.want {
				t.Errorf("tail: %d bytes %q..., want %d bytes %q...", len(got), head(got), len(tc.want), head(tc.want))
			}
			if len(b.buf) > 2*MaxBytes {
				t.Errorf("buffer holds %d bytes, more than %d", len(b.buf), 2*MaxBytes)
			}
		})
	}
}

func head(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
