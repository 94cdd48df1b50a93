package handoff

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/internal/gittest"
)

// link marks a destination file of an ignoreCase that is a symbolic link
// to the rest of the value.
const link = "link:"

// ignoreCase is a handoff whose only change edits the root .gitignore
// (base, committed, becomes moved in the source) while the destination
// holds ignored files (dst, never moved).
type ignoreCase struct {
	name        string
	base, moved string            // the root .gitignore before and in the source
	src         map[string]string // more files of the source (ignored ones stay)
	dst         map[string]string // the destination's own files, ignored by base
	nestedDst   []string          // the destination's ignored nested repositories
	// paths is the refusal's data.paths; nil expects the handoff to go
	// through with dst's files kept and nothing untracked in dst.
	paths []string
	// overwrite says the refusal is a write collision (MsgOverwrite), not
	// files the moved rules unignore (MsgUnignored).
	overwrite bool
}

func numbered(format string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

func filesOf(paths ...[]string) map[string]string {
	m := map[string]string{}
	for _, ps := range paths {
		for _, p := range ps {
			m[p] = "the user's own " + p + "\n"
		}
	}
	return m
}

func ignoreCases() []ignoreCase {
	build := func(pattern string) ignoreCase {
		return ignoreCase{
			name:  "QA B4a: " + pattern + " with !build/keep.txt re-includes a file of an ignored folder",
			base:  "*.local\nbuild/\n",
			moved: "*.local\n" + pattern + "\n!build/keep.txt\n",
			dst:   filesOf([]string{"build/keep.txt", "build/other", "x.local"}),
			paths: []string{"build/keep.txt"},
		}
	}
	odd := []string{"odd/ sp ace.local", "odd/:colon.local", "odd/*star.local", "odd/ünï.local", "odd/new\nline.local", "odd/[x].local", "odd/back\\slash.local"}
	slices.Sort(odd)
	nodeModules := filesOf(numbered("node_modules/pkg%02d/index.js", 25), numbered("node_modules/pkg%02d/lib/util.js", 25), []string{"node_modules/.bin/tool", "keep.log"})
	partial := filesOf(numbered("node_modules/pkg%02d/index.js", 25), []string{"node_modules/debug.log"})
	return []ignoreCase{
		build("build/*"),
		build("build/**"),
		build("/build/*"),
		{
			name:  "QA B4a without the re-included file: nothing unignored",
			base:  "*.local\nbuild/\n",
			moved: "*.local\nbuild/*\n!build/keep.txt\n",
			dst:   filesOf([]string{"build/other", "build/deep/keep.txt"}),
		},
		{
			name:  "QA B4b: a self-ignoring .gitignore of the source does not move",
			base:  "*.log\n*.local\n",
			moved: "*.log\n",
			src:   map[string]string{"sub/.gitignore": "*\n"},
			dst:   filesOf([]string{"sub/x.local", "y.log"}),
			paths: []string{"sub/x.local"},
		},
		{
			name:  "QA B5: the destination's own self-ignoring .gitignore stays and keeps ignoring",
			base:  ".venv/\n*.local\n",
			moved: "*.local\n",
			dst: map[string]string{".venv/.gitignore": "*\n", ".venv/lib/site.py": "venv\n", ".venv/pyvenv.cfg": "venv\n",
				"x.local": "mine\n"},
		},
		{
			name:  "the destination's own ignored .gitignore no longer ignored",
			base:  "*.local\ngen/\n",
			moved: "*.local\n",
			dst:   map[string]string{"gen/.gitignore": "*.o\n", "gen/a.o": "o\n", "gen/out.txt": "out\n"},
			paths: []string{"gen/.gitignore", "gen/out.txt"},
		},
		{
			name:  "QA B8: a whole folder unignored is named as the folder",
			base:  "node_modules/\n*.log\n",
			moved: "*.log\n",
			dst:   nodeModules,
			paths: []string{"node_modules/"},
		},
		{
			name:  "QA B8: a folder with a file still ignored is not named whole",
			base:  "node_modules/\n*.log\n",
			moved: "*.log\n",
			dst:   partial,
			paths: numbered("node_modules/pkg%02d/", 25),
		},
		{
			name:  "many unignored files beside tracked ones are named one by one",
			base:  "*.local\n",
			moved: "",
			dst:   filesOf(numbered("sub/f%02d.local", 25)),
			paths: numbered("sub/f%02d.local", 25),
		},
		{
			name:  "odd names and a symbolic link",
			base:  "*.local\n",
			moved: "",
			dst: func() map[string]string {
				m := filesOf(odd)
				m["odd/lnk.local"] = link + "../README.md"
				return m
			}(),
			paths: func() []string {
				p := append(slices.Clone(odd), "odd/lnk.local")
				slices.Sort(p)
				return p
			}(),
		},
		{
			name:      "an ignored file where a moved .gitignore needs a folder",
			base:      "*.local\ncache\n",
			moved:     "*.local\n",
			src:       map[string]string{"cache/.gitignore": "*.tmp\n"},
			dst:       map[string]string{"cache": "the user's own\n"},
			paths:     []string{"cache"},
			overwrite: true,
		},
		{
			name:  "a moved .gitignore that is a symbolic link holds no rules",
			base:  "*.log\n",
			moved: "*.log\n# more\n",
			src:   map[string]string{"rules.txt": "!*.log\n", "sub/.gitignore": link + "../rules.txt"},
			dst:   filesOf([]string{"sub/x.log"}),
		},
		{
			name:      "an ignored nested repository stays one",
			base:      "*.local\nvendor/\n",
			moved:     "*.local\n",
			dst:       map[string]string{"vendor/readme.txt": "mine\n"},
			nestedDst: []string{"vendor/lib"},
			paths:     []string{"vendor/readme.txt"},
		},
	}
}

// writeFiles writes files (path: content, or link+target) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if target, ok := strings.CutPrefix(c, link); ok {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		gittest.Write(t, dir, p, c)
	}
}

