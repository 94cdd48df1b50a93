package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/threads/ext"
)

// TestDispatchFixtures runs the e2e fixtures behind the seam: the input
// transform and handled input, the tool_call block and in-place change,
// before_agent_start's system prompt and message, the registered tool
// (fileChanges details, a throw as an error), the command.
func TestDispatchFixtures(t *testing.T) {
	cwd := t.TempDir()
	r, h, w, _ := loadRunner(t, 0, cwd, fixture(t, "input.ts"), fixture(t, "guard.ts"), fixture(t, "prompt.ts"),
		fixture(t, "tool.ts"), fixture(t, "command.ts"), fixture(t, "pkg/src/main.ts"))
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	ctx := context.Background()
	if res := r.Input(ctx, ext.InputEvent{Text: "please list", Source: ext.SourceInteractive}); res.Action != ext.InputTransform || res.Text != "list" {
		t.Errorf("input transform: %+v", res)
	}
	if res := r.Input(ctx, ext.InputEvent{Text: "skip: x", Source: ext.SourceInteractive}); res.Action != ext.InputHandled {
		t.Errorf("handled input: %+v", res)
	}
	if res := r.ToolCall(ctx, ext.ToolCallEvent{ToolCallID: "c1", ToolName: "bash", Input: json.RawMessage(`{"command":"rm -rf /tmp/x"}`)}); !res.Block || res.Reason != "blocked by guard.ts: rm -rf /tmp/x" {
		t.Errorf("tool_call block: %+v", res)
	}
	if res := r.ToolCall(ctx, ext.ToolCallEvent{ToolCallID: "c2", ToolName: "bash", Input: json.RawMessage(`{"command":"SHOUT now"}`)}); res.Block || string(res.Input) != `{"command":"echo shouted now"}` {
		t.Errorf("tool_call in-place change: %+v %s", res, res.Input)
	}
	if res := r.ToolCall(ctx, ext.ToolCallEvent{ToolCallID: "c3", ToolName: "read", Input: json.RawMessage(`{"path":"a"}`)}); res.Block || res.Input != nil {
		t.Errorf("tool_call of another tool: %+v", res)
	}
	start := r.BeforeAgentStart(ctx, ext.BeforeAgentStartEvent{Prompt: "hi", SystemPrompt: "You help."})
	if start.SystemPrompt != "You help.\n\nAlways answer like a pirate (prompt: hi)." || len(start.Messages) != 1 ||
		start.Messages[0].CustomType != "pirate" || start.Messages[0].Content[0].Text != "Arr, remember the pirate voice." {
		t.Errorf("before_agent_start: %+v", start)
	}
	tools := r.Tools()
	if len(tools) != 1 || tools[0].Name != "stamp" {
		t.Fatalf("tools %+v", tools)
	}
	var schema map[string]any
	if err := json.Unmarshal(tools[0].Parameters, &schema); err != nil || schema["type"] != "object" ||
		strings.Join(anyStrings(schema["required"]), ",") != "file" {
		t.Errorf("stamp's parameters %s", tools[0].Parameters)
	}
	res := r.Execute(ctx, tools[0], ext.ToolCall{ID: "t1", Name: "stamp", Input: json.RawMessage(`{"file":"out.txt","text":"hello"}`)})
	if res.IsError || res.Content[0].Text != "stamped out.txt (t1)" {
		t.Errorf("stamp: %+v", res)
	}
	var details agent.ToolDetails
	if err := json.Unmarshal(res.Details, &details); err != nil || len(details.FileChanges) != 1 || details.FileChanges[0].Path != filepath.Join(cwd, "out.txt") {
		t.Errorf("stamp's details %s (%v)", res.Details, err)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "out.txt")); string(b) != "hello\n" {
		t.Errorf("out.txt = %q", b)
	}
	res = r.Execute(ctx, tools[0], ext.ToolCall{ID: "t2", Name: "stamp", Input: json.RawMessage(`{"file":"x","mode":"fail"}`)})
	if !res.IsError || !strings.Contains(res.Content[0].Text, "stamp x refused") || !strings.Contains(res.Content[0].Text, "tool.ts:") {
		t.Errorf("a throwing tool: %+v", res)
	}
	cmds := r.Commands()
	if len(cmds) != 2 || cmds[0].Name != "hello" || cmds[1].Name != "greet" || cmds[1].Description != "Greetings from pkg" {
		t.Errorf("commands %+v", cmds)
	}
	if !r.RunCommand(ctx, "/hello world") {
		t.Fatal("/hello did not run")
	}
	h.wait(t, "the command's status, notice and entry", func() bool {
		return h.statuses["hello"] == "hello world" && len(h.notices) == 1 && string(h.entries["hello"]) == `{"who":"world"}`
	})
	if h.notices[0] != "info: Hello, world!" || len(h.warnings) > 0 {
		t.Errorf("notices %q, warnings %+v", h.notices, h.warnings)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestLoadFailures: a throw while loading, a syntax error and a Node
// module the runtime does not provide are load warnings with the .ts
// file, line and column; the other extensions load.
func TestLoadFailures(t *testing.T) {
	dir := t.TempDir()
	missing := writeExt(t, dir, "missing.ts", "import leftPad from \"left-pad\";\nexport default function (pi: any) { leftPad(); }\n")
	noFactory := writeExt(t, dir, "nofactory.js", "export const x = 1;\n")
	_, _, w, _ := loadRunner(t, 0, dir, fixture(t, "throws.ts"), fixture(t, "syntax.ts"), fixture(t, "unprovided.ts"), missing, noFactory, fixture(t, "input.ts"))
	want := []struct {
		path         string
		line, column int
		text         string
	}{
		{fixture(t, "throws.ts"), 9, 8, "no config for this thread: undefined"},
		{fixture(t, "syntax.ts"), 4, 12, `Unexpected ";"`},
		{fixture(t, "unprovided.ts"), 1, 30, `module "node:net" is not provided by knightcode's extension runtime`},
		{missing, 1, 21, `Could not resolve "left-pad"`},
		{noFactory, 0, 0, "exports no factory function"},
	}
	if len(w) != len(want) {
		t.Fatalf("warnings %+v", w)
	}
	for i, x := range want {
		if w[i].Path != x.path || w[i].Line != x.line || w[i].Column != x.column || !strings.Contains(w[i].Message, x.text) {
			t.Errorf("warning %d = %+v, want %s:%d:%d %q", i, w[i], x.path, x.line, x.column, x.text)
		}
	}
}

// TestInterruptedHandler: JavaScript that never returns is interrupted
// after the timeout: the handler fails, the dispatch goes on, and the
// extension's next handler call warns that its state may be
// inconsistent. The default timeout is 5 s.
func TestInterruptedHandler(t *testing.T) {
	if DefaultHandlerTimeout != 5*time.Second || New(Options{}).timeout != 5*time.Second {
		t.Fatal("the default handler timeout is not 5 s")
	}
	r, h, w, _ := loadRunner(t, 150*time.Millisecond, t.TempDir(), fixture(t, "loop.ts"), fixture(t, "input.ts"))
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	begin := time.Now()
	res := r.Input(context.Background(), ext.InputEvent{Text: "spin", Source: ext.SourceInteractive})
	if d := time.Since(begin); d > 3*time.Second {
		t.Errorf("the interrupt took %v", d)
	}
	if res.Action != ext.InputContinue {
		t.Errorf("input after the interrupt: %+v", res)
	}
	h.mu.Lock()
	if len(h.warnings) != 1 || !strings.Contains(h.warnings[0].Message, "its input handler failed: it ran for more than 150ms without returning and was interrupted") {
		t.Errorf("warnings %+v", h.warnings)
	}
	h.mu.Unlock()
	// The runtime works on, and the next call warns once.
	if res := r.Input(context.Background(), ext.InputEvent{Text: "please go", Source: ext.SourceInteractive}); res.Text != "go" {
		t.Errorf("the next input: %+v", res)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.warnings) != 2 || h.warnings[1].Message != "extension "+fixture(t, "loop.ts")+" was interrupted; its state may be inconsistent: /reload" {
		t.Errorf("warnings %+v", h.warnings)
	}
}

// TestHandlerThrowPosition: a handler's throw is the seam's failure with
// the position in the .ts; ctx.signal and a later call still work.
func TestHandlerThrowPosition(t *testing.T) {
	dir := t.TempDir()
	p := writeExt(t, dir, "boom.ts", `export default function (pi: any) {
	pi.on("turn_end", async () => {
		await Promise.resolve();
		throw new TypeError("boom");
	});
}
`)
	r, h, _, _ := loadRunner(t, 0, dir, p)
	r.TurnEnd(context.Background(), ext.TurnEndEvent{})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.warnings) != 1 || !strings.HasSuffix(h.warnings[0].Message, "its turn_end handler failed: TypeError: boom (at "+p+":4:9)") {
		t.Errorf("warnings %+v", h.warnings)
	}
}

