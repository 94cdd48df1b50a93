//go:build unix

package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fsOpExt is an extension whose /fsop <form> <op> <path> <key> command runs
// fs.<op> in one of its forms (sync, callback, promise) with path and
// appends entry key: {ok} or the error's {code, syscall, path, message}.
const fsOpExt = `import * as fs from "node:fs";
import * as fsp from "node:fs/promises";

function report(e: any) {
	return { code: e.code, syscall: e.syscall, path: e.path, message: String(e.message) };
}

export default function (pi: any) {
	pi.registerCommand("fsop", { handler: async (args: string) => {
		const [form, op, p, key] = args.split(" ");
		const rest: unknown[] = op === "readFile" ? [] : ["data"];
		let out: unknown;
		try {
			if (form === "sync") {
				(fs as any)[op + "Sync"](p, ...rest);
			} else if (form === "callback") {
				await new Promise<void>((resolve, reject) => (fs as any)[op](p, ...rest, (err: any) => (err ? reject(err) : resolve())));
			} else {
				await (fsp as any)[op](p, ...rest);
			}
			out = { ok: true };
		} catch (e: any) {
			out = report(e);
		}
		pi.appendEntry(key, out);
	}});
}
`

// TestFSRefusesWhatCanWedge: readFile, writeFile and appendFile, sync, with
// a callback and from fs/promises, refuse a FIFO (by a relative path, in
// the thread's cwd), /dev/zero, a symlink to it, /proc/self/status and a
// folder with a Node error (EINVAL or EISDIR, syscall "open", the path as
// given, a message saying what the path is) instead of blocking the event
// loop or reading forever (issue 15, "Inputs that wedge a thread"). Each
// command gets 5 s before the harness gives up on it.
func TestFSRefusesWhatCanWedge(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := writeExt(t, dir, "fsop.ts", fsOpExt)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	// Runs before the runner's Dispose: a call still blocked on the FIFO
	// (as before the fix) gets its other end and returns.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(100 * time.Millisecond)
			f.Close()
		}
	})
	paths := []struct{ path, code, why string }{
		{"pipe", "EINVAL", " is a named pipe (FIFO);"},
		{"/dev/zero", "EINVAL", "/dev/zero is under /dev;"},
		{"zero-link", "EINVAL", " (resolves to /dev/zero) is under /dev;"},
		{"/proc/self/status", "EINVAL", "/proc/self/status is under /proc;"},
		{"folder", "EISDIR", " is a folder;"},
	}
	n := 0
	for _, pc := range paths {
		for _, op := range []string{"readFile", "writeFile", "appendFile"} {
			for _, form := range []string{"sync", "callback", "promise"} {
				n++
				key := fmt.Sprintf("case%d", n)
				what := form + " " + op + " " + pc.path
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				r.RunCommand(ctx, "/fsop "+form+" "+op+" "+pc.path+" "+key)
				cancel()
				h.wait(t, what, func() bool { return h.entries[key] != nil || len(h.warnings) > 0 })
				h.mu.Lock()
				ws, raw := h.warnings, h.entries[key]
				h.mu.Unlock()
				if len(ws) > 0 {
					t.Fatalf("%s: %+v", what, ws)
				}
				var got struct{ Code, Syscall, Path, Message string }
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if got.Code != pc.code || got.Syscall != "open" || got.Path != pc.path ||
					!strings.HasPrefix(got.Message, pc.code+": ") || !strings.Contains(got.Message, pc.why) ||
					!strings.HasSuffix(got.Message, ", open '"+pc.path+"'") {
					t.Errorf("%s = %s, want %s naming why (%q)", what, raw, pc.code, pc.why)
				}
			}
		}
	}
}

// TestFSRegularFiles: through internal/safefile, writeFile still replaces
// a longer file's content, writes a symlink's target (as the write tool
// does) and fails with ENOENT in a missing folder; appendFile appends; a
// file over 2 GiB fails readFile with Node's ERR_FS_FILE_TOO_LARGE before
// a byte is read.
func TestFSRegularFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "target.txt"), []byte("a much longer old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "huge.bin"), 3<<30); err != nil { // sparse
		t.Skip("no sparse 3 GiB file here:", err)
	}
	p := writeExt(t, dir, "files.ts", `import * as fs from "node:fs";
import { readFile } from "node:fs/promises";

export default function (pi: any) {
	pi.registerCommand("files", { handler: async () => {
		const out: Record<string, unknown> = {};
		fs.writeFileSync("link.txt", "new");
		fs.appendFileSync("link.txt", "+more");
		out.content = fs.readFileSync("target.txt", "utf8");
		out.link = fs.lstatSync("link.txt").isSymbolicLink();
		try { fs.writeFileSync("no/such/dir.txt", "x"); } catch (e: any) { out.missing = [e.code, e.syscall, e.path]; }
		try { await readFile("huge.bin"); } catch (e: any) { out.huge = [e.code, e instanceof RangeError, e.message]; }
		pi.appendEntry("files", out);
	}});
}
`)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := commandEntry(t, ctx, r, h, "/files", "files")
	compareFields(t, got, map[string]any{
		"content": "new+more",
		"link":    true,
		"missing": []any{"ENOENT", "open", "no/such/dir.txt"},
		"huge":    []any{"ERR_FS_FILE_TOO_LARGE", true, "File size (3221225472) is greater than 2 GiB"},
	})
}

