package config

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MCP connection types (MCPServerConfig.Type): an entry's type as the
// runtime connects it. "streamable-http" is read as http; an entry without
// type is stdio with command, http with url.
const (
	MCPTypeStdio = "stdio"
	MCPTypeHTTP  = "http"
	MCPTypeSSE   = "sse"
)

// Default MCP timeouts (EXTENSIBILITY.md §2): startupTimeoutSec bounds a
// connect, toolTimeoutSec one tool call (a progress notification restarts
// it).
const (
	DefaultMCPStartupTimeout = 30 * time.Second
	DefaultMCPToolTimeout    = 600 * time.Second
)

// MCPServerConfig is one MCP server as a thread's runtime connects it: the
// effective entry of [Store.MCPServers], every string as written (${VAR}
// is expanded at connect time by [ExpandMCPVars]). Path is the file of
// its effective definition (a project override's keys applied to a global
// server leave it the global file), Override the project file whose
// override applies ("" when none). Cwd is absolute (a project file's
// relative cwd resolved against the project root) or "" for the thread's
// cwd. EnabledTools is nil when the entry has none (an empty allowlist
// hides every tool); DisabledTools likewise. Auth is the global file's
// auth (or oauth, read as auth), nil when none. Env and Headers hold
// secrets: never log or answer their values.
type MCPServerConfig struct {
	Name     string
	Scope    Scope
	Path     string
	Override string
	Enabled  bool
	Exposure string
	// Type is MCPTypeStdio, MCPTypeHTTP or MCPTypeSSE.
	Type           string
	Command        string
	Args           []string
	Env            map[string]string
	Cwd            string
	URL            string
	Headers        map[string]string
	StartupTimeout time.Duration
	ToolTimeout    time.Duration
	EnabledTools   []string
	DisabledTools  []string
	Auth           *MCPAuth
}

// MCPAuth is an entry's OAuth client settings (auth, or Claude Code's
// oauth: callbackPort read as RedirectPort, a space-separated scopes
// string split). Zero values are unset; ClientSecret may hold ${VAR}.
type MCPAuth struct {
	ClientID              string
	ClientSecret          string
	Scopes                []string
	RedirectPort          int
	AuthServerMetadataURL string
}

// mcpEntryJSON is an entry's keys the runtime reads.
type mcpEntryJSON struct {
	Type              string            `json:"type"`
	Command           string            `json:"command"`
	Args              []string          `json:"args"`
	Env               map[string]string `json:"env"`
	Cwd               string            `json:"cwd"`
	URL               string            `json:"url"`
	Headers           map[string]string `json:"headers"`
	StartupTimeoutSec int               `json:"startupTimeoutSec"`
	ToolTimeoutSec    int               `json:"toolTimeoutSec"`
	EnabledTools      []string          `json:"enabledTools"`
	DisabledTools     []string          `json:"disabledTools"`
	Auth              *struct {
		ClientID     string   `json:"clientId"`
		ClientSecret string   `json:"clientSecret"`
		Scopes       []string `json:"scopes"`
		RedirectPort int      `json:"redirectPort"`
	} `json:"auth"`
	OAuth *struct {
		ClientID              string          `json:"clientId"`
		CallbackPort          int             `json:"callbackPort"`
		Scopes                json.RawMessage `json:"scopes"`
		AuthServerMetadataURL string          `json:"authServerMetadataUrl"`
	} `json:"oauth"`
}

// MCPServers returns the MCP servers a thread in cwd connects, in
// configuration order: the global file's in file order, then the trusted
// project's full servers in its file order (EXTENSIBILITY.md §9 "Deterministic
// tool names": a tool name collision is decided by this order). A project
// server replaces a global one of the same name at the project's place; a
// project override sets enabled, exposure, enabledTools and disabledTools
// of its global server. Disabled servers are included (Enabled false), so
// a status can name them. Warnings are the files' problems, as
// [Store.MCPList] reports them (entries with a problem that drops them are
// not returned). Errors: as [Store.MCPList].
func (s *Store) MCPServers(ctx context.Context, cwd string) ([]MCPServerConfig, []Warning, error) {
	l, global, project, err := s.readMCP(ctx, cwd)
	if err != nil {
		return nil, nil, err
	}
	var out []MCPServerConfig
	for _, name := range global.names {
		if p, ok := project.entries[name]; ok && !p.override {
			continue
		}
		c, err := mcpServerConfig(name, global.entries[name], ScopeGlobal, l.Paths.Global, "")
		if err != nil {
			return nil, nil, err
		}
		if p, ok := project.entries[name]; ok {
			c.Override = l.project
			if err := applyMCPOverride(&c, p); err != nil {
				return nil, nil, err
			}
		}
		out = append(out, c)
	}
	root := filepath.Dir(filepath.Dir(l.project))
	for _, name := range project.names {
		if p := project.entries[name]; !p.override {
			c, err := mcpServerConfig(name, p, ScopeProject, l.project, root)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, c)
		}
	}
	return out, l.Errors, nil
}

