package main

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
	"strings"
	"sync"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// options are the demo's flags.
type options struct {
	// Bin is the knightcode binary (-bin).
	Bin string
	// Repo is the repository to clone (-repo); "" means the repository of
	// the working directory.
	Repo string
}

// notesPath is the file the built-in scripted/demo model reads and edits,
// relative to the clone's root (agent/provider/scripted/demo.json).
const notesPath = "testdata/demo/notes.md"

// demoPrompt is the user's text of the demo turn.
const demoPrompt = "Tidy up testdata/demo/notes.md: the status line is stale and the closing line should point at the next step."

// demo runs every step; the first failure ends it.
func demo(ctx context.Context, opts options, stdout, stderr io.Writer) (err error) {
	git, err := gitcli.New()
	if err != nil {
		return err
	}
	bin, err := filepath.Abs(opts.Bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("no knightcode binary at %s (build it with `make build`): %w", opts.Bin, err)
	}
	repo := opts.Repo
	if repo == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		r, err := git.Discover(ctx, wd)
		if err != nil {
			return fmt.Errorf("finding the repository of %s (pass -repo): %w", wd, err)
		}
		repo = r.Root
	}

	tmp, err := os.MkdirTemp("", "knightcode-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	clone := filepath.Join(tmp, "clone")
	home := filepath.Join(tmp, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		return err
	}
	out := &printer{w: stdout}
	out.linef("Cloning %s into a scratch directory ...", repo)
	if _, err := git.Run(ctx, gitcli.Cmd{Dir: tmp, Args: []string{"clone", "--quiet", "--no-hardlinks", "--", repo, clone},
		Write: true, Timeout: demoTimeout}); err != nil {
		return fmt.Errorf("cloning %s: %w", repo, err)
	}
	if _, err := os.Stat(filepath.Join(clone, filepath.FromSlash(notesPath))); err != nil {
		return fmt.Errorf("the clone of %s has no %s, the file the scripted/demo model edits: %w", repo, notesPath, err)
	}

	// The server runs with a home, config and agent directory of its own, so
	// the demo never reads or writes the user's settings and sessions.
	cmd := exec.Command(bin, "app-server")
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"KNIGHTCODE_CODING_AGENT_DIR="+filepath.Join(home, "agent"),
		"KNIGHTCODE_CODING_AGENT_SESSION_DIR=",
	)
	serverLog := &syncBuffer{}
	cmd.Stderr = serverLog
	c, err := client.Start(cmd)
	if err != nil {
		return fmt.Errorf("starting %s app-server: %w", opts.Bin, err)
	}
	defer func() {
		if cerr := c.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("the server did not exit cleanly: %w", cerr)
		}
		if err != nil {
			fmt.Fprintf(stderr, "--- server log ---\n%s--- end of server log ---\n", serverLog.String())
		}
	}()
	ev := newEvents(out)
	c.OnNotification(ev.handle)
	return drive(ctx, c, clone, ev, out)
}

// drive is the protocol conversation of the demo.
func drive(ctx context.Context, c *client.Client, clone string, ev *events, out *printer) error {
	initRes, err := c.Initialize(ctx, protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "knightcode-demo", Version: "1"}})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	out.linef("Connected to %s %s.", initRes.ServerInfo.Name, initRes.ServerInfo.Version)

	var start protocol.ThreadStartResult
	if err := c.Request(ctx, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: clone, ApprovalMode: "fullAccess"}, &start); err != nil {
		return fmt.Errorf("thread/start: %w", err)
	}
	threadID := start.Thread.ID
	for _, w := range start.Warnings {
		out.linef("warning (%s): %s", w.Source, w.Message)
	}
	out.linef("Started thread %s in %s (fullAccess).", threadID, clone)
	if err := c.Request(ctx, protocol.ThreadSettingsUpdate.Name, protocol.ThreadSettingsUpdateParams{
		ThreadID: threadID, Model: &protocol.ModelRef{Provider: "scripted", ID: "demo"},
	}, nil); err != nil {
		return fmt.Errorf("thread/settings/update: %w", err)
	}
	out.linef("Picked the model scripted/demo.")

	out.section("The turn, as the server streams it")
	out.linef("> %s", demoPrompt)
	var started protocol.TurnStartResult
	if err := c.Request(ctx, protocol.TurnStart.Name, protocol.TurnStartParams{ThreadID: threadID, Text: demoPrompt}, &started); err != nil {
		return fmt.Errorf("turn/start: %w", err)
	}
	if started.Status != protocol.TurnStartStarted {
		return fmt.Errorf("turn/start answered %q, not started", started.Status)
	}
	done, err := ev.waitTurn(ctx)
	if err != nil {
		return err
	}
	if done.turn.Status != protocol.TurnCompleted {
		msg := ""
		if done.turn.Error != nil {
			msg = ": " + done.turn.Error.Message
		}
		return fmt.Errorf("the turn ended %s%s", done.turn.Status, msg)
	}

	out.section("The uncommitted diff")
	diff, err := readDiff(ctx, c, threadID)
	if err != nil {
		return err
	}
	printDiff(out, diff)

	out.section("The turn's file totals (turn/diff/updated)")
	for _, f := range done.files {
		out.linef("%s  +%d -%d", f.Path, f.Additions, f.Deletions)
	}
	if len(done.files) == 0 {
		return errors.New("turn/diff/updated listed no file")
	}

	notes := findFile(diff, notesPath)
	if notes == nil || len(notes.Hunks) != 2 {
		return fmt.Errorf("expected two hunks in %s after the turn, got %s", notesPath, hunkCount(notes))
	}
	h := notes.Hunks[0]
	out.section("Reverting one hunk")
	out.linef("thread/diff/revert {path: %s, hunkId: %s}", notes.Path, h.ID)
	var rev protocol.ThreadDiffRevertResult
	if err := c.Request(ctx, protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{
		ThreadID: threadID, Path: notes.Path, HunkID: h.ID,
	}, &rev); err != nil {
		return fmt.Errorf("thread/diff/revert: %w", err)
	}
	out.linef("Reverted; changed paths: %s", strings.Join(rev.Paths, ", "))

	out.section("The uncommitted diff again")
	diff, err = readDiff(ctx, c, threadID)
	if err != nil {
		return err
	}
	printDiff(out, diff)
	notes = findFile(diff, notesPath)
	if notes == nil || len(notes.Hunks) != 1 {
		return fmt.Errorf("expected one hunk left in %s after the revert, got %s", notesPath, hunkCount(notes))
	}
	if notes.Hunks[0].ID == h.ID {
		return errors.New("the reverted hunk is still in the diff")
	}
	out.section("Done")
	out.linef("One hunk left in %s; the demo worked.", notesPath)
	return nil
}