// TestDialogsAndCancel: ctx.ui dialogs reach the UI and resolve as pi's
// do; an interrupt (the context ending) answers the waiting caller at
// once.
func TestDialogsAndCancel(t *testing.T) {
	dir := t.TempDir()
	p := writeExt(t, dir, "ask.ts", `export default function (pi: any) {
	pi.registerCommand("ask", { handler: async (_a: string, ctx: any) => {
		const pick = await ctx.ui.select("Pick", ["a", "b"]);
		const ok = await ctx.ui.confirm("Sure?", "really");
		pi.appendEntry("answers", { pick, ok, hasUI: ctx.hasUI, cwd: ctx.cwd, idle: ctx.isIdle() });
	}});
	pi.registerCommand("wait", { handler: (_a: string, ctx: any) => new Promise((resolve) => ctx.signal.addEventListener("abort", resolve)) });
}
`)
	r, h, _, _ := loadRunner(t, 0, dir, p)
	h.answer = ext.DialogAnswer{Value: "b"}
	r.RunCommand(context.Background(), "/ask")
	h.wait(t, "the answers", func() bool { return h.entries["answers"] != nil })
	want := `{"pick":"b","ok":true,"hasUI":true,"cwd":"` + dir + `","idle":true}`
	if got := string(h.entries["answers"]); got != want || len(h.dialogs) != 2 || h.dialogs[0].Kind != ext.DialogSelect ||
		h.dialogs[1].Message != "really" {
		t.Errorf("answers %s, dialogs %+v", got, h.dialogs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- r.RunCommand(ctx, "/wait") }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the command did not end with its context")
	}
}

