package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/knightcode/knightcode/internal/safefile"
)

// Resource types (spec resource/list: extensions, skills, prompt templates
// and themes); each is also the settings key holding that type's paths and
// patterns.
const (
	ResourceExtensions = "extensions"
	ResourceSkills     = "skills"
	ResourcePrompts    = "prompts"
	ResourceThemes     = "themes"
)

// ResourceTypes lists the resource types in listing order.
var ResourceTypes = []string{ResourceExtensions, ResourceSkills, ResourcePrompts, ResourceThemes}

// Where a resource was found (Resource.Source) and how (Resource.Origin).
const (
	// SourceAuto: found in a scope's conventional folder (<agentDir>/skills/,
	// <project>/.knightcode/prompts/, ...).
	SourceAuto = "auto"
	// SourceLocal: named by a path in a scope's settings (skills: ["..."]).
	SourceLocal = "local"
	// OriginTopLevel: a resource of the scope itself, not of a package
	// (OriginPackage) or a plugin (OriginPlugin).
	OriginTopLevel = "top-level"
)

// Resource is one resource as resource/list reports it: its type, absolute
// path, name, whether a thread loads it, the scope that defines it, and
// where it was found.
type Resource struct {
	Type    string `json:"type"`
	Path    string `json:"path"`
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	Scope   Scope  `json:"scope"`
	Origin  string `json:"origin"`
	Source  string `json:"source"`
}

// Skill is a loaded skill: a SKILL.md with front matter name and
// description; Body is the file's text after the front matter, BaseDir the
// folder holding it.
type Skill struct {
	Name, Description string
	Path, BaseDir     string
	Scope             Scope
	Body              string
}

// PromptTemplate is a loaded prompt template: a *.md file named by its base
// name; Description is its front matter description, else its first
// non-empty line (cut to 60 characters); Body is its text after the front
// matter, with $1, $@ ... placeholders ([ExpandTemplate]).
type PromptTemplate struct {
	Name, Description string
	Path              string
	Scope             Scope
	Body              string
}

// Command is one entry of command/list: a name without the leading "/"
// and a description.
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ResourceSet is what a thread in a cwd would find: every resource with its
// enabled state, and the enabled skills and prompt templates loaded (first
// by precedence wins a name: project settings paths, project folders,
// global settings paths, global folders).
type ResourceSet struct {
	Resources []Resource
	Skills    []Skill
	Prompts   []PromptTemplate
	// Warnings: unreadable or malformed skills and templates, name
	// collisions, settings entries that name nothing.
	Warnings []Warning
	// Project is cwd's project ("" without cwd) and Trusted whether its
	// resources were looked at.
	Project string
	Trusted bool
	// pkgs are the package entries offering the package resources, by
	// type and path (key typ+"\x00"+path).
	pkgs map[string]*pkg
}

// resourceScope is one scope's view for resource discovery.
type resourceScope struct {
	scope    Scope
	baseDir  string         // settings paths resolve against it: agentDir, or <project>/.knightcode
	settings map[string]any // the scope's own settings
	file     string         // its settings file
	autoDirs map[string][]string
}

// scopes returns the scopes a thread in snap's cwd loads resources from,
// project first.
func (s *Store) scopes(snap *Snapshot) []resourceScope {
	global := resourceScope{
		scope: ScopeGlobal, baseDir: s.agentDir, settings: snap.global, file: snap.Paths.Global,
		autoDirs: map[string][]string{},
	}
	for _, typ := range ResourceTypes {
		global.autoDirs[typ] = []string{filepath.Join(s.agentDir, typ)}
	}
	if !snap.Trusted {
		return []resourceScope{global}
	}
	kdir := filepath.Join(snap.Project, ProjectDir)
	project := resourceScope{
		scope: ScopeProject, baseDir: kdir, settings: snap.project, file: snap.Paths.Project,
		autoDirs: map[string][]string{},
	}
	for _, typ := range ResourceTypes {
		project.autoDirs[typ] = []string{filepath.Join(kdir, typ)}
	}
	project.autoDirs[ResourceSkills] = append(project.autoDirs[ResourceSkills], filepath.Join(snap.Project, ".agents", "skills"))
	return []resourceScope{project, global}
}

