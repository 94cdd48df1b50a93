package gitstate

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/internal/gittest"
)

// TestReadIndexEntries reads the index of a repository with an
// intent-to-add entry, a partly staged one and a path longer than the
// previous one's prefix, written as index versions 2, 3 and 4, in SHA-1
// and SHA-256 repositories: the entries are git's (ls-files --stage), in
// order, the intent-to-add flag set; the versions compare equal; a
// refresh (stat data only) compares equal, a staged change does not.
func TestReadIndexEntries(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Git(t, dir, "init", "-q", "--object-format="+format)
			gittest.Write(t, dir, "a.txt", "a\n")
			gittest.Write(t, dir, "dir/deeper/b.txt", "b\n")
			gittest.Write(t, dir, "dir/c.txt", "c\n")
			gittest.CommitAll(t, dir, "init")
			gittest.Write(t, dir, "a.txt", "a staged\n")
			gittest.Git(t, dir, "add", "a.txt")
			gittest.Write(t, dir, "a.txt", "a staged then changed\n")
			gittest.Write(t, dir, "ita.txt", "intent\n")
			gittest.Git(t, dir, "add", "-N", "ita.txt")
			hashLen := 20
			if format == "sha256" {
				hashLen = 32
			}
			index := filepath.Join(dir, ".git", "index")
			want := strings.Split(strings.TrimSpace(gittest.Git(t, dir, "ls-files", "--stage")), "\n")
			copies := map[string]string{}
			for _, v := range []string{"2", "3", "4"} {
				gittest.Git(t, dir, "update-index", "--index-version", v)
				copies[v] = filepath.Join(t.TempDir(), "index-v"+v)
				if _, err := CopyIndex(index, copies[v]); err != nil {
					t.Fatal(err)
				}
				entries, err := readIndexEntries(copies[v], hashLen)
				if err != nil {
					t.Fatalf("version %s: %v", v, err)
				}
				var got []string
				for _, e := range entries {
					got = append(got, strconv.FormatUint(uint64(e.mode), 8)+" "+hexOf(e.oid)+" "+strconv.Itoa(int(e.flags>>12&3))+"\t"+e.path)
					if ita := e.xflags&(1<<13) != 0; ita != (e.path == "ita.txt") {
						t.Errorf("version %s: %s intent-to-add %v", v, e.path, ita)
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("version %s entries:\n%s\nwant (ls-files --stage):\n%s", v, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			if !sameIndexEntries(copies["2"], copies["4"], hashLen) {
				t.Error("versions 2 and 4 of one index differ")
			}
			gittest.Git(t, dir, "update-index", "--index-version", "2", "-q", "--really-refresh")
			if !sameIndexEntries(copies["2"], index, hashLen) {
				t.Error("a refresh changed the entries")
			}
			gittest.Git(t, dir, "add", "a.txt")
			if sameIndexEntries(copies["2"], index, hashLen) {
				t.Error("a staged change compares equal")
			}
		})
	}
}

func hexOf(b string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for i := 0; i < len(b); i++ {
		out = append(out, digits[b[i]>>4], digits[b[i]&15])
	}
	return string(out)
}

// TestAbortRestoresTheIndexExactly stages, through a journal, a partly
// staged file's and an intent-to-add file's working-tree content, lets
// another writer rewrite the index with the same entries (as git commit
// does before its hooks run) and aborts (issue 22 QA, L1: the partly
// staged entry's stat data came back zeroed): the index file is back byte
// for byte. When an entry changed meanwhile, the rollback restores the
// journal's paths and leaves the change.
func TestAbortRestoresTheIndexExactly(t *testing.T) {
	ctx := context.Background()
	for _, changed := range []bool{false, true} {
		dir := oplogRepo(t)
		gittest.Write(t, dir, "ita.txt", "intent\n")
		gittest.Git(t, dir, "add", "-N", "ita.txt")
		gittest.Git(t, dir, "status") // the index as the user's git left it
		index := filepath.Join(dir, ".git", "index")
		before, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		o := &Oplog{Dir: t.TempDir()}
		repo := discover(t, dir)
		paths := []string{"b.txt", "ita.txt"}
		j, err := o.Begin(ctx, repo, Action{Name: "commit", Paths: paths, EndsInCommit: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.WriteIndex(ctx, paths, func(tmp *gitcli.Repo) error { return tmp.UpdateIndexAdd(ctx, paths) }); err != nil {
			t.Fatal(err)
		}
		// Another writer replaces the index file with the same entries.
		rewrite := index + ".rewrite"
		if _, err := CopyIndex(index, rewrite); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(rewrite, index); err != nil {
			t.Fatal(err)
		}
		if changed {
			gittest.Write(t, dir, "d/c.txt", "c staged meanwhile\n")
			gittest.Git(t, dir, "add", "d/c.txt")
		}
		cause := errors.New("the hook refused")
		if err := j.Abort(ctx, cause); err != cause {
			t.Fatalf("Abort = %v", err)
		}
		after, err := os.ReadFile(index)
		if err != nil {
			t.Fatal(err)
		}
		if !changed && !bytes.Equal(after, before) {
			t.Errorf("the index is not back byte for byte; now:\n%s", gittest.Git(t, dir, "ls-files", "--stage", "--debug"))
		}
		if changed {
			if got := gittest.Git(t, dir, "diff", "--cached", "--name-only"); got != "b.txt\nd/c.txt\n" {
				t.Errorf("staged after a rollback beside a change: %q", got)
			}
		}
	}
}
