package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/safefile"
)

// TrustFile is the trust store's file name in the agent directory.
const TrustFile = "trust.json"

// ProjectDir is the project-local resources folder whose presence makes an
// undecided project need a trust decision.
const ProjectDir = ".knightcode"

// trustLockWait bounds the wait for the trust store's lock.
const trustLockWait = 30 * time.Second

// ProjectFunc returns the project dir belongs to: the absolute path a trust
// decision is kept under (for a managed worktree, its project).
type ProjectFunc func(ctx context.Context, dir string) (string, error)

// Trust is a trust decision as project/trust/read returns it.
type Trust struct {
	// Trusted is true or false once decided, nil when undecided.
	Trusted *bool `json:"trusted"`
	// NeedsTrust: undecided, and the project has project-local resources
	// (a .knightcode folder) that would need a decision to load.
	NeedsTrust bool `json:"needsTrust"`
	// Project is the path the decision is kept under.
	Project string `json:"project"`
}

// TrustStore is the server-owned trust store, <agentDir>/trust.json:
// {"projects": {"<absolute path>": true|false}}. Writes are a
// read-modify-write under a gofrs/flock on trust.json.lock, written
// atomically (temp file, fsync, rename); a file that is not valid JSON is
// reported and never overwritten. Safe for concurrent use.
type TrustStore struct {
	path    string
	project ProjectFunc
}

// NewTrustStore returns the trust store of agentDir. project resolves a
// directory to its project; nil keys decisions by the directory itself.
func NewTrustStore(agentDir string, project ProjectFunc) *TrustStore {
	return &TrustStore{path: filepath.Join(agentDir, TrustFile), project: project}
}

// Path is the trust store file's path.
func (s *TrustStore) Path() string { return s.path }

type trustFile struct {
	Projects map[string]bool `json:"projects"`
	// Plugins are the plugin trust records by identity (EXTENSIBILITY.md
	// §4 "Storage"): never read from a settings file.
	Plugins map[string]*PluginTrust `json:"plugins,omitempty"`
}

// load reads the trust store (safefile.ReadFile, at most
// safefile.ConfigLimit); a missing file is an empty store.
func (s *TrustStore) load() (*trustFile, error) {
	data, err := safefile.ReadFile(s.path, safefile.ConfigLimit)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("config: read trust store: %w", err)
	}
	return s.parse(data)
}

// parse decodes the trust store's bytes; nil or blank is an empty store.
func (s *TrustStore) parse(data []byte) (*trustFile, error) {
	f := &trustFile{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, f); err != nil {
			return nil, fmt.Errorf("config: trust store %s is corrupt (left as it is): %w", s.path, err)
		}
	}
	if f.Projects == nil {
		f.Projects = map[string]bool{}
	}
	if f.Plugins == nil {
		f.Plugins = map[string]*PluginTrust{}
	}
	return f, nil
}

// resolve checks cwd is an existing directory and returns its project.
func (s *TrustStore) resolve(ctx context.Context, cwd string) (string, error) {
	if cwd == "" {
		return "", &ParamError{Field: "cwd", Message: "is required"}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", &ParamError{Field: "cwd", Message: err.Error()}
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return "", &ParamError{Field: "cwd", Message: fmt.Sprintf("%s is not an existing directory", cwd)}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if s.project == nil {
		return abs, nil
	}
	return s.project(ctx, abs)
}

// Read returns the decision for cwd's project (project/trust/read). At a
// managed worktree's cwd it is its project's decision (the ProjectFunc
// resolves it). Errors: [*ParamError] (field "cwd") when cwd is not an
// existing directory; the ProjectFunc's error; a corrupt or unreadable
// store.
func (s *TrustStore) Read(ctx context.Context, cwd string) (Trust, error) {
	project, err := s.resolve(ctx, cwd)
	if err != nil {
		return Trust{}, err
	}
	f, err := s.load()
	if err != nil {
		return Trust{}, err
	}
	t := Trust{Project: project}
	if v, ok := f.Projects[project]; ok {
		t.Trusted = &v
	} else if st, err := os.Stat(filepath.Join(project, ProjectDir)); err == nil && st.IsDir() {
		t.NeedsTrust = true
	}
	return t, nil
}

// Trusted reports whether cwd's project is explicitly trusted (undecided
// is not trusted).
func (s *TrustStore) Trusted(ctx context.Context, cwd string) (bool, error) {
	t, err := s.Read(ctx, cwd)
	if err != nil {
		return false, err
	}
	return t.Trusted != nil && *t.Trusted, nil
}

// Set records trusted for cwd's project (project/trust/set) and returns
// the decision as now stored. At a managed worktree's cwd the decision is
// recorded for its project. Errors: as [TrustStore.Read], and write
// failures.
func (s *TrustStore) Set(ctx context.Context, cwd string, trusted bool) (Trust, error) {
	project, err := s.resolve(ctx, cwd)
	if err != nil {
		return Trust{}, err
	}
	err = s.update(ctx, func(f *trustFile) error {
		f.Projects[project] = trusted
		return nil
	})
	if err != nil {
		return Trust{}, err
	}
	return Trust{Trusted: &trusted, Project: project}, nil
}

// update is the store's one read-modify-write: edit runs on the parsed
// file under the lock on trust.json.lock and the result is written
// atomically; an error from edit writes nothing.
func (s *TrustStore) update(ctx context.Context, edit func(*trustFile) error) error {
	lctx, cancel := context.WithTimeout(ctx, trustLockWait)
	defer cancel()
	return atomicfile.Update(lctx, s.path+".lock", s.path, 0o600, func(old []byte) ([]byte, error) {
		f, err := s.parse(old)
		if err != nil {
			return nil, err
		}
		if err := edit(f); err != nil {
			return nil, err
		}
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(data, '\n'), nil
	})
}
