package extensions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/knightcode/knightcode/internal/safefile"
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
		Plugins:       []api.Plugin{regularFiles, providedModules},
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
// each input file's path and contents. Errors: readExtensionFile's.
func bundleKey(entry string, inputs []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", entry)
	for _, in := range inputs {
		data, err := readExtensionFile(in)
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

// maxExtensionFile is the largest file an extension is made of, in bytes
// (16 MiB): an entry, a module it imports, a source map one of them names,
// a folder's package.json. A bigger file fails the load, naming it.
const maxExtensionFile = 16 << 20

// readExtensionFile reads the extension file at the absolute path p
// through internal/safefile (issue 15, "Inputs that wedge a thread"): a
// regular file outside /proc, /sys and /dev of at most maxExtensionFile
// bytes, the read giving up after safefile.ReadTimeout. Errors:
// *safefile.Error for a FIFO, a device, a socket, a folder or a system
// path; a too-large file, naming it; the file system's *fs.PathError.
func readExtensionFile(p string) ([]byte, error) {
	b, err := readCapped(p, maxExtensionFile)
	if errors.As(err, new(errFileTooLarge)) {
		return nil, errTooLarge(p)
	}
	return b, err
}

func errTooLarge(p string) error {
	return fmt.Errorf("%s is larger than 16 MiB, the most an extension's file may be", p)
}

// regularFiles loads every file of the file namespace through
// readExtensionFile instead of esbuild's own reads (which open a FIFO or
// /dev/zero and wait or read for ever), with the loader esbuild picks for
// its extension (api.LoaderDefault: the Loader option, then esbuild's
// defaults), so a regular file bundles as before. A file that does not
// exist is left to esbuild ("Cannot read file", or a disabled module's
// empty one); a file imported with import attributes ("with { type: ... }"),
// whose loader only esbuild sets, is checked here and then read by
// esbuild. The source maps a file's sourceMappingURL comments name, which
// esbuild reads itself, are checked first (sourceMapsRegular).
//
// esbuild's resolver also reads the package.json, tsconfig.json and
// jsconfig.json files of the folders it resolves in, which no plugin
// loads: each resolution first checks those of the importer's folder and
// the ones above it, of the imported path's folders, and, for a package
// name, <folder>/node_modules/<package>/package.json (configFilesRegular).
// What a package's inner folders hold is not checked.
var regularFiles = api.Plugin{
	Name: "knightcode-files",
	Setup: func(b api.PluginBuild) {
		checked := &configChecks{done: map[string]error{}}
		b.OnResolve(api.OnResolveOptions{Filter: `.*`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if err := checked.folders(a.ResolveDir, a.Path); err != nil {
				return api.OnResolveResult{}, err
			}
			return api.OnResolveResult{}, nil // resolved by the next plugin or esbuild
		})
		b.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "file"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			data, err := readExtensionFile(a.Path)
			if errors.Is(err, fs.ErrNotExist) {
				return api.OnLoadResult{}, nil
			}
			if err != nil {
				return api.OnLoadResult{}, err
			}
			if err := sourceMapsRegular(a.Path, data); err != nil {
				return api.OnLoadResult{}, err
			}
			if len(a.With) > 0 {
				return api.OnLoadResult{}, nil
			}
			s := string(data)
			return api.OnLoadResult{Contents: &s, Loader: api.LoaderDefault}, nil
		})
	},
}

// sourceMapComment matches the comments esbuild reads a source map from
// (js_lexer: "//# sourceMappingURL=<url>", "//@ ...", "/*# ... */"), and
// some that it would not (in a string): checking more is harmless.
var sourceMapComment = regexp.MustCompile(`(?://|/\*)[#@] sourceMappingURL=([^\s]+)`)

// sourceMapsRegular checks the source maps that the file at p (holding
// data) names by path, a relative or file: URL resolved as esbuild does
// (extractSourceMapFromComment): each that exists must be a regular file
// that readExtensionFile would read. Errors: readExtensionFile's, but for a
// missing or unreadable map, which esbuild skips itself.
func sourceMapsRegular(p string, data []byte) error {
	for _, m := range sourceMapComment.FindAllSubmatch(data, -1) {
		ref := strings.TrimSuffix(string(m[1]), "*/")
		u, err := url.Parse(ref)
		if err != nil || (u.Scheme != "" && u.Scheme != "file") || (u.Host != "" && u.Host != "localhost") {
			continue // a data: URL, another scheme: esbuild reads no file
		}
		base := &url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Dir(p)) + "/"}
		mp := filepath.FromSlash(base.ResolveReference(u).Path)
		f, fi, err := safefile.Open(mp)
		var refused *safefile.Error
		switch {
		case errors.As(err, &refused):
			return err
		case err != nil:
			continue
		}
		f.Close()
		if fi.Size() > maxExtensionFile {
			return errTooLarge(mp)
		}
	}
	return nil
}

// configFiles are the files esbuild's resolver reads in a folder.
var configFiles = []string{"package.json", "tsconfig.json", "jsconfig.json"}

// configChecks remembers, for one build, the folders whose configFiles
// were checked and the answer. Safe for concurrent use (esbuild resolves
// in parallel).
type configChecks struct {
	mu   sync.Mutex
	done map[string]error
}

// folders checks the configFiles esbuild may read to resolve path from
// resolveDir (an absolute folder, "" for none): those of resolveDir and
// every folder above it; for a relative or absolute path, those of its
// folder and the folders above; for a package name, each
// <folder>/node_modules/<package>/package.json (and its other configFiles).
// Errors: the first file not regular or too large, as readExtensionFile
// refuses it.
func (c *configChecks) folders(resolveDir, path string) error {
	var dirs []string
	up := func(d string) {
		for ; ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if filepath.Dir(d) == d {
				return
			}
		}
	}
	switch {
	case filepath.IsAbs(path):
		up(filepath.Dir(path))
	case resolveDir == "":
		return nil
	case strings.HasPrefix(path, "."):
		up(filepath.Dir(filepath.Join(resolveDir, path)))
	default:
		parts := strings.SplitN(path, "/", 3)
		pkg := parts[0]
		if strings.HasPrefix(pkg, "@") && len(parts) > 1 {
			pkg += "/" + parts[1]
		}
		for d := resolveDir; ; d = filepath.Dir(d) {
			dirs = append(dirs, filepath.Join(d, "node_modules", filepath.FromSlash(pkg)))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if resolveDir != "" {
		up(resolveDir)
	}
	for _, d := range dirs {
		if err := c.folder(d); err != nil {
			return err
		}
	}
	return nil
}

// folder checks dir's configFiles once per build: each that exists must
// be a regular file readExtensionFile reads.
func (c *configChecks) folder(dir string) error {
	c.mu.Lock()
	err, ok := c.done[dir]
	c.mu.Unlock()
	if ok {
		return err
	}
	for _, name := range configFiles {
		p := filepath.Join(dir, name)
		if _, lerr := os.Lstat(p); lerr != nil {
			continue // missing (or unreadable): esbuild finds nothing to read either
		}
		f, fi, oerr := safefile.Open(p)
		var refused *safefile.Error
		switch {
		case errors.As(oerr, &refused):
			err = oerr
		case oerr == nil:
			f.Close()
			if fi.Size() > maxExtensionFile {
				err = errTooLarge(p)
			}
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.done[dir] = err
	c.mu.Unlock()
	return err
}
