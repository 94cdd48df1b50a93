package handoff

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gittest"
)

// The kept index is used as the start of the source's new index only
// while the real index is the file the capture read and the kept one
// exists.
func TestKeptIndexUsable(t *testing.T) {
	t.Parallel()
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
	if k := keep(t); !k.usable(index) {
		t.Error("the kept index of an unchanged index is not usable")
	}
	k := keep(t)
	gittest.Git(t, dir, "add", "new.txt")
	if k.usable(index) {
		t.Error("usable after the index was written since the capture")
	}
	gittest.Git(t, dir, "reset", "-q")
	k = keep(t)
	os.Remove(k.path)
	if k.usable(index) {
		t.Error("usable without its file")
	}
	var nilKept *keptIndex
	if nilKept.usable(index) {
		t.Error("a nil kept index is usable")
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

// Recover removes the capture folders that handoffs killed while they
// captured left (their lock free), never one in use.
func TestRecoverSweepsCaptures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.h.patchDir()
	inUse, lock, err := newCaptureDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	left, leftLock, err := newCaptureDir(root)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, left, "index", "a kept index\n")
	leftLock.Unlock() // the process that held it died
	if _, err := e.h.Recover(context.Background(), RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the dead capture's folder is still there: %v", err)
	}
	if _, err := os.Stat(inUse); err != nil {
		t.Errorf("the capture in use lost its folder: %v", err)
	}
}
