package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDeleteBeforeRemove checks that Create records the environment in the
// registry and that Delete and Prune call BeforeRemove once per worktree,
// with the entry in state removing and its snapshot recorded, while the
// worktree's directory and files are still there.
func TestDeleteBeforeRemove(t *testing.T) {
	t.Parallel()
	type call struct {
		Environment, State string
		HasSnapshot, Files bool
	}
	for _, c := range []struct {
		name   string
		delete func(m *Manager, path string, hook func(context.Context, Worktree)) error
	}{
		{"delete", func(m *Manager, path string, hook func(context.Context, Worktree)) error {
			_, err := m.Delete(ctx, path, DeleteOptions{BeforeRemove: hook})
			return err
		}},
		{"prune", func(m *Manager, path string, hook func(context.Context, Worktree)) error {
			res, err := m.Prune(ctx, PruneOptions{Keep: 0, BeforeRemove: hook})
			if err == nil && len(res.Pruned) != 1 {
				t.Errorf("pruned %+v, want one", res)
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newManager(t)
			src := commitFixture(t)
			w := create(t, m, CreateOptions{Cwd: src, Environment: "svc"}).Worktree
			got, ok, err := m.Registry().Get(w.Path)
			if err != nil || !ok || got.Environment != "svc" {
				t.Fatalf("registry entry %+v (%v, %v), want environment svc", got, ok, err)
			}
			var calls []call
			hook := func(_ context.Context, x Worktree) {
				_, statErr := os.Stat(filepath.Join(x.Path, ".git"))
				calls = append(calls, call{x.Environment, x.State, x.Snapshot != "", statErr == nil})
			}
			if err := c.delete(m, w.Path, hook); err != nil {
				t.Fatal(err)
			}
			want := []call{{"svc", StateRemoving, true, true}}
			if diff := cmp.Diff(calls, want); diff != "" {
				t.Errorf("BeforeRemove calls (-got +want):\n%s", diff)
			}
			if _, err := os.Lstat(w.Path); err == nil {
				t.Errorf("%s still exists", w.Path)
			}
		})
	}
}
