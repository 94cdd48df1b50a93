package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// Environment variables (spec: "Starting"; ARCHITECTURE.md "Worktrees").
const (
	// EnvAgentDir overrides the agent directory (default ~/.knightcode/agent).
	EnvAgentDir = "KNIGHTCODE_CODING_AGENT_DIR"
	// EnvSessionDir overrides the session directory for every project.
	EnvSessionDir = "KNIGHTCODE_CODING_AGENT_SESSION_DIR"
)

// Where the session directory came from (Dirs.Source).
const (
	SourceFlag     = "flag"     // --session-dir
	SourceEnv      = "env"      // KNIGHTCODE_CODING_AGENT_SESSION_DIR
	SourceSettings = "settings" // sessionDir in <agentDir>/settings.json
	SourceProject  = "project"  // the per-project layout under <agentDir>/sessions
)

// AgentDir is the agent directory: $KNIGHTCODE_CODING_AGENT_DIR (a leading ~
// expanded, made absolute) else ~/.knightcode/agent. It fails only when the
// home directory is needed and unknown.
func AgentDir() (string, error) {
	if d := os.Getenv(EnvAgentDir); d != "" {
		return absPath(d)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("session: agent directory: %w", err)
	}
	return filepath.Join(home, ".knightcode", "agent"), nil
}

// expandHome replaces a leading "~" or "~/" with the home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~\`) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, p[1:]), nil
}

func absPath(p string) (string, error) {
	p, err := expandHome(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// Dirs says where this process keeps session files.
type Dirs struct {
	// AgentDir is the agent directory (absolute).
	AgentDir string
	// Override is the session directory every project shares (absolute), or
	// "" for the per-project layout <AgentDir>/sessions/--<cwd>--/. With an
	// override the header's cwd tells projects apart.
	Override string
	// Source is where the directory came from: SourceFlag, SourceEnv,
	// SourceSettings or SourceProject.
	Source string
}

// ResolveDirs finds the session directory with the spec's precedence
// ("Starting"): flagDir (--session-dir, resolved against the process
// working directory), then $KNIGHTCODE_CODING_AGENT_SESSION_DIR, then the
// global sessionDir setting in <agentDir>/settings.json (a leading ~
// expanded), else the per-project layout. A malformed settings.json yields a
// warning with source "settings" (and line/column when known) and is
// otherwise ignored, as is an unreadable one. The error is for an unknown
// home directory only.
func ResolveDirs(flagDir string) (Dirs, []protocol.Warning, error) {
	agent, err := AgentDir()
	if err != nil {
		return Dirs{}, nil, err
	}
	d := Dirs{AgentDir: agent, Source: SourceProject}
	switch {
	case flagDir != "":
		d.Override, d.Source = flagDir, SourceFlag
	case os.Getenv(EnvSessionDir) != "":
		d.Override, d.Source = os.Getenv(EnvSessionDir), SourceEnv
	}
	var warnings []protocol.Warning
	if d.Override == "" {
		dir, w := settingsSessionDir(agent)
		warnings = append(warnings, w...)
		if dir != "" {
			d.Override, d.Source = dir, SourceSettings
		}
	}
	if d.Override != "" {
		if d.Override, err = absPath(d.Override); err != nil {
			return Dirs{}, warnings, fmt.Errorf("session: session directory: %w", err)
		}
	}
	return d, warnings, nil
}

// settingsSessionDir reads the global sessionDir setting of agentDir
// through config's one settings reader: "" when the file or the key is
// absent, with warnings of source "settings" when the file cannot be read
// or parsed or a value is malformed (the server reports them at startup).
func settingsSessionDir(agentDir string) (string, []protocol.Warning) {
	snap, err := config.NewStore(agentDir, nil).Read(context.Background(), "")
	if err != nil {
		return "", []protocol.Warning{{Message: fmt.Sprintf("cannot read settings: %v", err), Source: config.WarningSourceSettings,
			Path: filepath.Join(agentDir, config.SettingsFile)}}
	}
	var warnings []protocol.Warning
	for _, w := range snap.Errors {
		warnings = append(warnings, protocol.Warning(w))
	}
	v, vw := snap.Values()
	for _, w := range vw {
		warnings = append(warnings, protocol.Warning(w))
	}
	return v.SessionDir, warnings
}

// SettingsFile is the global settings file's name in the agent directory
// (config.SettingsFile).
const SettingsFile = config.SettingsFile

// MaxNameBytes is the longest file or folder name knightcode generates: 255
// bytes, the per-component limit of ext4, XFS, btrfs, ZFS and APFS (NTFS
// counts 255 UTF-16 units, which 255 bytes never exceed).
const MaxNameBytes = 255

// nameHashHex is how many hex digits of SHA-256 stand for the cut tail of a
// name too long for MaxNameBytes (96 bits).
const nameHashHex = 24

// ProjectDirName is the per-project session directory name for cwd (pi's
// layout): "--" + cwd without its leading separator, with "/", "\" and ":"
// replaced by "-", + "--". For example /home/u/p gives --home-u-p--.
//
// A name that would be longer than MaxNameBytes (a cwd of about 250 bytes or
// more) keeps its readable start, cut at a UTF-8 boundary, and ends in "-",
// the first 24 hex digits of the SHA-256 of the whole cwd, and "--", exactly
// MaxNameBytes or up to 3 bytes less (issue 15: a longer name made every
// save fail). The name stays stable for a cwd and differs for different
// cwds however long their common start.
func ProjectDirName(cwd string) string {
	s := cwd
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		s = s[1:]
	}
	name := "--" + strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s) + "--"
	if len(name) <= MaxNameBytes {
		return name
	}
	sum := sha256.Sum256([]byte(cwd))
	tail := "-" + hex.EncodeToString(sum[:])[:nameHashHex] + "--"
	keep := MaxNameBytes - len(tail)
	for keep > 0 && !utf8.RuneStart(name[keep]) {
		keep--
	}
	return name[:keep] + tail
}

// ForCwd is the directory new sessions of project cwd are saved in: the
// override when there is one, else <AgentDir>/sessions/<ProjectDirName(cwd)>.
func (d Dirs) ForCwd(cwd string) string {
	if d.Override != "" {
		return d.Override
	}
	return filepath.Join(d.AgentDir, "sessions", ProjectDirName(cwd))
}

// Roots are the directories a listing of every thread scans: the override,
// or every project directory under <AgentDir>/sessions (sorted). Missing
// directories give an empty list, not an error.
func (d Dirs) Roots() ([]string, error) {
	if d.Override != "" {
		return []string{d.Override}, nil
	}
	base := filepath.Join(d.AgentDir, "sessions")
	des, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, filepath.Join(base, de.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}
