package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/knightcode/knightcode/internal/safefile"
)

// ContextFileNames are the context file names looked for in each folder,
// the first present one used (AGENTS.md, else CLAUDE.md).
var ContextFileNames = []string{"AGENTS.md", "CLAUDE.md"}

// ContextFile is one context file for a thread's system prompt.
type ContextFile struct {
	Path    string
	Content string
}

// ContextFiles returns the context files of a thread in cwd (issue 13:
// "AGENTS.md (and CLAUDE.md) from the project root and its ancestors go
// into the system prompt of a trusted project's threads"): the agent
// directory's own first, then one per folder from the filesystem root down
// to cwd, in that order, each folder's AGENTS.md or else its CLAUDE.md. A
// file that exists but cannot be read gives a warning (source "settings")
// and is left out; a file that is not a regular file (a FIFO) or is over
// safefile.ConfigLimit cannot be read (safefile.ReadFile). The caller
// decides whether the project is trusted: for an untrusted one it passes
// cwd "", and only the agent directory's file is read (a cloned
// repository's files are never opened).
func ContextFiles(agentDir, cwd string) ([]ContextFile, []Warning) {
	var dirs []string
	for d := filepath.Clean(cwd); cwd != ""; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	ordered := []string{agentDir}
	for i := len(dirs) - 1; i >= 0; i-- {
		if dirs[i] != filepath.Clean(agentDir) {
			ordered = append(ordered, dirs[i])
		}
	}
	var out []ContextFile
	var warnings []Warning
	for _, d := range ordered {
		for _, name := range ContextFileNames {
			p := filepath.Join(d, name)
			data, err := safefile.ReadFile(p, safefile.ConfigLimit)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				if st, serr := os.Stat(p); serr == nil && st.IsDir() {
					continue
				}
				warnings = append(warnings, Warning{Message: fmt.Sprintf("cannot read context file: %v", err), Source: WarningSourceSettings, Path: p})
				break
			}
			out = append(out, ContextFile{Path: p, Content: string(data)})
			break
		}
	}
	return out, warnings
}
