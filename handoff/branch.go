package handoff

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// DefaultBranchPrefix is worktrees.branchPrefix when unset.
const DefaultBranchPrefix = "knightcode/"

// maxSlug is the longest title slug in a derived branch name.
const maxSlug = 50

// Slug turns a thread title into a branch name part: lower case ASCII
// letters and digits, every other run of characters one "-", no "-" at
// either end, at most 50 characters; "" when nothing is left.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
		if b.Len() >= maxSlug {
			break
		}
	}
	s := b.String()
	if len(s) > maxSlug {
		s = s[:maxSlug]
	}
	return strings.TrimRight(s, "-")
}

// BranchSource says where a to-local handoff's branch name came from.
type BranchSource string

// Branch sources, in the order the spec tries them.
const (
	BranchOwn      BranchSource = "own"      // the worktree's own branch
	BranchParam    BranchSource = "param"    // Options.Branch
	BranchPrevious BranchSource = "previous" // Options.PreviousBranch
	BranchDerived  BranchSource = "derived"  // <prefix><slug of the title>
)

// Branch is the branch a to-local handoff checks out in the main checkout.
type Branch struct {
	// Name is the short name ("knightcode/fix-login"); Ref the full one.
	Name string `json:"name"`
	Ref  string `json:"ref"`
	// Old is the branch's commit before the handoff, "" when it is new;
	// New is the commit it points at after (the worktree's HEAD).
	Old string `json:"old,omitempty"`
	New string `json:"new"`
	// Source says which rule chose it.
	Source BranchSource `json:"source"`
	// Note, when set, is a warning about the choice: the
	// worktrees.branchPrefix setting made no valid branch name, so the
	// default prefix was used.
	Note string `json:"note,omitempty"`
}

// resolveBranch picks the branch for a to-local handoff whose source
// (root src, HEAD head) goes to the main checkout at dst (read only).
func resolveBranch(ctx context.Context, repo *gitcli.Repo, o *Options, src, dst, head string, wts []gitcli.Worktree) (*Branch, error) {
	elsewhere := func(ref string) []string {
		var out []string
		for _, w := range wts {
			if w.Branch == ref && w.Path != src && w.Path != dst {
				out = append(out, w.Path)
			}
		}
		return out
	}
	check := func(name string, src BranchSource, refuse bool) (*Branch, bool, error) {
		ref := "refs/heads/" + name
		b := &Branch{Name: name, Ref: ref, New: head, Source: src}
		id, ok, err := repo.VerifyRef(ctx, ref)
		if err != nil {
			return nil, false, err
		}
		if at := elsewhere(ref); len(at) > 0 {
			if !refuse {
				return nil, false, nil
			}
			return nil, false, conflict(ReasonBranchExists, []string{ref}, "the branch %s is checked out in another worktree: %s", name, strings.Join(at, ", "))
		}
		if !ok {
			return b, true, nil
		}
		b.Old = id
		if !refuse {
			return nil, false, nil
		}
		ff, err := repo.IsAncestor(ctx, id, head)
		if err != nil {
			return nil, false, err
		}
		if !ff {
			return nil, false, conflict(ReasonBranchExists, []string{ref}, "the branch %s exists and cannot be fast-forwarded to %s", name, head)
		}
		return b, true, nil
	}
	// The worktree's own branch.
	if ref, ok, err := repo.SymbolicRef(ctx, "HEAD"); err != nil {
		return nil, err
	} else if name, isBranch := strings.CutPrefix(ref, "refs/heads/"); ok && isBranch {
		if at := elsewhere(ref); len(at) > 0 {
			return nil, conflict(ReasonBranchExists, []string{ref}, "the branch %s is checked out in another worktree: %s", name, strings.Join(at, ", "))
		}
		return &Branch{Name: name, Ref: ref, Old: head, New: head, Source: BranchOwn}, nil
	}
	for _, c := range []struct {
		name string
		src  BranchSource
		fld  string
	}{{o.Branch, BranchParam, "branch"}, {o.PreviousBranch, BranchPrevious, "previousBranch"}} {
		if c.name == "" {
			continue
		}
		if strings.HasPrefix(c.name, "refs/") {
			// A valid name, but refs/heads/refs/... would make the
			// short name ambiguous: the caller meant the branch itself.
			return nil, paramErr(c.fld, "%q is a ref, not a branch name: give the name without refs/heads/", c.name)
		}
		valid, err := repo.ValidBranchName(ctx, c.name)
		if err != nil {
			return nil, err
		}
		if !valid {
			return nil, paramErr(c.fld, "%q is not a valid branch name", c.name)
		}
		b, _, err := check(c.name, c.src, true)
		return b, err
	}
	prefix := o.BranchPrefix
	if prefix == "" {
		prefix = DefaultBranchPrefix
	}
	slug := Slug(o.Title)
	if slug == "" {
		slug = Slug(o.ThreadID)
	}
	if slug == "" {
		slug = "handoff"
	}
	base := prefix + slug
	note := ""
	if valid, err := repo.ValidBranchName(ctx, base); err != nil {
		return nil, err
	} else if !valid {
		// A setting, not a param: the default prefix, and a warning.
		note = fmt.Sprintf("the worktrees.branchPrefix setting %q does not make a valid branch name (git check-ref-format); the default %q was used", prefix, DefaultBranchPrefix)
		base = DefaultBranchPrefix + slug
	}
	for i := 1; i < 1000; i++ {
		name := base
		if i > 1 {
			name = base + "-" + strconv.Itoa(i)
		}
		b, ok, err := check(name, BranchDerived, false)
		if err != nil {
			return nil, err
		}
		if ok {
			b.Note = note
			return b, nil
		}
	}
	return nil, conflict(ReasonBranchExists, []string{"refs/heads/" + base}, "no free branch name after %s-999", base)
}
