package threads

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/gittest"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
	"github.com/knightcode/knightcode/workspace"
)

// newWorktreeEnv is newEnv with a workspace manager and a trust store in
// the agent directory.
func newWorktreeEnv(t *testing.T, scripts map[string]string) *env {
	t.Helper()
	return newEnvWith(t, scripts, 0, func(e *env, cfg *Config) {
		ws := workspace.New(cfg.Git, e.dirs.AgentDir)
		cfg.Workspace = ws
		cfg.Trust = config.NewTrustStore(e.dirs.AgentDir, ws.Project)
	})
}

// worktreeRepo is a repository with a.txt and sub/b.txt committed.
func worktreeRepo(t *testing.T) string {
	t.Helper()
	repo := gittest.Init(t)
	gittest.Write(t, repo, "a.txt", "a\n")
	gittest.Write(t, repo, "sub/b.txt", "b\n")
	gittest.CommitAll(t, repo, "base")
	return repo
}

func (e *env) startIn(t *testing.T, sub Subscriber, cwd string, ws WorkspaceOptions) Opened {
	t.Helper()
	res, err := e.m.Start(context.Background(), sub, StartOptions{Cwd: cwd, ApprovalMode: protocol.ApprovalFullAccess, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func snapshotRefs(t *testing.T, repo string) []string {
	t.Helper()
	return strings.Fields(gittest.Git(t, repo, "for-each-ref", "--format=%(refname)", workspace.SnapshotRefPrefix))
}

func TestWorktreeSettings(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name, file string
		want       worktreeSettings
		warnings   int
	}{
		{name: "no file", want: worktreeSettings{Keep: DefaultWorktreesKeep}},
		{name: "no key", file: `{"sessionDir": "x"}`, want: worktreeSettings{Keep: DefaultWorktreesKeep}},
		{name: "both", file: `{"worktrees": {"root": "/abs/wt", "keep": 3}}`, want: worktreeSettings{Root: "/abs/wt", Keep: 3}},
		{name: "relative root and zero keep", file: `{"worktrees": {"root": "wt", "keep": 0}}`, want: worktreeSettings{Root: "AGENT/wt", Keep: 0}},
		{name: "home root", file: `{"worktrees": {"root": "~/wt"}}`, want: worktreeSettings{Root: "HOME/wt", Keep: DefaultWorktreesKeep}},
		{name: "nulls", file: `{"worktrees": {"root": null, "keep": null}}`, want: worktreeSettings{Keep: DefaultWorktreesKeep}},
		{name: "negative keep", file: `{"worktrees": {"keep": -1}}`, want: worktreeSettings{Keep: DefaultWorktreesKeep}, warnings: 1},
		{name: "fractional keep", file: `{"worktrees": {"keep": 1.5}}`, want: worktreeSettings{Keep: DefaultWorktreesKeep}, warnings: 1},
		{name: "root not a string", file: `{"worktrees": {"root": 7, "keep": 4}}`, want: worktreeSettings{Keep: 4}, warnings: 1},
		{name: "not an object", file: `{"worktrees": true}`, want: worktreeSettings{Keep: DefaultWorktreesKeep}, warnings: 1},
		{name: "malformed file", file: `{"worktrees": `, want: worktreeSettings{Keep: DefaultWorktreesKeep}, warnings: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			agentDir := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(agentDir, session.SettingsFile), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			m := New(Config{Dirs: session.Dirs{AgentDir: agentDir}})
			got, warnings := m.settings.worktrees(context.Background())
			want := tt.want
			want.Root = strings.NewReplacer("AGENT", agentDir, "HOME", home).Replace(want.Root)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("settings (-got +want):\n%s", diff)
			}
			if len(warnings) != tt.warnings || slices.ContainsFunc(warnings, func(w protocol.Warning) bool { return w.Source != "settings" }) {
				t.Errorf("warnings %+v, want %d of source settings", warnings, tt.warnings)
			}
			// A warning the server reported at startup is not repeated.
			m = New(Config{Dirs: session.Dirs{AgentDir: agentDir}, Warnings: warnings})
			if _, again := m.settings.worktrees(context.Background()); len(again) != 0 {
				t.Errorf("startup warnings repeated: %+v", again)
			}
		})
	}
}

