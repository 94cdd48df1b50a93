package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knightcode/knightcode/internal/safefile"
)

// PackagesKey is the settings key listing a scope's packages
// (EXTENSIBILITY.md §8, pi's packages.md): each entry a source string
// ("npm:@scope/x@1.2.3", "git:github.com/o/r@v1", "https://host/o/r",
// "/abs/dir", "./rel/dir") or an object {"source": ..., "extensions":
// [...], "skills": [...], "prompts": [...], "themes": [...]} whose lists
// filter what the package offers.
const PackagesKey = "packages"

// OriginPackage is the Resource.Origin of a package's resource; its
// Source is the package's source string.
const OriginPackage = "package"

// pkg is one package entry of a scope's settings, resolved to where it is
// installed.
type pkg struct {
	index    int    // its position in the scope's packages array
	source   string // its source string, as written
	identity string // npm: its name; git: host/path; local: its absolute path
	root     string // where it is on disk (a folder, or one extension file)
	// filters are the object form's per-type lists (a type absent: all
	// of it; present and empty: none).
	filters map[string][]string
}

// packages reads the scope's packages setting: the entries in order,
// with a warning for each malformed one.
func (rs resourceScope) packages(set *ResourceSet) []pkg {
	v, ok := rs.settings[PackagesKey]
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		set.warn(rs.file, "malformed settings: %s must be an array of package sources or {source, ...} objects, got %s; it is ignored", PackagesKey, shortJSON(v))
		return nil
	}
	var out []pkg
	for i, e := range list {
		p := pkg{index: i}
		switch e := e.(type) {
		case string:
			p.source = e
		case map[string]any:
			p.source, _ = e["source"].(string)
			p.filters = map[string][]string{}
			for _, typ := range ResourceTypes {
				f, has := e[typ]
				if !has {
					continue
				}
				l, err := stringList(f)
				if err != nil {
					set.warn(rs.file, "malformed settings: %s[%d].%s must be an array of strings, got %s; the package loads none of its %s", PackagesKey, i, typ, shortJSON(f), typ)
				}
				p.filters[typ] = l
			}
		}
		if strings.TrimSpace(p.source) == "" || strings.ContainsRune(p.source, 0) {
			set.warn(rs.file, "malformed settings: %s[%d] must be a source string or an object with a \"source\" string, got %s; it is ignored", PackagesKey, i, shortJSON(e))
			continue
		}
		var err error
		p.identity, p.root, err = packageLocation(rs.baseDir, p.source)
		if err != nil {
			set.warn(rs.file, "package %q: %v", p.source, err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// packageLocation returns a package source's identity (pi's: an npm
// package's name, a git repository's host/path without its ref, a local
// path's absolute path) and where it is installed under baseDir (the
// scope's folder: agentDir, or <project>/.knightcode): npm packages in
// <baseDir>/npm/node_modules/<name>, git repositories in
// <baseDir>/packages/git/<host>/<path>; a local path as it is (relative
// to baseDir).
func packageLocation(baseDir, source string) (identity, root string, err error) {
	switch {
	case strings.HasPrefix(source, "npm:"):
		name := strings.TrimPrefix(source, "npm:")
		at := strings.LastIndex(name, "@")
		if at > 0 {
			name = name[:at]
		}
		if name == "" || strings.HasPrefix(name, ".") || strings.Contains(name, "..") || strings.Count(name, "/") > 1 ||
			(strings.Contains(name, "/") && !strings.HasPrefix(name, "@")) {
			return "", "", fmt.Errorf("%q is not an npm package name", name)
		}
		return "npm:" + name, filepath.Join(baseDir, "npm", "node_modules", filepath.FromSlash(name)), nil
	case strings.HasPrefix(source, "git:"), strings.HasPrefix(source, "https://"), strings.HasPrefix(source, "http://"),
		strings.HasPrefix(source, "ssh://"), strings.HasPrefix(source, "git://"):
		host, repo, err := gitRepository(source)
		if err != nil {
			return "", "", err
		}
		return "git:" + host + "/" + repo, filepath.Join(baseDir, "packages", "git", host, filepath.FromSlash(repo)), nil
	}
	abs, err := resolvePath(baseDir, source)
	if err != nil {
		return "", "", err
	}
	return abs, abs, nil
}

// gitRepository splits a git package source into its host and repository
// path, without the "@ref" and ".git" suffixes: "git:github.com/o/r@v1",
// "git:git@github.com:o/r", "https://github.com/o/r", "ssh://git@host/o/r".
func gitRepository(source string) (host, repo string, err error) {
	s := strings.TrimPrefix(source, "git:")
	if strings.Contains(s, "://") {
		u, perr := url.Parse(s)
		if perr != nil {
			return "", "", perr
		}
		host, repo = u.Hostname(), strings.Trim(u.Path, "/")
	} else {
		if at := strings.Index(s, "@"); at >= 0 && strings.Contains(s[at:], ":") && !strings.Contains(s[:at], "/") {
			s = strings.Replace(s[at+1:], ":", "/", 1) // git@host:o/r
		}
		host, repo, _ = strings.Cut(s, "/")
	}
	if at := strings.LastIndex(repo, "@"); at >= 0 {
		repo = repo[:at]
	}
	repo = strings.TrimSuffix(repo, ".git")
	if host == "" || repo == "" || slices.Contains(strings.Split(repo, "/"), "..") || strings.ContainsAny(host, "/\\") || host == ".." {
		return "", "", fmt.Errorf("%q is not a git repository (host/path)", source)
	}
	return host, repo, nil
}

// resources lists what the package offers of typ (absolute paths, in
// order) and whether each is enabled by its entry's filter (pi's package
// rules): a manifest (package.json "knightcode", else "pi") lists each
// type's files, folders and globs relative to the package root, "!glob"
// excluding; a type it does not list, or a package without a manifest,
// has the conventional folder (<root>/extensions/, skills/, ...). A root
// that is a file is one extension. The entry's filter for typ, when
// present, narrows it: [] enables none; its plain entries (globs) enable
// only what they match; then "!glob" disables, "+path" enables and
// "-path" disables exact paths relative to the root.
func (p pkg) resources(typ string) (paths []string, enabled []bool) {
	if isFile(p.root) {
		if typ != ResourceExtensions {
			return nil, nil
		}
		paths = []string{p.root}
	} else {
		paths = p.manifest(typ)
	}
	filter, has := p.filters[typ]
	var includes []string
	for _, f := range filter {
		if f != "" && !strings.ContainsAny(f[:1], "!+-") {
			includes = append(includes, f)
		}
	}
	for _, r := range paths {
		on := true
		if has {
			switch {
			case len(filter) == 0:
				on = false
			case len(includes) > 0:
				on = slices.ContainsFunc(includes, func(f string) bool { return packageMatch(f, r, p.root) })
			}
			on = applyPatterns(on, r, filter, p.root)
		}
		enabled = append(enabled, on)
	}
	return paths, enabled
}

// packageMatch reports whether a package list entry (a path or glob
// relative to root) names r: r itself, a folder holding it, or a glob
// matching it or a folder holding it.
func packageMatch(entry, r, root string) bool {
	entry = strings.TrimSuffix(strings.TrimPrefix(filepath.ToSlash(entry), "./"), "/")
	rel, err := filepath.Rel(root, r)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for cand := rel; cand != "." && cand != "/"; cand = path.Dir(cand) {
		if ok, _ := path.Match(entry, cand); ok || entry == cand {
			return true
		}
	}
	return false
}

// manifest lists the package's resources of typ (see [pkg.resources]).
func (p pkg) manifest(typ string) []string {
	var lists map[string]json.RawMessage
	if data, err := safefile.ReadFile(filepath.Join(p.root, "package.json"), safefile.ConfigLimit); err == nil {
		var m struct {
			Knightcode map[string]json.RawMessage `json:"knightcode"`
			Pi         map[string]json.RawMessage `json:"pi"`
		}
		if json.Unmarshal(data, &m) == nil {
			lists = m.Knightcode
			if lists == nil {
				lists = m.Pi
			}
		}
	}
	var entries []string
	if raw, ok := lists[typ]; !ok || json.Unmarshal(raw, &entries) != nil {
		return collect(typ, filepath.Join(p.root, typ))
	}
	var out, excludes []string
	for _, e := range entries {
		if strings.HasPrefix(e, "!") {
			excludes = append(excludes, e)
			continue
		}
		matches := []string{filepath.Join(p.root, filepath.FromSlash(e))}
		if strings.ContainsAny(e, "*?[") {
			matches, _ = filepath.Glob(matches[0])
		}
		for _, m := range matches {
			if !within(p.root, m) {
				continue
			}
			if isDir(m) {
				out = append(out, collect(typ, m)...)
			} else if isFile(m) {
				out = append(out, m)
			}
		}
	}
	out = slices.DeleteFunc(out, func(r string) bool { return !enabledByPatterns(r, excludes, p.root) })
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(r string) bool {
		dup := seen[r]
		seen[r] = true
		return dup
	})
}

// setFilter (SetResource on a package's resource) writes sign ("+" or
// "-") and r's path relative to the package root into the filter of p's
// entry in o's packages array, for typ: a string entry becomes the object
// {"source": <it>, typ: [pattern]}; an object entry's list for typ loses
// the "+"/"-" patterns naming r and gains the new one at its end. The
// array's other entries, and the object's other keys, keep their order
// and bytes. Errors: the array or the entry is no longer what
// resource/list read (the file changed meanwhile).
func (p *pkg) setFilter(o *object, file, typ, r, sign string) (bool, error) {
	changed := fmt.Errorf("config: %s in %s changed while it was updated; list the resources again", PackagesKey, file)
	v, ok := o.get(PackagesKey)
	raw, isRaw := v.(json.RawMessage)
	var entries []json.RawMessage
	if !ok || !isRaw || json.Unmarshal(raw, &entries) != nil || p.index >= len(entries) {
		return false, changed
	}
	rel, err := filepath.Rel(p.root, r)
	if err != nil || !within(p.root, r) {
		return false, changed
	}
	rel = filepath.ToSlash(rel)
	var entry *object
	var src string
	if json.Unmarshal(entries[p.index], &src) == nil {
		entry = newObject()
		b, err := json.Marshal(src)
		if err != nil {
			return false, err
		}
		entry.set("source", json.RawMessage(b))
	} else if entry, err = decodeObject(entries[p.index]); err != nil {
		return false, changed
	} else if sv, _ := entry.get("source"); sv == nil {
		return false, changed
	} else if sr, isRaw := sv.(json.RawMessage); !isRaw || json.Unmarshal(sr, &src) != nil {
		return false, changed
	}
	if src != p.source {
		return false, changed
	}
	var list []string
	if l, ok := entry.get(typ); ok {
		lr, isRaw := l.(json.RawMessage)
		if !isRaw || json.Unmarshal(lr, &list) != nil {
			return false, fmt.Errorf("config: %s[%d].%s in %s is not an array of strings; it was left as it is", PackagesKey, p.index, typ, file)
		}
	}
	lb, err := json.Marshal(withPattern(list, r, p.root, sign+rel))
	if err != nil {
		return false, err
	}
	entry.set(typ, json.RawMessage(lb))
	var buf bytes.Buffer
	if err := entry.writeCompact(&buf); err != nil {
		return false, err
	}
	if bytes.Equal(compactRaw(entries[p.index]), buf.Bytes()) {
		return false, nil
	}
	entries[p.index] = buf.Bytes()
	out, err := json.Marshal(entries)
	if err != nil {
		return false, err
	}
	o.set(PackagesKey, json.RawMessage(out))
	return true, nil
}
