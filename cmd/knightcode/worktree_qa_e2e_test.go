package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EWorktreeOnlyFieldsRefusedInLocalMode checks that thread/start in
// mode local refuses baseRef, carryLocalChanges and environment (they apply
// only to mode worktree) and that worktree/list refuses an empty cwd while
// an absent one lists everything.
func TestE2EWorktreeOnlyFieldsRefusedInLocalMode(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	for _, c := range []struct {
		ws   *protocol.ThreadStartWorkspace
		want wireErr
	}{
		{&protocol.ThreadStartWorkspace{Mode: "local", BaseRef: "HEAD"}, invalid("workspace.baseRef")},
		{&protocol.ThreadStartWorkspace{Mode: "local", CarryLocalChanges: true}, invalid("workspace.carryLocalChanges")},
		{&protocol.ThreadStartWorkspace{Mode: "local", Environment: "dev"}, invalid("workspace.environment")},
	} {
		s.wantErr(t, protocol.ThreadStart.Name, protocol.ThreadStartParams{Cwd: repo, Workspace: c.ws}, c.want)
	}
	if res := s.startWT(t, repo, &protocol.ThreadStartWorkspace{Mode: "local"}); res.Thread.Workspace.Mode != "local" {
		t.Errorf("plain local start: workspace %s", mustJSON(res.Thread.Workspace))
	}

	s.wantErr(t, protocol.WorktreeList.Name, map[string]any{"cwd": ""}, invalid("cwd"))
	wt := s.startWT(t, repo, worktreeMode())
	for _, params := range []any{map[string]any{}, map[string]any{"cwd": nil}} {
		var res protocol.WorktreeListResult
		s.must(t, protocol.WorktreeList.Name, params, &res)
		if len(res.Worktrees) != 1 || res.Worktrees[0].Path != wt.Thread.Workspace.Path {
			t.Errorf("worktree/list %s: %s, want the one worktree %s", mustJSON(params), mustJSON(res), wt.Thread.Workspace.Path)
		}
	}
}

// TestE2EWorktreesRootInsideProjectRefused checks that a worktrees.root
// inside the project's checkout is not used: the worktree goes to the
// default root and thread/start warns (source settings).
func TestE2EWorktreesRootInsideProjectRefused(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	s := startDiffServer(t, nil)
	agentDir := filepath.Join(s.home, "agent")
	for _, root := range []string{filepath.Join(repo, "wt"), repo} {
		writeFile(t, agentDir, "settings.json", `{"worktrees": {"root": `+mustJSON(root)+`}}`)
		res := s.startWT(t, filepath.Join(repo, "sub"), worktreeMode())
		if got := filepath.Dir(filepath.Dir(res.Thread.Workspace.Path)); got != filepath.Join(agentDir, "worktrees") {
			t.Errorf("root %s: worktree made under %s, want the default root", root, got)
		}
		if !slices.ContainsFunc(res.Warnings, func(w protocol.Warning) bool {
			return w.Source == protocol.WarningSourceSettings && strings.Contains(w.Message, "worktrees.root") && strings.Contains(w.Message, root)
		}) {
			t.Errorf("root %s: no settings warning in %s", root, mustJSON(res.Warnings))
		}
	}
	if exists(repo, "wt") {
		t.Errorf("the refused root %s was created", filepath.Join(repo, "wt"))
	}
	// A root outside the checkout is used, with no warning.
	outside := filepath.Join(s.home, "elsewhere")
	writeFile(t, agentDir, "settings.json", `{"worktrees": {"root": `+mustJSON(outside)+`}}`)
	res := s.startWT(t, repo, worktreeMode())
	if got := filepath.Dir(filepath.Dir(res.Thread.Workspace.Path)); got != outside || len(res.Warnings) != 0 {
		t.Errorf("root outside: worktree under %s, warnings %s", got, mustJSON(res.Warnings))
	}
}

// TestE2ECarryWarnsOfDirtySubmodules checks that carrying local changes
// from a checkout whose submodules have edits inside or a new commit not
// staged warns (source server) naming them, and not a clean submodule.
func TestE2ECarryWarnsOfDirtySubmodules(t *testing.T) {
	t.Parallel()
	repo, _ := wtRepo(t)
	src := filepath.Join(filepath.Dir(repo), "subsrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	fixtureGit(t, src, "init", "-q", "-b", "main")
	writeFile(t, src, "s.txt", "s1\n")
	fixtureGit(t, src, "add", "-A")
	fixtureGit(t, src, "commit", "-q", "-m", "s1")
	for _, m := range []string{"edited", "moved", "clean"} {
		fixtureGit(t, repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", src, m)
	}
	fixtureGit(t, repo, "commit", "-q", "-m", "add subs")
	s := startDiffServer(t, nil)
	carry := worktreeMode(func(w *protocol.ThreadStartWorkspace) { w.CarryLocalChanges = true })
	serverWarnings := func(ws []protocol.Warning) []string {
		var out []string
		for _, w := range ws {
			if w.Source == protocol.WarningSourceServer {
				out = append(out, w.Message)
			}
		}
		return out
	}
	if got := serverWarnings(s.startWT(t, repo, carry).Warnings); len(got) != 0 {
		t.Errorf("clean submodules: warnings %q", got)
	}
	writeFile(t, filepath.Join(repo, "edited"), "s.txt", "wip\n")
	writeFile(t, filepath.Join(repo, "moved"), "s.txt", "s2\n")
	fixtureGit(t, filepath.Join(repo, "moved"), "commit", "-q", "-am", "s2")
	got := serverWarnings(s.startWT(t, repo, carry).Warnings)
	if len(got) != 1 || !strings.Contains(got[0], "edited, moved") || strings.Contains(got[0], "clean") {
		t.Errorf("dirty submodules: server warnings %q, want one naming edited and moved only", got)
	}
}
