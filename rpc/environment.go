package rpc

import (
	"context"
	"path/filepath"

	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/workspace"
)

// The environment family: environment/list and environment/save (spec:
// Method reference). A directory's project is workspace.Manager.Project's:
// at a managed worktree's cwd, the project it was made from, so a worktree
// reads and writes its project's environments.

// RegisterEnvironmentMethods installs the environment/list and
// environment/save handlers on srv, each calling core's workspace and trust
// store.
func RegisterEnvironmentMethods(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.EnvironmentList, core.environmentList)
	jsonrpc.Handle(srv, protocol.EnvironmentSave, core.environmentSave)
}

// environmentList answers environment/list: the environments of cwd's
// project (<project>/.knightcode/environments.json; none without the file)
// and whether the project is trusted (explicitly: undecided is not).
// Errors: invalidParams "cwd" when it is not an absolute path of an
// existing directory; a file that is not valid JSON (internal, never
// rewritten by a read).
func (c Core) environmentList(ctx context.Context, _ *jsonrpc.Conn, p protocol.EnvironmentListParams) (protocol.EnvironmentListResult, error) {
	if err := absDir("cwd", p.Cwd); err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	project, err := c.Workspace.Project(ctx, p.Cwd)
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
	if res.Trusted, err = c.Trust.Trusted(ctx, project); err != nil {
		return protocol.EnvironmentListResult{}, err
	}
	return res, nil
}

// environmentSave answers environment/save: it writes the whole list to
// cwd's project's .knightcode/environments.json (atomically, keeping the
// file's other top-level keys). Saving runs nothing, so it needs no trust.
// Errors: invalidParams "cwd"; invalidParams "environments" (more than 50)
// or "environments[i].name" (empty, or the name of an earlier entry); a
// current file that is not valid JSON (left as it is).
func (c Core) environmentSave(ctx context.Context, _ *jsonrpc.Conn, p protocol.EnvironmentSaveParams) (protocol.EnvironmentSaveResult, error) {
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
	project, err := c.Workspace.Project(ctx, p.Cwd)
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

// absDir requires an absolute path for field.
func absDir(field, dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return protocol.InvalidParams(field, "must be an absolute path, got %q", dir)
	}
	return nil
}
