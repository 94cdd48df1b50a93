package gitstate

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// An action that died after every write it had journaled landed, but
// before it journaled the writes still to come (the index after the
// working tree), is rolled back to the exact before state: rolled forward
// it would keep half an action (the working tree reverted, the staged
// changes still staged; issue 15).
func TestRecoverRollsBackAnActionCutBetweenWrites(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	before := stateOf(t, dir)
	o := &Oplog{Dir: t.TempDir()}
	repo := discover(t, dir)
	j, err := o.Begin(ctx, repo, Action{Name: "revert", Full: true})
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]Entry{}
	for _, p := range []string{"a.txt", "b.txt"} {
		head[p] = Entry{Mode: "100644", OID: strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD:"+p))}
	}
	if err := j.Remove(ctx, []string{"new.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Checkout(ctx, head); err != nil {
		t.Fatal(err)
	}
	j.Close() // died before the index write was journaled
	reps, err := o.Recover(ctx, repo.Runner(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Outcome != OutcomeRolledBack || len(reps[0].Conflicts) != 0 {
		t.Fatalf("reports = %+v, want one rolledBack without conflicts", reps)
	}
	if diff := cmp.Diff(before, stateOf(t, dir)); diff != "" {
		t.Errorf("state after recovery (-before +got):\n%s", diff)
	}
	if diff := cmp.Diff(leftovers(t, dir, o.Dir), []string(nil)); diff != "" {
		t.Errorf("leftovers:\n%s", diff)
	}
}