// TestWorktreeStartJoinArchiveDelete follows a worktree through its
// threads: creation from a subdirectory (saved at once, attached in the
// registry), a second thread joining it from its cwd, an archive that keeps
// the worktree while the other thread is loaded, one that deletes it, and
// deletes that forget it (and its snapshot ref) with the last thread.
func TestWorktreeStartJoinArchiveDelete(t *testing.T) {
	repo := worktreeRepo(t)
	e := newWorktreeEnv(t, nil)
	ctx := context.Background()
	sub := newRecorder()
	reg := e.m.cfg.Workspace.Registry()

	first := e.startIn(t, sub, filepath.Join(repo, "sub"), WorkspaceOptions{Mode: protocol.WorkspaceWorktree})
	ws := first.Thread.Workspace
	if ws.Mode != protocol.WorkspaceWorktree || ws.ProjectCwd != repo || first.Thread.Cwd != filepath.Join(ws.Path, "sub") || first.Thread.SessionFile == "" {
		t.Fatalf("started %+v", first.Thread)
	}
	if h := mustHeader(t, first.Thread.SessionFile); h.Workspace == nil || h.Workspace.Path != ws.Path || h.Cwd != first.Thread.Cwd {
		t.Errorf("session header %+v", h)
	}
	// Joining: mode local inside the worktree, with options that do not
	// apply (a warning says so).
	second := e.startIn(t, sub, filepath.Join(ws.Path, "sub"), WorkspaceOptions{Mode: protocol.WorkspaceLocal, BaseRef: "HEAD"})
	if second.Thread.Workspace != ws || !slices.ContainsFunc(second.Warnings, func(w protocol.Warning) bool { return strings.Contains(w.Message, "were not used") }) {
		t.Errorf("joined %+v, warnings %+v", second.Thread.Workspace, second.Warnings)
	}
	if w, _, _ := reg.Get(ws.Path); !slices.Equal(w.ThreadIDs, []string{first.Thread.ID, second.Thread.ID}) {
		t.Errorf("registry threads %v", w.ThreadIDs)
	}
	inUse := func(path string) bool {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		return loadedIn(e.m.threads, path)
	}
	if !inUse(ws.Path) || inUse(repo) {
		t.Errorf("in use (%s) = %v, (%s) = %v", ws.Path, inUse(ws.Path), repo, inUse(repo))
	}

	// Archive the first: the second is loaded there, so the worktree stays.
	if err := e.m.Archive(ctx, nil, first.Thread.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ws.Path); err != nil {
		t.Fatalf("worktree removed while a thread is loaded in it: %v", err)
	}
	if _, err := e.m.Checkout(first.Thread.ID); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("the archived thread is still loaded: %v", err)
	}
	// Archive the second: now it is deleted after a snapshot.
	if err := e.m.Archive(ctx, nil, second.Thread.ID); err != nil {
		t.Fatal(err)
	}
	if w, _, _ := reg.Get(ws.Path); !w.Deleted || w.Snapshot == "" {
		t.Errorf("registry after archive %+v", w)
	}
	if got := snapshotRefs(t, repo); len(got) != 1 {
		t.Errorf("snapshot refs %v", got)
	}
	read, err := e.m.Read(ctx, first.Thread.ID, "")
	if err != nil || !read.Thread.Workspace.Deleted || filepath.Base(filepath.Dir(read.Thread.SessionFile)) != ArchiveDirName {
		t.Errorf("read of an archived thread: %+v, %v", read.Thread, err)
	}

	// Deleting one thread keeps the worktree for the other; the last one
	// forgets it and its snapshot.
	if err := e.m.Delete(ctx, first.Thread.ID); err != nil {
		t.Fatal(err)
	}
	if w, ok, _ := reg.Get(ws.Path); !ok || !slices.Equal(w.ThreadIDs, []string{second.Thread.ID}) || len(snapshotRefs(t, repo)) != 1 {
		t.Errorf("after the first delete: %+v, %v; refs %v", w, ok, snapshotRefs(t, repo))
	}
	from := e.bcast.mark()
	if err := e.m.Delete(ctx, second.Thread.ID); err != nil {
		t.Fatal(err)
	}
	e.bcast.wait(t, &from, protocol.ThreadDeleted.Name, ofThread(second.Thread.ID))
	if _, ok, _ := reg.Get(ws.Path); ok || len(snapshotRefs(t, repo)) != 0 {
		t.Errorf("after the last delete: registered %v, refs %v", ok, snapshotRefs(t, repo))
	}
}

func mustHeader(t *testing.T, path string) session.Header {
	t.Helper()
	tr, err := session.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Header
}

