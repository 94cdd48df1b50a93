package gitcli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Verbs used by handoff and by keeping ignored files (issue 9). Same rules
// as verbs.go: argv built here, paths literal and on stdin or after "--".

// DetachHead points HEAD at commit directly, detaching it (`update-ref
// --no-deref -m <message> HEAD <commit>`): HEAD's reflog gets an entry, no
// branch moves, the index and work tree are not touched.
func (r *Repo) DetachHead(ctx context.Context, commit, message string) error {
	_, err := r.git.run(ctx, write(r.cmd("update-ref", "--no-deref", "-m", message, "HEAD", commit)))
	return err
}

// AttachHead makes HEAD the symbolic ref branchRef (`symbolic-ref -m
// <message> HEAD <branchRef>`, branchRef a full refs/heads/ name): no
// branch moves, the index and work tree are not touched.
func (r *Repo) AttachHead(ctx context.Context, branchRef, message string) error {
	_, err := r.git.run(ctx, write(r.cmd("symbolic-ref", "-m", message, "HEAD", branchRef)))
	return err
}

// RefreshIndex refreshes the stat data of every index entry whose file
// matches its entry, hashing the files whose stat data changed, and
// writes the index (`update-index -q --unmerged --refresh`); entries whose
// files differ are left as they are (-q: not an error).
func (r *Repo) RefreshIndex(ctx context.Context) error {
	c := write(r.cmd("update-index", "-q", "--unmerged", "--refresh"))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// ChangedFiles lists the paths whose files differ in content from their
// index entries, removed files included (`diff --name-only -z --no-ext-diff
// --no-renames --ignore-submodules=none --no-relative`): the porcelain
// diff refreshes the stat data first, so a file merely touched is not
// listed. It is a write: git diff saves that refresh into the index it
// read (refresh_index_quietly, whatever GIT_OPTIONAL_LOCKS says), so call
// it on a view of a temporary index ([Repo.WithIndex]), never the user's.
// Paths are repository relative, /-separated.
func (r *Repo) ChangedFiles(ctx context.Context) ([]string, error) {
	c := write(r.cmd("diff", "--name-only", "-z", "--no-ext-diff", "--no-renames", "--ignore-submodules=none", "--no-relative"))
	c.Timeout = LongTimeout
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	return nulRecords(out), nil
}

// IsAncestor reports whether commit a is an ancestor of commit b (or b
// itself): `merge-base --is-ancestor a b`, exit 0 yes, 1 no.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	_, err := r.git.run(ctx, r.cmd("merge-base", "--is-ancestor", a, b))
	switch exitCode(err) {
	case 1:
		return false, nil
	case -2:
		return err == nil, err
	}
	return false, err
}

// MaxRefComponentBytes bounds each "/"-separated component of a ref name:
// a loose ref is a file named by its last component, and git locks it as
// "<name>.lock", so a component over NAME_MAX (255) minus 5 bytes cannot be
// written even though check-ref-format accepts it.
const MaxRefComponentBytes = 250

// RefComponentsFit reports whether every "/"-separated component of name is
// at most MaxRefComponentBytes long.
func RefComponentsFit(name string) bool {
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > MaxRefComponentBytes {
			return false
		}
	}
	return true
}

// ValidBranchName reports whether name is a valid branch name
// (`check-ref-format refs/heads/<name>` exits 0; git-check-ref-format(1))
// that can be written (RefComponentsFit). A name starting with "-", or
// holding a NUL (no argument can carry one), is refused without running
// git.
func (r *Repo) ValidBranchName(ctx context.Context, name string) (bool, error) {
	// "HEAD" passes check-ref-format but `git branch` refuses it
	// (strbuf_check_branch_ref): refs/heads/HEAD makes every "HEAD"
	// ambiguous.
	if name == "" || name == "HEAD" || strings.HasPrefix(name, "-") || strings.ContainsRune(name, 0) || !RefComponentsFit(name) {
		return false, nil
	}
	_, err := r.git.run(ctx, r.cmd("check-ref-format", "refs/heads/"+name))
	switch exitCode(err) {
	case 1:
		return false, nil
	case -2:
		return err == nil, err
	}
	return false, err
}

// DiffTreeNames lists the paths whose entries differ between trees from
// and to (`diff-tree -r -z --name-only --no-renames --no-ext-diff
// --ignore-submodules=none <from> <to>`), in git's order.
func (r *Repo) DiffTreeNames(ctx context.Context, from, to string) ([]string, error) {
	c := r.cmd("diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-ext-diff", "--ignore-submodules=none", from, to)
	c.Timeout = LongTimeout
	var paths []string
	err := r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, func(p string) error {
			if p != "" {
				paths = append(paths, p)
			}
			return nil
		})
	})
	return paths, err
}

// DiffTreeNamesPairs calls each with every path some pair of trees
// differs in (a path once per pair), in one `diff-tree --stdin -r -z
// --name-only --no-renames` fed "<from> <to>" lines; the "<from> <to>"
// line of full object ids git prints before each pair's paths is taken
// off. A rename is its two paths. Errors: git's (an unknown tree, say).
func (r *Repo) DiffTreeNamesPairs(ctx context.Context, pairs [][2]string, each func(path string) error) error {
	if len(pairs) == 0 {
		return nil
	}
	var in strings.Builder
	for _, p := range pairs {
		in.WriteString(p[0] + " " + p[1] + "\n")
	}
	c := r.cmd("diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames", "--no-commit-id", "--no-ext-diff", "--ignore-submodules=none")
	c.Stdin = strings.NewReader(in.String())
	c.Timeout = LongTimeout
	read := 0
	err := r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, func(rec string) error {
			for {
				i := strings.IndexByte(rec, '\n')
				if i < 0 || !isTreePair(rec[:i]) {
					break
				}
				rec = rec[i+1:]
				read++
			}
			if rec == "" {
				return nil
			}
			return each(rec)
		})
	})
	if err == nil && read != len(pairs) {
		// git says "Could not read" on stderr, skips the pair, and
		// exits 0.
		err = fmt.Errorf("gitcli: diff-tree --stdin read %d of %d pairs of trees: a tree is missing", read, len(pairs))
	}
	return err
}

