package diffscope

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// DefaultContext is the number of context lines of a read without Context.
const DefaultContext = 3

// DefaultBudget is the response budget of a read without Budget: 1 MiB of
// hunk text (spec, thread/diff/read: "Files past the response budget come
// without hunks (tooLarge) or are only counted (filesOmitted)").
const DefaultBudget = 1 << 20

// fileOverhead is what one file costs in the budget besides its hunks and
// paths: its JSON fields and id.
const fileOverhead = 256

// Read reads one scope of checkout (any directory inside a work tree) as
// thread/diff/read answers it (spec, thread/diff/read; ARCHITECTURE.md,
// "capture a checkout as trees"): one `git diff-tree -r -p -M` with the
// pinned flags of [gitcli.DiffFlags] between the two trees of the scope:
//
//	uncommitted (default)  HEAD tree -> worktree tree
//	unstaged               index tree -> worktree tree
//	staged                 HEAD tree -> index tree
//	committed              Commit's first parent's tree (empty tree for a root commit) -> Commit's tree
//	branch                 merge-base(against, HEAD)'s tree -> worktree tree
//	lastTurn               FromTree -> ToTree
//
// A branch read compares with opts.Against, else opts.BaseRef, else HEAD's
// upstream, else the default branch (refs/remotes/origin/HEAD, else a local
// main or master that is not the current branch), and echoes the name it
// used in Result.Against.
//
// Result.Root is the repository root; file paths are relative to it. Each
// hunk keeps its lines exactly as git printed them (CR bytes and "\ No
// newline at end of file" markers included) and carries its id (see
// hunkid.go). Binary files and gitlinks have no hunks and no line counts.
// Past the budget (opts.Budget bytes of hunk text, default [DefaultBudget])
// the largest files lose their hunks (TooLarge, counts kept), then files
// are left out from the end and counted in FilesOmitted. FromTree and
// ToTree name the compared trees unless IgnoreWhitespace is set.
// UntrackedSkipped (worktree scopes) counts untracked files the capture
// left out.
//
// Reads take no lock and never write the user's index.
//
// Errors: an error matching [gitcli.ErrNotRepo] when checkout is not in a
// work tree; [*ParamError] for an unknown scope ("scope"), a negative
// context ("context"), committed without a resolvable Commit ("commit"),
// branch with nothing to compare with or no common ancestor ("against"),
// lastTurn without two tree ids of the repository ("fromTree", "toTree");
// *gitcli.Error when git fails.
func (d *Differ) Read(ctx context.Context, checkout string, opts ReadOptions) (*Result, error) {
	st, err := d.read(ctx, checkout, opts)
	if err != nil {
		return nil, err
	}
	return st.result, nil
}

// read is Read keeping everything an action needs. Contract for actions:
//
//   - st.files lists every changed file in git's order, including files
//     counted in FilesOmitted (st.result.Files is its prefix); each has
//     wire (with hunk ids unless TooLarge), raw (git's exact bytes) and
//     oldOID/newOID.
//   - st.from and st.to are the compared trees (also for ignoreWhitespace
//     reads, whose result hides them); st.capture is set for the scopes
//     that capture (uncommitted, unstaged, staged, branch): HeadTree always,
//     IndexTree for unstaged and staged, WorktreeTree for uncommitted,
//     unstaged and branch.
//   - Actions read with opts.Budget < 0 (no budget), so no file is
//     TooLarge or omitted and every hunk has its id.
func (d *Differ) read(ctx context.Context, checkout string, opts ReadOptions) (*readState, error) {
	if err := checkReadOptions(opts); err != nil {
		return nil, err
	}
	ri, err := d.discover(ctx, checkout)
	if err != nil {
		return nil, err
	}
	return d.readIn(ctx, ri, opts)
}

// checkReadOptions refuses what read refuses before looking at the
// checkout: an unknown scope, a negative context, a committed read
// without a commit, a lastTurn read without its trees.
func checkReadOptions(opts ReadOptions) error {
	if opts.Context != nil && *opts.Context < 0 {
		return paramErr("context", "must be 0 or more, got %d", *opts.Context)
	}
	switch opts.Scope {
	case "", ScopeUncommitted, ScopeUnstaged, ScopeStaged, ScopeBranch:
	case ScopeCommitted:
		if opts.Commit == "" {
			return paramErr("commit", "the committed scope needs a commit")
		}
	case ScopeLastTurn:
		if opts.FromTree == "" {
			return paramErr("fromTree", "the lastTurn scope needs the turn's two trees")
		}
		if opts.ToTree == "" {
			return paramErr("toTree", "the lastTurn scope needs the turn's two trees")
		}
	default:
		return paramErr("scope", "unknown scope %q", opts.Scope)
	}
	return nil
}

