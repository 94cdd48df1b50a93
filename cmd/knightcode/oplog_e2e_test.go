package main

// End-to-end test of the operation log's recovery over the built binary
// (issue 15: "On server start and before the next action in that
// repository, an unfinished journal is rolled back to the recovery point
// exactly ... and the client is told through a warning on the next
// thread/start or resume in that checkout. No .git/knightcode-* leftovers
// survive a restart.").

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/gitstate"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// leftoverFiles lists what an action's journal may leave: every entry of
// oplogDir (but kept reports when keepReports) and the knightcode-* entries
// of the repository's .git folder (its lock file .git/knightcode.lock is
// kept by design).
func leftoverFiles(t *testing.T, repo, oplogDir string, keepReports bool) []string {
	t.Helper()
	var out []string
	ents, err := os.ReadDir(oplogDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if keepReports && strings.HasSuffix(e.Name(), ".report.json") {
			continue
		}
		out = append(out, "oplog/"+e.Name())
	}
	ents, err = os.ReadDir(filepath.Join(repo, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "knightcode-") || e.Name() == "index.lock" {
			out = append(out, ".git/"+e.Name())
		}
	}
	return out
}

// A revert that died after some of its writes (its journal unfinished, its
// lock free, as kill -9 leaves it) is rolled back when the server starts,
// before any request; the next thread/start in that checkout warns about
// it (source "server", naming the recovery point), once; nothing of the
// journal is left; and the recovery point gives back the state before
// with plain git.
func TestE2EUnfinishedActionRolledBackAtStart(t *testing.T) {
	ctx := context.Background()
	repo := diffRepo(t)
	writeFile(t, repo, "a.txt", "mine\n")
	writeFile(t, repo, "b.txt", "also mine\n")
	writeFile(t, repo, "new.txt", "untracked, never committed\n")
	fixtureGit(t, repo, "add", "b.txt")
	before := map[string]string{"a.txt": "mine\n", "b.txt": "also mine\n", "new.txt": "untracked, never committed\n"}
	indexBefore := fixtureGit(t, repo, "ls-files", "-s")

	env, home := testEnv(t)
	oplogDir := filepath.Join(home, "agent", "oplog")
	git, err := gitcli.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = git.Close() }) // its long-lived git helpers
	r, err := git.Discover(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	o := &gitstate.Oplog{Dir: oplogDir}
	j, err := o.Begin(ctx, r, gitstate.Action{Name: "revert", Paths: []string{"a.txt", "b.txt", "new.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	headA := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD:a.txt"))
	if err := j.Checkout(ctx, map[string]gitstate.Entry{"a.txt": {Mode: "100644", OID: headA}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Remove(ctx, []string{"new.txt"}); err != nil {
		t.Fatal(err)
	}
	headB := strings.TrimSpace(fixtureGit(t, repo, "rev-parse", "HEAD:b.txt"))
	if err := j.WriteIndex(ctx, []string{"b.txt"}, func(tmp *gitcli.Repo) error {
		return tmp.UpdateIndexInfo(ctx, []gitcli.IndexInfo{{Mode: "100644", OID: headB, Path: "b.txt"}})
	}); err != nil {
		t.Fatal(err)
	}
	j.Close() // the process dies here: b.txt's file is not written yet
	if got := readFile(t, repo, "a.txt"); got != baseLines || exists(repo, "new.txt") {
		t.Fatalf("the journal's writes did not land: a.txt %q, new.txt there: %v", got, exists(repo, "new.txt"))
	}

	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)

	// Rolled back at start, before any request in the checkout.
	for p, want := range before {
		if got := readFile(t, repo, p); got != want {
			t.Errorf("%s after the restart = %q, want %q (the state before the action)", p, got, want)
		}
	}
	if diff := cmp.Diff(indexBefore, fixtureGit(t, repo, "ls-files", "-s")); diff != "" {
		t.Errorf("index entries after the restart (-before +after):\n%s", diff)
	}
	if left := leftoverFiles(t, repo, oplogDir, true); len(left) > 0 {
		t.Errorf("leftovers after the restart: %v", left)
	}

	refs := strings.Fields(fixtureGit(t, repo, "for-each-ref", "--format=%(refname)", gitstate.OplogRefPrefix))
	if len(refs) != 1 {
		t.Fatalf("recovery points = %v, want one", refs)
	}
	for p, want := range before {
		if got := fixtureGit(t, repo, "show", refs[0]+":"+p); got != want {
			t.Errorf("git show %s:%s = %q, want %q", refs[0], p, got, want)
		}
	}
	if got := fixtureGit(t, repo, "show", refs[0]+"^2:b.txt"); got != "also mine\n" {
		t.Errorf("the recovery point's index commit holds b.txt %q, want the staged content", got)
	}

	res := mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo})
	var got []protocol.Warning
	for _, w := range res.Warnings {
		if w.Source == protocol.WarningSourceServer && strings.Contains(w.Message, "interrupted") {
			got = append(got, w)
		}
	}
	if len(got) != 1 {
		t.Fatalf("recovery warnings of thread/start = %+v, want one (all warnings: %+v)", got, res.Warnings)
	}
	w := got[0]
	if w.Path != repo || !strings.Contains(w.Message, "revert") || !strings.Contains(w.Message, refs[0]) ||
		!strings.Contains(w.Message, "put back") {
		t.Errorf("recovery warning = %+v, want the revert in %s put back, naming %s", w, repo, refs[0])
	}
	if left := leftoverFiles(t, repo, oplogDir, false); len(left) > 0 {
		t.Errorf("leftovers after the warning was given: %v", left)
	}

	// Once: the next load in the checkout has nothing to report.
	res = mustCall(t, s, protocol.ThreadStart, protocol.ThreadStartParams{Cwd: repo})
	for _, w := range res.Warnings {
		if strings.Contains(w.Message, "interrupted") {
			t.Errorf("second thread/start repeats the recovery warning: %+v", w)
		}
	}
	if diff := cmp.Diff(before["a.txt"], readFile(t, repo, "a.txt")); diff != "" {
		t.Errorf("a.txt changed by the thread loads (-want +got):\n%s", diff)
	}
}