// isTreePair reports whether line is two full object ids (SHA-1 or
// SHA-256, lower-case hex) with a space between.
func isTreePair(line string) bool {
	a, b, ok := strings.Cut(line, " ")
	return ok && isFullOID(a) && isFullOID(b)
}

func isFullOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// LsFilesIgnored streams the ignored files of the work tree that are not
// tracked (`ls-files -o -i --exclude-standard --directory -z`, run at the
// root): a folder whose every file is ignored comes once as "dir/", which
// the caller may walk or skip.
func (r *Repo) LsFilesIgnored(ctx context.Context, each func(path string) error) error {
	c := r.cmd("ls-files", "-o", "-i", "--exclude-standard", "--directory", "-z")
	c.Timeout = LongTimeout
	return r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, each)
	})
}

// CheckIgnoredIn returns which of paths (relative to dir, "/"
// separated) ignore rules ignore, whether or not they exist, in dir, a
// directory that is not one of the repository's work trees (a mirror the
// caller made): `--git-dir=<GitDir> --work-tree=<dir> check-ignore
// --no-index --stdin -z` run in dir, exit 1 when none is ignored. The
// rules are dir's .gitignore files,
// $GIT_COMMON_DIR/info/exclude and core.excludesFile of r's
// configuration. Git applies its walk: a path inside an excluded folder
// is ignored, and the .gitignore files of an excluded folder are not
// read. A path that does not exist in dir is taken as a file; a folder
// must exist there to be matched as one (do not pass "dir/": check-ignore
// would match "dir/*" against it). check-ignore takes no literal
// pathspecs, so each path goes as "./<path>", which no pathspec magic
// starts with.
func (r *Repo) CheckIgnoredIn(ctx context.Context, dir string, paths []string) (map[string]bool, error) {
	ignored := map[string]bool{}
	for start := 0; start < len(paths); start += 10000 {
		chunk := paths[start:min(start+10000, len(paths))]
		in := make([]string, len(chunk))
		for i, p := range chunk {
			in[i] = "./" + p
		}
		c := Cmd{Dir: dir, Args: []string{"--git-dir=" + r.GitDir, "--work-tree=" + dir, "check-ignore", "--no-index", "--stdin", "-z"}}
		c.Env = append(c.Env, "GIT_LITERAL_PATHSPECS=0")
		c.Stdin = nulList(in)
		c.Timeout = LongTimeout
		out, err := r.git.run(ctx, c)
		if exitCode(err) == 1 {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, p := range nulRecords(out) {
			ignored[strings.TrimPrefix(p, "./")] = true
		}
	}
	return ignored, nil
}

// LsFilesUntrackedFolded streams the untracked, not ignored files of the
// work tree, a folder all of whose files are untracked coming once as
// "dir/", as does an untracked nested repository (`ls-files -o
// --exclude-standard --directory -z`, run at the root).
func (r *Repo) LsFilesUntrackedFolded(ctx context.Context, each func(path string) error) error {
	c := r.cmd("ls-files", "-o", "--exclude-standard", "--directory", "-z")
	c.Timeout = LongTimeout
	return r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, each)
	})
}

// MatchExcludeFrom streams the untracked files of the work tree that the
// patterns of patternFile (gitignore syntax) match, ignored or not:
// `ls-files -o -i -z --exclude-from=<patternFile>` run at the root.
func (r *Repo) MatchExcludeFrom(ctx context.Context, patternFile string, each func(path string) error) error {
	c := r.cmd("ls-files", "-o", "-i", "-z", "--exclude-from="+patternFile)
	c.Timeout = LongTimeout
	return r.git.Stream(ctx, c, func(rd io.Reader) error {
		return eachNul(rd, each)
	})
}

// CheckoutIndexNew writes the index entries whose files do not exist yet
// into the work tree, leaving every existing file as it is
// (`checkout-index -q -a`, without --force).
func (r *Repo) CheckoutIndexNew(ctx context.Context) error {
	c := write(r.cmd("checkout-index", "-q", "-a"))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// StatusAllV2 is [Repo.StatusV2] with every untracked file listed one by
// one (`--untracked-files=all`: "? <path>" records, never a folder for
// the files in it), bounded by [LongTimeout].
func (r *Repo) StatusAllV2(ctx context.Context) ([]byte, error) {
	c := r.cmd("status", "--porcelain=v2", "-z", "--ignore-submodules=none", "--untracked-files=all")
	c.Timeout = LongTimeout
	return r.git.run(ctx, c)
}

// LsFilesGitignores lists the .gitignore files of the work tree that are
// tracked, or untracked and not ignored: the ones a capture of the work
// tree holds (`ls-files --cached --others --exclude-standard -z --
// ':(glob)**/.gitignore'`, run at the root; a tracked one deleted from the
// work tree is listed too). Repository relative, "/"-separated, sorted,
// each once.
func (r *Repo) LsFilesGitignores(ctx context.Context) ([]string, error) {
	c := r.cmd("ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", ":(glob)**/.gitignore")
	c.Env = append(c.Env, "GIT_LITERAL_PATHSPECS=0")
	c.Timeout = LongTimeout
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	recs := nulRecords(out)
	slices.Sort(recs)
	return slices.Compact(recs), nil
}
