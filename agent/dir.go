package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvDir is the environment variable that overrides the agent directory.
const EnvDir = "KNIGHTCODE_CODING_AGENT_DIR"

// Dir returns the agent directory, where models.json, settings.json, sessions
// and worktrees live: $KNIGHTCODE_CODING_AGENT_DIR when set and non-empty (a
// leading "~" or "~/" stands for the home directory; a relative path is made
// absolute against the process working directory), else
// ~/.knightcode/agent (ARCHITECTURE.md "Worktrees, snapshots, handoff"). The
// directory need not exist. The error is os.UserHomeDir's, returned only when
// the home directory is needed and unknown.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		if d != "~" && !strings.HasPrefix(d, "~/") {
			abs, err := filepath.Abs(d)
			if err != nil {
				return "", fmt.Errorf("agent dir %s=%q: %w", EnvDir, d, err)
			}
			return abs, nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("agent dir %s=%q: %w", EnvDir, d, err)
		}
		return filepath.Join(home, strings.TrimPrefix(d[1:], "/")), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("agent dir: %w", err)
	}
	return filepath.Join(home, ".knightcode", "agent"), nil
}