// entries returns the scope's settings array for typ, split into paths and
// override patterns (entries starting with !, + or -).
func (rs resourceScope) entries(typ string) (paths, patterns []string, err error) {
	v, ok := rs.settings[typ]
	if !ok || v == nil {
		return nil, nil, nil
	}
	if err := knownSetting(typ).check(v); err != nil {
		return nil, nil, fmt.Errorf("malformed settings: %v (paths and patterns); it is ignored", err)
	}
	list, _ := stringList(v)
	for _, e := range list {
		switch {
		case e == "":
		case strings.HasPrefix(e, "!"), strings.HasPrefix(e, "+"), strings.HasPrefix(e, "-"):
			patterns = append(patterns, e)
		default:
			paths = append(paths, e)
		}
	}
	return paths, patterns, nil
}

// Resources finds the resources a thread in cwd (or with no project, cwd
// "") would load (spec resource/list, command/list): for each scope, the
// conventional folders (<agentDir>/{extensions,skills,prompts,themes}/
// and, for an explicitly trusted project, <project>/.knightcode/... and
// <project>/.agents/skills/) and the paths its settings name (relative to
// agentDir, or to <project>/.knightcode). A resource is enabled unless its
// scope's settings exclude it: "!glob" (matched against the path relative
// to the scope's folder, the base name and, for a skill, its folder) turns
// it off, "+path" turns it back on and "-path" off (exact paths). Nothing
// is written or run.
//
// Discovery: skills are SKILL.md files (a folder holding one is not
// searched further), prompt templates and themes the *.md and *.json files
// directly in their folder, extensions the *.ts and *.js files directly in
// theirs and the folders holding an index.ts or index.js. Folders and files
// whose names start with "." and node_modules are skipped.
//
// Errors: those of [Store.Read].
func (s *Store) Resources(ctx context.Context, cwd string) (*ResourceSet, error) {
	snap, err := s.Read(ctx, cwd)
	if err != nil {
		return nil, err
	}
	set := &ResourceSet{Project: snap.Project, Trusted: snap.Trusted, pkgs: map[string]*pkg{}}
	seen := map[string]bool{}
	scopes := s.scopes(snap)
	pkgs := installedPackages(set, scopes)
	for _, typ := range ResourceTypes {
		for i, sc := range scopes {
			paths, patterns, err := sc.entries(typ)
			if err != nil {
				set.warn(sc.file, "%v", err)
			}
			var found []Resource
			for _, p := range paths {
				if strings.ContainsAny(p, "*?[") {
					set.warn(sc.file, "%s entry %q: glob paths are not supported; name a file or folder", typ, p)
					continue
				}
				abs, err := resolvePath(sc.baseDir, p)
				if err != nil {
					set.warn(sc.file, "%s entry %q: %v", typ, p, err)
					continue
				}
				st, err := os.Stat(abs)
				switch {
				case err != nil:
					set.warn(sc.file, "%s entry %q: %v", typ, p, err)
				case st.IsDir():
					for _, f := range collect(typ, abs) {
						found = append(found, Resource{Path: f, Source: SourceLocal})
					}
				default:
					found = append(found, Resource{Path: abs, Source: SourceLocal})
				}
			}
			for _, dir := range sc.autoDirs[typ] {
				for _, f := range collect(typ, dir) {
					found = append(found, Resource{Path: f, Source: SourceAuto})
				}
			}
			for _, r := range found {
				key := typ + "\x00" + r.Path
				if seen[key] {
					continue
				}
				seen[key] = true
				r.Type, r.Scope, r.Origin = typ, sc.scope, OriginTopLevel
				r.Enabled = enabledByPatterns(r.Path, patterns, sc.baseDir)
				r.Name = resourceName(typ, r.Path)
				set.load(&r)
				set.Resources = append(set.Resources, r)
			}
			for _, p := range pkgs[i] {
				paths, enabled := p.resources(typ)
				for j, rp := range paths {
					key := typ + "\x00" + rp
					if seen[key] {
						continue
					}
					seen[key] = true
					r := Resource{Type: typ, Path: rp, Name: resourceName(typ, rp), Enabled: enabled[j],
						Scope: sc.scope, Origin: OriginPackage, Source: p.source}
					set.pkgs[key] = &p
					set.load(&r)
					set.Resources = append(set.Resources, r)
				}
			}
		}
	}
	if err := s.addPluginResources(ctx, cwd, set); err != nil {
		return nil, err
	}
	return set, nil
}

// installedPackages returns each scope's packages that are on disk, in
// their settings order; a package also named by an earlier scope (the
// project's, by identity) is left to it, and one not on disk is a
// warning: it is listed once installed (knightcode installs nothing).
func installedPackages(set *ResourceSet, scopes []resourceScope) [][]pkg {
	out := make([][]pkg, len(scopes))
	seen := map[string]bool{}
	for i, sc := range scopes {
		for _, p := range sc.packages(set) {
			if seen[p.identity] {
				continue
			}
			seen[p.identity] = true
			if _, err := os.Stat(p.root); err != nil {
				set.warn(sc.file, "package %q is not installed: %s does not exist (resource/list installs nothing)", p.source, p.root)
				continue
			}
			out[i] = append(out[i], p)
		}
	}
	return out
}

