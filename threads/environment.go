package threads

import (
	"context"
	"path/filepath"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/workspace"
)

// Environments and project trust (spec: Method reference,
// environment/list, environment/save, project/trust/read and
// project/trust/set). A directory's project is workspace.Manager.Project's:
// at a managed worktree's cwd, the project it was made from, so a worktree
// reads and writes its project's environments and trust decision.

// absDir requires an absolute path for field.
func absDir(field, dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return protocol.InvalidParams(field, "must be an absolute path, got %q", dir)
	}
	return nil
}

// ListEnvironments answers environment/list: the environments of cwd's
// project (<project>/.knightcode/environments.json; none without the file)
// and whether the project is trusted (explicitly: undecided is not).
// Errors: invalidParams "cwd" when it is not an absolute path of an
// existing directory; a file that is not valid JSON (internal, never
// rewritten by a read).
func (m *Manager) ListEnvironments(ctx context.Context, p protocol.EnvironmentListParams) (protocol.EnvironmentListResult, error) {
	ws, err := m.workspaceManager("cwd")
	if err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	project, err := ws.Project(ctx, p.Cwd)
	if err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	envs, err := workspace.ReadEnvironments(project)
	if err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	res := protocol.EnvironmentListResult{Environments: make([]protocol.Environment, 0, len(envs))}
	for _, e := range envs {
		res.Environments = append(res.Environments, wireEnvironment(e))
	}
	if m.cfg.Trust != nil {
		if res.Trusted, err = m.cfg.Trust.Trusted(ctx, project); err != nil {
			return protocol.EnvironmentListResult{}, err
		}
	}
	return res, nil
}

// SaveEnvironments answers environment/save: it writes the whole list to
// cwd's project's .knightcode/environments.json (atomically, keeping the
// file's other top-level keys). Saving runs nothing, so it needs no trust.
// Errors: invalidParams "cwd"; invalidParams "environments" (more than 50)
// or "environments[i].name" (empty, or the name of an earlier entry); a
// current file that is not valid JSON (left as it is).
func (m *Manager) SaveEnvironments(ctx context.Context, p protocol.EnvironmentSaveParams) (protocol.EnvironmentSaveResult, error) {
	ws, err := m.workspaceManager("cwd")
	if err != nil {
		return protocol.EnvironmentSaveResult{}, err
	}
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.EnvironmentSaveResult{}, err
	}
	envs := make([]workspace.Environment, len(p.Environments))
	for i, e := range p.Environments {
		envs[i] = workspace.Environment{Name: e.Name, Setup: workspace.Script(e.Setup)}
		if e.Cleanup != nil {
			c := workspace.Script(*e.Cleanup)
			envs[i].Cleanup = &c
		}
	}
	// Validate before resolving the project, so a bad list names its
	// field whatever the directory.
	if _, err := workspace.ValidateEnvironments(envs); err != nil {
		return protocol.EnvironmentSaveResult{}, err
	}
	project, err := ws.Project(ctx, p.Cwd)
	if err != nil {
		return protocol.EnvironmentSaveResult{}, err
	}
	if _, err := workspace.SaveEnvironments(project, envs); err != nil {
		return protocol.EnvironmentSaveResult{}, err
	}
	return protocol.EnvironmentSaveResult{}, nil
}

func wireEnvironment(e workspace.Environment) protocol.Environment {
	out := protocol.Environment{Name: e.Name, Setup: protocol.EnvironmentScript(e.Setup)}
	if e.Cleanup != nil {
		c := protocol.EnvironmentScript(*e.Cleanup)
		out.Cleanup = &c
	}
	return out
}

// ReadTrust answers project/trust/read from the server-owned trust store
// (config.TrustStore): the decision of cwd's project (true, false or null
// when undecided), whether an undecided project has project-local
// resources needing one, and the project path. Errors: invalidParams
// "cwd" (config.ParamError) when it is not an existing directory.
func (m *Manager) ReadTrust(ctx context.Context, p protocol.ProjectTrustReadParams) (protocol.ProjectTrustReadResult, error) {
	if m.cfg.Trust == nil {
		return protocol.ProjectTrustReadResult{}, protocol.InvalidParams("cwd", "the trust store is not available in this server")
	}
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.ProjectTrustReadResult{}, err
	}
	t, err := m.cfg.Trust.Read(ctx, p.Cwd)
	if err != nil {
		return protocol.ProjectTrustReadResult{}, err
	}
	return protocol.ProjectTrustReadResult{Trusted: t.Trusted, NeedsTrust: t.NeedsTrust, Project: t.Project}, nil
}

// SetTrust answers project/trust/set: it records the decision for cwd's
// project (at a managed worktree's cwd, its project). Loaded threads are
// not rebuilt; the next worktree setup reads it. Errors: invalidParams
// "cwd" when it is not an existing directory; filesystem failures.
func (m *Manager) SetTrust(ctx context.Context, p protocol.ProjectTrustSetParams) (protocol.ProjectTrustSetResult, error) {
	if m.cfg.Trust == nil {
		return protocol.ProjectTrustSetResult{}, protocol.InvalidParams("cwd", "the trust store is not available in this server")
	}
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.ProjectTrustSetResult{}, err
	}
	if _, err := m.cfg.Trust.Set(ctx, p.Cwd, p.Trusted); err != nil {
		return protocol.ProjectTrustSetResult{}, err
	}
	return protocol.ProjectTrustSetResult{}, nil
}
