package extensions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/knightcode/knightcode/internal/safefile"
	"github.com/knightcode/knightcode/threads/ext"
)

// DefaultHandlerTimeout is how long JavaScript may run without returning
// before it is interrupted (EXTENSIBILITY.md §7 "Preemption").
const DefaultHandlerTimeout = 5 * time.Second

// Options configure an Engine.
type Options struct {
	// Logger receives the runtime's log: console output, log-only members,
	// events not dispatched, interrupts (default: discard).
	Logger *slog.Logger
	// AgentDir is the agent directory (getAgentDir() of the pi module).
	AgentDir string
	// HandlerTimeout overrides DefaultHandlerTimeout (tests).
	HandlerTimeout time.Duration
}

// Engine is the JavaScript extension runtime of the process: it turns
// extension entry files into ext.Extensions whose Load runs them in the
// thread load's runtime (one goja runtime per thread load, on its own
// event-loop goroutine, shared by that load's JavaScript extensions), and
// keeps their compiled bundles in the factory cache. Safe for concurrent
// use.
type Engine struct {
	log      *slog.Logger
	agentDir string
	timeout  time.Duration
	cache    *factoryCache
	loaded   func(*jsExtension) // called after each successful load (tests)
}

// New returns an Engine.
func New(opts Options) *Engine {
	e := &Engine{log: opts.Logger, agentDir: opts.AgentDir, timeout: opts.HandlerTimeout, cache: newFactoryCache()}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.timeout <= 0 {
		e.timeout = DefaultHandlerTimeout
	}
	return e
}

// InactiveFactories counts the compiled bundles no loaded thread leases
// (at most 256: server/diagnostics inactiveFactories).
func (e *Engine) InactiveFactories() int64 { return int64(e.cache.Inactive()) }

// runtimeKey is the ext.API.Shared key of an Engine's runtime in a load.
type runtimeKey struct{ e *Engine }

// Extension is the extension whose entry file is entry (absolute): its
// Load bundles and compiles it (or leases the cached program), then runs
// its module and factory in the load's runtime. Load errors carry the
// TypeScript position (*ext.SourceError) when there is one.
func (e *Engine) Extension(entry string) ext.Extension {
	return ext.Extension{Path: entry, Load: func(api *ext.API) error {
		v, err := api.Shared(runtimeKey{e}, func() (any, error) {
			th := api.Thread()
			return newRuntime(e, th.Cwd, th.Processes())
		})
		if err != nil {
			return err
		}
		rt := v.(*runtime)
		l, err := e.cache.lease(entry)
		if err != nil {
			return err
		}
		x := &jsExtension{rt: rt, api: api, path: entry}
		if !rt.adopt(x, l) {
			l.release()
			return errStopped
		}
		if err := x.load(l.prog); err != nil {
			return err
		}
		if e.loaded != nil {
			e.loaded(x)
		}
		return nil
	}}
}

// adopt makes x one of the runtime's extensions and l one of its leases
// (released when it is disposed); false once it is disposed.
func (rt *runtime) adopt(x *jsExtension, l *lease) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.stopping {
		return false
	}
	rt.extList = append(rt.extList, x)
	rt.leases = append(rt.leases, l)
	return true
}

// exts are the runtime's extensions (under mu).
func (rt *runtime) exts() []*jsExtension { return slices.Clone(rt.extList) }

// A Source is where a thread's extensions come from (EXTENSIBILITY.md §7).
type Source struct {
	// CLI are the -e entry files (Entries of each path), in order.
	CLI []string
	// AgentDir is the agent directory, whose extensions/ folder holds the
	// global extensions.
	AgentDir string
	// Trusted reports whether the project of cwd is trusted, whose
	// .knightcode/extensions/ folder then loads.
	Trusted func(cwd string) bool
	// Settings, when set, gives the extensions cwd's settings configure
	// (package config's resource/list, read at each load).
	Settings func(cwd string) Configured
}

