package threads

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/rpc/protocol"
)

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

// worktreeSettings reads the worktrees.* settings through config's one
// settings reader (config.Store.Read, Snapshot.Values). Malformed values
// are ignored (their default applies) with a warning of source "settings";
// a warning the server already reported at startup (a malformed file) is
// not repeated. An unreadable file is a warning too: the defaults apply.
func (m *Manager) worktreeSettings(ctx context.Context) (worktreeSettings, []protocol.Warning) {
	st := worktreeSettings{Keep: DefaultWorktreesKeep}
	agentDir := m.cfg.Dirs.AgentDir
	var warnings []protocol.Warning
	warn := func(w protocol.Warning) {
		if !slices.Contains(m.cfg.Warnings, w) {
			warnings = append(warnings, w)
		}
	}
	snap, err := config.NewStore(agentDir, m.cfg.Trust).Read(ctx, "")
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
