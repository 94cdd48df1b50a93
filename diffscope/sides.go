package diffscope

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// Limits of thread/diff/file (spec): a side larger than MaxSideSize bytes
// makes the file tooLarge; a NUL in the first BinarySniff bytes of a side
// makes it binary. Neither comes with sides.
const (
	MaxSideSize = 2 << 20
	BinarySniff = 8 << 10
)

// Sides is both sides of one file of a read, shaped as thread/diff/file's
// result: Old is the file in fromTree, New the file in toTree, each absent
// when the file is not in that tree. Neither is set when Binary or
// TooLarge. A gitlink's side is git's "Subproject commit <id>\n" line.
type Sides struct {
	Old      *string `json:"old,omitempty"`
	New      *string `json:"new,omitempty"`
	Binary   bool    `json:"binary"`
	TooLarge bool    `json:"tooLarge"`
}

// FileSides returns both sides of one file by the trees a read named (spec,
// thread/diff/file): old is fromTree:oldPath (path when oldPath is empty),
// new is toTree:path. The trees stay readable after the work tree moves on,
// so the sides match the read's hunks.
//
// Objects are read through one `git cat-file --batch-command` process
// ([gitcli.Runner.StartCatFile]): type and size first, contents only for
// sides within MaxSideSize; `git ls-tree` is asked only for a side cat-file
// does not find (an absent file, a gitlink, a name with a newline).
//
// Errors: an error matching [gitcli.ErrNotRepo] when checkout is not in a
// work tree; [*ParamError] with field "fromTree" or "toTree" when a tree is
// not a full object id (40 hex digits, 64 in a sha256 repository) of a tree
// in the repository, "path" or "oldPath" when a path is not a clean
// repository-relative path, and "path" when the file is in neither tree.
func (d *Differ) FileSides(ctx context.Context, checkout, fromTree, toTree, path, oldPath string) (*Sides, error) {
	if err := checkPath("path", path); err != nil {
		return nil, err
	}
	if oldPath == "" {
		oldPath = path
	} else if err := checkPath("oldPath", oldPath); err != nil {
		return nil, err
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	for _, t := range [][2]string{{"fromTree", fromTree}, {"toTree", toTree}} {
		if !isHexID(t[1], ri.HexLen()) {
			return nil, paramErr(t[0], "%q is not a full object id", t[1])
		}
	}
	cf, err := ri.StartCatFile(ctx)
	if err != nil {
		return nil, err
	}
	defer cf.Close()
	for _, t := range [][2]string{{"fromTree", fromTree}, {"toTree", toTree}} {
		obj, err := cf.Info(t[1])
		if errors.Is(err, gitcli.ErrObjectMissing) {
			return nil, paramErr(t[0], "%s is not an object of the repository", t[1])
		}
		if err != nil {
			return nil, err
		}
		if obj.Type != "tree" {
			return nil, paramErr(t[0], "%s is a %s, not a tree", t[1], obj.Type)
		}
	}
	old, err := d.side(ctx, cf, ri.Repo, fromTree, oldPath)
	if err != nil {
		return nil, err
	}
	nw, err := d.side(ctx, cf, ri.Repo, toTree, path)
	if err != nil {
		return nil, err
	}
	if old == nil && nw == nil {
		return nil, paramErr("path", "%s is in neither tree", path)
	}
	s := &Sides{}
	for _, sd := range []*sideObj{old, nw} {
		if sd != nil && sd.size > MaxSideSize {
			s.TooLarge = true
		}
	}
	if s.TooLarge {
		return s, nil
	}
	for _, sd := range []*sideObj{old, nw} {
		if sd == nil || sd.text != nil {
			continue
		}
		obj, err := cf.Read(sd.oid)
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(obj.Data[:min(len(obj.Data), BinarySniff)], 0) >= 0 {
			s.Binary = true
		}
		text := string(obj.Data)
		sd.text = &text
	}
	if s.Binary {
		return s, nil
	}
	if old != nil {
		s.Old = old.text
	}
	if nw != nil {
		s.New = nw.text
	}
	return s, nil
}

// sideObj is one side found in a tree: a blob to read, or a gitlink whose
// text is already known.
type sideObj struct {
	oid  string
	size int64
	text *string
}

// side looks path up in tree; nil means the tree has no file there (no
// entry, or a folder).
func (d *Differ) side(ctx context.Context, cf *gitcli.CatFile, repo *gitcli.Repo, tree, path string) (*sideObj, error) {
	if !strings.Contains(path, "\n") {
		obj, err := cf.Info(tree + ":" + path)
		switch {
		case err == nil && obj.Type == "blob":
			return &sideObj{oid: obj.ID, size: obj.Size}, nil
		case err == nil:
			return nil, nil // a folder
		case !errors.Is(err, gitcli.ErrObjectMissing):
			return nil, err
		}
	}
	// Absent, a gitlink (its commit is not in this repository), or a name
	// cat-file cannot take: ask ls-tree, which takes literal paths.
	ents, err := repo.LsTree(ctx, tree, false, path)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.Path != path {
			continue
		}
		switch e.Type {
		case "commit":
			text := "Subproject commit " + e.OID + "\n"
			return &sideObj{oid: e.OID, size: int64(len(text)), text: &text}, nil
		case "blob":
			obj, err := cf.Info(e.OID)
			if err != nil {
				return nil, err
			}
			return &sideObj{oid: obj.ID, size: obj.Size}, nil
		}
	}
	return nil, nil
}

// checkPath accepts a clean repository-relative /-separated path.
func checkPath(field, p string) error {
	if p == "" {
		return paramErr(field, "is empty")
	}
	if strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return paramErr(field, "%q is not a repository-relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return paramErr(field, "%q is not a clean repository-relative path", p)
		}
	}
	return nil
}

// isHexID reports a full lowercase hex object id of n digits.
func isHexID(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// checkTrees checks that each {field, id} names a tree of the repository,
// with one `cat-file --batch-check`.
func (d *Differ) checkTrees(ctx context.Context, ri repoInfo, trees [][2]string) error {
	names := make([]string, len(trees))
	for i, t := range trees {
		if !isHexID(t[1], ri.HexLen()) {
			return paramErr(t[0], "%q is not a full object id", t[1])
		}
		names[i] = t[1]
	}
	objs, err := ri.CatFileCheck(ctx, names)
	if err != nil {
		return err
	}
	for i, t := range trees {
		switch objs[i].Type {
		case "":
			return paramErr(t[0], "%s is not an object of the repository", t[1])
		case "tree":
		default:
			return paramErr(t[0], "%s is a %s, not a tree", t[1], objs[i].Type)
		}
	}
	return nil
}