// readIn is read in the checkout ri describes.
func (d *Differ) readIn(ctx context.Context, ri repoInfo, opts ReadOptions) (*readState, error) {
	scope := opts.Scope
	if scope == "" {
		scope = ScopeUncommitted
	}
	nctx := DefaultContext
	if opts.Context != nil {
		nctx = *opts.Context
	}
	budget := opts.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	if err := checkReadOptions(opts); err != nil {
		return nil, err
	}
	st := &readState{repo: ri.Repo, ri: ri, scope: scope, context: nctx, ignoreWhitespace: opts.IgnoreWhitespace}
	var err error
	res := &Result{Scope: scope, Root: ri.Root}
	limit := budget // a file whose hunks alone pass the budget is TooLarge whatever the others
	if budget < 0 {
		limit = 0
	}
	// Entries without a section (a whitespace-only change under -w) are
	// never handed over.
	collect := func(e *parsedEntry) error {
		fd, err := buildFile(e, nctx, opts.IgnoreWhitespace)
		if err != nil {
			return err
		}
		st.files = append(st.files, fd)
		return nil
	}
	// A scope compared with the worktree tree from a tree known before the
	// capture is diffed against the capture's index while git writes the
	// tree from it (the same patch, one process sooner: issue 24).
	diffed := false
	alongside := func(from string) func(context.Context, *gitcli.Repo) error {
		return func(ctx context.Context, view *gitcli.Repo) error {
			st.files, diffed = st.files[:0], false
			err := view.DiffIndexCachedPatch(ctx, from, gitcli.PatchOptions{Context: nctx, IgnoreWhitespace: opts.IgnoreWhitespace}, func(r io.Reader) error {
				return parseTreeDiff(r, limit, collect)
			})
			diffed = err == nil
			return err
		}
	}
	switch scope {
	case ScopeUncommitted, ScopeUnstaged, ScopeStaged:
		withIndex := scope != ScopeUncommitted
		withWorktree := scope != ScopeStaged
		var along func(context.Context, *gitcli.Repo) error
		if scope == ScopeUncommitted {
			along = alongside(ri.headTree)
		}
		if st.capture, err = d.capture(ctx, ri, withIndex, withWorktree, along); err != nil {
			return nil, err
		}
		switch scope {
		case ScopeUncommitted:
			st.from, st.to = st.capture.HeadTree, st.capture.WorktreeTree
		case ScopeUnstaged:
			st.from, st.to = st.capture.IndexTree, st.capture.WorktreeTree
		default:
			st.from, st.to = st.capture.HeadTree, st.capture.IndexTree
		}
	case ScopeCommitted:
		if st.from, st.to, err = d.commitTrees(ctx, ri, opts.Commit); err != nil {
			return nil, err
		}
	case ScopeBranch:
		base, name, err := d.branchBase(ctx, ri, opts)
		if err != nil {
			return nil, err
		}
		res.Against = name
		if st.capture, err = d.capture(ctx, ri, false, true, alongside(base)); err != nil {
			return nil, err
		}
		st.from, st.to = base, st.capture.WorktreeTree
	case ScopeLastTurn:
		if err := d.checkTrees(ctx, ri, [][2]string{{"fromTree", opts.FromTree}, {"toTree", opts.ToTree}}); err != nil {
			return nil, err
		}
		st.from, st.to = opts.FromTree, opts.ToTree
	}
	if st.capture != nil && st.capture.WorktreeTree != "" {
		res.UntrackedSkipped = st.capture.UntrackedSkipped
	}

	if !diffed {
		if err := d.diffTrees(ctx, ri.Repo, st.from, st.to, nctx, opts.IgnoreWhitespace, limit, collect); err != nil {
			return nil, err
		}
	}
	shown := len(st.files)
	if budget >= 0 {
		shown = applyBudget(st.files, budget)
	}
	res.FilesOmitted = len(st.files) - shown
	res.Files = make([]File, shown)
	for i := range res.Files {
		res.Files[i] = st.files[i].wire
	}
	if !opts.IgnoreWhitespace {
		res.FromTree, res.ToTree = st.from, st.to
		d.hunks.keep(st)
	}
	st.result = res
	return st, nil
}

