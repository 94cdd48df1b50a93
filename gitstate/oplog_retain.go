package gitstate

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/gitcli"
)

// RecoveryPoint is one recovery point of a repository.
type RecoveryPoint struct {
	// Ref is refs/knightcode/oplog/<UTC time>.
	Ref string
	// Commit is the stash-shaped commit the ref points at.
	Commit string
	// Time is the time in the ref's name (UTC).
	Time time.Time
}

// RecoveryPoints lists repo's recovery points, newest first. Refs under
// [OplogRefPrefix] whose name is not a time are left out (and never
// pruned).
func RecoveryPoints(ctx context.Context, repo *gitcli.Repo) ([]RecoveryPoint, error) {
	lines, err := repo.ForEachRef(ctx, gitcli.ForEachRefOptions{Format: "%(refname) %(objectname)",
		Patterns: []string{strings.TrimSuffix(OplogRefPrefix, "/")}})
	if err != nil {
		return nil, err
	}
	var out []RecoveryPoint
	for _, l := range lines {
		ref, id, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		t, err := time.Parse(refTimeLayout, strings.TrimPrefix(ref, OplogRefPrefix))
		if err != nil {
			continue
		}
		out = append(out, RecoveryPoint{Ref: ref, Commit: id, Time: t})
	}
	slices.SortFunc(out, func(a, b RecoveryPoint) int { return b.Time.Compare(a.Time) })
	return out, nil
}

// Prune deletes repo's recovery points past the retention: all but the
// newest Keep, and those older than MaxAge; a point named by a journal in
// o.Dir (an action running or unfinished) is never deleted. The refs go in
// one `update-ref --stdin` transaction, each only while it still points at
// the commit listed. The caller holds the repository's lock. It returns
// the number deleted. Git's gc never prunes a point: each is a ref.
func (o *Oplog) Prune(ctx context.Context, repo *gitcli.Repo) (int, error) {
	points, err := RecoveryPoints(ctx, repo)
	if err != nil {
		return 0, err
	}
	if len(points) <= o.keep() && (len(points) == 0 || o.now().Sub(points[len(points)-1].Time) <= o.maxAge()) {
		return 0, nil
	}
	journals, err := o.journals()
	if err != nil {
		return 0, err
	}
	inUse := map[string]bool{}
	for _, f := range journals {
		if f.Ref != "" {
			inUse[f.Ref] = true
		}
	}
	var del []gitcli.RefUpdate
	cutoff := o.now().Add(-o.maxAge())
	for i, p := range points {
		if (i >= o.keep() || p.Time.Before(cutoff)) && !inUse[p.Ref] {
			del = append(del, gitcli.RefUpdate{Ref: p.Ref, OldID: p.Commit, Delete: true})
		}
	}
	if len(del) == 0 {
		return 0, nil
	}
	if err := repo.UpdateRefs(ctx, del); err != nil {
		return 0, err
	}
	return len(del), nil
}

// OplogCounts are the counts server/diagnostics shows.
type OplogCounts struct {
	// RecoveryPoints is the number of recovery points of the repository.
	RecoveryPoints int `json:"recoveryPoints"`
	// Unfinished is the number of journals in the oplog folder whose
	// action died (lock free), not yet recovered, for any repository.
	Unfinished int `json:"unfinished"`
	// Running is the number of journals whose action is running.
	Running int `json:"running"`
}

// Counts returns the counts for diagnostics: repo's recovery points (none
// when repo is nil) and the oplog folder's unfinished and running
// journals.
func (o *Oplog) Counts(ctx context.Context, repo *gitcli.Repo) (OplogCounts, error) {
	var c OplogCounts
	if repo != nil {
		points, err := RecoveryPoints(ctx, repo)
		if err != nil {
			return c, err
		}
		c.RecoveryPoints = len(points)
	}
	if o.Dir == "" {
		return c, nil
	}
	journals, err := o.journals()
	if err != nil {
		return c, err
	}
	for _, f := range journals {
		if _, err := os.Stat(o.jsonPath(f.ID)); err != nil {
			continue
		}
		if l, ok := o.lockUnfinished(f.ID, 0); ok {
			c.Unfinished++
			_ = l.Unlock()
		} else if _, err := os.Stat(o.jsonPath(f.ID)); err == nil {
			c.Running++
		}
	}
	return c, nil
}