func (set *ResourceSet) warn(path, format string, args ...any) {
	set.Warnings = append(set.Warnings, Warning{Message: fmt.Sprintf(format, args...), Source: WarningSourceSettings, Path: path})
}

// load reads an enabled skill or prompt template into the set (first by
// name wins) and sets r.Name from its front matter.
func (set *ResourceSet) load(r *Resource) { set.loadAs(r, "") }

// loadAs is load with prefix before a name taken from the front matter (a
// plugin's "<plugin>:").
func (set *ResourceSet) loadAs(r *Resource, prefix string) {
	if r.Type != ResourceSkills && r.Type != ResourcePrompts {
		return
	}
	data, err := safefile.ReadFile(r.Path, safefile.ConfigLimit)
	if err != nil {
		set.warn(r.Path, "cannot read %s: %v", strings.TrimSuffix(r.Type, "s"), err)
		return
	}
	fm, body, err := frontMatter(data)
	if err != nil {
		set.warn(r.Path, "malformed front matter: %v", err)
		return
	}
	if r.Type == ResourceSkills {
		if fm.Name != "" {
			r.Name = prefix + fm.Name
		}
		if !r.Enabled {
			return
		}
		if strings.TrimSpace(fm.Description) == "" {
			set.warn(r.Path, "skill %q has no description in its front matter; it is not loaded", r.Name)
			return
		}
		if i := slices.IndexFunc(set.Skills, func(s Skill) bool { return s.Name == r.Name }); i >= 0 {
			set.warn(r.Path, "skill %q is also defined by %s, which is used", r.Name, set.Skills[i].Path)
			return
		}
		set.Skills = append(set.Skills, Skill{Name: r.Name, Description: strings.TrimSpace(fm.Description), Path: r.Path, BaseDir: filepath.Dir(r.Path), Scope: r.Scope, Body: body})
		return
	}
	if !r.Enabled {
		return
	}
	if i := slices.IndexFunc(set.Prompts, func(p PromptTemplate) bool { return p.Name == r.Name }); i >= 0 {
		set.warn(r.Path, "prompt template %q is also defined by %s, which is used", r.Name, set.Prompts[i].Path)
		return
	}
	desc := strings.TrimSpace(fm.Description)
	if desc == "" {
		for line := range strings.SplitSeq(body, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				desc = line
				break
			}
		}
		if rs := []rune(desc); len(rs) > 60 {
			desc = string(rs[:60]) + "..."
		}
	}
	set.Prompts = append(set.Prompts, PromptTemplate{Name: r.Name, Description: desc, Path: r.Path, Scope: r.Scope, Body: body})
}

// Commands lists the commands a thread with this set offers (spec
// command/list): prompt templates by name, then skills as "skill:<name>",
// without the leading "/".
func (set *ResourceSet) Commands() []Command {
	out := []Command{}
	for _, p := range set.Prompts {
		out = append(out, Command{Name: p.Name, Description: p.Description})
	}
	for _, s := range set.Skills {
		out = append(out, Command{Name: "skill:" + s.Name, Description: s.Description})
	}
	return out
}

// frontMatterFields are the front matter keys this package reads.
type frontMatterFields struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// frontMatter splits a Markdown file into its YAML front matter (between a
// first line "---" and the next "---" line) and the body after it. A file
// without front matter is all body.
func frontMatter(data []byte) (frontMatterFields, string, error) {
	var fm frontMatterFields
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	isFence := func(l string) bool { return strings.TrimRight(l, " \t\n") == "---" }
	if len(lines) == 0 || !isFence(lines[0]) {
		return fm, text, nil
	}
	for i := 1; i < len(lines); i++ {
		if isFence(lines[i]) {
			if err := yaml.Unmarshal([]byte(strings.Join(lines[1:i], "")), &fm); err != nil {
				return fm, "", err
			}
			return fm, strings.TrimLeft(strings.Join(lines[i+1:], ""), "\n"), nil
		}
	}
	return fm, "", errors.New("the front matter has no closing ---")
}

