package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
	out.linef("Cloning %s into a scratch directory.", repo)
	if err := git.Clone(ctx, repo, clone); err != nil {
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

	start, err := client.Call(ctx, c, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: clone, ApprovalMode: "fullAccess"})
	if err != nil {
		return fmt.Errorf("thread/start: %w", err)
	}
	threadID := start.Thread.ID
	for _, w := range start.Warnings {
		out.linef("warning (%s): %s", w.Source, w.Message)
	}
	out.linef("Started thread %s in %s (fullAccess).", threadID, clone)
	if _, err := client.Call(ctx, c, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
		ThreadID: threadID, Model: &protocol.ModelRef{Provider: "scripted", ID: "demo"},
	}); err != nil {
		return fmt.Errorf("thread/settings/update: %w", err)
	}
	out.linef("Picked the model scripted/demo.")

	out.section("The turn, as the server streams it")
	out.linef("> %s", demoPrompt)
	started, err := client.Call(ctx, c, protocol.TurnStart, protocol.TurnStartParams{ThreadID: threadID, Text: demoPrompt})
	if err != nil {
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

	if len(done.files) == 0 {
		return errors.New("turn/diff/updated listed no file")
	}

	notes := findFile(diff, notesPath)
	if notes == nil || len(notes.Hunks) != 2 {
		return fmt.Errorf("expected two hunks in %s after the turn, got %s", notesPath, hunkCount(notes))
	}
	h, kept := notes.Hunks[0], notes.Hunks[1]
	out.section("Reverting one hunk")
	out.linef("thread/diff/revert {path: %s, hunkId: %s}", notes.Path, h.ID)
	rev, err := client.Call(ctx, c, protocol.ThreadDiffRevert, protocol.ThreadDiffRevertParams{
		ThreadID: threadID, Path: notes.Path, HunkID: h.ID,
	})
	if err != nil {
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
	if left := notes.Hunks[0]; left.ID != kept.ID {
		out.linef("The hunk left has a new id (%s, was %s) though its lines did not change:", short(left.ID), short(kept.ID))
		out.linef("a hunk id hashes the file's header, whose blob ids changed with the revert, and the hunk,")
		out.linef("so after any action a client reads the diff again before acting on another hunk.")
	}
	out.section("Done")
	out.linef("One hunk left in %s; the demo worked.", notesPath)
	return nil
}

// readDiff reads the thread's uncommitted diff.
func readDiff(ctx context.Context, c *client.Client, threadID string) (protocol.ThreadDiffReadResult, error) {
	res, err := client.Call(ctx, c, protocol.ThreadDiffRead, protocol.ThreadDiffReadParams{ThreadID: threadID, Scope: protocol.ScopeUncommitted})
	if err != nil {
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
}

// linef writes one line.
func (p *printer) linef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// section writes a blank line and a heading.
func (p *printer) section(title string) {
	p.linef("")
	p.linef("== %s ==", title)
}

// short is the first 12 characters of a hunk id, enough to tell ids apart
// in a sentence.
func short(id string) string { return id[:min(len(id), 12)] }

// turnDone is what the demo learns at the end of its turn.
type turnDone struct {
	turn  protocol.Turn
	files []protocol.FileTotal
}

// events tells the turn as a story, one line per event a person cares
// about, and reports the end of the turn: turn/completed, then its
// turn/diff/updated.
//
// What is left out, and why: deltas (the whole text is printed once, when
// its item completes), the user's message (the demo printed the prompt),
// item/started of messages and reasoning (nothing to say before the text),
// thread/turn/completed (the thread-level twin of turn/completed) and a
// thread status equal to the last one printed. Token usage is printed once,
// with the turn's end.
type events struct {
	out *printer

	mu         sync.Mutex
	lastStatus string
	usage      *protocol.TokenUsage
	completed  *protocol.Turn
	done       chan turnDone // receives once, after turn/diff/updated is printed
	pending    *turnDone     // the turn's end, to hand over once its line is out
	finished   bool
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
	if line, ok := e.describe(method, raw); ok {
		if line != "" {
			e.out.linef("%s", line)
		}
		if e.pending != nil {
			e.finished = true
			e.done <- *e.pending
			e.pending = nil
		}
		return
	}
	// A notification the demo does not know: its name and its whole params.
	e.out.linef("%s %s", method, compactJSON(raw))
}

// describe returns the line for a notification ("" to print nothing); ok
// is false for a notification it does not know or cannot decode.
func (e *events) describe(method string, raw json.RawMessage) (line string, ok bool) {
	switch method {
	case protocol.ItemAgentMessageDelta.Name, protocol.ItemReasoningDelta.Name, protocol.ThreadTurnCompleted.Name,
		protocol.ThreadSidebar.Name: // a sidebar row repeats what the story already told
		return "", true
	case protocol.ThreadStatusChanged.Name:
		var p protocol.ThreadStatusChangedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		if p.Status.Type == e.lastStatus {
			return "", true
		}
		e.lastStatus = p.Status.Type
		return "The thread is " + p.Status.Type + ".", true
	case protocol.ThreadTokenUsageUpdated.Name:
		var p protocol.ThreadTokenUsageUpdatedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		e.usage = &p.Usage
		return "", true
	case protocol.TurnStarted.Name:
		var p protocol.TurnStartedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		return "Turn " + p.Turn.ID + " started.", true
	case protocol.ItemStarted.Name:
		var p protocol.ItemStartedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		if p.Item.Type != protocol.ItemToolCall {
			return "", true
		}
		return fmt.Sprintf("  tool %s started: %s", p.Item.Name, describeArguments(p.Item.Arguments)), true
	case protocol.ItemCompleted.Name:
		var p protocol.ItemCompletedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		return describeCompleted(p.Item), true
	case protocol.TurnCompletedNotification.Name:
		var p protocol.TurnCompletedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		e.completed = &p.Turn
		line = "Turn " + p.Turn.ID + " " + p.Turn.Status
		if p.Turn.Error != nil {
			line += " (" + p.Turn.Error.Kind + ": " + p.Turn.Error.Message + ")"
		}
		if e.usage != nil {
			line += fmt.Sprintf("; %d input and %d output tokens", e.usage.Input, e.usage.Output)
		}
		return line + ".", true
	case protocol.TurnDiffUpdated.Name:
		var p protocol.TurnDiffUpdatedParams
		if json.Unmarshal(raw, &p) != nil {
			return "", false
		}
		files := make([]string, len(p.Files))
		for i, f := range p.Files {
			files[i] = fmt.Sprintf("%s +%d -%d", f.Path, f.Additions, f.Deletions)
		}
		line = fmt.Sprintf("The turn changed %d file(s): %s.", len(p.Files), strings.Join(files, ", "))
		if e.completed != nil && e.completed.ID == p.TurnID {
			// handle hands it over once this line is printed, so that the
			// demo's next section comes after it.
			e.pending = &turnDone{turn: *e.completed, files: p.Files}
		}
		return line, true
	}
	return "", false
}

// describeCompleted is the line of a completed item: the whole text of a
// message or reasoning, or a tool call's status, output and file changes.
// The user's message prints nothing: the demo printed the prompt.
func describeCompleted(it protocol.Item) string {
	switch it.Type {
	case protocol.ItemAgentMessage:
		return "  agent: " + oneLine(it.Text)
	case protocol.ItemReasoning:
		return "  thinking: " + oneLine(it.Text)
	case protocol.ItemUserMessage:
		return ""
	case protocol.ItemToolCall:
		var b strings.Builder
		fmt.Fprintf(&b, "  tool %s %s", it.Name, it.Status)
		if it.Output != nil {
			fmt.Fprintf(&b, ": %s", describeOutput(*it.Output))
		}
		for _, fc := range it.FileChanges {
			fmt.Fprintf(&b, " (%s %s)", fc.Kind, fc.Path)
		}
		return b.String()
	}
	return fmt.Sprintf("  %s %s completed", it.Type, it.ID)
}

// describeArguments tells a tool call's arguments in words: each member as
// name=value for a string on one line of at most 80 characters, the number
// of entries of an array, else its size; never JSON cut short.
func describeArguments(raw json.RawMessage) string {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil || len(args) == 0 {
		return compactJSON(raw)
	}
	parts := make([]string, 0, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := args[k]
		var str string
		var arr []json.RawMessage
		switch {
		case json.Unmarshal(v, &str) == nil && !strings.Contains(str, "\n") && utf8.RuneCountInString(str) <= 80:
			parts = append(parts, k+"="+strconv.Quote(str))
		case json.Unmarshal(v, &str) == nil:
			parts = append(parts, fmt.Sprintf("%s=<%d lines of text>", k, strings.Count(str, "\n")+1))
		case json.Unmarshal(v, &arr) == nil:
			parts = append(parts, fmt.Sprintf("%s=<%d entries>", k, len(arr)))
		default:
			parts = append(parts, k+"="+compactJSON(v))
		}
	}
	return strings.Join(parts, " ")
}

// describeOutput is a tool's output in one line: its first line, with the
// number of lines left out.
func describeOutput(out string) string {
	out = strings.TrimRight(out, "\n")
	first, rest, more := strings.Cut(out, "\n")
	if !more {
		return strconv.Quote(first)
	}
	return fmt.Sprintf("%s (+%d more lines)", strconv.Quote(first), strings.Count(rest, "\n")+1)
}

// oneLine puts text on one line, whole.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// compactJSON is a JSON value on one line, whole, with <, > and & as
// themselves.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return strconv.Quote(string(raw))
	}
	return htmlUnescaper.Replace(b.String())
}

// htmlUnescaper undoes the escaping of <, > and & that Go's JSON encoder
// applies in strings (\u003c, \u003e, \u0026), for reading.
var htmlUnescaper = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

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
