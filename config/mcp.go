package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mvdan.cc/sh/v3/syntax"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/knightcode/knightcode/internal/coreerr"
)

// MCPFile is the MCP servers file's name: <agentDir>/mcp.json (global) and
// <project>/.knightcode/mcp.json (project).
const MCPFile = "mcp.json"

// mcpServersKey is the top-level member holding the servers, as in Claude
// Code's .mcp.json.
const mcpServersKey = "mcpServers"

// MCP transports (MCPServer.Transport): an entry with command is stdio, one
// with url is http (type "sse" included: it lists as http).
const (
	MCPTransportStdio = "stdio"
	MCPTransportHTTP  = "http"
)

// MCP exposures (an entry's exposure; EXTENSIBILITY.md §2): direct, the
// default, makes each tool a model tool; search puts the server's tools
// behind one mcp tool.
const (
	MCPExposureDirect = "direct"
	MCPExposureSearch = "search"
)

// Reasons of an mcp/add refusal (ParamError.Reason, sent as data.reason).
const (
	ReasonProjectAuth = coreerr.ReasonProjectAuth
	ReasonUnsupported = coreerr.ReasonUnsupported
	ReasonIncomplete  = coreerr.ReasonIncomplete
)

// mcpName is the shape of a server name: it becomes part of tool names
// (mcp__<server>__<tool>), so no dots or spaces.
var mcpName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// overrideKeys are the keys a project override may hold.
var overrideKeys = []string{"enabled", "exposure", "enabledTools", "disabledTools"}

// MCPServer is one row of mcp/list: the server's Name; the Scope and file
// (Source) of its effective definition; Override, the project file whose
// override entry applies to a global server ("" when none); Transport
// (stdio or http); Target, the command line (POSIX shell quoting) or the
// URL (password removed), before ${VAR} expansion; its Description;
// whether it is Enabled; and its Exposure (direct or search). It never
// holds an env or header value.
type MCPServer struct {
	Name        string `json:"name"`
	Scope       Scope  `json:"scope"`
	Source      string `json:"source"`
	Override    string `json:"override,omitempty"`
	Transport   string `json:"transport"`
	Target      string `json:"target"`
	Description string `json:"description,omitempty"`
	Enabled     bool   `json:"enabled"`
	Exposure    string `json:"exposure"`
}

// MCPList is one read of the MCP servers files (spec mcp/list): the
// servers by name, the problems found in the files (source "settings",
// with the file and, when known, line and column), and the files read:
// Paths.Project is set when the read had a cwd, whether or not the project
// is trusted and the file exists.
type MCPList struct {
	Servers []MCPServer
	Errors  []Warning
	Paths   Paths
	// project is the trusted project's file, "" when it was not read.
	project string
}

// mcpEntry is one valid entry of an mcpServers object, as read.
type mcpEntry struct {
	override    bool // only override keys, no command or url
	transport   string
	target      string
	description string
	enabled     *bool
	exposure    string
	// raw is the entry as written (compact JSON), decoded by MCPServers.
	raw []byte
}

// mcpProblem is what is wrong with one key of an entry: Key is the entry's
// key at fault ("" for the entry as a whole), Reason a ParamError reason,
// and drop says the entry loads without the key (a hand-edited file);
// otherwise the entry is not loaded.
type mcpProblem struct {
	key, message, reason string
	drop                 bool
}

// MCPGlobalPath is <agentDir>/mcp.json.
func (s *Store) MCPGlobalPath() string { return filepath.Join(s.agentDir, MCPFile) }

// MCPProjectPath is <project>/.knightcode/mcp.json.
func MCPProjectPath(project string) string { return filepath.Join(project, ProjectDir, MCPFile) }

// CheckMCPName refuses a server name that is not a letter or digit
// followed by up to 63 letters, digits, _ or -: [*ParamError] field
// "name". Dots and spaces would break tool names.
func CheckMCPName(name string) error {
	if !mcpName.MatchString(name) {
		return &ParamError{Field: "name", Message: fmt.Sprintf("%q is not a server name: a letter or digit, then up to 63 letters, digits, _ or -", name)}
	}
	return nil
}

