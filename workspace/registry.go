package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/safefile"
)

// RegistryFile is the registry's file name in the agent directory.
const RegistryFile = "worktrees.json"

// registryLockWait bounds the wait for the registry's lock; writers hold it
// for one small read-modify-write.
const registryLockWait = 30 * time.Second

// registryVersion is the "version" written in the registry file.
const registryVersion = 1

// Worktree is one managed worktree as the registry records it. The JSON
// names of the fields worktree/list returns are the spec's: {path,
// projectCwd, head?, branch?, threadIds, lastUsedAt, deleted}.
type Worktree struct {
	// Path is the worktree's absolute path,
	// <root>/<4 hex>/<repository name>, symlinks resolved.
	Path string `json:"path"`
	// ProjectCwd is the project the worktree belongs to: the repository's
	// main checkout root (see [Manager.Project]).
	ProjectCwd string `json:"projectCwd"`
	// CommonDir is the repository's common git directory, where
	// worktree, ref and lock operations run.
	CommonDir string `json:"commonDir"`
	// Head is the commit the worktree's HEAD was at when last recorded
	// (creation, restore, deletion, the end of each turn of its threads
	// and a git/commit there: [Registry.RecordHead]; [Manager.List]
	// reports the live one). When git has forgotten the worktree (its
	// folder removed, then `git worktree prune`), it is the commit
	// [Manager.NoticeMissing] keeps and a restore re-creates it at.
	Head string `json:"head,omitempty"`
	// Branch is the branch checked out in the worktree ("refs/heads/x"),
	// when one is; managed worktrees start detached.
	Branch string `json:"branch,omitempty"`
	// BaseRef is the baseRef the worktree was created from, as given
	// ("" for the checkout's HEAD); Base is the commit it resolved to.
	BaseRef string `json:"baseRef,omitempty"`
	Base    string `json:"base"`
	// Environment is the name of the environment
	// (.knightcode/environments.json) the worktree was created with, ""
	// for none; its cleanup script runs before the worktree is removed
	// (see [DeleteOptions.BeforeRemove]).
	Environment string `json:"environment,omitempty"`
	// ThreadIDs are the threads attached to the worktree.
	ThreadIDs []string `json:"threadIds"`
	// CreatedAt and LastUsedAt are wall-clock times (RFC 3339 in the
	// file); pruning removes the least recently used first.
	CreatedAt  time.Time `json:"createdAt"`
	LastUsedAt time.Time `json:"lastUsedAt"`
	// Deleted marks a worktree whose directory was removed; Snapshot is
	// the ref (refs/knightcode/snapshots/<bucket>/<time>) holding its
	// state, "" when it was deleted without one.
	Deleted   bool       `json:"deleted"`
	DeletedAt *time.Time `json:"deletedAt,omitempty"`
	Snapshot  string     `json:"snapshot,omitempty"`
	// RecoveryRef is the ref written at deletion for a branch with commits
	// in neither the base nor its upstream (shared/cases C22), or for a
	// detached HEAD no branch, remote-tracking ref or tag contains.
	RecoveryRef string `json:"recoveryRef,omitempty"`
	// State is "" for a finished worktree (live, or deleted as Deleted
	// says), [StateCreating] while [Manager.Create] builds it, and
	// [StateRemoving] from the moment its deletion wrote the snapshot
	// until the directory and the registration are gone. An entry left in
	// either state by a process that died is what [Manager.Reconcile],
	// [Manager.Restore] and [Manager.Delete] finish.
	State string `json:"state,omitempty"`
}

// Registry states of a worktree ([Worktree.State]).
const (
	// StateCreating: recorded before `git worktree add`, cleared once the
	// worktree is complete. Such an entry is not listed, not looked up
	// and not pruned; one whose creation died is removed with its
	// registration and directory by [Manager.Reconcile].
	StateCreating = "creating"
	// StateRemoving: recorded (with Deleted and Snapshot) right after the
	// snapshot ref was written and before anything is removed; cleared
	// once the directory and the registration are gone. The worktree
	// counts as deleted; the directory may still be there in part.
	StateRemoving = "removing"
)

// Bucket is the worktree's 4-hex directory name.
func (w Worktree) Bucket() string { return filepath.Base(filepath.Dir(w.Path)) }

// Contains reports whether dir is the worktree's path or inside it.
func (w Worktree) Contains(dir string) bool {
	return dir == w.Path || strings.HasPrefix(dir, w.Path+string(filepath.Separator))
}

func (w Worktree) clone() Worktree {
	w.ThreadIDs = slices.Clone(w.ThreadIDs)
	if w.ThreadIDs == nil {
		w.ThreadIDs = []string{}
	}
	return w
}

// ErrNotRegistered: the registry has no worktree at that path.
var ErrNotRegistered = errors.New("workspace: not a managed worktree")

// Registry is the list of managed worktrees in <agentDir>/worktrees.json.
// Every change is a read-modify-write under a gofrs/flock on
// worktrees.json.lock (cross-process and between goroutines), written
// atomically (temp file, fsync, rename); reads take no lock. A file that is
// not valid JSON is never overwritten: every call reports it. Safe for
// concurrent use.
type Registry struct {
	path string
}

// NewRegistry returns the registry of agentDir (which need not exist yet).
func NewRegistry(agentDir string) *Registry {
	return &Registry{path: filepath.Join(agentDir, RegistryFile)}
}

// Path is the registry file's path.
func (r *Registry) Path() string { return r.path }

type registryFile struct {
	Version   int        `json:"version"`
	Worktrees []Worktree `json:"worktrees"`
}

