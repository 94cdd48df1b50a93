package diffscope

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// PinPrefix is the namespace refs made by [Differ.Pin] and [Differ.PinAll]
// live under, and the only one [Differ.Unpin] deletes from.
const PinPrefix = "refs/knightcode/"

// Pin points ref at objectID in the repository of checkout, so the object
// (a tree captured around a turn, for instance) stays reachable and `git gc`
// keeps it: [Differ.PinAll] with one ref.
func (d *Differ) Pin(ctx context.Context, checkout, ref, objectID string) error {
	return d.PinAll(ctx, checkout, map[string]string{ref: objectID})
}

// PinAll points every ref of pins (full ref name -> object id) at its
// object in the repository of checkout, in one `git update-ref --stdin -z`
// transaction: every ref moves or none does. A ref may point at a tree.
// Each ref must be a full ref name under refs/knightcode/; git checks the
// rest of its format (ARCHITECTURE.md, "The mechanism everything shares":
// every tree a session file names stays reachable from a ref under
// refs/knightcode/). An empty pins does nothing.
//
// Errors: [*ParamError] ("ref") for a ref outside refs/knightcode/ or
// holding a NUL, ("objectID") for an id that is not 40 or 64 hex digits;
// an error matching gitcli.ErrNotRepo when checkout is not in a work tree;
// *gitcli.Error when git refuses (a malformed ref name, a missing object),
// in which case no ref moved.
func (d *Differ) PinAll(ctx context.Context, checkout string, pins map[string]string) error {
	refs := slices.Sorted(maps.Keys(pins))
	for _, ref := range refs {
		if !strings.HasPrefix(ref, PinPrefix) || len(ref) == len(PinPrefix) || strings.ContainsRune(ref, 0) {
			return paramErr("ref", "%q is not under %s", ref, PinPrefix)
		}
		if id := pins[ref]; !isHexID(id, 40) && !isHexID(id, 64) {
			return paramErr("objectID", "%q is not a full object id", id)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return err
	}
	updates := make([]gitcli.RefUpdate, len(refs))
	for i, ref := range refs {
		// An empty old id means "whatever it was" (git-update-ref(1)).
		updates[i] = gitcli.RefUpdate{Ref: ref, NewID: pins[ref]}
	}
	return ri.UpdateRefs(ctx, updates)
}

// Unpin deletes every ref under prefix in the repository holding dir, in
// one `git update-ref --stdin -z` transaction taken under the repository
// lock (gitcli.LockCommonDir: the lock of refs/knightcode/ updates); each
// delete names the id the ref had when listed, so a ref moved meanwhile
// fails the transaction and nothing is deleted. prefix is a namespace under
// refs/knightcode/ ending in "/" (refs/knightcode/turns/<threadId>/, say),
// so a sibling whose name merely starts the same (<threadId>x/...) is never
// touched. dir may be any directory of the repository (a work tree, a
// linked worktree, a git dir): refs are shared by every worktree of a
// repository. Nothing under prefix is not an error (ARCHITECTURE.md:
// "deleting the thread or snapshot deletes the ref").
//
// Errors: [*ParamError] ("prefix") for a prefix outside refs/knightcode/,
// without its trailing "/", or holding a glob character (* ? [ \) or a NUL;
// an error matching gitcli.ErrNotRepo when dir is not in a repository;
// ctx's error while waiting for the lock; *gitcli.Error when git fails.
func (d *Differ) Unpin(ctx context.Context, dir, prefix string) error {
	if !strings.HasPrefix(prefix, PinPrefix) || len(prefix) == len(PinPrefix) || !strings.HasSuffix(prefix, "/") ||
		strings.ContainsAny(prefix, "*?[\\\x00") {
		return paramErr("prefix", "%q is not a namespace under %s ending in /", prefix, PinPrefix)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("diffscope: %s is not a directory: %w", dir, gitcli.ErrNotRepo)
	}
	repo, err := d.git.DiscoverGitDir(ctx, dir)
	if err != nil {
		return err
	}
	lock, err := gitcli.LockCommonDir(ctx, repo.CommonDir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	lines, err := repo.ForEachRef(ctx, gitcli.ForEachRefOptions{Format: "%(objectname) %(refname)", Patterns: []string{prefix}})
	if err != nil {
		return err
	}
	var deletes []gitcli.RefUpdate
	for _, l := range lines {
		id, ref, ok := strings.Cut(l, " ")
		// for-each-ref also matches its pattern as a glob; keep only
		// what is literally under prefix.
		if !ok || !strings.HasPrefix(ref, prefix) {
			continue
		}
		deletes = append(deletes, gitcli.RefUpdate{Ref: ref, OldID: id, Delete: true})
	}
	if len(deletes) == 0 {
		return nil
	}
	return repo.UpdateRefs(ctx, deletes)
}