// TestNodeSubset: the Node modules an extension imports work as Node's
// for what extensions use.
func TestNodeSubset(t *testing.T) {
	dir := t.TempDir()
	p := writeExt(t, dir, "node.ts", `import * as path from "node:path";
import { EventEmitter } from "events";
import { format, inspect, promisify } from "node:util";
import * as fs from "fs";
import { readFile, mkdir, readdir, stat } from "node:fs/promises";
import * as os from "node:os";
import { createHash, randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers";

export default function (pi: any) {
	pi.registerCommand("node", { handler: async () => {
		const out: Record<string, unknown> = {};
		out.join = path.join("a", "b/", "../c");
		out.resolve = path.resolve("x", "y");
		out.dirname = path.dirname("/a/b/c.ts");
		out.basename = path.basename("/a/b/c.ts", ".ts");
		out.extname = path.extname("file.test.ts");
		out.relative = path.relative("/a/b", "/a/c/d");
		out.parse = path.parse("/home/u/f.txt");
		const ee = new EventEmitter();
		let got = "";
		ee.once("x", (v: string) => { got += v; });
		ee.emit("x", "1"); ee.emit("x", "2");
		out.events = got;
		out.format = format("%s=%d %j", "n", 42, { a: 1 });
		out.inspect = inspect({ a: [1, "s"] });
		fs.writeFileSync("w.txt", "héllo");
		out.exists = [fs.existsSync("w.txt"), fs.existsSync("nope.txt")];
		out.readSync = fs.readFileSync("w.txt", "utf8");
		out.readAsync = await readFile("w.txt", { encoding: "utf8" });
		await mkdir("d/e", { recursive: true });
		out.readdir = (await readdir(".")).sort();
		out.stat = [(await stat("w.txt")).size, (await stat("d")).isDirectory()];
		try { fs.readFileSync("nope.txt"); } catch (e: any) { out.enoent = e.code; }
		const cb = await promisify(fs.readFile)("w.txt");
		out.buffer = [Buffer.isBuffer(cb), cb.toString("base64"), Buffer.from("6869", "hex").toString(), Buffer.byteLength("é")];
		out.os = [os.platform(), os.EOL, typeof os.homedir(), typeof os.tmpdir()];
		out.hash = [createHash("sha256").update("abc").digest("hex"), createHash("md5").update("abc").digest("base64")];
		out.uuid = /^[0-9a-f-]{36}$/.test(randomUUID());
		await new Promise((r) => delay(r, 5));
		const t = setInterval(() => {}, 1000); clearInterval(t);
		out.process = [process.cwd() === path.resolve("."), process.platform, typeof process.env.PATH];
		const u = new URL("https://example.com:8443/p/a?x=1&y=two#h");
		u.searchParams.set("x", "3");
		out.url = [u.hostname, u.port, u.pathname, u.searchParams.get("y"), u.href, new URLSearchParams({ a: "b c" }).toString()];
		out.text = [new TextDecoder().decode(new TextEncoder().encode("ünï")), new TextEncoder().encode("é").length];
		pi.appendEntry("node", out);
	}});
}
`)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	got := commandEntry(t, context.Background(), r, h, "/node", "node")
	want := map[string]any{
		"join": "a/c", "resolve": filepath.Join(dir, "x/y"), "dirname": "/a/b", "basename": "c", "extname": ".ts",
		"relative": "../c/d",
		"parse":    map[string]any{"root": "/", "dir": "/home/u", "base": "f.txt", "ext": ".txt", "name": "f"},
		"events":   "1", "format": `n=42 {"a":1}`, "inspect": "{ a: [ 1, 's' ] }",
		"exists": []any{true, false}, "readSync": "héllo", "readAsync": "héllo",
		"readdir": []any{"d", "node.ts", "w.txt"}, "stat": []any{6.0, true}, "enoent": "ENOENT",
		"buffer": []any{true, "aMOpbGxv", "hi", 2.0},
		"os":     []any{"linux", "\n", "string", "string"},
		"hash":   []any{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "kAFQmDzST7DWlj99KOF/cg=="},
		"uuid":   true, "process": []any{true, "linux", "string"},
		"url":  []any{"example.com", "8443", "/p/a", "two", "https://example.com:8443/p/a?x=3&y=two#h", "a=b+c"},
		"text": []any{"ünï", 2.0},
	}
	compareFields(t, got, want)
}

