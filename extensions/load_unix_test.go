//go:build unix

package extensions

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at dir/name and returns its path.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// TestLoadRefusesFilesNotRegular: an entry or a file it imports that is a
// FIFO (or a .ts symlink to one), a device or past maxExtensionFile, or a
// source map an imported file names that is a FIFO, is a load warning
// naming the file (esbuild names a symlink by its target), never a hang; the other extensions load. Run it with a
// harness -timeout: before the fix it blocks for ever (and /dev/zero
// grows memory without limit).
func TestLoadRefusesFilesNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "f")
	fifoTS := filepath.Join(dir, "fifo.ts")
	if err := os.Symlink(fifo, fifoTS); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.js")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxExtensionFile+1); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, dir, "mapped.js.map")
	writeExt(t, dir, "mapped.js", "export const x = 1;\n//# sourceMappingURL=mapped.js.map\n")
	importsFIFO := writeExt(t, dir, "imports-fifo.ts", "import x from \""+fifoTS+"\";\nexport default function (pi: any) { x; }\n")
	importsZero := writeExt(t, dir, "imports-zero.ts", "import x from \"/dev/zero\";\nexport default function (pi: any) { x; }\n")
	importsBig := writeExt(t, dir, "imports-big.ts", "import x from \"./big.js\";\nexport default function (pi: any) { x; }\n")
	importsMap := writeExt(t, dir, "imports-map.ts", "import { x } from \"./mapped.js\";\nexport default function (pi: any) { x; }\n")
	_, _, w, _ := loadRunner(t, 0, dir, fifoTS, importsFIFO, importsZero, importsBig, importsMap, fixture(t, "input.ts"))
	want := []struct{ path, text string }{
		{fifoTS, fifo + " is a named pipe (FIFO)"},
		{importsFIFO, fifo + " is a named pipe (FIFO)"},
		{importsZero, "/dev/zero is under /dev"},
		{importsBig, big + " is larger than 16 MiB"},
		{importsMap, filepath.Join(dir, "mapped.js.map") + " is a named pipe (FIFO)"},
	}
	if len(w) != len(want) {
		t.Fatalf("warnings %+v", w)
	}
	for i, x := range want {
		if w[i].Path != x.path || !strings.Contains(w[i].Message, x.text) {
			t.Errorf("warning %d = %+v, want %s %q", i, w[i], x.path, x.text)
		}
	}
}

// TestLoadRefusesInputSwappedForFIFO: a file of a cached bundle that became
// a FIFO since is a load warning at the next load (the cache's content
// hash reads it too), not a hang.
func TestLoadRefusesInputSwappedForFIFO(t *testing.T) {
	dir := t.TempDir()
	entry := writeExt(t, dir, "a.ts", "import { b } from \"./b\";\nexport default function (pi: any) { b; }\n")
	dep := writeExt(t, dir, "b.ts", "export const b = 1;\n")
	e := New(Options{AgentDir: t.TempDir()})
	l, err := e.cache.lease(entry)
	if err != nil {
		t.Fatal(err)
	}
	l.release()
	if err := os.Remove(dep); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, dir, "b.ts")
	if _, err := e.cache.lease(entry); err == nil || !strings.Contains(err.Error(), dep+" is a named pipe (FIFO)") {
		t.Fatalf("lease = %v, want %s refused", err, dep)
	}
}

// TestEntriesRefusesPackageJSONNotRegular: a folder whose package.json is
// a FIFO is an error naming it, not a hang.
func TestEntriesRefusesPackageJSONNotRegular(t *testing.T) {
	dir := t.TempDir()
	pj := mkfifo(t, dir, "package.json")
	writeExt(t, dir, "index.ts", "export default function (pi: any) {}\n")
	if _, err := Entries(dir); err == nil || !strings.Contains(err.Error(), pj+" is a named pipe (FIFO)") {
		t.Fatalf("Entries = %v, want %s refused", err, pj)
	}
}

// TestLoadRefusesConfigFilesNotRegular: a package.json or tsconfig.json
// that esbuild's resolver would read (the entry's folder, an imported
// folder, a package in node_modules) being a FIFO is a load warning naming
// it, not a hang.
func TestLoadRefusesConfigFilesNotRegular(t *testing.T) {
	root := t.TempDir()
	var entries, want []string
	for _, c := range []struct{ sub, fifo, src string }{
		{"tsconfig", "tsconfig.json", "export default function (pi: any) {}\n"},
		{"sub", "lib/package.json", "import { b } from \"./lib/b\";\nexport default function (pi: any) { b; }\n"},
		{"pkg", "node_modules/left-pad/package.json", "import leftPad from \"left-pad\";\nexport default function (pi: any) { leftPad; }\n"},
	} {
		dir := filepath.Join(root, c.sub)
		writeExt(t, dir, "lib/b.ts", "export const b = 1;\n")
		writeExt(t, dir, "node_modules/left-pad/index.js", "module.exports = 1;\n")
		entries = append(entries, writeExt(t, dir, "index.ts", c.src))
		want = append(want, mkfifo(t, dir, c.fifo))
	}
	_, _, w, _ := loadRunner(t, 0, root, append(entries, fixture(t, "input.ts"))...)
	if len(w) != len(want) {
		t.Fatalf("warnings %+v", w)
	}
	for i, p := range want {
		if w[i].Path != entries[i] || !strings.Contains(w[i].Message, p+" is a named pipe (FIFO)") {
			t.Errorf("warning %d = %+v, want %s refused", i, w[i], p)
		}
	}
}