// A handoff whose moved .gitignore files stop ignoring files of the
// destination is refused before anything is written, naming exactly the
// files git would list as untracked after the move (QA B4a, B4b, B8), and
// goes through when the destination's files stay ignored (B5): Plan and
// Run, in both directions.
func TestIgnoreRulesMoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range ignoreCases() {
		for _, to := range []Direction{ToLocal, ToWorktree} {
			t.Run(tc.name+"/to "+string(to), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				main := commitFixture(t)
				gittest.Write(t, main, ".gitignore", tc.base)
				gittest.CommitAll(t, main, "base rules")
				wt := e.newWorktree(t, main)
				src, dst := wt, main
				o := Options{To: ToLocal, Cwd: wt, ThreadID: "T1", Title: "ignore"}
				if to == ToWorktree {
					src, dst = main, wt
					o = Options{To: ToWorktree, Cwd: main, Worktree: wt, ThreadID: "T1"}
				}
				gittest.Write(t, src, ".gitignore", tc.moved)
				writeFiles(t, src, tc.src)
				writeFiles(t, dst, tc.dst)
				for _, p := range tc.nestedDst {
					gittest.Git(t, dst, "init", "-q", p)
					gittest.Write(t, dst, p+"/own.txt", "the nested repository's\n")
				}
				if st := gittest.Git(t, dst, "status", "--porcelain", "--untracked-files=all"); st != "" {
					t.Fatalf("destination not clean before: %q", st)
				}
				before := snapshotDirs(t, main, wt, e.agentDir)
				for _, run := range []bool{false, true} {
					var err error
					if run {
						_, err = e.h.Run(ctx, o)
					} else {
						_, err = e.h.Plan(ctx, o)
					}
					if tc.paths == nil {
						if err != nil {
							t.Fatalf("run=%v: %v", run, err)
						}
						continue
					}
					msg := MsgUnignored
					if tc.overwrite {
						msg = MsgOverwrite
					}
					var ce *ConflictError
					if !errors.As(err, &ce) || ce.Reason != ReasonLocalChanges || ce.Output != msg {
						t.Fatalf("run=%v: err = %v, want localChanges %q", run, err, msg)
					}
					if diff := cmp.Diff(tc.paths, ce.Paths); diff != "" {
						t.Errorf("run=%v: paths (-want +got):\n%s", run, diff)
					}
					if msg := ce.Error(); len(tc.paths) > coreerr.MessagePaths {
						if more := fmt.Sprintf(" and %d more:", len(tc.paths)-coreerr.MessagePaths); !strings.Contains(msg, more) || strings.Contains(msg, tc.paths[coreerr.MessagePaths]) {
							t.Errorf("run=%v: message %q does not end its list with %q", run, msg, more)
						}
					} else if !strings.Contains(msg, strings.Join(tc.paths, ", ")+": ") {
						t.Errorf("run=%v: message %q does not name every path", run, msg)
					}
					if diff := cmp.Diff(before, snapshotDirs(t, main, wt, e.agentDir)); diff != "" {
						t.Errorf("run=%v wrote (-before +after):\n%s", run, diff)
					}
				}
				if tc.paths != nil {
					return
				}
				// The handoff went through: the destination's ignored files
				// are as they were and still ignored.
				for p, c := range tc.dst {
					if got := gittest.Read(t, dst, p); got != c {
						t.Errorf("destination's %s = %q, want %q", p, got, c)
					}
				}
				st := gittest.Git(t, dst, "status", "--porcelain=v2", "-z", "--untracked-files=all")
				for rec := range strings.SplitSeq(st, "\x00") {
					if p, ok := strings.CutPrefix(rec, "? "); ok && tc.src[p] == "" {
						t.Errorf("destination's %q untracked after the handoff", p)
					}
				}
				e.noJournals(t)
			})
		}
	}
}

// BenchmarkUnignored times the moved .gitignore check on a destination
// holding 20,000 ignored files (200 folders of 100 under node_modules/,
// as a JavaScript checkout has) when the moved .gitignore adds a rule
// (node_modules/ stays ignored) and when it drops node_modules/ (every
// file unignored, named as one folder). It only runs when a handoff
// writes a .gitignore.
func BenchmarkUnignored(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b)
	main := gittest.CommitFixture(b, "*.log\nnode_modules/\n")
	wt := e.newWorktree(b, main)
	for i := range 200 {
		for j := range 100 {
			p := filepath.Join(main, "node_modules", fmt.Sprintf("pkg%03d", i), fmt.Sprintf("f%03d.js", j))
			if j == 0 {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	src, err := e.h.git.Discover(ctx, wt)
	if err != nil {
		b.Fatal(err)
	}
	dst, err := e.h.git.Discover(ctx, main)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, moved string }{
		{"kept", "*.log\nnode_modules/\n*.tmp\n"},
		{"dropped", "*.log\n"},
	} {
		gittest.Write(b, wt, ".gitignore", c.moved)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				out, err := unignored(ctx, src, dst, "")
				if err != nil {
					b.Fatal(err)
				}
				if want := map[string]int{"kept": 0, "dropped": 1}[c.name]; len(out) != want {
					b.Fatalf("unignored = %d paths, want %d", len(out), want)
				}
			}
		})
	}
}
