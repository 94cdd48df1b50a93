package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var ctx = context.Background()

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ptr(b bool) *bool { return &b }

func TestTrustStoreReadAndSet(t *testing.T) {
	agent := tempDir(t)
	project := tempDir(t)
	withResources := tempDir(t)
	if err := os.Mkdir(filepath.Join(withResources, ProjectDir), 0o755); err != nil {
		t.Fatal(err)
	}
	// A stand-in for workspace.(*Manager).Project: worktree -> project.
	worktree := tempDir(t)
	resolve := func(_ context.Context, dir string) (string, error) {
		if dir == worktree || strings.HasPrefix(dir, worktree+"/") {
			return withResources, nil
		}
		return dir, nil
	}
	s := NewTrustStore(agent, resolve)

	steps := []struct {
		name    string
		set     *bool // nil: read only
		cwd     string
		want    Trust
		wantErr string // ParamError field
	}{
		{name: "undecided, no project resources", cwd: project, want: Trust{Project: project}},
		{name: "undecided with .knightcode", cwd: withResources, want: Trust{Project: withResources, NeedsTrust: true}},
		{name: "managed worktree reads its project", cwd: worktree, want: Trust{Project: withResources, NeedsTrust: true}},
		{name: "set at the worktree records the project", set: ptr(true), cwd: worktree, want: Trust{Project: withResources, Trusted: ptr(true)}},
		{name: "project now trusted", cwd: withResources, want: Trust{Project: withResources, Trusted: ptr(true)}},
		{name: "distrust", set: ptr(false), cwd: project, want: Trust{Project: project, Trusted: ptr(false)}},
		{name: "read distrust", cwd: project, want: Trust{Project: project, Trusted: ptr(false)}},
		{name: "missing cwd", cwd: filepath.Join(project, "missing"), wantErr: "cwd"},
		{name: "set at a missing cwd", set: ptr(true), cwd: filepath.Join(project, "missing"), wantErr: "cwd"},
		{name: "file as cwd", cwd: filepath.Join(agent, TrustFile), wantErr: "cwd"},
	}
	for _, st := range steps {
		var got Trust
		var err error
		if st.set != nil {
			got, err = s.Set(ctx, st.cwd, *st.set)
		} else {
			got, err = s.Read(ctx, st.cwd)
		}
		if st.wantErr != "" {
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Field != st.wantErr {
				t.Errorf("%s: err = %v, want ParamError %s", st.name, err, st.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if diff := cmp.Diff(got, st.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", st.name, diff)
		}
	}
	raw, err := os.ReadFile(filepath.Join(agent, TrustFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("{\n  \"projects\": {\n    %q: false,\n    %q: true\n  }\n}\n", project, withResources)
	if project > withResources {
		want = fmt.Sprintf("{\n  \"projects\": {\n    %q: true,\n    %q: false\n  }\n}\n", withResources, project)
	}
	if string(raw) != want {
		t.Errorf("trust.json =\n%s\nwant\n%s", raw, want)
	}
	if ok, err := s.Trusted(ctx, worktree); err != nil || !ok {
		t.Errorf("Trusted(worktree) = %v, %v", ok, err)
	}
}

func TestTrustStoreSymlinkedCwd(t *testing.T) {
	agent := tempDir(t)
	project := tempDir(t)
	link := filepath.Join(tempDir(t), "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	s := NewTrustStore(agent, nil)
	if _, err := s.Set(ctx, link, true); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, Trust{Project: project, Trusted: ptr(true)}); diff != "" {
		t.Errorf("(-got +want):\n%s", diff)
	}
}

func TestTrustStoreConcurrentSets(t *testing.T) {
	agent := tempDir(t)
	const n = 20
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = tempDir(t)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := NewTrustStore(agent, nil).Set(ctx, dirs[i], i%2 == 0)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s := NewTrustStore(agent, nil)
	for i, d := range dirs {
		got, err := s.Read(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if got.Trusted == nil || *got.Trusted != (i%2 == 0) {
			t.Errorf("%s: trusted = %v, want %v (lost update)", d, got.Trusted, i%2 == 0)
		}
	}
}

func TestTrustStoreCorruptFileIsNotOverwritten(t *testing.T) {
	agent := tempDir(t)
	p := filepath.Join(agent, TrustFile)
	if err := os.WriteFile(p, []byte("{oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := NewTrustStore(agent, nil)
	if _, err := s.Read(ctx, agent); err == nil {
		t.Errorf("Read of a corrupt store succeeded")
	}
	if _, err := s.Set(ctx, agent, true); err == nil {
		t.Errorf("Set over a corrupt store succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "{oops" {
		t.Errorf("corrupt store overwritten: %q", b)
	}
}

func TestTrustStoreProjectFuncError(t *testing.T) {
	boom := errors.New("boom")
	s := NewTrustStore(tempDir(t), func(context.Context, string) (string, error) { return "", boom })
	if _, err := s.Read(ctx, tempDir(t)); !errors.Is(err, boom) {
		t.Errorf("Read: %v, want the ProjectFunc's error", err)
	}
}