// checkMCPEntry checks one mcpServers entry e (an object) of a scope's file
// and returns what it is and its problems (EXTENSIBILITY.md §2 "File
// format"). Keys: command (a program), args ([string]), env ({name:
// string}, names without = ), cwd (absolute in the global file), url (http
// or https, or made of ${VAR}s), headers ({header name: string}, values
// without line breaks), type (stdio, http, streamable-http, sse; it must
// agree with command or url), enabled (bool), exposure (direct or search),
// description (string), enabledTools and disabledTools ([string]),
// startupTimeoutSec and toolTimeoutSec (an integer from 1 to 86400), auth
// ({clientId, clientSecret, scopes: [string], redirectPort}) and oauth,
// Claude Code's spelling ({clientId, callbackPort, scopes: a string or
// [string], authServerMetadataUrl: https}), both global file only. No
// string may hold a NUL byte. An entry has exactly one of command and url,
// except an override, which has neither and only the override keys.
// headersHelper is not supported; any other key is unknown. Problems never
// quote an env or header value.
func checkMCPEntry(e *object, scope Scope) (mcpEntry, []mcpProblem) {
	var ent mcpEntry
	var probs []mcpProblem
	bad := func(key, format string, args ...any) {
		probs = append(probs, mcpProblem{key: key, message: fmt.Sprintf(format, args...)})
	}
	str := func(key string) (string, bool) {
		v, ok := e.get(key)
		if !ok {
			return "", false
		}
		var s string
		if raw, ok := v.(json.RawMessage); !ok || json.Unmarshal(raw, &s) != nil {
			bad(key, "must be a string")
			return "", false
		}
		return s, true
	}
	strList := func(key string) []string {
		v, ok := e.get(key)
		if !ok {
			return nil
		}
		var l []string
		if raw, ok := v.(json.RawMessage); !ok || json.Unmarshal(raw, &l) != nil || l == nil {
			bad(key, "must be an array of strings")
		}
		return l
	}
	// strMap checks an object of strings: each name passes nameOK, no
	// value holds a NUL byte (nor, for headers, a line break). Messages
	// never quote a value.
	strMap := func(key string, nameOK func(string) bool, valueBad string) {
		v, ok := e.get(key)
		if !ok {
			return
		}
		sub, ok := v.(*object)
		if !ok {
			bad(key, "must be an object of strings")
			return
		}
		for _, k := range sub.keys {
			var s string
			raw, ok := sub.vals[k].(json.RawMessage)
			switch {
			case !nameOK(k):
				bad(key, "has the name %q, which cannot be one", k)
				return
			case !ok || json.Unmarshal(raw, &s) != nil:
				bad(key, "must be an object of strings (%s is not a string)", k)
				return
			case strings.ContainsAny(s, valueBad):
				bad(key, "%s's value holds a control character", k)
				return
			}
		}
	}
	checkAuth := func(key string) {
		sub, ok := e.vals[key].(*object)
		if !ok {
			bad(key, "must be an object")
			return
		}
		for _, k := range sub.keys {
			raw, _ := sub.vals[k].(json.RawMessage)
			var str string
			var n int64
			var list []string
			isStr := raw != nil && json.Unmarshal(raw, &str) == nil
			isPort := raw != nil && json.Unmarshal(raw, &n) == nil && n >= 0 && n <= 65535
			isList := raw != nil && json.Unmarshal(raw, &list) == nil && list != nil
			at := key + "." + k
			switch {
			case k == "clientId" || (k == "clientSecret" && key == "auth"):
				if !isStr || str == "" {
					bad(at, "must be a non-empty string")
				}
			case k == "scopes":
				if !isList && !(key == "oauth" && isStr) {
					bad(at, "must be an array of strings")
				}
			case (k == "redirectPort" && key == "auth") || (k == "callbackPort" && key == "oauth"):
				if !isPort {
					bad(at, "must be a port: an integer from 0 to 65535")
				}
			case k == "authServerMetadataUrl" && key == "oauth":
				if u, err := url.Parse(str); !isStr || err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
					bad(at, "must be an https URL")
				}
			default:
				probs = append(probs, mcpProblem{key: at, message: "is not a key of " + key, drop: true})
			}
		}
	}
	for _, k := range e.keys {
		switch k {
		case "command", "args", "env", "cwd", "url", "headers", "type", "enabled", "exposure", "description",
			"enabledTools", "disabledTools", "startupTimeoutSec", "toolTimeoutSec":
		case "auth", "oauth":
			if scope == ScopeProject {
				probs = append(probs, mcpProblem{key: k, message: "is read only from the global file", reason: ReasonProjectAuth, drop: true})
			} else {
				checkAuth(k)
			}
		case "headersHelper":
			probs = append(probs, mcpProblem{key: k, message: "is not supported (a command that prints headers): set headers", reason: ReasonUnsupported, drop: true})
		default:
			probs = append(probs, mcpProblem{key: k, message: "is not a key of an mcpServers entry", drop: true})
		}
	}
	command, hasCommand := str("command")
	rawURL, hasURL := str("url")
	typ, hasType := str("type")
	args := strList("args")
	for i, a := range args {
		if strings.IndexByte(a, 0) >= 0 {
			bad("args", "[%d] holds a NUL byte", i)
		}
	}
	strMap("env", func(n string) bool { return n != "" && !strings.ContainsAny(n, "=\x00") }, "\x00")
	strMap("headers", isToken, "\x00\r\n")
	strList("enabledTools")
	strList("disabledTools")
	if cwd, ok := str("cwd"); ok {
		switch {
		case cwd == "" || strings.IndexByte(cwd, 0) >= 0:
			bad("cwd", "must be a directory's path")
		case scope == ScopeGlobal && !filepath.IsAbs(cwd):
			bad("cwd", "must be an absolute path in the global file, got %q", cwd)
		}
	}
	ent.description, _ = str("description")
	if v, ok := e.get("enabled"); ok {
		var b bool
		if raw, ok := v.(json.RawMessage); !ok || json.Unmarshal(raw, &b) != nil {
			bad("enabled", "must be true or false")
		} else {
			ent.enabled = &b
		}
	}
	if x, ok := str("exposure"); ok {
		if x != MCPExposureDirect && x != MCPExposureSearch {
			bad("exposure", "must be direct or search, got %q", x)
		}
		ent.exposure = x
	}
	for _, k := range []string{"startupTimeoutSec", "toolTimeoutSec"} {
		if v, ok := e.get(k); ok {
			var n int64
			if raw, ok := v.(json.RawMessage); !ok || json.Unmarshal(raw, &n) != nil || n < 1 || n > 86_400 {
				bad(k, "must be an integer from 1 to 86400 (seconds)")
			}
		}
	}
	switch {
	case hasCommand && hasURL:
		bad("", "has both command and url: give one")
	case hasCommand:
		if strings.TrimSpace(command) == "" || strings.IndexByte(command, 0) >= 0 {
			bad("command", "must name a program")
		}
		if hasType && typ != "stdio" {
			bad("type", "%q does not take command (stdio does)", typ)
		}
		if _, ok := e.get("headers"); ok {
			bad("headers", "is for a url server, not a command")
		}
		ent.transport = MCPTransportStdio
		ent.target = shellQuote(append([]string{command}, args...))
	case hasURL:
		// A URL made of ${VAR}s is checked when it is expanded, at connect
		// time; it lists as written.
		u, err := url.Parse(rawURL)
		switch {
		case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
			ent.target = u.Redacted()
		case strings.Contains(rawURL, "${") && strings.IndexFunc(rawURL, unicode.IsControl) < 0:
			ent.target = rawURL
		default:
			bad("url", "must be an http or https URL")
		}
		if hasType && typ != "http" && typ != "streamable-http" && typ != "sse" {
			bad("type", "%q does not take url (http, streamable-http or sse do)", typ)
		}
		for _, k := range []string{"args", "env", "cwd"} {
			if _, ok := e.get(k); ok {
				bad(k, "is for a command server, not a url")
			}
		}
		ent.transport = MCPTransportHTTP
	default:
		ent.override = true
		for _, k := range e.keys {
			if !slices.Contains(overrideKeys, k) {
				probs = append(probs, mcpProblem{message: "needs command or url (an override holds only enabled, exposure, enabledTools and disabledTools)",
					reason: ReasonIncomplete})
				break
			}
		}
	}
	return ent, probs
}