// TestArchiveKeepsANestedRepository archives a worktree thread whose
// worktree holds a nested repository: the archive goes on, the worktree is
// kept (a snapshot could not hold it).
func TestArchiveKeepsANestedRepository(t *testing.T) {
	repo := worktreeRepo(t)
	e := newWorktreeEnv(t, nil)
	res := e.startIn(t, newRecorder(), repo, WorkspaceOptions{Mode: protocol.WorkspaceWorktree})
	wt := res.Thread.Workspace.Path
	gittest.Git(t, wt, "init", "-q", "inner")
	if err := e.m.Archive(context.Background(), nil, res.Thread.ID); err != nil {
		t.Fatal(err)
	}
	if w, _, _ := e.m.cfg.Workspace.Registry().Get(wt); w.Deleted {
		t.Errorf("a worktree holding a nested repository was deleted")
	}
	if _, err := os.Stat(filepath.Join(wt, "inner", ".git")); err != nil {
		t.Errorf("nested repository gone: %v", err)
	}
	if len(snapshotRefs(t, repo)) != 0 {
		t.Errorf("snapshot written for a refused deletion")
	}
}

// TestArchiveRefusalsKeepTheThread checks that a busy thread is not
// archived or deleted (it stays loaded and subscribed), and that a thread
// never saved is saved by its archive.
func TestArchiveRefusalsKeepTheThread(t *testing.T) {
	repo := worktreeRepo(t)
	flag := filepath.Join(t.TempDir(), "go")
	e := newWorktreeEnv(t, map[string]string{"wait": scriptJSON(waitScript(flag), map[string]any{"text": "done"})})
	ctx := context.Background()
	sub := newRecorder()
	busy := e.start(t, sub, repo, "wait")
	from := sub.mark()
	if _, _, err := e.m.StartTurn(ctx, sub, busy, Input{Text: "wait"}, TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	sub.wait(t, &from, protocol.ItemStarted.Name, isTool(busy))
	if err := e.m.Archive(ctx, nil, busy); !errors.Is(err, ErrTurnInProgress) {
		t.Errorf("Archive of a running thread: %v", err)
	}
	if err := e.m.Delete(ctx, busy); !errors.Is(err, ErrTurnInProgress) {
		t.Errorf("Delete of a running thread: %v", err)
	}
	touch(t, flag)
	// Still loaded and subscribed: turn/completed reaches subscribers only.
	sub.wait(t, &from, protocol.TurnCompletedNotification.Name, ofThread(busy))
	if err := e.m.Delete(ctx, busy); !errors.Is(err, ErrThreadNotArchived) {
		t.Errorf("Delete of a loaded thread: %v, want ErrThreadNotArchived", err)
	}
	if _, err := e.m.Checkout(busy); err != nil {
		t.Errorf("a refused delete unloaded the thread: %v", err)
	}

	unsaved := e.start(t, sub, repo, "")
	if err := e.m.Archive(ctx, nil, unsaved); err != nil {
		t.Fatalf("Archive of an unsaved thread: %v", err)
	}
	rows, err := e.m.List(ListOptions{Archived: true})
	if err != nil || len(rows.Threads) != 1 || rows.Threads[0].ID != unsaved {
		t.Errorf("archived listing %+v, %v", rows, err)
	}
	if _, err := e.m.Unarchive(ctx, busy); !errors.Is(err, ErrThreadNotArchived) {
		t.Errorf("Unarchive of a thread not archived: %v", err)
	}
	if _, err := e.m.Unarchive(ctx, "nope"); !errors.Is(err, ErrThreadNotFound) {
		t.Errorf("Unarchive of an unknown thread: %v", err)
	}
}

// TestFailedWorktreeStartLeavesNothing makes a start fail after its
// worktree was created (the server is shutting down): the worktree, its
// registration and any snapshot are gone.
func TestFailedWorktreeStartLeavesNothing(t *testing.T) {
	repo := worktreeRepo(t)
	gittest.Write(t, repo, "a.txt", "changed\n")
	e := newWorktreeEnv(t, nil)
	if err := e.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := e.m.Start(context.Background(), newRecorder(), StartOptions{Cwd: repo,
		Workspace: WorkspaceOptions{Mode: protocol.WorkspaceWorktree, CarryLocalChanges: true}})
	if !errors.Is(err, errClosing) {
		t.Fatalf("Start while shutting down: %v", err)
	}
	if list, _ := e.m.cfg.Workspace.Registry().List(); len(list) != 0 {
		t.Errorf("registry keeps %+v", list)
	}
	if refs := snapshotRefs(t, repo); len(refs) != 0 {
		t.Errorf("refs left: %v", refs)
	}
	if ents, _ := os.ReadDir(e.m.cfg.Workspace.DefaultRoot()); len(ents) != 0 {
		t.Errorf("worktrees root keeps %v", ents)
	}
	if out := gittest.Git(t, repo, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("git worktrees left:\n%s", out)
	}
}
