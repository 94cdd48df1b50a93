package diffscope

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// Where git converts a file between the working tree and its blob (eol
// and ident attributes, core.autocrlf), a one-hunk revert, stage and
// unstage still go through git for the file's bytes (issue 24: the
// in-process path is only for files git stores as they are): the working
// file keeps git's CRLF line endings and its expanded $Id$, and the index
// holds the clean content.
func TestHunkActionsKeepGitsConversions(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	body.WriteString("$Id$\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	for _, tt := range []struct {
		name  string
		setup func(dir string)
		crlf  bool
		ident bool
	}{
		{"eol=crlf ident", func(dir string) {
			gittest.Write(t, dir, ".gitattributes", "*.txt text eol=crlf ident\n")
		}, true, true},
		{"core.autocrlf", func(dir string) {
			gittest.Git(t, dir, "config", "core.autocrlf", "true")
		}, true, false},
		{"info/attributes", func(dir string) {
			gittest.Write(t, dir, ".git/info/attributes", "*.txt ident\n")
		}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := gittest.Init(t)
			tt.setup(dir)
			gittest.Write(t, dir, "f.txt", body.String())
			gittest.CommitAll(t, dir, "init")
			// Check out again so the working file is as git writes it.
			gittest.Git(t, dir, "rm", "-q", "--cached", "f.txt")
			gittest.Git(t, dir, "reset", "-q", "--hard")
			checkout := gittest.Read(t, dir, "f.txt")
			if tt.crlf != strings.Contains(checkout, "\r\n") || tt.ident != strings.Contains(checkout, "$Id: ") {
				t.Fatalf("git checked out %q", checkout[:40])
			}
			edited := strings.Replace(strings.Replace(checkout, "line 10", "LINE 10", 1), "line 30", "LINE 30", 1)
			gittest.Write(t, dir, "f.txt", edited)
			d := newDiffer(t)
			ctx := context.Background()
			// Stage the first hunk, unstage it, stage it again, then
			// revert the other in the working tree.
			_, h := actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
			if _, err := d.Stage(ctx, dir, StageOptions{Path: "f.txt", HunkID: h.ID}); err != nil {
				t.Fatal(err)
			}
			_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeStaged}, "f.txt", 0)
			if _, err := d.Unstage(ctx, dir, StageOptions{Path: "f.txt", HunkID: h.ID}); err != nil {
				t.Fatal(err)
			}
			_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
			if _, err := d.Stage(ctx, dir, StageOptions{Path: "f.txt", HunkID: h.ID}); err != nil {
				t.Fatal(err)
			}
			_, h = actHunk(t, d, dir, ReadOptions{Scope: ScopeUnstaged}, "f.txt", 0)
			if _, err := d.Revert(ctx, dir, RevertOptions{ReadOptions: ReadOptions{Scope: ScopeUnstaged}, Path: "f.txt", HunkID: h.ID}); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(checkout, "line 10", "LINE 10", 1)
			if tt.ident {
				// git expands $Id$ with the id of the blob it checks out.
				blob := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", ":f.txt"))
				want = strings.Replace(want, want[:strings.IndexByte(want, '\n')], "$Id: "+blob+" $"+map[bool]string{true: "\r", false: ""}[tt.crlf], 1)
			}
			if got := gittest.Read(t, dir, "f.txt"); got != want {
				t.Errorf("working file after the revert:\n got %q\nwant %q", got[:60], want[:60])
			}
			if got := gittest.Git(t, dir, "diff", "--name-only"); got != "" {
				t.Errorf("unstaged changes left: %q", got)
			}
			if got := gittest.Git(t, dir, "show", ":f.txt"); strings.Contains(got, "\r") || !strings.Contains(got, "LINE 10\n") || strings.Contains(got, "LINE 30") {
				t.Errorf("index holds %q", got[:40])
			}
		})
	}
}