// resourceName is a resource's name from its path: a skill's folder, a
// file's base name without extension, an extension folder's name for its
// index file.
func resourceName(typ, p string) string {
	base := filepath.Base(p)
	switch {
	case typ == ResourceSkills && base == "SKILL.md":
		return filepath.Base(filepath.Dir(p))
	case typ == ResourceExtensions && (base == "index.ts" || base == "index.js"):
		return filepath.Base(filepath.Dir(p))
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// skipEntry reports names discovery never enters.
func skipEntry(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

// collect lists the resources of typ in dir (see [Store.Resources]), sorted.
func collect(typ, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	switch typ {
	case ResourceSkills:
		if st, err := os.Stat(filepath.Join(dir, "SKILL.md")); err == nil && st.Mode().IsRegular() {
			return []string{filepath.Join(dir, "SKILL.md")}
		}
		for _, e := range entries {
			if !skipEntry(e.Name()) && isDir(filepath.Join(dir, e.Name())) {
				out = append(out, collect(typ, filepath.Join(dir, e.Name()))...)
			}
		}
	case ResourceExtensions:
		if es := extensionEntries(dir); len(es) > 0 {
			return es
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case skipEntry(e.Name()):
			case isDir(p):
				out = append(out, extensionEntries(p)...)
			case strings.HasSuffix(e.Name(), ".ts") || strings.HasSuffix(e.Name(), ".js"):
				out = append(out, p)
			}
		}
	default:
		ext := ".md"
		if typ == ResourceThemes {
			ext = ".json"
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if !skipEntry(e.Name()) && strings.HasSuffix(e.Name(), ext) && isFile(p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// extensionEntries are dir's extension entries as a -e folder's are found
// (extensions.Entries): the existing files its package.json lists under
// knightcode.extensions (else pi.extensions), else its index.ts or
// index.js; none for a folder without.
func extensionEntries(dir string) []string {
	if data, err := safefile.ReadFile(filepath.Join(dir, "package.json"), safefile.ConfigLimit); err == nil {
		var m struct {
			Knightcode struct{ Extensions []string } `json:"knightcode"`
			Pi         struct{ Extensions []string } `json:"pi"`
		}
		if json.Unmarshal(data, &m) == nil {
			list := m.Knightcode.Extensions
			if len(list) == 0 {
				list = m.Pi.Extensions
			}
			var out []string
			for _, rel := range list {
				if p := filepath.Join(dir, filepath.FromSlash(rel)); within(dir, p) && isFile(p) {
					out = append(out, p)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	for _, n := range []string{"index.ts", "index.js"} {
		if p := filepath.Join(dir, n); isFile(p) {
			return []string{p}
		}
	}
	return nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// matchNames are the spellings of a resource path that patterns match:
// the path relative to baseDir (slash-separated), the absolute path, and
// for a SKILL.md its folder's relative and absolute paths.
func matchNames(p, baseDir string) []string {
	names := []string{filepath.ToSlash(p)}
	if rel, err := filepath.Rel(baseDir, p); err == nil {
		names = append(names, filepath.ToSlash(rel))
	}
	if filepath.Base(p) == "SKILL.md" {
		dir := filepath.Dir(p)
		names = append(names, filepath.ToSlash(dir))
		if rel, err := filepath.Rel(baseDir, dir); err == nil {
			names = append(names, filepath.ToSlash(rel))
		}
	}
	return names
}

// exactMatch reports whether pattern (without its sign) names p exactly.
func exactMatch(pattern, p, baseDir string) bool {
	pattern = strings.TrimPrefix(filepath.ToSlash(pattern), "./")
	return slices.Contains(matchNames(p, baseDir), pattern)
}

// globMatch reports whether a "!" pattern matches p: its relative or
// absolute path, base name, or for a skill its folder or folder name
// (path.Match syntax; "*" does not cross "/").
func globMatch(pattern, p, baseDir string) bool {
	pattern = strings.TrimPrefix(filepath.ToSlash(pattern), "./")
	names := append(matchNames(p, baseDir), filepath.Base(p))
	if filepath.Base(p) == "SKILL.md" {
		names = append(names, filepath.Base(filepath.Dir(p)))
	}
	for _, n := range names {
		if ok, _ := path.Match(pattern, n); ok {
			return true
		}
	}
	return false
}

// enabledByPatterns applies a scope's override patterns to p: on unless a
// "!glob" matches, "+path" puts it back, "-path" takes it out.
func enabledByPatterns(p string, patterns []string, baseDir string) bool {
	return applyPatterns(true, p, patterns, baseDir)
}

// applyPatterns applies override patterns to p, enabled or not before
// them: "!glob" takes it out, then "+path" puts it back, then "-path"
// takes it out.
func applyPatterns(enabled bool, p string, patterns []string, baseDir string) bool {
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "!") && globMatch(pat[1:], p, baseDir) {
			enabled = false
		}
	}
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "+") && exactMatch(pat[1:], p, baseDir) {
			enabled = true
		}
	}
	for _, pat := range patterns {
		if strings.HasPrefix(pat, "-") && exactMatch(pat[1:], p, baseDir) {
			enabled = false
		}
	}
	return enabled
}

// SetResource turns one resource on or off for threads that load
// afterwards (spec resource/set): in the settings of the scope that
// defines it, under its type's key, any "+path"/"-path" entry naming it is
// replaced by "+path" (enabled) or "-path" (disabled), path relative to the
// scope's folder when inside it. Other entries keep their order.
//
// Errors: [*ParamError] for an unknown type ("type"), a path that is not
// one of the resources [Store.Resources] lists for cwd ("path"), and a
// path inside cwd's project when the project is not trusted ("cwd", Reason
// ReasonUntrusted); [*CorruptError] when the settings file does not parse;
// a settings value under the type's key that is not an array of strings;
// lock, read and write failures.
func (s *Store) SetResource(ctx context.Context, cwd, typ, p string, enabled bool) error {
	if !slices.Contains(ResourceTypes, typ) {
		return &ParamError{Field: "type", Message: fmt.Sprintf("%q is not one of %s", typ, strings.Join(ResourceTypes, ", "))}
	}
	if p == "" {
		return &ParamError{Field: "path", Message: "is required"}
	}
	set, err := s.Resources(ctx, cwd)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(set.Resources, func(r Resource) bool { return r.Type == typ && r.Path == filepath.Clean(p) })
	if i < 0 {
		if set.Project != "" && !set.Trusted && within(set.Project, p) {
			return &ParamError{Reason: ReasonUntrusted, Message: fmt.Sprintf("project %s is not trusted: its resources are not loaded", set.Project)}
		}
		return &ParamError{Field: "path", Message: fmt.Sprintf("%s is not one of the %s resource/list reports", p, typ)}
	}
	r := set.Resources[i]
	if r.Origin == OriginPlugin {
		return &ParamError{Field: "path", Reason: ReasonPluginResource,
			Message: fmt.Sprintf("%s belongs to plugin %s: turn the plugin on or off with plugin/set", p, r.Source)}
	}
	file, lockPath, baseDir := s.GlobalPath(), s.GlobalPath()+".lock", s.agentDir
	if r.Scope == ScopeProject {
		file = ProjectPath(set.Project)
		lockPath, baseDir = filepath.Dir(file), filepath.Dir(file)
	}
	sign := "-"
	if enabled {
		sign = "+"
	}
	if p := set.pkgs[typ+"\x00"+r.Path]; p != nil {
		_, err = updateFile(ctx, file, lockPath, 0, nil, migrate, func(o *object) (bool, error) {
			return p.setFilter(o, file, typ, r.Path, sign)
		})
		return err
	}
	entry := r.Path
	if rel, err := filepath.Rel(baseDir, r.Path); err == nil && within(baseDir, r.Path) {
		entry = filepath.ToSlash(rel)
	}
	_, err = updateFile(ctx, file, lockPath, 0, nil, migrate, func(o *object) (bool, error) {
		var list []string
		if v, ok := o.get(typ); ok {
			raw, isRaw := v.(json.RawMessage)
			if !isRaw || json.Unmarshal(raw, &list) != nil {
				return false, fmt.Errorf("config: %s in %s is not an array of strings; it was left as it is", typ, file)
			}
		}
		raw, err := json.Marshal(withPattern(list, r.Path, baseDir, sign+entry))
		if err != nil {
			return false, err
		}
		if old, ok := o.get(typ); ok {
			if b, isRaw := old.(json.RawMessage); isRaw && bytes.Equal(compactRaw(b), raw) {
				return false, nil
			}
		}
		o.set(typ, json.RawMessage(raw))
		return true, nil
	})
	return err
}

// withPattern returns list without its "+path"/"-path" entries naming p
// (relative to baseDir or absolute), then pattern: the other entries keep
// their order.
func withPattern(list []string, p, baseDir, pattern string) []string {
	kept := []string{}
	for _, e := range list {
		if (strings.HasPrefix(e, "+") || strings.HasPrefix(e, "-")) && exactMatch(e[1:], p, baseDir) {
			continue
		}
		kept = append(kept, e)
	}
	return append(kept, pattern)
}

func compactRaw(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
