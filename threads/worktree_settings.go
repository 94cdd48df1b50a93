package threads

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// DefaultWorktreesKeep is worktrees.keep when the setting is absent: after
// each worktree creation, a project keeps its 20 most recently used live
// managed worktrees and the others are snapshotted and removed (spec: "Past
// worktrees.keep worktrees, the least recently used are pruned"). Twenty
// covers a busy day of parallel threads without letting checkouts pile up
// on disk; loaded, locked and nested-repository worktrees never count
// against anyone, as they are never pruned.
const DefaultWorktreesKeep = 20

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

// worktreeSettings reads the worktrees.* settings through session's
// settings reader. Malformed values are ignored (their default applies)
// with a warning of source "settings"; a warning the server already
// reported at startup (a malformed file) is not repeated.
func (m *Manager) worktreeSettings() (worktreeSettings, []protocol.Warning) {
	st := worktreeSettings{Keep: DefaultWorktreesKeep}
	agentDir := m.cfg.Dirs.AgentDir
	path := filepath.Join(agentDir, session.SettingsFile)
	raw, sw := session.ReadSettings(path)
	var warnings []protocol.Warning
	warn := func(w protocol.Warning) {
		if !slices.Contains(m.cfg.Warnings, w) {
			warnings = append(warnings, w)
		}
	}
	for _, w := range sw {
		warn(w)
	}
	bad := func(format string, args ...any) {
		warn(protocol.Warning{Message: "malformed settings: " + fmt.Sprintf(format, args...), Source: protocol.WarningSourceSettings, Path: path})
	}
	v, ok := raw["worktrees"]
	if !ok || string(v) == "null" {
		return st, warnings
	}
	var wt map[string]json.RawMessage
	if err := json.Unmarshal(v, &wt); err != nil {
		bad("worktrees must be an object")
		return st, warnings
	}
	if r, ok := wt["root"]; ok && string(r) != "null" {
		var root string
		if err := json.Unmarshal(r, &root); err != nil || strings.TrimSpace(root) == "" {
			bad("worktrees.root must be a non-empty string (a directory)")
		} else if resolved, err := resolveRoot(agentDir, root); err != nil {
			bad("worktrees.root %q: %v", root, err)
		} else {
			st.Root = resolved
		}
	}
	if k, ok := wt["keep"]; ok && string(k) != "null" {
		var keep int
		if err := json.Unmarshal(k, &keep); err != nil || keep < 0 {
			bad("worktrees.keep must be an integer of 0 or more, got %s", k)
		} else {
			st.Keep = keep
		}
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
