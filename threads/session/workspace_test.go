package session

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A workspace entry (a handoff's) is stored, read back, and wins over the
// immutable header in Placement; the last one wins; without one the header
// gives the placement.
func TestPlacement(t *testing.T) {
	isolate(t)
	wt := &Workspace{Mode: WorkspaceWorktree, Path: "/w/ab12/p", ProjectCwd: "/p"}
	s, err := Create(t.TempDir(), CreateOptions{Cwd: "/w/ab12/p/sub", Workspace: wt})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff(WorkspaceEntry{Cwd: "/w/ab12/p/sub", Workspace: wt, Home: wt}, s.Transcript().Placement()); diff != "" {
		t.Errorf("header placement (-want +got):\n%s", diff)
	}
	local := WorkspaceEntry{Cwd: "/p/sub", Home: wt, Branch: "knightcode/x"}
	back := WorkspaceEntry{Cwd: "/w/ab12/p/sub", Workspace: wt, Home: wt, Branch: "knightcode/x"}
	mustAppend(t, s, userMsg(t, "hi", 1))
	for _, e := range []WorkspaceEntry{local, back} {
		mustAppend(t, s, Entry{Type: TypeWorkspace, Cwd: e.Cwd, Workspace: e.Workspace, Home: e.Home, Branch: e.Branch})
		tr, err := Read(s.File())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, tr.Placement()); diff != "" {
			t.Errorf("placement read back (-want +got):\n%s", diff)
		}
		if tr.Header.Cwd != "/w/ab12/p/sub" || tr.Header.Workspace == nil {
			t.Errorf("header changed: %+v", tr.Header)
		}
	}
}

// The listing shows where the last handoff moved a thread: cwd,
// workspaceMode and projectCwd come from its latest workspace entry, not
// from the immutable header.
func TestListShowsPlacement(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	wt := &Workspace{Mode: WorkspaceWorktree, Path: "/w/ab12/p", ProjectCwd: "/p"}
	s, err := Create(dir, CreateOptions{Cwd: "/w/ab12/p/sub", Workspace: wt})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAppend(t, s, userMsg(t, "hi", 1))
	var l Lister
	check := func(cwd, mode, project string) {
		t.Helper()
		got, err := l.List(filepath.Dir(s.File()))
		if err != nil || len(got) != 1 {
			t.Fatalf("List: %+v, %v", got, err)
		}
		if got[0].Cwd != cwd || got[0].WorkspaceMode != mode || got[0].ProjectCwd != project {
			t.Errorf("listed cwd %q, workspaceMode %q, projectCwd %q; want %q, %q, %q",
				got[0].Cwd, got[0].WorkspaceMode, got[0].ProjectCwd, cwd, mode, project)
		}
	}
	check("/w/ab12/p/sub", WorkspaceWorktree, "/p")
	mustAppend(t, s, Entry{Type: TypeWorkspace, Cwd: "/p/sub", Home: wt, Branch: "knightcode/x"})
	check("/p/sub", "", "")
	mustAppend(t, s, Entry{Type: TypeWorkspace, Cwd: "/w/ab12/p/sub", Workspace: wt, Home: wt, Branch: "knightcode/x"})
	check("/w/ab12/p/sub", WorkspaceWorktree, "/p")
}