// readDiff reads the thread's uncommitted diff.
func readDiff(ctx context.Context, c *client.Client, threadID string) (protocol.ThreadDiffReadResult, error) {
	var res protocol.ThreadDiffReadResult
	if err := c.Request(ctx, protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: threadID, Scope: protocol.ScopeUncommitted}, &res); err != nil {
		return res, fmt.Errorf("thread/diff/read: %w", err)
	}
	return res, nil
}

// findFile returns the file of diff at path, nil when absent.
func findFile(diff protocol.ThreadDiffReadResult, path string) *protocol.DiffFile {
	for i := range diff.Files {
		if diff.Files[i].Path == path {
			return &diff.Files[i]
		}
	}
	return nil
}

func hunkCount(f *protocol.DiffFile) string {
	if f == nil {
		return "no change to the file"
	}
	return fmt.Sprintf("%d", len(f.Hunks))
}

// statusLetters are git's one-letter names of file statuses.
var statusLetters = map[string]string{
	protocol.FileStatusAdded: "A", protocol.FileStatusModified: "M", protocol.FileStatusDeleted: "D",
	protocol.FileStatusRenamed: "R", protocol.FileStatusTypeChanged: "T",
}

// printDiff prints each file with its hunks, their ids and lines.
func printDiff(out *printer, diff protocol.ThreadDiffReadResult) {
	out.linef("scope %s of %s: %d file(s)", diff.Scope, diff.Root, len(diff.Files))
	for _, f := range diff.Files {
		name := f.Path
		if f.OldPath != "" {
			name = f.OldPath + " -> " + f.Path
		}
		out.linef("%s %s  +%d -%d", statusLetters[f.Status], name, f.Additions, f.Deletions)
		for _, h := range f.Hunks {
			out.linef("  hunk %s", h.ID)
			out.linef("    %s", h.Header)
			for _, l := range h.Lines {
				out.linef("    %s", strings.TrimRight(l, "\r\n"))
			}
		}
	}
}

// printer writes whole lines, one writer at a time (notifications are
// printed from the client's goroutine, the rest from the demo's).
type printer struct {
	mu sync.Mutex
	w  io.Writer
	// open is true while a line of streamed deltas has no newline yet.
	open bool
}

// linef writes one line, ending an open delta line first.
func (p *printer) linef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// section writes a blank line and a heading.
func (p *printer) section(title string) {
	p.linef("")
	p.linef("== %s ==", title)
}

// stream appends a delta to the open line, opening it with prefix.
func (p *printer) stream(prefix, delta string, fresh bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fresh {
		p.endLocked()
		fmt.Fprint(p.w, prefix)
	}
	fmt.Fprint(p.w, strings.ReplaceAll(delta, "\n", " "))
	p.open = true
}

