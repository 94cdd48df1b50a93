package extensions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/knightcode/knightcode/threads/ext"
)

// registered is what an extension registered while loading, as
// testdata/pi-examples/record.mjs records it under Node with pi's own
// loader: its commands, tools and events (sorted names), or its load
// error.
type registered struct {
	Commands []string `json:"commands"`
	Tools    []string `json:"tools"`
	Events   []string `json:"events"`
	Error    string   `json:"error,omitempty"`
}

// TestPiExamples loads every example extension entry of pi 0.73.1's
// examples/extensions (a copy, MIT, in testdata/pi-examples) in
// knightcode's runtime, each in a thread load of its own with the
// thread's reserved tool names, and compares the commands, tools and
// events each registers with what it registers under Node
// (expected.json, from record.mjs). It lists the ones that differ, each
// with its reason, and fails when one differs that knownDifferences does
// not list, or one listed there matches, or when fewer than 90% match (issue
// 25): with built-in tool overrides missing, 65 of 72 match.
func TestPiExamples(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "testdata", "pi-examples"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]registered
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	entries := make([]string, 0, len(want))
	for rel := range want {
		entries = append(entries, rel)
	}
	sort.Strings(entries)
	e := New(Options{AgentDir: t.TempDir()})
	var mu sync.Mutex
	events := map[string][]string{}
	e.loaded = func(x *jsExtension) {
		mu.Lock()
		defer mu.Unlock()
		events[x.path] = slices.Clone(x.events) // (loop): load runs there
	}
	got := make([]registered, len(entries))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, rel := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			got[i] = loadExample(t, e, filepath.Join(root, "extensions", rel), &mu, events)
		}()
	}
	wg.Wait()
	var differ, unexpected []string
	for i, rel := range entries {
		reason := compareRegistered(got[i], want[rel])
		known, isKnown := knownDifferences[rel]
		switch {
		case reason != "":
			differ = append(differ, fmt.Sprintf("%s: %s", rel, reason))
			if !isKnown || !strings.Contains(reason, known) {
				unexpected = append(unexpected, fmt.Sprintf("%s: %s", rel, reason))
			}
		case isKnown:
			unexpected = append(unexpected, rel+": matches now; remove it from knownDifferences")
		}
	}
	matched := len(entries) - len(differ)
	t.Logf("%d of %d pi examples (%.1f%%) register what they register under Node; issue 25 asks for 90%%", matched, len(entries), 100*float64(matched)/float64(len(entries)))
	for _, d := range differ {
		t.Logf("  differs: %s", d)
	}
	for _, u := range unexpected {
		t.Errorf("unexpected: %s", u)
	}
	if 10*matched < 9*len(entries) {
		t.Errorf("%d of %d pi examples match: issue 25 asks for at least 90%%", matched, len(entries))
	}
}

// knownDifferences are the examples that do not load as under Node, by
// the reason they do not (a part of the load warning): TestPiExamples
// fails when another differs, or when one of these matches.
var knownDifferences = map[string]string{
	// A thread's own tools (read, bash, edit, write) cannot be registered
	// by an extension (ext.Config.ReservedTools); pi lets extensions
	// override its built-in tools.
	"bash-spawn-hook.ts":        `tool "bash" is one of the thread's own tools`,
	"built-in-tool-renderer.ts": `tool "read" is one of the thread's own tools`,
	"minimal-mode.ts":           `tool "read" is one of the thread's own tools`,
	"ssh.ts":                    `tool "read" is one of the thread's own tools`,
	"tool-override.ts":          `tool "read" is one of the thread's own tools`,
	// Their npm dependencies are not installed in the copy (pi requires
	// npm install in the example's folder; with-deps' small one is).
	"custom-provider-anthropic/index.ts": `Could not resolve "@anthropic-ai/sdk"`,
	"sandbox/index.ts":                   `Could not resolve "@anthropic-ai/sandbox-runtime"`,
}

// loadExample loads entry alone in a thread load on a fake host with the
// thread's reserved tools and returns what it registered.
func loadExample(t *testing.T, e *Engine, entry string, mu *sync.Mutex, events map[string][]string) registered {
	h := newFakeHost(t.TempDir())
	r := ext.New(ext.Config{Host: h, Extensions: []ext.Extension{e.Extension(entry)}, ReservedTools: []string{"read", "bash", "edit", "write"}})
	defer r.Dispose()
	if w := r.Load(); len(w) > 0 {
		msgs := make([]string, len(w))
		for i, x := range w {
			msgs[i] = strings.ReplaceAll(x.Message, entry, filepath.Base(entry))
		}
		return registered{Error: strings.Join(msgs, "; ")}
	}
	var out registered
	for _, c := range r.Commands() {
		out.Commands = append(out.Commands, c.Name)
	}
	for _, tool := range r.Tools() {
		out.Tools = append(out.Tools, tool.Name)
	}
	mu.Lock()
	seen := map[string]bool{}
	for _, ev := range events[entry] {
		if !seen[ev] {
			seen[ev] = true
			out.Events = append(out.Events, ev)
		}
	}
	mu.Unlock()
	sort.Strings(out.Commands)
	sort.Strings(out.Tools)
	sort.Strings(out.Events)
	return out
}

// compareRegistered says how got differs from want ("" when it does not).
func compareRegistered(got, want registered) string {
	if got.Error != "" {
		return "does not load: " + got.Error
	}
	if want.Error != "" {
		return "loads, but fails under Node: " + want.Error
	}
	var diffs []string
	for _, d := range []struct {
		what      string
		got, want []string
	}{{"commands", got.Commands, want.Commands}, {"tools", got.Tools, want.Tools}, {"events", got.Events, want.Events}} {
		if !slices.Equal(d.got, d.want) {
			diffs = append(diffs, fmt.Sprintf("%s %q, under Node %q", d.what, d.got, d.want))
		}
	}
	return strings.Join(diffs, "; ")
}
