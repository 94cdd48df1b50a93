package threads

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// settings is what the engine reads from the settings files
// (<agentDir>/settings.json and, for a trusted project, its own, through
// config.Store, the one reader) at each use, so a change applies to the
// next turn, operation or worktree: the retry and compaction of turns, the
// git/* methods' deadlines, the branch prefix of handoffs, worktrees.root
// and worktrees.keep, and (prompt.go) the system prompt with the skills,
// prompt templates and context files of a turn. Settings that cannot be
// read are logged and their defaults apply. It also keeps the startup
// warnings every thread load reports.
type settings struct {
	agentDir     string
	trust        *config.TrustStore // nil: no project is trusted
	systemPrompt string
	warnings     []protocol.Warning // the startup warnings (Config.Warnings)
	log          *slog.Logger
}

// store is the settings reader of the agent directory.
func (s *settings) store() *config.Store { return config.NewStore(s.agentDir, s.trust) }

// startup returns a copy of the startup warnings, never nil.
func (s *settings) startup() []protocol.Warning {
	return append([]protocol.Warning{}, s.warnings...)
}

// values returns the settings values in effect in cwd (global and, for a
// trusted project, the project's); ok is false, and failure logged with
// msg, when the settings cannot be read.
func (s *settings) values(ctx context.Context, cwd, msg string) (v config.Values, ok bool) {
	snap, err := s.store().Read(ctx, cwd)
	if err != nil {
		s.log.Warn(msg, "cwd", cwd, "err", err)
		return config.Values{}, false
	}
	v, _ = snap.Values()
	return v, true
}

// retryPolicy is the retry policy of a turn in cwd: the settings
// retry.provider.maxRetries and retry.provider.maxRetryDelayMs, the
// defaults when they cannot be read.
func (s *settings) retryPolicy(ctx context.Context, cwd string) agent.RetryPolicy {
	p := agent.DefaultRetryPolicy()
	v, ok := s.values(ctx, cwd, "reading the retry settings failed; the defaults are used")
	if !ok {
		return p
	}
	p.MaxRetries = v.Retry.MaxRetries
	if v.Retry.MaxRetryDelayMs > 0 {
		p.MaxDelay = time.Duration(v.Retry.MaxRetryDelayMs) * time.Millisecond
	}
	return p
}

// compaction returns the compaction settings of a turn in cwd on mdl
// (compaction.go): the settings compaction.enabled,
// compaction.reserveTokens and compaction.keepRecentTokens with the
// model's context window; the defaults when the settings cannot be read.
func (s *settings) compaction(ctx context.Context, cwd string, mdl agent.Model) agent.Compaction {
	c := agent.Compaction{
		Enabled: true, ContextWindow: mdl.ContextWindow,
		ReserveTokens: config.DefaultCompactionReserveTokens, KeepRecentTokens: config.DefaultCompactionKeepRecentTokens,
	}
	v, ok := s.values(ctx, cwd, "reading the compaction settings failed; the defaults are used")
	if !ok {
		return c
	}
	c.Enabled = v.Compaction.Enabled
	c.ReserveTokens = v.Compaction.ReserveTokens
	c.KeepRecentTokens = v.Compaction.KeepRecentTokens
	return c
}

// gitDeadlines returns the deadlines of the git/* methods' child processes
// in cwd (the settings git.hookTimeoutSeconds and git.ghTimeoutSeconds),
// the defaults when the settings cannot be read.
func (s *settings) gitDeadlines(ctx context.Context, cwd string) config.GitValues {
	v, ok := s.values(ctx, cwd, "reading the git deadline settings failed; the defaults are used")
	if !ok {
		return config.DefaultGitValues()
	}
	return v.Git
}

// branchPrefix is the worktrees.branchPrefix setting of the project of
// cwd (a trusted project's own setting wins over the global one; "" for
// the handoff package's default when the settings cannot be read).
func (s *settings) branchPrefix(ctx context.Context, cwd string) string {
	v, ok := s.values(ctx, cwd, "reading worktrees.branchPrefix failed; the default is used")
	if !ok {
		return ""
	}
	return v.Worktrees.BranchPrefix
}

// DefaultWorktreesKeep is worktrees.keep when the setting is absent: after
// each worktree creation, a project keeps its 20 most recently used live
// managed worktrees and the others are snapshotted and removed (spec: "Past
// worktrees.keep worktrees, the least recently used are pruned"). Twenty
// covers a busy day of parallel threads without letting checkouts pile up
// on disk; loaded, locked and nested-repository worktrees never count
// against anyone, as they are never pruned.
const DefaultWorktreesKeep = config.DefaultWorktreesKeep

// worktreeSettings are the worktrees.* settings of <agentDir>/settings.json:
//
//	{"worktrees": {"root": "~/worktrees", "keep": 20}}
//
// Root is where new managed worktrees go ("" for the default
// <agentDir>/worktrees); a leading ~ is the home directory and a relative
// path is relative to the agent directory. Keep is the number of live
// managed worktrees each project keeps (an integer >= 0, default
// DefaultWorktreesKeep). The file is read at every worktree creation, so a
// change applies to the next one.
type worktreeSettings struct {
	Root string
	Keep int
}

// worktrees reads the worktrees.* settings through config's one
// settings reader (config.Store.Read, Snapshot.Values). Malformed values
// are ignored (their default applies) with a warning of source "settings";
// a warning the server already reported at startup (a malformed file) is
// not repeated. An unreadable file is a warning too: the defaults apply.
func (s *settings) worktrees(ctx context.Context) (worktreeSettings, []protocol.Warning) {
	st := worktreeSettings{Keep: DefaultWorktreesKeep}
	agentDir := s.agentDir
	var warnings []protocol.Warning
	warn := func(w protocol.Warning) {
		if !slices.Contains(s.warnings, w) {
			warnings = append(warnings, w)
		}
	}
	snap, err := s.store().Read(ctx, "")
	if err != nil {
		warn(protocol.Warning{Message: fmt.Sprintf("cannot read settings: %v", err), Source: protocol.WarningSourceSettings,
			Path: filepath.Join(agentDir, config.SettingsFile)})
		return st, warnings
	}
	for _, w := range snap.Errors {
		warn(protocol.Warning(w))
	}
	v, vw := snap.Values()
	for _, w := range vw {
		warn(protocol.Warning(w))
	}
	st.Keep = v.Worktrees.Keep
	if v.Worktrees.Root != filepath.Join(agentDir, "worktrees") {
		st.Root = v.Worktrees.Root
	}
	return st, warnings
}

// resolveRoot makes the worktrees.root setting absolute: "~" and "~/..."
// against the home directory, other relative paths against agentDir.
func resolveRoot(agentDir, root string) (string, error) {
	if root == "~" || strings.HasPrefix(root, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		root = filepath.Join(home, root[1:])
	}
	if !filepath.IsAbs(root) {
		root = filepath.Join(agentDir, root)
	}
	return filepath.Clean(root), nil
}