// diffTrees runs the one diff of a read and parses it as it streams,
// handing each file to done.
func (d *Differ) diffTrees(ctx context.Context, repo *gitcli.Repo, from, to string, nctx int, ignoreWS bool, limit int, done func(*parsedEntry) error) error {
	return repo.DiffTreePatch(ctx, from, to, gitcli.PatchOptions{Context: nctx, IgnoreWhitespace: ignoreWS}, func(r io.Reader) error {
		return parseTreeDiff(r, limit, done)
	})
}

// zeroOID reports an all-zero object id (an absent side in raw output).
func zeroOID(oid string) bool { return strings.Trim(oid, "0") == "" }

// buildFile turns a parsed entry into a fileDiff.
func buildFile(e *parsedEntry, nctx int, ignoreWS bool) (fileDiff, error) {
	w := File{Path: e.newPath, Hunks: []Hunk{}}
	switch e.status {
	case 'A':
		w.Status = "added"
	case 'D':
		w.Status = "deleted"
	case 'M':
		w.Status = "modified"
	case 'R':
		w.Status = "renamed"
		w.OldPath = e.oldPath
	case 'C':
		w.Status = "added" // -M finds no copies; a copy is a new file
	case 'T':
		w.Status = "typeChanged"
	default:
		return fileDiff{}, fmt.Errorf("diffscope: unexpected diff status %q for %s", e.status, e.newPath)
	}
	if e.oldMode != "000000" {
		w.OldMode = e.oldMode
	}
	if e.newMode != "000000" {
		w.NewMode = e.newMode
	}
	w.Submodule = e.oldMode == "160000" || e.newMode == "160000"
	h := newIDHasher(&e.rawEntry, nctx, ignoreWS)
	w.ID = h.fileID()
	fd := fileDiff{}
	if !zeroOID(e.oldOID) {
		fd.oldOID = e.oldOID
	}
	if !zeroOID(e.newOID) {
		fd.newOID = e.newOID
	}
	size := 0
	for _, s := range e.parts {
		w.Binary = w.Binary || s.binary
		w.TooLarge = w.TooLarge || s.dropped
		size += len(s.header)
		for _, hk := range s.hunks {
			size += len(hk)
		}
	}
	if w.Submodule {
		w.Binary = false
	}
	raw := make([]byte, 0, size)
	for _, s := range e.parts {
		raw = append(raw, s.header...)
		if !w.TooLarge {
			for _, hk := range s.hunks {
				raw = append(raw, hk...)
			}
		}
	}
	fd.raw = raw
	if !w.Submodule && !w.Binary {
		for _, s := range e.parts {
			w.Additions += s.adds
			w.Deletions += s.dels
			if w.TooLarge {
				continue
			}
			for _, hk := range s.hunks {
				hunk, err := buildHunk(hk)
				if err != nil {
					return fileDiff{}, err
				}
				hunk.ID = h.hunkID(hk)
				w.Hunks = append(w.Hunks, hunk)
			}
		}
	}
	fd.wire = w
	return fd, nil
}

// buildHunk splits one hunk's bytes into its header and lines (each without
// its "\n"; a CR stays).
func buildHunk(b []byte) (Hunk, error) {
	s := string(b)
	header, body, _ := strings.Cut(s, "\n")
	var h Hunk
	var err error
	h.Header = header
	if h.OldStart, h.OldLines, h.NewStart, h.NewLines, err = hunkHeader(header); err != nil {
		return Hunk{}, err
	}
	body = strings.TrimSuffix(body, "\n")
	if body == "" {
		h.Lines = []string{}
	} else {
		h.Lines = strings.Split(body, "\n")
	}
	return h, nil
}

// hunkBytes is what a file's hunks cost in the budget: their header and
// lines as JSON strings (escapes included: a line of NUL bytes costs six
// bytes per byte on the wire, not one), each with its separator.
func hunkBytes(f *File) int {
	n := 0
	for _, h := range f.Hunks {
		n += jsonStringLen(h.Header) + 1
		for _, l := range h.Lines {
			n += jsonStringLen(l) + 1
		}
	}
	return n
}