// isToken reports whether s is an HTTP header name (RFC 9110 token).
func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	}) < 0
}

// shellQuote joins argv as a POSIX shell command line, each word quoted
// where it needs to be (mvdan.cc/sh's syntax.Quote); a word POSIX cannot
// quote (a NUL byte, which entries never hold) is shown Go-quoted.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangPOSIX)
		if err != nil {
			q = strconv.Quote(a)
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}

// mcpFile is one MCP servers file as read: its valid entries by name and in
// file order, and its problems as warnings.
type mcpFile struct {
	names    []string
	entries  map[string]mcpEntry
	warnings []Warning
}

// readMCPFile reads the mcpServers of path (scope's file). A missing file
// has none. A file that does not parse, or whose mcpServers is not an
// object, is one warning and no servers; an entry with a problem is a
// warning with the key's line and column and is left out, except for an
// unknown key, headersHelper, and auth in a project file, without which
// it loads. A file that cannot be read (not a regular file, such as a FIFO,
// or over safefile.ConfigLimit, or a read failure) is one warning naming the
// file and why, and no servers: never a hang, never the whole list's error.
func readMCPFile(path string, scope Scope) (mcpFile, error) {
	f := mcpFile{entries: map[string]mcpEntry{}}
	data, o, w, err := readObjectFile(path, "MCP servers file")
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // readObjectFile's "config: read ..." prefix
		}
		f.warnings = append(f.warnings, Warning{Message: fmt.Sprintf("the MCP servers file cannot be read; its servers are left out: %v", err), Source: WarningSourceSettings, Path: path})
		return f, nil
	}
	if data == nil {
		return f, nil
	}
	if w != nil {
		f.warnings = append(f.warnings, *w)
		return f, nil
	}
	v, ok := o.get(mcpServersKey)
	if !ok {
		return f, nil
	}
	servers, ok := v.(*object)
	if !ok {
		f.warnings = append(f.warnings, Warning{Message: `"mcpServers" is not an object (ignored)`, Source: WarningSourceSettings, Path: path})
		return f, nil
	}
	pos := keyOffsets(data)
	warn := func(at []string, msg string) {
		w := Warning{Message: msg, Source: WarningSourceSettings, Path: path}
		if off, ok := pos[strings.Join(at, "\x00")]; ok {
			w.Line, w.Column = lineColumn(data, off)
		}
		f.warnings = append(f.warnings, w)
	}
	for _, name := range servers.keys {
		at := []string{mcpServersKey, name}
		if CheckMCPName(name) != nil {
			warn(at, fmt.Sprintf("MCP server %q (ignored): a name is a letter or digit, then up to 63 letters, digits, _ or -", name))
			continue
		}
		e, ok := servers.vals[name].(*object)
		if !ok {
			warn(at, fmt.Sprintf("MCP server %s (ignored): the entry is not an object", name))
			continue
		}
		ent, probs := checkMCPEntry(e, scope)
		skip := false
		for _, p := range probs {
			where := at
			msg := fmt.Sprintf("MCP server %s: %s", name, p.message)
			if p.key != "" {
				where = append(slices.Clone(at), strings.Split(p.key, ".")...)
				msg = fmt.Sprintf("MCP server %s: %s %s", name, p.key, p.message)
			}
			if p.drop {
				msg += " (ignored)"
			} else {
				skip = true
				msg += " (server not loaded)"
			}
			warn(where, msg)
		}
		if skip || (ent.override && scope == ScopeGlobal) {
			if !skip {
				warn(at, fmt.Sprintf("MCP server %s: needs command or url (server not loaded)", name))
			}
			continue
		}
		var buf bytes.Buffer
		if err := e.writeCompact(&buf); err != nil {
			return f, err
		}
		ent.raw = buf.Bytes()
		f.names = append(f.names, name)
		f.entries[name] = ent
	}
	return f, nil
}