func (r *Registry) load() (*registryFile, error) {
	data, err := safefile.ReadFile(r.path, safefile.ConfigLimit)
	if errors.Is(err, os.ErrNotExist) {
		return r.parse(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: read registry: %w", err)
	}
	return r.parse(data)
}

// parse decodes the registry file's bytes; nil or blank is an empty
// registry.
func (r *Registry) parse(data []byte) (*registryFile, error) {
	var f registryFile
	if len(bytes.TrimSpace(data)) == 0 {
		return &registryFile{Version: registryVersion}, nil
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("workspace: registry %s is corrupt (left as it is): %w", r.path, err)
	}
	return &f, nil
}

// modify runs fn on the registry under the lock and writes the result
// (atomicfile.Update on worktrees.json.lock).
func (r *Registry) modify(fn func(f *registryFile) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), registryLockWait)
	defer cancel()
	return atomicfile.Update(ctx, r.path+".lock", r.path, 0o600, func(old []byte) ([]byte, error) {
		f, err := r.parse(old)
		if err != nil {
			return nil, err
		}
		if err := fn(f); err != nil {
			return nil, err
		}
		f.Version = registryVersion
		sort.Slice(f.Worktrees, func(i, j int) bool { return f.Worktrees[i].Path < f.Worktrees[j].Path })
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(data, '\n'), nil
	})
}

// List returns every registered worktree, deleted ones included, sorted by
// path.
func (r *Registry) List() ([]Worktree, error) {
	f, err := r.load()
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(f.Worktrees))
	for _, w := range f.Worktrees {
		out = append(out, w.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Get returns the worktree registered at path (absolute, cleaned).
func (r *Registry) Get(path string) (Worktree, bool, error) {
	f, err := r.load()
	if err != nil {
		return Worktree{}, false, err
	}
	for _, w := range f.Worktrees {
		if w.Path == path {
			return w.clone(), true, nil
		}
	}
	return Worktree{}, false, nil
}

// Lookup returns the live (not deleted, not being created) worktree that
// dir is in: its path or a directory below it. dir should be absolute with
// symlinks resolved.
func (r *Registry) Lookup(dir string) (Worktree, bool, error) {
	f, err := r.load()
	if err != nil {
		return Worktree{}, false, err
	}
	dir = filepath.Clean(dir)
	for _, w := range f.Worktrees {
		if !w.Deleted && w.State != StateCreating && w.Contains(dir) {
			return w.clone(), true, nil
		}
	}
	return Worktree{}, false, nil
}

// Add records a new worktree. A deleted entry at the same path is replaced;
// a live one is an error.
func (r *Registry) Add(w Worktree) error {
	w = w.clone()
	return r.modify(func(f *registryFile) error {
		for i, old := range f.Worktrees {
			if old.Path != w.Path {
				continue
			}
			if !old.Deleted {
				return fmt.Errorf("workspace: %s is already registered", w.Path)
			}
			f.Worktrees[i] = w
			return nil
		}
		f.Worktrees = append(f.Worktrees, w)
		return nil
	})
}

// Update applies fn to the worktree at path under the lock and returns the
// result. Errors: [ErrNotRegistered], fn's error (nothing written).
func (r *Registry) Update(path string, fn func(w *Worktree) error) (Worktree, error) {
	var out Worktree
	err := r.modify(func(f *registryFile) error {
		for i := range f.Worktrees {
			if f.Worktrees[i].Path != path {
				continue
			}
			w := f.Worktrees[i].clone()
			if err := fn(&w); err != nil {
				return err
			}
			f.Worktrees[i], out = w, w.clone()
			return nil
		}
		return fmt.Errorf("%w: %s", ErrNotRegistered, path)
	})
	return out, err
}

// Touch sets the worktree's LastUsedAt.
func (r *Registry) Touch(path string, at time.Time) error {
	_, err := r.Update(path, func(w *Worktree) error { w.LastUsedAt = at; return nil })
	return err
}

// AttachThread adds threadID to the worktree's threads (once) and touches
// it.
func (r *Registry) AttachThread(path, threadID string, at time.Time) error {
	_, err := r.Update(path, func(w *Worktree) error {
		if !slices.Contains(w.ThreadIDs, threadID) {
			w.ThreadIDs = append(w.ThreadIDs, threadID)
		}
		w.LastUsedAt = at
		return nil
	})
	return err
}

// DetachThread removes threadID from the worktree's threads.
func (r *Registry) DetachThread(path, threadID string) error {
	_, err := r.Update(path, func(w *Worktree) error {
		w.ThreadIDs = slices.DeleteFunc(w.ThreadIDs, func(id string) bool { return id == threadID })
		return nil
	})
	return err
}

// RecordHead sets the worktree's Head to head, the commit its HEAD is at
// now (a turn ended there, a commit was made), unless it is deleted or in
// the middle of a deletion or restore (State). Errors: [ErrNotRegistered].
func (r *Registry) RecordHead(path, head string) error {
	_, err := r.Update(path, func(w *Worktree) error {
		if !w.Deleted && w.State == "" && head != "" {
			w.Head = head
		}
		return nil
	})
	return err
}

// MarkDeleted marks the worktree deleted with its snapshot ref ("" for
// none).
func (r *Registry) MarkDeleted(path, snapshot string, at time.Time) error {
	_, err := r.Update(path, func(w *Worktree) error {
		w.Deleted, w.Snapshot, w.DeletedAt = true, snapshot, &at
		return nil
	})
	return err
}

// Remove forgets the worktree at path; absent is not an error.
func (r *Registry) Remove(path string) error {
	return r.modify(func(f *registryFile) error {
		f.Worktrees = slices.DeleteFunc(f.Worktrees, func(w Worktree) bool { return w.Path == path })
		return nil
	})
}