// jsonStringLen is the length of s encoded as a JSON string by
// encoding/json without HTML escaping (the rpc writer's encoding), quotes
// included: two bytes for \", \\, \n, \r, \t, \b and \f, six for
// other control characters, U+2028, U+2029 and each invalid UTF-8 byte
// (written as \ufffd).
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// applyBudget marks the largest files TooLarge until the read fits budget
// (bytes of hunk text plus fileOverhead and the paths of each file), then
// returns how many files fit from the start; the rest are only counted.
func applyBudget(files []fileDiff, budget int) int {
	costs := make([]int, len(files))
	total := 0
	for i := range files {
		w := &files[i].wire
		base := fileOverhead + len(w.Path) + len(w.OldPath)
		costs[i] = hunkBytes(w)
		total += base + costs[i]
	}
	if total <= budget {
		return len(files)
	}
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return costs[order[a]] > costs[order[b]] })
	for _, i := range order {
		if total <= budget || costs[i] == 0 {
			break
		}
		w := &files[i].wire
		w.TooLarge = true
		w.Hunks = []Hunk{}
		total -= costs[i]
	}
	shown := len(files)
	for total > budget && shown > 0 {
		shown--
		w := &files[shown].wire
		total -= fileOverhead + len(w.Path) + len(w.OldPath)
	}
	return shown
}

// commitTrees returns the trees of a committed read: the first parent's
// tree (the empty tree for a root commit) and the commit's.
func (d *Differ) commitTrees(ctx context.Context, ri repoInfo, commit string) (from, to string, err error) {
	id, ok, err := ri.ResolveCommit(ctx, commit)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", paramErr("commit", "%q names no commit", commit)
	}
	to, parents, err := ri.TreeAndParents(ctx, id)
	if err != nil {
		return "", "", err
	}
	from = ri.EmptyTree()
	if len(parents) > 0 {
		if from, err = ri.TreeOf(ctx, parents[0]); err != nil {
			return "", "", err
		}
	}
	return from, to, nil
}

// branchBase resolves what a branch read compares with and returns the tree
// of its merge base with HEAD and the name to echo.
func (d *Differ) branchBase(ctx context.Context, ri repoInfo, opts ReadOptions) (tree, name string, err error) {
	var commit string
	switch {
	case opts.Against != "":
		id, ok, err := ri.ResolveCommit(ctx, opts.Against)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return "", "", paramErr("against", "%q names no commit", opts.Against)
		}
		commit, name = id, opts.Against
	default:
		if commit, name, err = d.defaultBase(ctx, ri, opts.BaseRef); err != nil {
			return "", "", err
		}
		if commit == "" {
			return "", "", paramErr("against", "no branch to compare with: no base, upstream or default branch")
		}
	}
	if ri.head == "" {
		return "", "", paramErr("against", "HEAD has no commit to compare with %s", name)
	}
	base, ok, err := ri.MergeBase(ctx, commit, ri.head)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", paramErr("against", "%s and HEAD have no common ancestor", name)
	}
	if tree, err = ri.TreeOf(ctx, base); err != nil {
		return "", "", err
	}
	return tree, name, nil
}

// defaultBase finds the base of a branch read without against: baseRef,
// else the upstream of the current branch, else the default branch
// (refs/remotes/origin/HEAD, else main or master when it exists and is not
// the current branch). commit is "" when there is none.
func (d *Differ) defaultBase(ctx context.Context, ri repoInfo, baseRef string) (commit, name string, err error) {
	if baseRef != "" {
		id, ok, err := ri.ResolveCommit(ctx, baseRef)
		if err != nil || ok {
			return id, baseRef, err
		}
	}
	// The upstream, as a full ref name; exit 128 when there is none.
	if ref, ok, err := ri.Upstream(ctx); err == nil && ok {
		id, ok, err := ri.ResolveCommit(ctx, ref)
		if err != nil || ok {
			return id, shortRef(ref), err
		}
	}
	if ref, ok, err := ri.SymbolicRef(ctx, "refs/remotes/origin/HEAD"); err == nil && ok {
		id, ok, err := ri.ResolveCommit(ctx, ref)
		if err != nil || ok {
			return id, shortRef(ref), err
		}
	}
	current := ""
	if ref, ok, err := ri.SymbolicRef(ctx, "HEAD"); err == nil && ok {
		current = ref
	}
	for _, b := range []string{"main", "master"} {
		ref := "refs/heads/" + b
		if ref == current {
			continue
		}
		id, ok, err := ri.ResolveCommit(ctx, ref)
		if err != nil || ok {
			return id, b, err
		}
	}
	return "", "", nil
}

// shortRef shortens refs/heads/x to x and refs/remotes/o/x to o/x.
func shortRef(ref string) string {
	if s, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return s
	}
	if s, ok := strings.CutPrefix(ref, "refs/remotes/"); ok {
		return s
	}
	return ref
}
