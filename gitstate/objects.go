package gitstate

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// This file works on trees and commits through the repository's object
// store (gitcli.ObjectStore: in-process with go-git, or long-lived git
// helpers): a path's entry in a tree, a tree with some paths changed, a
// commit. It is what makes a path-scoped recovery point cost no
// whole-index git process (issue 24, Decision 1).

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode string // as git writes it in a tree: 100644, 100755, 120000, 160000, 40000
	name string
	oid  string
}

func (e treeEntry) isTree() bool { return e.mode == "40000" }

// readTree returns the entries of tree oid, in the tree's order.
func readTree(ctx context.Context, s *gitcli.ObjectStore, oid string) ([]treeEntry, error) {
	obj, err := s.Read(ctx, oid)
	if err != nil {
		return nil, err
	}
	if obj.Type != "tree" {
		return nil, fmt.Errorf("gitstate: %s is a %s, not a tree", oid, obj.Type)
	}
	idLen := len(oid) / 2
	var out []treeEntry
	data := obj.Data
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || nul+1+idLen > len(data) {
			return nil, fmt.Errorf("gitstate: malformed tree %s", oid)
		}
		out = append(out, treeEntry{mode: string(data[:sp]), name: string(data[sp+1 : nul]),
			oid: hex.EncodeToString(data[nul+1 : nul+1+idLen])})
		data = data[nul+1+idLen:]
	}
	return out, nil
}

// encodeTree returns the tree object of entries in git's order (names
// compared as bytes, a tree's name as if it ended in "/").
func encodeTree(entries []treeEntry) ([]byte, error) {
	slices.SortFunc(entries, func(a, b treeEntry) int {
		return strings.Compare(sortName(a), sortName(b))
	})
	var b bytes.Buffer
	for i, e := range entries {
		if i > 0 && entries[i-1].name == e.name {
			return nil, fmt.Errorf("gitstate: two tree entries named %q", e.name)
		}
		id, err := hex.DecodeString(e.oid)
		if err != nil {
			return nil, fmt.Errorf("gitstate: object id %q: %w", e.oid, err)
		}
		b.WriteString(e.mode)
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(id)
	}
	return b.Bytes(), nil
}

func sortName(e treeEntry) string {
	if e.isTree() {
		return e.name + "/"
	}
	return e.name
}

// treeMode is an entry's mode as written in a tree (git writes a tree's
// as 40000, an index's modes as they are).
func treeMode(mode string) string {
	if mode == "040000" {
		return "40000"
	}
	return mode
}

// lookupPaths returns the entries of paths in tree (absent ones missing),
// reading only the trees along each path.
func lookupPaths(ctx context.Context, s *gitcli.ObjectStore, tree string, paths []string) (map[string]Entry, error) {
	out := map[string]Entry{}
	trees := map[string][]treeEntry{}
	list := func(oid string) ([]treeEntry, error) {
		if l, ok := trees[oid]; ok {
			return l, nil
		}
		l, err := readTree(ctx, s, oid)
		trees[oid] = l
		return l, err
	}
	for _, p := range paths {
		cur := tree
		parts := strings.Split(p, "/")
	walk:
		for i, name := range parts {
			ents, err := list(cur)
			if err != nil {
				return nil, err
			}
			for _, e := range ents {
				if e.name != name {
					continue
				}
				if i == len(parts)-1 {
					mode := e.mode
					if mode == "40000" {
						mode = "040000"
					}
					out[p] = Entry{Mode: mode, OID: e.oid}
				} else if e.isTree() {
					cur = e.oid
					continue walk
				}
				break walk
			}
			break
		}
	}
	return out, nil
}

// errTreeClash is a change set whose paths cannot all be in one tree (a
// path and a path under it both present).
var errTreeClash = errors.New("gitstate: paths clash as file and folder")

// treeWith writes the tree that is base with each path of changes set to
// its entry (an absent entry removes the path) and returns its id. Only
// the trees along the changed paths are read and written. An entry of
// base in the way of a change (a file where a changed path needs a
// folder, a folder where it needs a file) goes; folders left empty go, as
// git never writes an empty tree. Paths of changes that clash with each
// other are errTreeClash.
func treeWith(ctx context.Context, s *gitcli.ObjectStore, base string, changes map[string]Entry) (string, error) {
	// The changes by first component: this folder's own entries, and
	// those under each sub-folder.
	here := map[string]Entry{}
	sub := map[string]map[string]Entry{}
	for p, e := range changes {
		name, rest, nested := strings.Cut(p, "/")
		if !nested {
			here[name] = e
			continue
		}
		if sub[name] == nil {
			sub[name] = map[string]Entry{}
		}
		sub[name][rest] = e
	}
	byName := map[string]treeEntry{}
	if base != "" {
		ents, err := readTree(ctx, s, base)
		if err != nil {
			return "", err
		}
		for _, e := range ents {
			byName[e.name] = e
		}
	}
	names := map[string]bool{}
	for n := range byName {
		names[n] = true
	}
	for n := range here {
		names[n] = true
	}
	for n := range sub {
		names[n] = true
	}
	out := make([]treeEntry, 0, len(names))
	for name := range names {
		under, nested := sub[name]
		c, changed := here[name]
		switch {
		case nested && changed && !c.Absent():
			// A file or symlink at name: the changes under it can only
			// remove paths (which it already replaced).
			for _, e := range under {
				if !e.Absent() {
					return "", errTreeClash
				}
			}
			out = append(out, treeEntry{mode: treeMode(c.Mode), name: name, oid: c.OID})
		case nested:
			subBase := ""
			if e, ok := byName[name]; ok && e.isTree() {
				subBase = e.oid
			}
			id, err := treeWith(ctx, s, subBase, under)
			if err != nil {
				return "", err
			}
			if id != "" {
				out = append(out, treeEntry{mode: "40000", name: name, oid: id})
			}
		case changed:
			if !c.Absent() {
				out = append(out, treeEntry{mode: treeMode(c.Mode), name: name, oid: c.OID})
			}
		default:
			out = append(out, byName[name])
		}
	}
	if len(out) == 0 {
		return "", nil
	}
	data, err := encodeTree(out)
	if err != nil {
		return "", err
	}
	return s.Write(ctx, "tree", data)
}

// writeTreeWith is treeWith for a root tree: the empty tree when nothing
// is left.
func writeTreeWith(ctx context.Context, repo *gitcli.Repo, s *gitcli.ObjectStore, base string, changes map[string]Entry) (string, error) {
	id, err := treeWith(ctx, s, base, changes)
	if err != nil || id != "" {
		return id, err
	}
	return s.Write(ctx, "tree", nil)
}

// writeCommit writes a commit of tree with parents, message and who as
// author and committer at now (what `git commit-tree` writes, with the
// local time zone) and returns its id.
func writeCommit(ctx context.Context, s *gitcli.ObjectStore, tree string, parents []string, message string, who gitcli.Ident, now time.Time) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	_, off := now.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	stamp := fmt.Sprintf("%d %c%02d%02d", now.Unix(), sign, off/3600, off%3600/60)
	fmt.Fprintf(&b, "author %s <%s> %s\ncommitter %s <%s> %s\n\n%s", who.Name, who.Email, stamp, who.Name, who.Email, stamp, message)
	return s.Write(ctx, "commit", []byte(b.String()))
}
