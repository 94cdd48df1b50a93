package gitcli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/knightcode/knightcode/internal/gittest"
)

// storeRepo is a repository with one commit, discovered through a Runner
// that counts the git processes it starts.
func storeRepo(t *testing.T, initArgs ...string) (*Repo, *atomic.Int64) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, dir, append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	gittest.Write(t, dir, "a.txt", "a\n")
	gittest.CommitAll(t, dir, "init")
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	r = r.WithStartHook(func([]string) { n.Add(1) })
	t.Cleanup(func() { _ = r.Close() })
	repo, err := r.Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, &n
}

// The object store writes blobs, trees and commits git reads back byte for
// byte (and git's ids), reads what git wrote, and `git fsck --strict`
// finds nothing wrong: in-process for a SHA-1 repository without a git
// process, through the helpers for SHA-256 and a promisor repository.
func TestObjectStore(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		init      []string
		config    [][]string
		inProcess bool
	}{
		{"sha1", nil, nil, true},
		{"sha256", []string{"--object-format=sha256"}, nil, false},
		{"promisor", nil, [][]string{{"core.repositoryformatversion", "1"}, {"extensions.partialClone", "origin"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo, n := storeRepo(t, tt.init...)
			for _, kv := range tt.config {
				gittest.Git(t, repo.Root, "config", kv[0], kv[1])
			}
			s, err := repo.Objects(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s.InProcess() != tt.inProcess {
				t.Fatalf("InProcess = %v (%s), want %v", s.InProcess(), s.Fallback(), tt.inProcess)
			}
			n.Store(0)
			blob, err := s.Write(ctx, "blob", []byte("hello\r\nworld\x00\n"))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := s.Write(ctx, "tree", append([]byte("100644 hello.txt\x00"), hexBytes(t, blob)...))
			if err != nil {
				t.Fatal(err)
			}
			head := strings.TrimSpace(gittest.Git(t, repo.Root, "rev-parse", "HEAD"))
			commit, err := s.Write(ctx, "commit", []byte("tree "+tree+"\nparent "+head+
				"\nauthor A <a@example.invalid> 1700000000 +0000\ncommitter A <a@example.invalid> 1700000000 +0000\n\nm\n"))
			if err != nil {
				t.Fatal(err)
			}
			headTree := strings.TrimSpace(gittest.Git(t, repo.Root, "rev-parse", "HEAD^{tree}"))
			got, err := s.Read(ctx, headTree)
			if err != nil || got.Type != "tree" || !strings.Contains(string(got.Data), "a.txt") {
				t.Fatalf("Read(HEAD's tree) = %+v, %v", got, err)
			}
			if tt.inProcess && n.Load() != 0 {
				t.Errorf("%d git processes for in-process objects", n.Load())
			}
			if want := strings.TrimSpace(gittest.GitStdin(t, repo.Root, []byte("hello\r\nworld\x00\n"), "hash-object", "--stdin")); blob != want {
				t.Errorf("blob id %s, git says %s", blob, want)
			}
			if got := gittest.Git(t, repo.Root, "cat-file", "-p", commit+":hello.txt"); got != "hello\r\nworld\x00\n" {
				t.Errorf("git reads %q", got)
			}
			if _, err := s.Read(ctx, strings.Repeat("1", repo.HexLen())); err == nil {
				t.Error("a missing object was read")
			}
			gittest.Git(t, repo.Root, "update-ref", "refs/test/c", commit)
			gittest.Git(t, repo.Root, "fsck", "--strict", "--no-dangling")
			// Packed by git: still found.
			gittest.Git(t, repo.Root, "gc", "-q", "--prune=now")
			if got, err := s.Read(ctx, blob); err != nil || string(got.Data) != "hello\r\nworld\x00\n" {
				t.Errorf("Read after gc = %+v, %v", got, err)
			}
		})
	}
}

// A repository switched to a format go-git does not handle is never read
// in-process again: the store is checked against its configuration file.
func TestObjectStoreFollowsTheConfiguration(t *testing.T) {
	ctx := context.Background()
	repo, _ := storeRepo(t)
	s, err := repo.Objects(ctx)
	if err != nil || !s.InProcess() {
		t.Fatalf("Objects = %v, %v", s, err)
	}
	gittest.Git(t, repo.Root, "config", "core.repositoryformatversion", "1")
	gittest.Git(t, repo.Root, "config", "extensions.partialClone", "origin")
	if s, err = repo.Objects(ctx); err != nil || s.InProcess() {
		t.Fatalf("after extensions.partialClone: in-process %v, %v", s.InProcess(), err)
	}
}

// Absolute alternates are read in-process; relative ones go through git.
func TestObjectStoreAlternates(t *testing.T) {
	ctx := context.Background()
	shared, _ := storeRepo(t)
	sharedBlob := strings.TrimSpace(gittest.GitStdin(t, shared.Root, []byte("shared\n"), "hash-object", "-w", "--stdin"))
	for _, rel := range []bool{false, true} {
		repo, _ := storeRepo(t)
		line := filepath.Join(shared.CommonDir, "objects")
		if rel {
			var err error
			if line, err = filepath.Rel(filepath.Join(repo.CommonDir, "objects"), line); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(repo.CommonDir, "objects", "info", "alternates"), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := repo.Objects(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.InProcess() == rel {
			t.Errorf("relative %v: in-process %v (%s)", rel, s.InProcess(), s.Fallback())
		}
		if got, err := s.Read(ctx, sharedBlob); err != nil || string(got.Data) != "shared\n" {
			t.Errorf("relative %v: Read = %+v, %v", rel, got, err)
		}
	}
}

func hexBytes(t *testing.T, oid string) []byte {
	t.Helper()
	b := make([]byte, len(oid)/2)
	for i := range b {
		var v byte
		for _, c := range oid[2*i : 2*i+2] {
			v <<= 4
			switch {
			case '0' <= c && c <= '9':
				v |= byte(c - '0')
			default:
				v |= byte(c-'a') + 10
			}
		}
		b[i] = v
	}
	return b
}

// CreateRefKept creates refs through one long-lived update-ref: a ref
// that exists is git's refusal (and the next write starts another
// process), the reflog is git's.
func TestCreateRefKept(t *testing.T) {
	ctx := context.Background()
	repo, n := storeRepo(t)
	head := strings.TrimSpace(gittest.Git(t, repo.Root, "rev-parse", "HEAD"))
	n.Store(0)
	for _, ref := range []string{"refs/knightcode/test/a", "refs/knightcode/test/b"} {
		if err := repo.CreateRefKept(ctx, ref, head); err != nil {
			t.Fatal(err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d processes for two refs, want 1", n.Load())
	}
	err := repo.CreateRefKept(ctx, "refs/knightcode/test/a", head)
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("creating an existing ref: %v", err)
	}
	if err := repo.CreateRefKept(ctx, "refs/knightcode/test/c", head); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, repo.Root, "for-each-ref", "--format=%(refname)", "refs/knightcode/test/"); got != "refs/knightcode/test/a\nrefs/knightcode/test/b\nrefs/knightcode/test/c\n" {
		t.Errorf("refs: %q", got)
	}
}

// A shared repository's objects are written by git (it sets their
// permissions).
func TestObjectStoreSharedRepository(t *testing.T) {
	repo, _ := storeRepo(t)
	gittest.Git(t, repo.Root, "config", "core.sharedRepository", "group")
	s, err := repo.Objects(context.Background())
	if err != nil || s.InProcess() {
		t.Fatalf("in-process %v (%v)", s.InProcess(), err)
	}
}
