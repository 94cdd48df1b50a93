package extensions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/knightcode/knightcode/threads/ext"
)

// The module wrapper around a bundle: esbuild's banner and footer, so the
// inline source map accounts for them. Running the bundle's program
// yields a function of the CommonJS module variables.
const (
	bundleBanner = "(function (exports, require, module, __filename, __dirname) { var __kc_import_meta_url = require(\"url\").pathToFileURL(__filename).href;"
	bundleFooter = "})"
)

// nodeBuiltins are Node's built-in modules (without "node:"): an import
// of one is either provided (providedBuiltins) or fails the bundle with an
// error naming it.
var nodeBuiltins = []string{
	"assert", "assert/strict", "async_hooks", "buffer", "child_process", "cluster", "console", "constants",
	"crypto", "dgram", "diagnostics_channel", "dns", "dns/promises", "domain", "events", "fs", "fs/promises",
	"http", "http2", "https", "inspector", "module", "net", "os", "path", "path/posix", "path/win32",
	"perf_hooks", "process", "punycode", "querystring", "readline", "readline/promises", "repl", "stream",
	"stream/promises", "stream/web", "string_decoder", "sys", "test", "timers", "timers/promises", "tls",
	"trace_events", "tty", "url", "util", "util/types", "v8", "vm", "wasi", "worker_threads", "zlib",
}

// bundled is one extension entry bundled into one script: its source
// (the CommonJS wrapper, with an inline source map), the files it was made
// of (absolute) and the hash of their contents (bundleKey).
type bundled struct {
	code   string
	inputs []string
	key    string
}

// bundle bundles the extension entry (an absolute path to a .ts, .js or
// .mjs file) with esbuild: its imports and their node_modules in one
// CommonJS script for Node (target es2017, inline source map), leaving
// the modules the runtime provides (virtual and Node's) to its require.
// Errors: *ext.SourceError for the first error esbuild reports with a
// location (a syntax error, an unresolvable or unprovided module), else an
// error with esbuild's messages.
func bundle(entry string) (bundled, error) {
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{entry},
		Bundle:        true,
		Format:        api.FormatCommonJS,
		Platform:      api.PlatformNode,
		Target:        api.ES2017,
		Sourcemap:     api.SourceMapInline,
		Outfile:       entry + ".bundle.js",
		AbsWorkingDir: filepath.Dir(entry),
		Write:         false,
		Metafile:      true,
		LogLevel:      api.LogLevelSilent,
		Banner:        map[string]string{"js": bundleBanner},
		Footer:        map[string]string{"js": bundleFooter},
		Plugins:       []api.Plugin{providedModules},
		Loader:        map[string]api.Loader{".mjs": api.LoaderJS, ".cjs": api.LoaderJS},
		// import.meta.url is the entry's file URL (a CommonJS bundle has
		// no import.meta of its own).
		Define: map[string]string{"import.meta.url": "__kc_import_meta_url"},
	})
	if len(res.Errors) > 0 {
		return bundled{}, buildError(entry, res.Errors)
	}
	var out string
	for _, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".js") {
			out = string(f.Contents)
		}
	}
	if out == "" {
		return bundled{}, fmt.Errorf("esbuild wrote no script for %s", entry)
	}
	var meta struct {
		Inputs map[string]json.RawMessage `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return bundled{}, fmt.Errorf("esbuild's metafile: %w", err)
	}
	var inputs []string
	for in := range meta.Inputs {
		if strings.Contains(in, ":") { // a namespace of ours, not a file
			continue
		}
		inputs = append(inputs, filepath.Join(filepath.Dir(entry), in))
	}
	slices.Sort(inputs)
	key, err := bundleKey(entry, inputs)
	if err != nil {
		return bundled{}, err
	}
	return bundled{code: out, inputs: inputs, key: key}, nil
}

// bundleKey is the content hash of an entry's bundle: the entry's path and
// each input file's path and contents. Errors: a file that cannot be read.
func bundleKey(entry string, inputs []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", entry)
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "%s\x00%x\x00", in, sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildError is esbuild's first error with a location as an
// *ext.SourceError (1-based column, in characters), or all of them.
func buildError(entry string, msgs []api.Message) error {
	for _, m := range msgs {
		if l := m.Location; l != nil && l.File != "" {
			col := l.Column
			if col <= len(l.LineText) {
				col = utf8.RuneCountInString(l.LineText[:col])
			}
			file := l.File
			if !filepath.IsAbs(file) {
				file = filepath.Join(filepath.Dir(entry), file)
			}
			return &ext.SourceError{File: file, Line: l.Line, Column: col + 1, Err: errors.New(m.Text)}
		}
	}
	texts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	return errors.New(strings.Join(texts, "; "))
}

// providedModules resolves what the runtime's require provides (the
// virtual modules and the Node subset: external, loaded at run time) and
// fails the build on a Node module it does not provide, naming it.
var providedModules = api.Plugin{
	Name: "knightcode-modules",
	Setup: func(b api.PluginBuild) {
		b.OnResolve(api.OnResolveOptions{Filter: `^[^./]`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			name := strings.TrimPrefix(a.Path, "node:")
			if _, ok := virtualModules[name]; ok {
				return api.OnResolveResult{Path: a.Path, External: true}, nil
			}
			if slices.Contains(nodeBuiltins, name) {
				if slices.Contains(providedBuiltins, name) {
					return api.OnResolveResult{Path: "node:" + name, External: true}, nil
				}
				return api.OnResolveResult{Errors: []api.Message{{Text: fmt.Sprintf("module %q is not provided by knightcode's extension runtime", a.Path)}}}, nil
			}
			return api.OnResolveResult{}, nil // node_modules, as esbuild resolves them
		})
	},
}