// Configured are the extensions the settings of a cwd configure
// (EXTENSIBILITY.md §7 "Order", §8): the enabled entry files the
// settings' extensions paths name (the project's, then the global ones),
// the enabled extensions of the settings' packages in their order, and
// Disabled, the entry files a scope's settings turn off (a "-path" or
// "!glob" pattern), which do not load wherever they are found.
type Configured struct {
	Paths, Packages []string
	Disabled        map[string]bool
}

// ExtensionsFor returns the extensions of a thread load in cwd, in
// EXTENSIBILITY.md §7's order: a trusted project's
// <cwd>/.knightcode/extensions/ (Discover), then the global
// <agentDir>/extensions/, then the settings' extensions paths, then the -e
// entries, then the settings' packages' extensions; an entry found twice
// (by real path) loads once, where first found. A folder's entry the
// settings disable does not load (-e entries always do). It reads the
// folders and settings at each call, so a thread loaded later sees what
// was added.
func (e *Engine) ExtensionsFor(src Source, cwd string) []ext.Extension {
	var conf Configured
	if src.Settings != nil {
		conf = src.Settings(cwd)
	}
	var entries []string
	if src.Trusted != nil && src.Trusted(cwd) {
		entries = append(entries, Discover(filepath.Join(cwd, ".knightcode", "extensions"))...)
	}
	if src.AgentDir != "" {
		entries = append(entries, Discover(filepath.Join(src.AgentDir, "extensions"))...)
	}
	entries = slices.DeleteFunc(entries, func(p string) bool { return conf.Disabled[p] })
	entries = slices.Concat(entries, conf.Paths, src.CLI, conf.Packages)
	var out []ext.Extension
	seen := map[string]bool{}
	for _, p := range entries {
		real := p
		if r, err := filepath.EvalSymlinks(p); err == nil {
			real = r
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, e.Extension(p))
	}
	return out
}

// Discover returns the extension entries in dir as pi discovers them
// (loader.ts discoverExtensionsInDir): its .ts and .js files, and each
// subfolder's entries (Entries), in name order; none when dir does not
// exist or cannot be read.
func Discover(dir string) []string {
	ds, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range ds {
		p := filepath.Join(dir, d.Name())
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			if strings.HasSuffix(d.Name(), ".ts") || strings.HasSuffix(d.Name(), ".js") {
				out = append(out, p)
			}
			continue
		}
		if es, err := Entries(p); err == nil {
			out = append(out, es...)
		}
	}
	return out
}

// ErrNoEntry is returned by Entries for a folder with no extension entry.
var ErrNoEntry = errors.New("no extension entry: no package.json knightcode.extensions or pi.extensions, index.ts or index.js")

// Entries returns the extension entry files of path (absolute), a -e
// path: a file (.ts, .js, .mjs) is its own entry; a folder's are those its
// package.json lists under knightcode.extensions (or pi.extensions, for
// pi's packages) that exist, else its index.ts, else its index.js.
// Errors: fs.ErrNotExist (wrapped) for a missing path; ErrNoEntry; a
// file of another kind; an unreadable package.json.
func Entries(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		switch filepath.Ext(path) {
		case ".ts", ".js", ".mjs", ".cjs", ".mts", ".cts":
			return []string{path}, nil
		}
		return nil, fmt.Errorf("%s is not a .ts, .js or .mjs file", path)
	}
	data, err := safefile.ReadFile(filepath.Join(path, "package.json"), safefile.ConfigLimit)
	switch {
	case err == nil:
		var pkg struct {
			Knightcode struct {
				Extensions []string `json:"extensions"`
			} `json:"knightcode"`
			Pi struct {
				Extensions []string `json:"extensions"`
			} `json:"pi"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(path, "package.json"), err)
		}
		list := pkg.Knightcode.Extensions
		if len(list) == 0 {
			list = pkg.Pi.Extensions
		}
		var out []string
		for _, rel := range list {
			p := filepath.Join(path, rel)
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
		if len(out) > 0 {
			return out, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	for _, index := range []string{"index.ts", "index.js"} {
		if _, err := os.Stat(filepath.Join(path, index)); err == nil {
			return []string{filepath.Join(path, index)}, nil
		}
	}
	return nil, ErrNoEntry
}
