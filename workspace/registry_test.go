package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRegistryOperations(t *testing.T) {
	t.Parallel()
	r := NewRegistry(t.TempDir())
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	a := Worktree{Path: "/w/ab12/p", ProjectCwd: "/p", CommonDir: "/p/.git", Head: "h1", Base: "h1", CreatedAt: at, LastUsedAt: at}
	b := Worktree{Path: "/w/cd34/q", ProjectCwd: "/q", CommonDir: "/q/.git", Head: "h2", Base: "h2", CreatedAt: at, LastUsedAt: at}
	for _, w := range []Worktree{b, a} {
		if err := r.Add(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Add(a); err == nil {
		t.Errorf("adding a live path twice succeeded")
	}
	later := at.Add(time.Hour)
	steps := []error{
		r.AttachThread(a.Path, "t1", later),
		r.AttachThread(a.Path, "t2", later),
		r.AttachThread(a.Path, "t1", later),
		r.DetachThread(a.Path, "t2"),
		r.Touch(b.Path, later.Add(time.Hour)),
		r.MarkDeleted(b.Path, "refs/knightcode/snapshots/cd34/x", later),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	got, err := r.List()
	if err != nil {
		t.Fatal(err)
	}
	wantA := a
	wantA.ThreadIDs, wantA.LastUsedAt = []string{"t1"}, later
	wantB := b
	wantB.ThreadIDs, wantB.LastUsedAt = []string{}, later.Add(time.Hour)
	wantB.Deleted, wantB.Snapshot, wantB.DeletedAt = true, "refs/knightcode/snapshots/cd34/x", &later
	if diff := cmp.Diff(got, []Worktree{wantA, wantB}); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}
	if w, ok, _ := r.Lookup("/w/ab12/p/sub/dir"); !ok || w.Path != a.Path {
		t.Errorf("Lookup inside a = %v, %v", w.Path, ok)
	}
	if _, ok, _ := r.Lookup("/w/ab12/pp"); ok {
		t.Errorf("Lookup of a sibling with a common prefix matched")
	}
	if _, ok, _ := r.Lookup("/w/cd34/q"); ok {
		t.Errorf("Lookup matched a deleted worktree")
	}
	// A deleted entry is replaced by a new one at its path.
	if err := r.Add(b); err != nil {
		t.Errorf("re-adding over a deleted entry: %v", err)
	}
	if err := r.Touch("/nope", later); err == nil {
		t.Errorf("Touch of an unknown path succeeded")
	}
	if err := r.Remove(a.Path); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.Get(a.Path); ok {
		t.Errorf("removed entry still there")
	}
}

func TestRegistryConcurrentWriters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := NewRegistry(dir)
	if err := r.Add(Worktree{Path: "/w/0000/p"}); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A separate Registry value, as another process would have.
			errs <- NewRegistry(dir).AttachThread("/w/0000/p", fmt.Sprintf("t%02d", i), time.Now())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	w, _, err := r.Get("/w/0000/p")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.ThreadIDs) != n {
		t.Errorf("%d thread ids kept, want %d (lost updates)", len(w.ThreadIDs), n)
	}
}

func TestRegistryCorruptFileIsNotOverwritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, RegistryFile)
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(dir)
	if _, err := r.List(); err == nil {
		t.Errorf("List of a corrupt registry succeeded")
	}
	if err := r.Add(Worktree{Path: "/w/0000/p"}); err == nil {
		t.Errorf("Add to a corrupt registry succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "{not json" {
		t.Errorf("corrupt registry rewritten: %q", b)
	}
}