// mcpServerConfig decodes the valid entry e of the scope's file path; a
// relative cwd resolves against root (a project file's project).
func mcpServerConfig(name string, e mcpEntry, scope Scope, path, root string) (MCPServerConfig, error) {
	var j mcpEntryJSON
	if err := json.Unmarshal(e.raw, &j); err != nil {
		return MCPServerConfig{}, fmt.Errorf("config: MCP server %s of %s: %w", name, path, err)
	}
	c := MCPServerConfig{Name: name, Scope: scope, Path: path, Enabled: e.enabled == nil || *e.enabled,
		Exposure: e.exposure, Command: j.Command, Args: j.Args, Env: j.Env, Cwd: j.Cwd, URL: j.URL, Headers: j.Headers,
		StartupTimeout: DefaultMCPStartupTimeout, ToolTimeout: DefaultMCPToolTimeout,
		EnabledTools: j.EnabledTools, DisabledTools: j.DisabledTools}
	if c.Exposure == "" {
		c.Exposure = MCPExposureDirect
	}
	switch {
	case j.Type == MCPTypeSSE:
		c.Type = MCPTypeSSE
	case e.transport == MCPTransportStdio:
		c.Type = MCPTypeStdio
	default:
		c.Type = MCPTypeHTTP
	}
	if j.StartupTimeoutSec > 0 {
		c.StartupTimeout = time.Duration(j.StartupTimeoutSec) * time.Second
	}
	if j.ToolTimeoutSec > 0 {
		c.ToolTimeout = time.Duration(j.ToolTimeoutSec) * time.Second
	}
	if c.Cwd != "" && !filepath.IsAbs(c.Cwd) && !strings.Contains(c.Cwd, "${") && root != "" {
		c.Cwd = filepath.Join(root, c.Cwd)
	}
	if scope == ScopeGlobal {
		switch {
		case j.Auth != nil:
			c.Auth = &MCPAuth{ClientID: j.Auth.ClientID, ClientSecret: j.Auth.ClientSecret, Scopes: j.Auth.Scopes, RedirectPort: j.Auth.RedirectPort}
		case j.OAuth != nil:
			c.Auth = &MCPAuth{ClientID: j.OAuth.ClientID, RedirectPort: j.OAuth.CallbackPort, AuthServerMetadataURL: j.OAuth.AuthServerMetadataURL}
			var one string
			if json.Unmarshal(j.OAuth.Scopes, &one) == nil {
				c.Auth.Scopes = strings.Fields(one)
			} else {
				_ = json.Unmarshal(j.OAuth.Scopes, &c.Auth.Scopes)
			}
		}
	}
	return c, nil
}

// applyMCPOverride applies the project override p to c.
func applyMCPOverride(c *MCPServerConfig, p mcpEntry) error {
	var j struct {
		EnabledTools  []string `json:"enabledTools"`
		DisabledTools []string `json:"disabledTools"`
	}
	if err := json.Unmarshal(p.raw, &j); err != nil {
		return fmt.Errorf("config: the override of MCP server %s: %w", c.Name, err)
	}
	if p.enabled != nil {
		c.Enabled = *p.enabled
	}
	if p.exposure != "" {
		c.Exposure = p.exposure
	}
	if j.EnabledTools != nil {
		c.EnabledTools = j.EnabledTools
	}
	if j.DisabledTools != nil {
		c.DisabledTools = j.DisabledTools
	}
	return nil
}

// ExpandMCPVars expands ${VAR} and ${VAR:-default} in s with lookup
// (os.LookupEnv when nil), at connect time (EXTENSIBILITY.md §2): ${VAR}
// of an unset variable is an error naming it (never a value); with
// ":-default" an unset or empty variable gives default. "$" not followed
// by "{" is kept as it is, and so is anything else. Errors name the
// variable, never its value.
func ExpandMCPVars(s string, lookup func(string) (string, bool)) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("an unclosed ${ in %q", s)
		}
		expr := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !isEnvName(name) {
			return "", fmt.Errorf("${%s} is not a variable name", expr)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fmt.Errorf("the environment variable %s is not set", name)
		}
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// isEnvName reports whether s is a shell variable name.
func isEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0
}

// ThreadMCPServers returns every MCP server a thread in cwd connects, in
// configuration order (EXTENSIBILITY.md §9 "Deterministic tool names"):
// the mcp.json servers as [Store.MCPServers] gives them, then the active
// plugins' servers in plugin identity order (§4 "MCP servers from
// plugins"), each under its runtime name <plugin>_<server>, enabled, its
// type inferred as an mcp.json entry's (sse when given, stdio for a
// command, else http), with
// direct exposure and the default timeouts, and Path the plugin's
// installed folder (what its warnings name). Warnings are the mcp.json
// files' problems, then the plugins' that keep them from being read.
// Errors: as [Store.MCPServers].
func (s *Store) ThreadMCPServers(ctx context.Context, cwd string) ([]MCPServerConfig, []Warning, error) {
	cfgs, warnings, err := s.MCPServers(ctx, cwd)
	if err != nil {
		return nil, nil, err
	}
	plugins, err := s.Plugins(ctx, cwd)
	if err != nil {
		// The plugins' registry does not keep the mcp.json servers
		// from connecting.
		return cfgs, append(warnings, Warning{Source: WarningSourceSettings, Message: "plugin MCP servers: " + err.Error()}), nil
	}
	for _, row := range plugins.Rows {
		for _, p := range row.ActiveServers {
			typ := MCPTypeHTTP
			switch {
			case p.Type == MCPTypeSSE:
				typ = MCPTypeSSE
			case p.Command != "":
				typ = MCPTypeStdio
			}
			cfgs = append(cfgs, MCPServerConfig{Name: p.Name, Scope: row.Scope, Path: row.Dir, Enabled: true,
				Exposure: MCPExposureDirect, Type: typ, Command: p.Command, Args: p.Args, Env: p.Env, Cwd: p.Cwd,
				URL: p.URL, Headers: p.Headers, StartupTimeout: DefaultMCPStartupTimeout, ToolTimeout: DefaultMCPToolTimeout})
		}
	}
	return cfgs, warnings, nil
}
