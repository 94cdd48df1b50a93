package extensions

import (
	"context"
	"testing"
)

// TestChildProcess runs the child_process shapes pi extensions use
// (spawn with stdin and events, exec and execFile with callbacks and
// promisified, execSync, spawnSync, execFileSync, a missing program, a
// failing command, kill) and pi.exec, and checks what each answered.
func TestChildProcess(t *testing.T) {
	dir := t.TempDir()
	p := writeExt(t, dir, "child.ts", `import { spawn, exec, execFile, execSync, spawnSync, execFileSync } from "node:child_process";
import { promisify } from "node:util";

export default function (pi: any) {
	pi.registerCommand("child", { handler: async () => {
		const out: Record<string, unknown> = {};
		out.spawn = await new Promise((resolve) => {
			const c = spawn("cat", [], { cwd: "sub" });
			let got = "";
			const events: string[] = [];
			c.on("spawn", () => events.push("spawn"));
			c.stdout.on("data", (d: Buffer) => { got += d.toString(); });
			c.on("exit", (code: number) => events.push("exit " + code));
			c.on("close", (code: number, sig: string | null) => resolve([got, code, sig, events.join(","), typeof c.pid]));
			c.stdin.write("hello ");
			c.stdin.end("cat");
		});
		out.cwd = execSync("pwd", { cwd: "sub", encoding: "utf8" }).trim() === process.cwd() + "/sub";
		out.exec = await new Promise((resolve) => exec("echo $X; echo err >&2", { env: { X: "x1", PATH: process.env.PATH } },
			(err: any, stdout: string, stderr: string) => resolve([err, stdout, stderr])));
		out.execFail = await new Promise((resolve) => exec("exit 3", (err: any) => resolve([err.code, err.message])));
		const pexec = promisify(exec);
		out.pexec = await pexec("printf a-%s b");
		out.pexecFile = await promisify(execFile)("printf", ["%s+%s", "x", "y"]);
		out.execFile = await new Promise((resolve) => execFile("printf", ["q"], (err: any, stdout: string) => resolve([err, stdout])));
		out.execSync = [execSync("printf sync").toString(), execSync("printf s", { encoding: "utf8" })];
		try { execSync("echo no >&2; exit 2"); } catch (e: any) { out.execSyncFail = [e.status, e.stderr.toString(), e.message]; }
		const s = spawnSync("sh", ["-c", "cat; exit 4"], { input: "in", encoding: "utf8" });
		out.spawnSync = [s.status, s.signal, s.stdout, s.stderr];
		out.execFileSync = execFileSync("printf", ["f"], { encoding: "utf8" });
		out.missing = await new Promise((resolve) => spawn("no-such-program-kc").on("error", (e: any) => resolve([e.code, e.syscall])));
		out.missingSync = spawnSync("no-such-program-kc").error.code;
		out.killed = await new Promise((resolve) => {
			const c = spawn("sleep", ["30"]);
			c.on("close", (code: number | null, sig: string) => resolve([code, sig, c.killed]));
			setTimeout(() => c.kill(), 20);
		});
		out.aborted = await new Promise((resolve) => {
			const ac = new AbortController();
			const c = spawn("sleep", ["30"], { signal: ac.signal });
			c.on("error", (e: any) => resolve(e.name));
			ac.abort();
		});
		out.piExec = await pi.exec("sh", ["-c", "echo out; echo err >&2; exit 5"]);
		pi.appendEntry("child", out);
	}});
}
`)
	writeExt(t, dir, "sub/.keep", "")
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	got := commandEntry(t, context.Background(), r, h, "/child", "child")
	want := map[string]any{
		"spawn":        []any{"hello cat", 0, nil, "spawn,exit 0", "number"},
		"cwd":          true,
		"exec":         []any{nil, "x1\n", "err\n"},
		"execFail":     []any{3, "Command failed: exit 3"},
		"pexec":        map[string]any{"stdout": "a-b", "stderr": ""},
		"pexecFile":    map[string]any{"stdout": "x+y", "stderr": ""},
		"execFile":     []any{nil, "q"},
		"execSync":     []any{"sync", "s"},
		"execSyncFail": []any{2, "no\n", "Command failed: echo no >&2; exit 2\nno\n"},
		"spawnSync":    []any{4, nil, "in", ""},
		"execFileSync": "f",
		"missing":      []any{"ENOENT", "spawn no-such-program-kc"},
		"missingSync":  "ENOENT",
		"killed":       []any{nil, "SIGTERM", true},
		"aborted":      "AbortError",
		"piExec":       map[string]any{"stdout": "out\n", "stderr": "err\n", "code": 5, "killed": false},
	}
	compareFields(t, got, want)
}
