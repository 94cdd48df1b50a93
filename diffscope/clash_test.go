package diffscope

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// actTree is the working tree of dir (every file and symlink but .git's,
// with its bytes) and its index (`ls-files -s`).
func actTree(t testing.TB, dir string) (map[string]string, string) {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			if de.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = actFiles(t, dir, rel)[rel]
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, gittest.Git(t, dir, "ls-files", "-s")
}

// TestFileFolderClashes swaps a file and a folder of the same name in both
// directions, with never-committed files in the folder, and acts on one
// file of the swap: a revert, stage or unstage that would delete or replace
// a path it did not name is refused with patchFailed naming those paths,
// and nothing changes; one that names everything it changes goes through.
func TestFileFolderClashes(t *testing.T) {
	// fileToFolder: the file a becomes a folder holding a/a (its content
	// when moved) and a/new.txt, never committed.
	fileToFolder := func(moved bool) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "a"))
			content := "other\n"
			if moved {
				content = "one\ntwo\nthree\n"
			}
			gittest.Write(t, dir, "a/a", content)
			gittest.Write(t, dir, "a/new.txt", "mine\n")
		}
	}
	// folderToFile: the folder d (d/x) becomes the file d.
	folderToFile := func(t *testing.T, dir string) {
		os.RemoveAll(filepath.Join(dir, "d"))
		gittest.Write(t, dir, "d", "mine, never committed\n")
	}
	rmCachedIgnored := func(t *testing.T, dir string) {
		gittest.Write(t, dir, ".gitignore", "*.local\n")
		gittest.Write(t, dir, "cfg.local", "template\n")
		gittest.Git(t, dir, "add", "-f", ".gitignore", "cfg.local")
		gittest.Git(t, dir, "commit", "-qm", "track cfg.local")
		gittest.Git(t, dir, "rm", "-q", "--cached", "cfg.local")
		gittest.Write(t, dir, "cfg.local", "REAL SECRET\n")
	}
	staged := func(setup func(*testing.T, string)) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			setup(t, dir)
			gittest.Git(t, dir, "add", "-A")
		}
	}
	revert := func(path string) func(*Differ, string) ([]string, error) {
		return func(d *Differ, dir string) ([]string, error) {
			return d.Revert(context.Background(), dir, RevertOptions{Path: path})
		}
	}
	stage := func(path string) func(*Differ, string) ([]string, error) {
		return func(d *Differ, dir string) ([]string, error) {
			return d.Stage(context.Background(), dir, StageOptions{Path: path})
		}
	}
	unstage := func(path string) func(*Differ, string) ([]string, error) {
		return func(d *Differ, dir string) ([]string, error) {
			return d.Unstage(context.Background(), dir, StageOptions{Path: path})
		}
	}
	tests := []struct {
		name   string
		setup  func(*testing.T, string)
		act    func(*Differ, string) ([]string, error)
		clash  []string // refused naming these; nil: goes through
		result []string // the paths a success reports
	}{
		{"revert moved file a (file -> folder/file)", fileToFolder(true), revert("a"), []string{"a/new.txt"}, nil},
		{"revert deleted file a (file -> folder/file)", fileToFolder(false), revert("a"), []string{"a/a", "a/new.txt"}, nil},
		{"revert added a/new.txt (file -> folder/file)", fileToFolder(false), revert("a/new.txt"), nil, []string{"a/new.txt"}},
		{"revert deleted d/x (folder/file -> file)", folderToFile, revert("d/x"), []string{"d"}, nil},
		{"revert added d (folder/file -> file)", folderToFile, revert("d"), nil, []string{"d"}},
		{"stage added a/new.txt (file -> folder/file)", fileToFolder(false), stage("a/new.txt"), []string{"a"}, nil},
		{"stage deleted a (file -> folder/file)", fileToFolder(false), stage("a"), nil, []string{"a"}},
		{"stage added d (folder/file -> file)", folderToFile, stage("d"), []string{"d/x"}, nil},
		{"stage deleted d/x (folder/file -> file)", folderToFile, stage("d/x"), nil, []string{"d/x"}},
		{"unstage deleted a (file -> folder/file)", staged(fileToFolder(false)), unstage("a"), []string{"a/a", "a/new.txt"}, nil},
		{"unstage added a/new.txt (file -> folder/file)", staged(fileToFolder(false)), unstage("a/new.txt"), nil, []string{"a/new.txt"}},
		{"unstage deleted d/x (folder/file -> file)", staged(folderToFile), unstage("d/x"), []string{"d"}, nil},
		{"unstage added d (folder/file -> file)", staged(folderToFile), unstage("d"), nil, []string{"d"}},
		// `git rm --cached` of an ignored file kept on disk: the diff
		// shows it deleted, and bringing HEAD's back would overwrite the
		// user's copy, which no capture holds (QA).
		{"revert deleted file under an ignored copy", rmCachedIgnored, revert("cfg.local"), []string{"cfg.local"}, nil},
		{"revert the scope under an ignored copy", rmCachedIgnored, revert(""), []string{"cfg.local"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := actRepo(t, map[string]string{"a": "one\ntwo\nthree\n", "d/x": "x\n", "keep.txt": "k\n"})
			tc.setup(t, dir)
			files, index := actTree(t, dir)
			got, err := tc.act(newDiffer(t), dir)
			if tc.clash != nil {
				ce := actConflict(t, err, ReasonPatchFailed)
				if diff := cmp.Diff(tc.clash, ce.Paths); diff != "" {
					t.Errorf("clashing paths (-want +got):\n%s", diff)
				}
				nowFiles, nowIndex := actTree(t, dir)
				if diff := cmp.Diff(files, nowFiles); diff != "" {
					t.Errorf("a refused action changed the working tree (-before +after):\n%s", diff)
				}
				if nowIndex != index {
					t.Errorf("a refused action changed the index:\n%s\n->\n%s", index, nowIndex)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.result, got); diff != "" {
				t.Errorf("result paths (-want +got):\n%s", diff)
			}
			// Nothing outside the result changed.
			nowFiles, _ := actTree(t, dir)
			for p, c := range files {
				if !slicesContains(got, p) && nowFiles[p] != c {
					t.Errorf("%s changed (%s -> %s) but is not in the result %v", p, c, nowFiles[p], got)
				}
			}
		})
	}
}