// keyOffsets maps the path of every object key of the JSON document data
// (its segments joined by NUL) to the offset just past the key's opening
// quote, for lineColumn. data must be valid JSON.
func keyOffsets(data []byte) map[string]int64 {
	out := map[string]int64{}
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(at []string) bool
	walk = func(at []string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := tok.(string)
				end := dec.InputOffset() // just past the closing quote
				start := bytes.LastIndexByte(data[:max(end-1, 0)], '"')
				sub := append(slices.Clone(at), key)
				out[strings.Join(sub, "\x00")] = int64(start) + 1
				if !walk(sub) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !walk(at) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	walk(nil)
	return out
}

// MCPList reads the MCP servers a thread in cwd would use (spec mcp/list):
// those of <agentDir>/mcp.json and, when cwd's project is explicitly
// trusted (for a managed worktree, the project it was made from, as for
// settings), of <project>/.knightcode/mcp.json. A project entry with
// command or url is a project server and wins over a global one of the
// same name; a project entry holding only override keys (enabled,
// exposure, enabledTools, disabledTools) naming a global server is an
// override: the row keeps the global scope and source and gains Override,
// with the override's enabled and exposure. An override naming no server
// is an error ("override for unknown server X"). Rows are in name order;
// enabled defaults to true and exposure to direct.
//
// Errors: the trust store's ([*ParamError] field "cwd" for a cwd that is
// not an existing directory); a file that exists but cannot be read. A
// file that does not parse is not an error: it is in MCPList.Errors.
func (s *Store) MCPList(ctx context.Context, cwd string) (*MCPList, error) {
	l, _, _, err := s.readMCP(ctx, cwd)
	return l, err
}

// readMCP reads the files of [Store.MCPList] and returns the list with the
// global and (when read) project files.
func (s *Store) readMCP(ctx context.Context, cwd string) (*MCPList, mcpFile, mcpFile, error) {
	l := &MCPList{Paths: Paths{Global: s.MCPGlobalPath()}, Servers: []MCPServer{}}
	var project mcpFile
	if cwd != "" {
		t, err := s.trustOf(ctx, cwd)
		if err != nil {
			return nil, project, project, err
		}
		l.Paths.Project = MCPProjectPath(t.Project)
		if t.Trusted != nil && *t.Trusted {
			l.project = l.Paths.Project
			if project, err = readMCPFile(l.project, ScopeProject); err != nil {
				return nil, project, project, err
			}
		}
	}
	global, err := readMCPFile(l.Paths.Global, ScopeGlobal)
	if err != nil {
		return nil, global, project, err
	}
	l.Errors = append(global.warnings, project.warnings...)
	row := func(name string, e mcpEntry, scope Scope, source string) MCPServer {
		r := MCPServer{Name: name, Scope: scope, Source: source, Transport: e.transport, Target: e.target,
			Description: e.description, Enabled: e.enabled == nil || *e.enabled, Exposure: e.exposure}
		if r.Exposure == "" {
			r.Exposure = MCPExposureDirect
		}
		return r
	}
	for _, name := range global.names {
		if p, ok := project.entries[name]; ok && !p.override {
			continue
		}
		r := row(name, global.entries[name], ScopeGlobal, l.Paths.Global)
		if p, ok := project.entries[name]; ok {
			r.Override = l.project
			if p.enabled != nil {
				r.Enabled = *p.enabled
			}
			if p.exposure != "" {
				r.Exposure = p.exposure
			}
		}
		l.Servers = append(l.Servers, r)
	}
	for _, name := range project.names {
		p := project.entries[name]
		if !p.override {
			l.Servers = append(l.Servers, row(name, p, ScopeProject, l.project))
		} else if _, ok := global.entries[name]; !ok {
			l.Errors = append(l.Errors, Warning{Message: fmt.Sprintf("override for unknown server %s", name),
				Source: WarningSourceSettings, Path: l.project})
		}
	}
	slices.SortFunc(l.Servers, func(a, b MCPServer) int { return strings.Compare(a.Name, b.Name) })
	return l, global, project, nil
}

// MCPAddRequest is one mcp/add: put Config, an mcpServers entry (a JSON
// object, stored as given: ${VAR} is expanded only at connect time), under
// Name in the Scope's file. Cwd is required for ScopeProject.
type MCPAddRequest struct {
	Scope  Scope
	Cwd    string
	Name   string
	Config json.RawMessage
}

// MCPAdd adds the entry, or replaces the entry of that name in place
// (spec mcp/add), and reports whether it replaced one. Config is checked
// as an mcpServers entry ([checkMCPEntry]) with every problem refused. In
// the project file, a Config holding only override keys for a global
// server (one the global file defines) is stored as that server's
// override. The file is written under the same per-file queue, flock and
// atomic write as config/write, keys and their order kept; the global file
// is written 0600 ([mcpPerm]), as by MCPUpdate and MCPRemove.
//
// Errors: [*ParamError] for a bad scope ("scope"), name ("name"), a Config
// that is not an object ("config"), a bad key ("config.<key>"; unknown keys
// and headersHelper, Reason "unsupported", included), auth or oauth in a
// project file ("config.auth", Reason "projectAuth"), a Config with
// neither command nor url that is no override of a global server
// ("config", Reason "incomplete"), a project write without cwd or at an
// untrusted project (as [Store.Write]); [*CorruptError] when the file does
// not parse or its mcpServers is not an object (it is left as it is); lock,
// read and write failures.
func (s *Store) MCPAdd(ctx context.Context, req MCPAddRequest) (bool, error) {
	if req.Scope != ScopeGlobal && req.Scope != ScopeProject {
		return false, &ParamError{Field: "scope", Message: fmt.Sprintf("%q is not global or project", req.Scope)}
	}
	if err := CheckMCPName(req.Name); err != nil {
		return false, err
	}
	raw := bytes.TrimSpace(req.Config)
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return false, &ParamError{Field: "config", Message: "must be a JSON object (an mcpServers entry)"}
	}
	entry, err := decodeObject(json.RawMessage(raw))
	if err != nil {
		return false, &ParamError{Field: "config", Message: err.Error()}
	}
	ent, probs := checkMCPEntry(entry, req.Scope)
	for _, p := range probs {
		if p.reason == ReasonIncomplete {
			continue // decided below: an override needs its global server
		}
		field := "config"
		if p.key != "" {
			field += "." + p.key
		}
		if p.reason == ReasonProjectAuth {
			p.message = "is taken only in the global file (" + s.MCPGlobalPath() + ")"
		}
		return false, &ParamError{Field: field, Message: p.message, Reason: p.reason}
	}
	path, lockPath, err := s.writeTarget(ctx, req.Scope, req.Cwd, MCPFile)
	if err != nil {
		return false, err
	}
	if ent.override {
		incomplete := &ParamError{Field: "config", Reason: ReasonIncomplete,
			Message: "needs command or url (only a project file's override of a global server holds just enabled, exposure, enabledTools or disabledTools)"}
		if req.Scope == ScopeProject && len(probs) == 0 {
			incomplete.Message = "needs command or url: there is no global server " + req.Name + " for it to override"
		}
		if req.Scope != ScopeProject || len(probs) > 0 {
			return false, incomplete
		}
		global, err := readMCPFile(s.MCPGlobalPath(), ScopeGlobal)
		if err != nil {
			return false, err
		}
		if _, ok := global.entries[req.Name]; !ok {
			return false, incomplete
		}
	}
	replaced := false
	_, err = updateFile(ctx, path, lockPath, mcpPerm(req.Scope), nil, nil, func(o *object) (bool, error) {
		servers, err := mcpServersOf(o, path, true)
		if err != nil {
			return false, err
		}
		_, replaced = servers.get(req.Name)
		servers.set(req.Name, entry)
		return true, nil
	})
	return replaced, err
}