// TestFSNodeEdges: unlink of a folder (sync, callback, promise) fails with
// Node's EISDIR and leaves it; rm of a folder without recursive fails with
// Node's ERR_FS_EISDIR SystemError and leaves it; readFile of a number (a
// file descriptor, which the runtime has none of) fails with EBADF rather
// than reading a file named "0"; a path of another type is a TypeError
// ERR_INVALID_ARG_TYPE; Stats answer isFIFO, isSocket, isBlockDevice and
// isCharacterDevice.
func TestFSNodeEdges(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"u1", "u2", "u3", "r1", "r2"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "0"), []byte("not fd 0"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := writeExt(t, dir, "edges.ts", `import * as fs from "node:fs";

function report(e: any) {
	return [e.code, e.name, e.syscall ?? null, e.path ?? null, String(e.message)];
}
async function attempt(f: () => unknown) {
	try { await f(); return "ok"; } catch (e: any) { return report(e); }
}

export default function (pi: any) {
	pi.registerCommand("edges", { handler: async () => {
		const out: Record<string, unknown> = {};
		out.unlinkSync = await attempt(() => fs.unlinkSync("u1"));
		out.unlinkCb = await attempt(() => new Promise<void>((res, rej) => fs.unlink("u2", (e: any) => (e ? rej(e) : res()))));
		out.unlinkPromise = await attempt(() => fs.promises.unlink("u3"));
		out.rmSync = await attempt(() => fs.rmSync("r1"));
		out.rmPromise = await attempt(() => fs.promises.rm("r2"));
		try { fs.rmSync("r1"); } catch (e: any) { out.rmInfo = [e.errno, e.info && e.info.code, e.info && e.info.syscall]; }
		out.exists = ["u1", "u2", "u3", "r1", "r2"].map((d) => fs.existsSync(d));
		out.fd = await attempt(() => fs.readFileSync(0 as any));
		out.object = await attempt(() => fs.readFileSync({} as any));
		out.statNumber = await attempt(() => fs.statSync(1 as any));
		const st = fs.statSync("pipe");
		out.fifo = [st.isFIFO(), st.isSocket(), st.isBlockDevice(), st.isCharacterDevice(), st.isFile()];
		out.dev = fs.statSync("/dev/null").isCharacterDevice();
		pi.appendEntry("edges", out);
	}});
}
`)
	r, h, w, _ := loadRunner(t, 0, dir, p)
	if len(w) > 0 {
		t.Fatalf("load warnings %+v", w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := commandEntry(t, ctx, r, h, "/edges", "edges")
	unlink := func(d string) any {
		return []any{"EISDIR", "Error", "unlink", d, "EISDIR: illegal operation on a directory, unlink '" + d + "'"}
	}
	rm := func(d string) any {
		return []any{"ERR_FS_EISDIR", "SystemError", "rm", d, "Path is a directory: rm returned EISDIR (is a directory) " + d}
	}
	compareFields(t, got, map[string]any{
		"unlinkSync":    unlink("u1"),
		"unlinkCb":      unlink("u2"),
		"unlinkPromise": unlink("u3"),
		"rmSync":        rm("r1"),
		"rmPromise":     rm("r2"),
		"rmInfo":        []any{float64(21), "EISDIR", "rm"},
		"exists":        []any{true, true, true, true, true},
		"fd":            []any{"EBADF", "Error", "read", nil, "EBADF: bad file descriptor, read (file descriptors are not supported by knightcode's extension runtime: 0)"},
		"object":        []any{"ERR_INVALID_ARG_TYPE", "TypeError", nil, nil, `The "path" argument must be of type string or an instance of Buffer or URL. Received an instance of Object`},
		"statNumber":    []any{"ERR_INVALID_ARG_TYPE", "TypeError", nil, nil, `The "path" argument must be of type string or an instance of Buffer or URL. Received type number (1)`},
		"fifo":          []any{true, false, false, false, false},
		"dev":           true,
	})
}