func (p *printer) endLocked() {
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

// turnDone is what the demo learns at the end of its turn.
type turnDone struct {
	turn  protocol.Turn
	files []protocol.FileTotal
}

// events prints the server's notifications readably, one line per
// notification (deltas of one item joined on one line), and reports the
// end of the turn: turn/completed, then its turn/diff/updated.
type events struct {
	out *printer

	mu        sync.Mutex
	streaming string // the item whose deltas the open line shows
	completed *protocol.Turn
	done      chan turnDone // receives once, after turn/diff/updated
	finished  bool
}

func newEvents(out *printer) *events {
	return &events{out: out, done: make(chan turnDone, 1)}
}

// waitTurn waits for the turn's end and its file totals.
func (e *events) waitTurn(ctx context.Context) (turnDone, error) {
	select {
	case d := <-e.done:
		return d, nil
	case <-ctx.Done():
		return turnDone{}, fmt.Errorf("waiting for the turn to end: %w", ctx.Err())
	}
}

// handle is the client's notification callback.
func (e *events) handle(method string, raw json.RawMessage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.finished {
		return // the demo goes on with its own output
	}
	switch method {
	case protocol.ItemAgentMessageDelta.Name, protocol.ItemReasoningDelta.Name:
		var p protocol.ItemDeltaParams
		if json.Unmarshal(raw, &p) != nil {
			break
		}
		kind := "agent"
		if method == protocol.ItemReasoningDelta.Name {
			kind = "thinking"
		}
		fresh := e.streaming != p.ItemID
		e.streaming = p.ItemID
		e.out.stream(fmt.Sprintf("    %s> ", kind), p.Delta, fresh)
		return
	}
	e.streaming = ""
	switch method {
	case protocol.TurnStarted.Name:
		var p protocol.TurnStartedParams
		if json.Unmarshal(raw, &p) == nil {
			e.out.linef("%-20s %s", method, p.Turn.ID)
			return
		}
	case protocol.ItemStarted.Name, protocol.ItemCompleted.Name:
		var p protocol.ItemStartedParams
		if json.Unmarshal(raw, &p) == nil {
			e.out.linef("%-20s %s", method, describeItem(p.Item, method == protocol.ItemCompleted.Name))
			return
		}
	case protocol.TurnCompletedNotification.Name:
		var p protocol.TurnCompletedParams
		if json.Unmarshal(raw, &p) == nil {
			e.completed = &p.Turn
			line := fmt.Sprintf("%-20s %s %s", method, p.Turn.ID, p.Turn.Status)
			if p.Turn.Error != nil {
				line += " (" + p.Turn.Error.Kind + ": " + p.Turn.Error.Message + ")"
			}
			e.out.linef("%s", line)
			return
		}
	case protocol.TurnDiffUpdated.Name:
		var p protocol.TurnDiffUpdatedParams
		if json.Unmarshal(raw, &p) == nil {
			e.out.linef("%-20s %s: %d file(s)", method, p.TurnID, len(p.Files))
			if e.completed != nil && e.completed.ID == p.TurnID {
				e.finished = true
				e.done <- turnDone{turn: *e.completed, files: p.Files}
			}
			return
		}
	case protocol.ThreadStatusChanged.Name:
		var p struct {
			Status protocol.ThreadStatus `json:"status"`
		}
		if json.Unmarshal(raw, &p) == nil {
			e.out.linef("%-20s %s", method, p.Status.Type)
			return
		}
	case protocol.ThreadTokenUsageUpdated.Name:
		var p struct {
			Usage struct {
				Input  int64 `json:"input"`
				Output int64 `json:"output"`
			} `json:"usage"`
		}
		if json.Unmarshal(raw, &p) == nil {
			e.out.linef("%-20s input %d, output %d tokens so far", method, p.Usage.Input, p.Usage.Output)
			return
		}
	}
	e.out.linef("%-20s %s", method, oneLine(string(raw), 120))
}

// describeItem is one line about an item: its type, id, and for tool calls
// the tool, its status, arguments or output and file changes; for completed
// messages their text.
func describeItem(it protocol.Item, completed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", it.Type, it.ID)
	switch it.Type {
	case protocol.ItemToolCall:
		fmt.Fprintf(&b, " %s [%s]", it.Name, it.Status)
		if !completed {
			fmt.Fprintf(&b, " %s", oneLine(plainJSON(it.Arguments), 100))
			break
		}
		if it.Output != nil {
			fmt.Fprintf(&b, " -> %s", oneLine(*it.Output, 80))
		}
		for _, fc := range it.FileChanges {
			fmt.Fprintf(&b, " (%s %s)", fc.Kind, fc.Path)
		}
	case protocol.ItemUserMessage, protocol.ItemAgentMessage, protocol.ItemReasoning:
		if completed && it.Text != "" {
			fmt.Fprintf(&b, ": %s", oneLine(it.Text, 100))
		}
	}
	return b.String()
}

// htmlUnescaper undoes the escaping of <, > and & that Go's JSON encoder
// applies in strings (\u003c, \u003e, \u0026), for reading.
var htmlUnescaper = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// plainJSON is a JSON value as text, with <, > and & shown as themselves.
func plainJSON(raw json.RawMessage) string { return htmlUnescaper.Replace(string(raw)) }

// oneLine puts s on one line, cut to max runes with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}

// syncBuffer collects the server's log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