// TestFileFolderSwapWholeScopeRevert: reverting the whole scope names every
// path of the swap, so it goes through and restores HEAD.
func TestFileFolderSwapWholeScopeRevert(t *testing.T) {
	for _, scope := range []Scope{ScopeUncommitted, ScopeUnstaged} {
		for _, name := range []string{"file -> folder", "folder -> file", "folder -> symlink"} {
			t.Run(string(scope)+" "+name, func(t *testing.T) {
				dir := actRepo(t, map[string]string{"a": "one\n", "d/x": "x\n", "d/y": "y\n"})
				switch name {
				case "file -> folder":
					os.Remove(filepath.Join(dir, "a"))
					gittest.Write(t, dir, "a/new.txt", "mine\n")
				case "folder -> file":
					os.RemoveAll(filepath.Join(dir, "d"))
					gittest.Write(t, dir, "d", "mine\n")
				default:
					os.RemoveAll(filepath.Join(dir, "d"))
					if err := os.Symlink("../elsewhere", filepath.Join(dir, "d")); err != nil {
						t.Fatal(err)
					}
				}
				actRevert(t, newDiffer(t), dir, RevertOptions{ReadOptions: ReadOptions{Scope: scope}})
				if got := actStatus(t, dir); got != "" {
					t.Errorf("status = %q after reverting everything, want clean", got)
				}
			})
		}
	}
}

func slicesContains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