// mcpPerm is the mode a write gives the scope's MCP servers file: 0600 for
// the global one (env and headers can hold secrets); the project file, part
// of the user's checkout, keeps its mode (0644 when new).
func mcpPerm(scope Scope) os.FileMode {
	if scope == ScopeGlobal {
		return 0o600
	}
	return 0
}

// mcpServersOf returns the mcpServers object of the file o (path), made
// when create is set and it is missing (nil when not). Errors:
// [*CorruptError] when it is there and not an object.
func mcpServersOf(o *object, path string, create bool) (*object, error) {
	v, ok := o.get(mcpServersKey)
	if !ok {
		if !create {
			return nil, nil
		}
		servers := newObject()
		o.set(mcpServersKey, servers)
		return servers, nil
	}
	servers, ok := v.(*object)
	if !ok {
		return nil, &CorruptError{Path: path, Err: errors.New(`"mcpServers" is not an object`)}
	}
	return servers, nil
}

// MCPRemove removes the entry name from the scope's file (spec
// mcp/remove) and reports whether it was there; removing an absent one
// changes nothing. Removing a global server leaves project overrides in
// place (mcp/list then reports them). Errors: as [Store.MCPAdd] for scope,
// name, cwd and trust; a plugin's server ("name", Reason
// [ReasonPluginServer]); [*CorruptError]; lock, read and write failures.
func (s *Store) MCPRemove(ctx context.Context, scope Scope, cwd, name string) (bool, error) {
	if err := CheckMCPName(name); err != nil {
		return false, err
	}
	if err := s.checkNotPluginServer(ctx, cwd, name); err != nil {
		return false, err
	}
	path, lockPath, err := s.writeTarget(ctx, scope, cwd, MCPFile)
	if err != nil {
		return false, err
	}
	removed := false
	_, err = updateFile(ctx, path, lockPath, mcpPerm(scope), nil, nil, func(o *object) (bool, error) {
		servers, err := mcpServersOf(o, path, false)
		if err != nil || servers == nil {
			return false, err
		}
		removed = servers.del(name)
		return removed, nil
	})
	return removed, err
}

