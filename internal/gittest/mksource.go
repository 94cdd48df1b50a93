package gittest

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// sourceWords name the folders and files of a [MkSourceRepo] repository.
var sourceWords = []string{
	"config", "server", "handler", "client", "model", "store", "index", "util",
	"parser", "render", "session", "thread", "worktree", "diff", "patch", "commit",
	"branch", "search", "token", "account", "provider", "stream", "cache", "queue",
	"router", "schema", "widget", "button", "layout", "theme", "auth", "login",
	"report", "metrics", "logger", "retry", "payload", "archive", "snapshot", "status",
}

// sourceAreas are the top-level layouts of a [MkSourceRepo] repository: a
// folder prefix and the extensions of its files.
var sourceAreas = []struct {
	prefix string
	exts   []string
}{
	{"internal", []string{".go", "_test.go"}},
	{"cmd", []string{".go"}},
	{"pkg", []string{".go", "_test.go"}},
	{"web/src/components", []string{".tsx", ".ts", ".css"}},
	{"web/src/lib", []string{".ts", ".test.ts"}},
	{"docs", []string{".md"}},
	{"scripts", []string{".sh", ".py"}},
	{"testdata", []string{".json", ".txt"}},
}

// MkSourceRepoOptions sizes a [MkSourceRepo] repository. Zero fields take
// the defaults noted on each.
type MkSourceRepoOptions struct {
	Files     int   // tracked files in the commit (50000)
	Untracked int   // untracked, not ignored files (200)
	Ignored   int   // ignored files under node_modules/ and build/ (2000)
	Seed      int64 // random seed (1)
}

// MkSourceRepo builds a deterministic repository in dir shaped like a
// source tree, for file-listing and fuzzy-search benchmarks (issue 13's
// file/search benchmark): one commit of o.Files small files written with
// git fast-import and checked out, spread over the areas of sourceAreas
// (internal/, cmd/, pkg/, web/src/..., docs/, scripts/, testdata/) in
// folders two to five levels deep, named from a vocabulary of 40 words
// (internal/session/store/session_store_1234.go,
// web/src/components/theme/ButtonLayout4321.tsx, ...); hidden files
// (.github/workflows/*.yml, .editorconfig); then o.Untracked untracked files
// under new/ and o.Ignored files that .gitignore excludes (node_modules/,
// build/). Same options, same repository; every listed path is unique.
func MkSourceRepo(dir string, o MkSourceRepoOptions) error {
	if o.Files == 0 {
		o.Files = 50000
	}
	if o.Untracked == 0 {
		o.Untracked = 200
	}
	if o.Ignored == 0 {
		o.Ignored = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if err := benchInit(dir); err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(o.Seed))
	word := func() string { return sourceWords[rng.Intn(len(sourceWords))] }
	files := map[string]string{
		".gitignore":                 "node_modules/\nbuild/\n*.log\n",
		".editorconfig":              "root = true\n",
		".github/workflows/ci.yml":   "on: push\n",
		".github/workflows/lint.yml": "on: pull_request\n",
		"README.md":                  "# bench\n",
		"go.mod":                     "module example.com/bench\n",
	}
	paths := []string{".editorconfig", ".github/workflows/ci.yml", ".github/workflows/lint.yml", ".gitignore", "README.md", "go.mod"}
	for i := 0; len(paths) < o.Files; i++ {
		area := sourceAreas[rng.Intn(len(sourceAreas))]
		parts := []string{area.prefix}
		for range 1 + rng.Intn(3) {
			parts = append(parts, word())
		}
		a, b := word(), word()
		ext := area.exts[rng.Intn(len(area.exts))]
		var name string
		if strings.HasPrefix(area.prefix, "web/") {
			name = fmt.Sprintf("%s%s%d%s", title(a), title(b), i, ext)
		} else {
			name = fmt.Sprintf("%s_%s_%d%s", a, b, i, ext)
		}
		p := path.Join(append(parts, name)...)
		files[p] = fmt.Sprintf("// %s\n", p)
		paths = append(paths, p)
	}
	err := fastImport(dir, func(w *bufio.Writer) {
		for _, p := range paths {
			fastImportFile(w, p, files[p])
		}
	})
	if err != nil {
		return err
	}
	if _, err := Run(dir, nil, "checkout", "-q", "-f", "main"); err != nil {
		return err
	}
	write := func(p string) error {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		return os.WriteFile(full, []byte("x\n"), 0o644)
	}
	for i := range o.Untracked {
		if err := write(fmt.Sprintf("new/%s/%s_draft_%d.go", word(), word(), i)); err != nil {
			return err
		}
	}
	for i := range o.Ignored {
		p := fmt.Sprintf("node_modules/%s-%s/lib/%s_%d.js", word(), word(), word(), i)
		if i%4 == 0 {
			p = fmt.Sprintf("build/%s/%s_%d.o", word(), word(), i)
		}
		if err := write(p); err != nil {
			return err
		}
	}
	return nil
}

// title returns w with its first letter upper-cased (ASCII words only).
func title(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}
