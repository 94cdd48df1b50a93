package diffscope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
		if !isHexID(t[1], ri.hexLen()) {
			return nil, paramErr(t[0], "%q is not a full object id", t[1])
		}
	}
	cf, err := d.git.StartCatFile(ctx, ri.Root)
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
	old, err := d.side(ctx, cf, ri.Root, fromTree, oldPath)
	if err != nil {
		return nil, err
	}
	nw, err := d.side(ctx, cf, ri.Root, toTree, path)
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
func (d *Differ) side(ctx context.Context, cf *gitcli.CatFile, root, tree, path string) (*sideObj, error) {
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
	out, err := d.git.Run(ctx, gitcli.Cmd{Dir: root, Args: []string{"ls-tree", "-z", "--full-tree", tree, "--", path}})
	if err != nil {
		return nil, err
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(rec), "\t")
		f := strings.Fields(meta)
		if !ok || name != path || len(f) != 3 {
			continue
		}
		switch f[1] {
		case "commit":
			text := "Subproject commit " + f[2] + "\n"
			return &sideObj{oid: f[2], size: int64(len(text)), text: &text}, nil
		case "blob":
			obj, err := cf.Info(f[2])
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
	var in bytes.Buffer
	for _, t := range trees {
		if !isHexID(t[1], ri.hexLen()) {
			return paramErr(t[0], "%q is not a full object id", t[1])
		}
		fmt.Fprintf(&in, "%s\n", t[1])
	}
	out, err := d.git.Run(ctx, gitcli.Cmd{Dir: ri.Root, Args: []string{"cat-file", "--batch-check"}, Stdin: &in})
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(trees) {
		return fmt.Errorf("diffscope: unexpected cat-file output %q", out)
	}
	for i, t := range trees {
		f := strings.Fields(lines[i])
		if len(f) != 3 {
			return paramErr(t[0], "%s is not an object of the repository", t[1])
		}
		if f[1] != "tree" {
			return paramErr(t[0], "%s is a %s, not a tree", t[1], f[1])
		}
	}
	return nil
}