// TestFactoryCache: a second load of an unchanged entry runs the cached
// program; a changed file is bundled again; released programs past the
// limit are dropped, least recently used first; a disposed load's lease
// is released.
func TestFactoryCache(t *testing.T) {
	dir := t.TempDir()
	c := newFactoryCache()
	c.max = 2
	var entries []string
	for _, n := range []string{"a", "b", "c"} {
		entries = append(entries, writeExt(t, dir, n+".ts", "export default function (pi: any) {}\n"))
	}
	l1, err := c.lease(entries[0])
	if err != nil {
		t.Fatal(err)
	}
	l2, err := c.lease(entries[0])
	if err != nil || l2.prog != l1.prog {
		t.Fatalf("the second lease compiled again: %v", err)
	}
	writeExt(t, dir, "a.ts", "export default function (pi: any) { /* changed */ }\n")
	l3, err := c.lease(entries[0])
	if err != nil || l3.prog == l1.prog {
		t.Fatalf("a changed entry ran the old program: %v", err)
	}
	l1.release()
	l1.release() // once
	if c.Inactive() != 0 {
		t.Errorf("inactive %d while leased", c.Inactive())
	}
	l2.release()
	l3.release()
	if c.Inactive() != 2 {
		t.Errorf("inactive %d, want 2", c.Inactive())
	}
	for _, e := range entries[1:] {
		l, err := c.lease(e)
		if err != nil {
			t.Fatal(err)
		}
		l.release()
	}
	if c.Inactive() != 2 {
		t.Errorf("inactive %d, want the limit 2", c.Inactive())
	}
	if maxInactive != 256 || newFactoryCache().max != 256 {
		t.Error("the cache does not keep 256 inactive factories")
	}

	// Through the seam: a load leases, its disposal releases.
	r, _, _, e := loadRunner(t, 0, dir, entries[1])
	if e.InactiveFactories() != 0 {
		t.Errorf("inactive %d while a load runs it", e.InactiveFactories())
	}
	r.Dispose()
	if e.InactiveFactories() != 1 {
		t.Errorf("inactive %d after the load was disposed", e.InactiveFactories())
	}
}

