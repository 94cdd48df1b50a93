package gitstate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/internal/gittest"
)

// An external action's journal: its recovery point records the full
// state, Recover leaves it to the action, and RecoverExternal hands it to
// the resolver, which puts the refs it moved back with RestoreRefs; a
// recoveryRequired outcome keeps the journal.
func TestExternalJournal(t *testing.T) {
	ctx := context.Background()
	dir := oplogRepo(t)
	oplogDir := t.TempDir()
	o := &Oplog{Dir: oplogDir}
	repo := discover(t, dir)
	before := stateOf(t, dir)
	head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
	branch := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD"))

	j, err := o.Begin(ctx, repo, Action{Name: "switch", Full: true, External: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Save("moving", map[string]string{"x": "y"}); err != nil {
		t.Fatal(err)
	}
	if err := j.UpdateRef(ctx, repo, "refs/heads/side", RefValue{OID: head}, "test"); err != nil {
		t.Fatal(err)
	}
	if err := j.UpdateRef(ctx, repo, "HEAD", RefValue{Target: "refs/heads/side"}, "test"); err != nil {
		t.Fatal(err)
	}
	j.Close() // the process dies

	// The point records the whole state: its tree holds the untracked file.
	if got := gittest.Git(t, dir, "show", j.Ref()+":new.txt"); got != "untracked\n" {
		t.Errorf("recovery point new.txt = %q", got)
	}
	if reps, err := o.Recover(ctx, repo.Runner(), ""); err != nil || len(reps) != 0 {
		t.Fatalf("Recover touched an external journal: %v %v", reps, err)
	}
	infos, err := o.ExternalJournals("switch", repo.CommonDir)
	if err != nil || len(infos) != 1 || infos[0].Step != "moving" {
		t.Fatalf("ExternalJournals = %+v, %v", infos, err)
	}

	for _, keep := range []bool{true, false} {
		reps, err := o.RecoverExternal(ctx, "switch", "", func(ctx context.Context, j *Journal) (RecoveryReport, error) {
			var data map[string]string
			if ok, err := j.Data(&data); !ok || err != nil || data["x"] != "y" {
				t.Errorf("Data = %v, %v, %v", data, ok, err)
			}
			if keep {
				return RecoveryReport{Outcome: OutcomeRecoveryRequired}, nil
			}
			conflicts, err := j.RestoreRefs(ctx, repo.Runner(), "undo")
			if err != nil || len(conflicts) > 0 {
				t.Errorf("RestoreRefs = %v, %v", conflicts, err)
			}
			return RecoveryReport{Outcome: OutcomeRolledBack}, nil
		})
		if err != nil || len(reps) != 1 || reps[0].Journal != j.ID() {
			t.Fatalf("RecoverExternal = %+v, %v", reps, err)
		}
		infos, _ := o.ExternalJournals("switch", "")
		if keep != (len(infos) == 1) {
			t.Fatalf("keep %v: journals left %+v", keep, infos)
		}
	}
	if got := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD")); got != branch {
		t.Errorf("HEAD -> %s, want %s", got, branch)
	}
	if _, err := gittest.Run(dir, nil, "rev-parse", "-q", "--verify", "refs/heads/side"); err == nil {
		t.Error("refs/heads/side was not deleted")
	}
	if diff := cmp.Diff(before, stateOf(t, dir)); diff != "" {
		t.Errorf("state (-before +after):\n%s", diff)
	}
	if left := leftovers(t, dir, oplogDir); len(left) > 0 {
		t.Errorf("left over: %v", left)
	}
}

// A journal of an ordinary action that moved refs (branch switch) has
// them put back by Abort and by Recover, after its paths; one marked done
// keeps them.
func TestJournalRefsRollBack(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"abort", "recover", "done"} {
		t.Run(how, func(t *testing.T) {
			dir := oplogRepo(t)
			o := &Oplog{Dir: t.TempDir()}
			repo := discover(t, dir)
			before := stateOf(t, dir)
			branch := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD"))
			head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
			j, err := o.Begin(ctx, repo, Action{Name: "switch"})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.UpdateRef(ctx, repo, "refs/heads/side", RefValue{OID: head}, "test"); err != nil {
				t.Fatal(err)
			}
			if err := j.UpdateRef(ctx, repo, "HEAD", RefValue{Target: "refs/heads/side"}, "test"); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "abort":
				if err := j.Abort(ctx, nil); err != nil {
					t.Fatal(err)
				}
			case "recover":
				j.Close() // the process dies
				reps, err := o.Recover(ctx, repo.Runner(), "")
				if err != nil || len(reps) != 1 || reps[0].Outcome != OutcomeRolledBack {
					t.Fatalf("Recover = %+v, %v", reps, err)
				}
			case "done":
				j.f.State = StateDone
				if err := j.save(); err != nil {
					t.Fatal(err)
				}
				j.Close()
				reps, err := o.Recover(ctx, repo.Runner(), "")
				if err != nil || len(reps) != 1 || reps[0].Outcome != OutcomeCompleted {
					t.Fatalf("Recover = %+v, %v", reps, err)
				}
				if got := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/side" {
					t.Errorf("HEAD -> %s, want the switch kept", got)
				}
				return
			}
			if got := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD")); got != branch {
				t.Errorf("HEAD -> %s, want %s", got, branch)
			}
			if got, want := gittest.Git(t, dir, "reflog", "-1", "--format=%gs", "HEAD"), "checkout: moving from side to "+strings.TrimPrefix(branch, "refs/heads/")+"\n"; got != want {
				t.Errorf("HEAD's reflog says %q, want %q (git switch - reads it)", got, want)
			}
			if _, err := gittest.Run(dir, nil, "rev-parse", "-q", "--verify", "refs/heads/side"); err == nil {
				t.Error("refs/heads/side was not deleted")
			}
			if diff := cmp.Diff(before, stateOf(t, dir)); diff != "" {
				t.Errorf("state (-before +after):\n%s", diff)
			}
		})
	}
}

