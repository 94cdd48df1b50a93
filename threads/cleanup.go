package threads

import (
	"context"
	"runtime"
	"strings"
	"time"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/workspace"
)

// CleanupTimeout bounds an environment's cleanup script: it runs while the
// repository lock is held, so a hanging script must not hold every other
// worktree operation of the repository for long.
const CleanupTimeout = 2 * time.Minute

// cleanupBeforeRemove returns the workspace.DeleteOptions.BeforeRemove hook
// that runs the cleanup script of the environment a managed worktree was
// created with (workspace.Worktree.Environment) in the worktree, right
// before it is removed and after its snapshot is recorded (spec:
// thread/workspace/progress streams "the output of an environment's setup
// or cleanup script to the connection that asked"). The environment is
// re-read from the project's .knightcode/environments.json at that moment
// and the script runs only when the project is trusted (config.TrustStore);
// KNIGHTCODE_WORKTREE_PATH is set (workspace.RunScript, phase "cleanup").
// Its output goes to sub, when not nil, as thread/workspace/progress
// {threadId, phase: "cleanup", output}, once per id in threadIDs, or per
// thread attached to the worktree when threadIDs is nil. The script gets at
// most CleanupTimeout. Nothing here blocks the removal: an unknown environment, an untrusted project and a
// failing script are logged.
func (p *placement) cleanupBeforeRemove(sub Subscriber, threadIDs []string) func(ctx context.Context, wt workspace.Worktree) {
	return func(ctx context.Context, wt workspace.Worktree) {
		if wt.Environment == "" {
			return
		}
		log := p.log.With("path", wt.Path, "environment", wt.Environment)
		envs, err := workspace.ReadEnvironments(wt.ProjectCwd)
		if err != nil {
			log.Warn("environment cleanup skipped: environments unreadable", "err", err)
			return
		}
		var env *workspace.Environment
		for i := range envs {
			if envs[i].Name == wt.Environment {
				env = &envs[i]
			}
		}
		if env == nil {
			log.Info("environment cleanup skipped: the environment no longer exists")
			return
		}
		if env.Cleanup == nil || strings.TrimSpace(env.Cleanup.For(runtime.GOOS)) == "" {
			return
		}
		trusted := false
		if p.trust != nil {
			if trusted, err = p.trust.Trusted(ctx, wt.ProjectCwd); err != nil {
				log.Warn("environment cleanup skipped: project trust unreadable", "err", err)
				return
			}
		}
		if !trusted {
			log.Info("environment cleanup skipped: the project is not trusted", "project", wt.ProjectCwd)
			return
		}
		ids := threadIDs
		if ids == nil {
			ids = wt.ThreadIDs
		}
		// The repository lock is held while the script runs: bound it.
		ctx, cancel := context.WithTimeout(ctx, CleanupTimeout)
		defer cancel()
		err = workspace.RunScript(ctx, workspace.ScriptRun{
			Environment: *env, Phase: workspace.PhaseCleanup, WorktreePath: wt.Path, Trusted: true,
			Progress: func(phase, output string) {
				if sub == nil {
					return
				}
				for _, id := range ids {
					if err := sub.Send(protocol.ThreadWorkspaceProgress.With(protocol.ThreadWorkspaceProgressParams{ThreadID: id, Phase: phase, Output: output})); err != nil {
						log.Debug("workspace progress not delivered", "thread", id, "err", err)
					}
				}
			},
		})
		if err != nil {
			log.Warn("environment cleanup failed; the worktree is removed anyway (its snapshot was taken first)", "err", err)
		}
	}
}