// TestSessionShutdownAndTimers: unloading runs session_shutdown handlers
// (within the grace) and stops the runtime's timers.
func TestSessionShutdownAndTimers(t *testing.T) {
	dir := t.TempDir()
	p := writeExt(t, dir, "bye.ts", `import * as fs from "node:fs";
export default function (pi: any) {
	setInterval(() => fs.appendFileSync("ticks", "."), 5);
	pi.on("session_shutdown", async (e: any) => { fs.writeFileSync("bye", e.reason); });
	pi.on("agent_start", () => {});
}
`)
	r, _, _, _ := loadRunner(t, 0, dir, p)
	time.Sleep(30 * time.Millisecond)
	r.Dispose()
	if b, err := os.ReadFile(filepath.Join(dir, "bye")); err != nil || string(b) != "quit" {
		t.Errorf("session_shutdown: %q %v", b, err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "ticks"))
	time.Sleep(30 * time.Millisecond)
	after, _ := os.ReadFile(filepath.Join(dir, "ticks"))
	if len(before) == 0 || len(after) != len(before) {
		t.Errorf("ticks %d then %d: the interval ran before and stopped after the unload", len(before), len(after))
	}
}

// TestInputTransformWithoutText: an input handler answering "transform"
// with no text, a null or a non-string one is a warning for that
// extension, and the input stays as the previous handler left it (before
// the fix a missing text made it ""); a transform to "" still is one.
func TestInputTransformWithoutText(t *testing.T) {
	dir := t.TempDir()
	var entries []string
	for i, answer := range []string{`{ action: "transform" }`, `{ action: "transform", text: null }`, `{ action: "transform", text: 5 }`, `{ action: "transform", text: e.text + "!" }`} {
		entries = append(entries, writeExt(t, dir, fmt.Sprintf("t%d.ts", i), "export default function (pi: any) { pi.on(\"input\", (e: any) => ("+answer+")); }\n"))
	}
	empty := writeExt(t, dir, "empty.ts", "export default function (pi: any) { pi.on(\"input\", (e: any) => (e.text === \"clear\" ? { action: \"transform\", text: \"\" } : undefined)); }\n")
	r, h, w, _ := loadRunner(t, 0, dir, append([]string{empty}, entries...)...)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	res := r.Input(context.Background(), ext.InputEvent{Text: "hi", Source: ext.SourceInteractive})
	if res.Action != ext.InputTransform || res.Text != "hi!" {
		t.Errorf("input = %+v, want transform to %q", res, "hi!")
	}
	h.mu.Lock()
	ws := slices.Clone(h.warnings)
	h.mu.Unlock()
	if len(ws) != 3 {
		t.Fatalf("warnings %+v, want one for each of the first three", ws)
	}
	for i, w := range ws {
		if w.Path != entries[i] || !strings.Contains(w.Message, `answered "transform" without a string text`) {
			t.Errorf("warning %d = %+v", i, w)
		}
	}
	if res := r.Input(context.Background(), ext.InputEvent{Text: "clear", Source: ext.SourceInteractive}); res.Action != ext.InputTransform || res.Text != "!" {
		t.Errorf("input clear = %+v, want the transform to \"\" kept (then \"!\")", res)
	}
}