// A ref lock that a git child killed mid-write left, holding the value
// the journal was writing, is removed before the resolver runs (its
// RestoreRefs then works); a lock holding anything else is another
// process's and stays.
func TestRecoverDropsOwnRefLocks(t *testing.T) {
	ctx := context.Background()
	for _, own := range []bool{true, false} {
		dir := oplogRepo(t)
		o := &Oplog{Dir: t.TempDir()}
		repo := discover(t, dir)
		head := strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
		branch := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD"))
		j, err := o.Begin(ctx, repo, Action{Name: "switch", Full: true, External: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.UpdateRef(ctx, repo, "HEAD", RefValue{OID: head}, "detach"); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, ".git", "HEAD.lock")
		content := head + "\n" // what update-ref writes for the detached HEAD
		if !own {
			content = "ref: refs/heads/someone-else\n"
		}
		gittest.Write(t, dir, ".git/HEAD.lock", content)
		j.Close() // the process dies
		var restoreErr error
		_, err = o.RecoverExternal(ctx, "switch", "", func(ctx context.Context, j *Journal) (RecoveryReport, error) {
			_, restoreErr = j.RestoreRefs(ctx, repo.Runner(), "undo")
			return RecoveryReport{Outcome: OutcomeRolledBack}, restoreErr
		})
		_, statErr := os.Stat(lock)
		if own {
			if err != nil || restoreErr != nil {
				t.Fatalf("own lock: RecoverExternal = %v (restore %v)", err, restoreErr)
			}
			if statErr == nil {
				t.Error("the journal's own HEAD.lock is still there")
			}
			if got := strings.TrimSpace(gittest.Git(t, dir, "symbolic-ref", "HEAD")); got != branch {
				t.Errorf("HEAD -> %s, want %s", got, branch)
			}
			continue
		}
		if restoreErr == nil || statErr != nil {
			t.Errorf("a foreign HEAD.lock: restore err %v, lock %v; want the lock kept and the restore refused", restoreErr, statErr)
		}
	}
}
