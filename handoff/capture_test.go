package handoff

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

// The kept index is installed as the real index only while the real index
// is the file the capture read and nobody holds index.lock; it keeps its
// mtime (git's racy-clean check) and leaves no lock behind.
func TestKeptIndexInstall(t *testing.T) {
	dir := commitFixture(t)
	index := filepath.Join(dir, ".git", "index")
	keep := func(t *testing.T) *keptIndex {
		t.Helper()
		real, err := os.Stat(index)
		if err != nil {
			t.Fatal(err)
		}
		kept := filepath.Join(t.TempDir(), "index")
		if ok, err := gitstate.CopyIndex(index, kept); err != nil || !ok {
			t.Fatal(ok, err)
		}
		cmd := exec.Command("git", "add", "--all")
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_INDEX_FILE="+kept)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git add: %v\n%s", err, out)
		}
		return &keptIndex{path: kept, real: real}
	}
	gittest.Write(t, dir, "new.txt", "new\n")

	t.Run("installed", func(t *testing.T) {
		k := keep(t)
		want, _ := os.ReadFile(k.path)
		wantTime := stat(t, k.path).ModTime()
		if !k.install(index) {
			t.Fatal("not installed")
		}
		if got, _ := os.ReadFile(index); !bytes.Equal(got, want) {
			t.Error("the index is not the kept one")
		}
		if got := stat(t, index).ModTime(); !got.Equal(wantTime) {
			t.Errorf("mtime %v, want the kept index's %v", got, wantTime)
		}
		gittest.Git(t, dir, "reset", "-q")
	})
	t.Run("index changed", func(t *testing.T) {
		k := keep(t)
		gittest.Git(t, dir, "add", "new.txt")
		want, _ := os.ReadFile(index)
		if k.install(index) {
			t.Fatal("installed over an index written since the capture")
		}
		if got, _ := os.ReadFile(index); !bytes.Equal(got, want) {
			t.Error("the index changed")
		}
		gittest.Git(t, dir, "reset", "-q")
	})
	t.Run("locked", func(t *testing.T) {
		k := keep(t)
		gittest.Write(t, dir, ".git/index.lock", "held by git\n")
		if k.install(index) {
			t.Fatal("installed while index.lock is held")
		}
		if got := gittest.Read(t, dir, ".git/index.lock"); got != "held by git\n" {
			t.Errorf("index.lock = %q", got)
		}
		os.Remove(filepath.Join(dir, ".git", "index.lock"))
	})
	if _, err := os.Stat(index + ".lock"); err == nil {
		t.Error("index.lock left behind")
	}
	var nilKept *keptIndex
	if nilKept.install(index) {
		t.Error("a nil kept index installed")
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