// MCPUpdateRequest is one mcp/update: set Enabled and/or Exposure (direct
// or search) of the server Name as mcp/list {Cwd} shows it.
type MCPUpdateRequest struct {
	Cwd      string
	Name     string
	Enabled  *bool
	Exposure *string
}

// MCPUpdate saves the change where /mcp would (spec mcp/update): in the
// project override when the row has one, else in the file defining the
// server (a global server with no override is changed in the global
// file: no override is made). It returns the row as mcp/list now shows
// it. Errors: [*ParamError] for neither enabled nor exposure (""), a bad
// exposure ("exposure"), a name mcp/list {cwd} does not show ("name"), a
// plugin's server ("name", Reason [ReasonPluginServer]), and as
// [Store.MCPList]; [*CorruptError]; lock, read and write failures.
func (s *Store) MCPUpdate(ctx context.Context, req MCPUpdateRequest) (MCPServer, error) {
	if req.Enabled == nil && req.Exposure == nil {
		return MCPServer{}, &ParamError{Message: "give enabled, exposure or both"}
	}
	if req.Exposure != nil && *req.Exposure != MCPExposureDirect && *req.Exposure != MCPExposureSearch {
		return MCPServer{}, &ParamError{Field: "exposure", Message: fmt.Sprintf("must be direct or search, got %q", *req.Exposure)}
	}
	if err := CheckMCPName(req.Name); err != nil {
		return MCPServer{}, err
	}
	if err := s.checkNotPluginServer(ctx, req.Cwd, req.Name); err != nil {
		return MCPServer{}, err
	}
	find := func(l *MCPList) (MCPServer, error) {
		for _, r := range l.Servers {
			if r.Name == req.Name {
				return r, nil
			}
		}
		return MCPServer{}, &ParamError{Field: "name", Message: fmt.Sprintf("no MCP server %s (mcp/list lists the servers)", req.Name)}
	}
	l, err := s.MCPList(ctx, req.Cwd)
	if err != nil {
		return MCPServer{}, err
	}
	row, err := find(l)
	if err != nil {
		return MCPServer{}, err
	}
	scope, file := row.Scope, row.Source
	if row.Override != "" {
		scope, file = ScopeProject, row.Override
	}
	path, lockPath, err := s.writeTarget(ctx, scope, req.Cwd, MCPFile)
	if err != nil {
		return MCPServer{}, err
	}
	if path != file {
		return MCPServer{}, fmt.Errorf("config: mcp/update of %s: %s is not %s", req.Name, path, file)
	}
	_, err = updateFile(ctx, path, lockPath, mcpPerm(scope), nil, nil, func(o *object) (bool, error) {
		servers, err := mcpServersOf(o, path, false)
		if err != nil {
			return false, err
		}
		var entry *object
		if servers != nil {
			entry, _ = servers.vals[req.Name].(*object)
		}
		if entry == nil {
			return false, &ParamError{Field: "name", Message: fmt.Sprintf("MCP server %s was removed from %s meanwhile", req.Name, path)}
		}
		if req.Enabled != nil {
			entry.set("enabled", json.RawMessage(fmt.Sprint(*req.Enabled)))
		}
		if req.Exposure != nil {
			b, _ := json.Marshal(*req.Exposure)
			entry.set("exposure", json.RawMessage(b))
		}
		return true, nil
	})
	if err != nil {
		return MCPServer{}, err
	}
	if l, err = s.MCPList(ctx, req.Cwd); err != nil {
		return MCPServer{}, err
	}
	return find(l)
}
