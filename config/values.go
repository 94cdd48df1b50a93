package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of the settings the server understands (what an unset key
// means). [Defaults] reports them in the shape of settings.
const (
	// DefaultWorktreesKeep is worktrees.keep: the live managed worktrees a
	// project keeps before the least recently used are pruned (spec "Past
	// worktrees.keep worktrees ...").
	DefaultWorktreesKeep = 20
	// DefaultBranchPrefix is worktrees.branchPrefix: the prefix of the branch
	// a handoff to the main checkout names after the thread's title.
	DefaultBranchPrefix = "knightcode/"
	// DefaultMaxRetries is retry.provider.maxRetries: retries of a failed
	// model request (rate limit, network, 5xx) within one turn.
	DefaultMaxRetries = 3
	// DefaultMaxRetryDelayMs is retry.provider.maxRetryDelayMs: the longest
	// wait between retries, in milliseconds; a provider asking for longer
	// (Retry-After) fails the request at once.
	DefaultMaxRetryDelayMs = 60000
	// DefaultThinkingLevel is defaultThinkingLevel.
	DefaultThinkingLevel = "off"
	// DefaultCompactionReserveTokens is compaction.reserveTokens: tokens
	// kept free in the context window for the model's reply.
	DefaultCompactionReserveTokens = 16384
	// DefaultCompactionKeepRecentTokens is compaction.keepRecentTokens:
	// recent history kept verbatim by a compaction.
	DefaultCompactionKeepRecentTokens = 20000
	// DefaultRecoveryKeep is recovery.keep: recovery points kept per
	// repository.
	DefaultRecoveryKeep = 200
	// DefaultRecoveryMaxAgeDays is recovery.maxAgeDays: recovery points older
	// than this many days are dropped.
	DefaultRecoveryMaxAgeDays = 14
	// DefaultHookTimeoutSeconds is git.hookTimeoutSeconds: how long a git
	// call that runs the user's hooks (git/commit's pre-commit and
	// commit-msg, git/push's pre-push, git/branch/switch's post-checkout)
	// may take before it is stopped (issue 22).
	DefaultHookTimeoutSeconds = 600
	// DefaultGhTimeoutSeconds is git.ghTimeoutSeconds: how long gh (git/pr/create)
	// may take before it is stopped.
	DefaultGhTimeoutSeconds = 120
)

// BuiltinTools are the coding tools a thread registers when defaultTools
// is not set (spec tool/list).
var BuiltinTools = []string{"read", "bash", "edit", "write"}

// Defaults returns every setting the server understands with its default,
// in the shape of settings (spec config/read "defaults"):
//
//	defaultProvider, defaultModel   ""  (no model chosen: pick one with thread/settings/update)
//	defaultThinkingLevel            "off"
//	defaultTools                    ["read","bash","edit","write"]; entries "+name"/"-name"
//	                                add to/remove from that list, plain names replace it
//	                                (global settings only)
//	sessionDir                      ""  (the per-project layout; global settings only)
//	worktrees.root                  <agentDir>/worktrees ("~" is the home directory, a
//	                                relative path is relative to the settings file's
//	                                directory: agentDir, or the project's .knightcode)
//	worktrees.keep                  20
//	worktrees.branchPrefix          "knightcode/"
//	retry.provider.maxRetries       3
//	retry.provider.maxRetryDelayMs  60000
//	compaction.enabled              true
//	compaction.reserveTokens        16384
//	compaction.keepRecentTokens     20000
//	recovery.keep                   200
//	recovery.maxAgeDays             14
//	git.hookTimeoutSeconds          600 (a git call running the user's hooks)
//	git.ghTimeoutSeconds            120 (gh pr create)
//	extensions, skills, prompts, themes  []  (resource paths and +/-/! patterns)
func Defaults(agentDir string) map[string]any {
	return map[string]any{
		"defaultProvider":      "",
		"defaultModel":         "",
		"defaultThinkingLevel": DefaultThinkingLevel,
		"defaultTools":         append([]string(nil), BuiltinTools...),
		"sessionDir":           "",
		"worktrees": map[string]any{
			"root":         filepath.Join(agentDir, "worktrees"),
			"keep":         DefaultWorktreesKeep,
			"branchPrefix": DefaultBranchPrefix,
		},
		"retry": map[string]any{"provider": map[string]any{
			"maxRetries":      DefaultMaxRetries,
			"maxRetryDelayMs": DefaultMaxRetryDelayMs,
		}},
		"compaction": map[string]any{
			"enabled":          true,
			"reserveTokens":    DefaultCompactionReserveTokens,
			"keepRecentTokens": DefaultCompactionKeepRecentTokens,
		},
		"recovery": map[string]any{
			"keep":       DefaultRecoveryKeep,
			"maxAgeDays": DefaultRecoveryMaxAgeDays,
		},
		"git": map[string]any{
			"hookTimeoutSeconds": DefaultHookTimeoutSeconds,
			"ghTimeoutSeconds":   DefaultGhTimeoutSeconds,
		},
		"extensions": []string{},
		"skills":     []string{},
		"prompts":    []string{},
		"themes":     []string{},
	}
}

// Values are the settings other packages need, as plain typed values with
// the defaults filled in (so the agent and threads need not know the
// settings files' shape).
type Values struct {
	DefaultProvider      string
	DefaultModel         string
	DefaultThinkingLevel string
	// DefaultTools is defaultTools resolved against BuiltinTools (see
	// [ResolveDefaultTools]), from the global settings only (spec tool/list).
	DefaultTools []string
	// SessionDir is the global sessionDir setting as written ("" when unset:
	// the per-project layout); the caller expands "~" and makes it
	// absolute. Global settings only (spec "Starting").
	SessionDir string
	Worktrees  WorktreeValues
	Retry      RetryValues
	Compaction CompactionValues
	Recovery   RecoveryValues
	Git        GitValues
}

// WorktreeValues are the worktrees.* settings.
type WorktreeValues struct {
	// Root is where new managed worktrees go, absolute (default
	// <agentDir>/worktrees).
	Root string
	// Keep is the live managed worktrees a project keeps (>= 0).
	Keep         int
	BranchPrefix string
}

// RetryValues are the retry.provider.* settings.
type RetryValues struct {
	MaxRetries      int
	MaxRetryDelayMs int
}

// CompactionValues are the compaction.* settings.
type CompactionValues struct {
	Enabled          bool
	ReserveTokens    int
	KeepRecentTokens int
}

// RecoveryValues are the recovery.* settings.
type RecoveryValues struct {
	Keep       int
	MaxAgeDays int
}

// GitValues are the git.* settings: the deadlines of the child processes
// of the git/* methods, each at least one second.
type GitValues struct {
	// HookTimeout bounds a git call that runs the user's hooks
	// (git.hookTimeoutSeconds).
	HookTimeout time.Duration
	// GhTimeout bounds a gh call (git.ghTimeoutSeconds).
	GhTimeout time.Duration
}

// DefaultGitValues are the git.* settings' defaults.
func DefaultGitValues() GitValues {
	return GitValues{HookTimeout: DefaultHookTimeoutSeconds * time.Second, GhTimeout: DefaultGhTimeoutSeconds * time.Second}
}

// Values decodes the settings of the snapshot into [Values]. A value of the
// wrong type or range is ignored (its default applies) with a warning of
// source "settings" naming the key and the file it came from; a global-only
// key set in the project file gives a warning too. The warnings do not
// repeat Snapshot.Errors.
func (snap *Snapshot) Values() (Values, []Warning) {
	d := valueDecoder{snap: snap}
	v := Values{
		DefaultProvider:      d.str("defaultProvider", ""),
		DefaultModel:         d.str("defaultModel", ""),
		DefaultThinkingLevel: d.str("defaultThinkingLevel", DefaultThinkingLevel),
		Worktrees: WorktreeValues{
			Root:         d.dir("worktrees.root", filepath.Join(snap.agentDir, "worktrees")),
			Keep:         d.count("worktrees.keep", DefaultWorktreesKeep),
			BranchPrefix: d.str("worktrees.branchPrefix", DefaultBranchPrefix),
		},
		Retry: RetryValues{
			MaxRetries:      d.count("retry.provider.maxRetries", DefaultMaxRetries),
			MaxRetryDelayMs: d.count("retry.provider.maxRetryDelayMs", DefaultMaxRetryDelayMs),
		},
		Compaction: CompactionValues{
			Enabled:          d.boolean("compaction.enabled", true),
			ReserveTokens:    d.count("compaction.reserveTokens", DefaultCompactionReserveTokens),
			KeepRecentTokens: d.count("compaction.keepRecentTokens", DefaultCompactionKeepRecentTokens),
		},
		Recovery: RecoveryValues{
			Keep:       d.positive("recovery.keep", DefaultRecoveryKeep),
			MaxAgeDays: d.positive("recovery.maxAgeDays", DefaultRecoveryMaxAgeDays),
		},
		Git: GitValues{
			HookTimeout: time.Duration(d.positive("git.hookTimeoutSeconds", DefaultHookTimeoutSeconds)) * time.Second,
			GhTimeout:   time.Duration(d.positive("git.ghTimeoutSeconds", DefaultGhTimeoutSeconds)) * time.Second,
		},
	}
	d.globalOnly = true
	v.SessionDir = d.str("sessionDir", "")
	v.DefaultTools = BuiltinTools
	if raw, ok := d.get("defaultTools"); ok {
		entries, err := stringList(raw)
		if err != nil {
			d.bad("defaultTools", "must be an array of tool names (name, +name or -name)")
		} else {
			v.DefaultTools = ResolveDefaultTools(entries, BuiltinTools)
		}
	}
	return v, d.warnings
}

// ResolveDefaultTools applies the defaultTools entries to base: "+name"
// adds name (once), "-name" removes it; when any entry is a plain name the
// list starts empty instead of from base, so ["read", "bash"] means exactly
// those. The result keeps base's order, then added names in entry order.
func ResolveDefaultTools(entries, base []string) []string {
	out := []string{}
	explicit := false
	for _, e := range entries {
		if !strings.HasPrefix(e, "+") && !strings.HasPrefix(e, "-") {
			explicit = true
		}
	}
	if !explicit {
		out = append(out, base...)
	}
	for _, e := range entries {
		name := strings.TrimLeft(e, "+-")
		if name == "" {
			continue
		}
		i := indexOf(out, name)
		if strings.HasPrefix(e, "-") {
			if i >= 0 {
				out = append(out[:i], out[i+1:]...)
			}
		} else if i < 0 {
			out = append(out, name)
		}
	}
	return out
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func stringList(v any) ([]string, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not an array")
	}
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("not a string")
		}
		out = append(out, s)
	}
	return out, nil
}

// valueDecoder reads typed values from a snapshot, collecting warnings.
type valueDecoder struct {
	snap       *Snapshot
	globalOnly bool
	warnings   []Warning
	notObject  map[string]bool // prefixes reported as not an object
}

// get returns the value of key (nil values count as unset). With
// globalOnly, a project value is reported and the global one used.
func (d *valueDecoder) get(key string) (any, bool) {
	if d.globalOnly {
		if d.snap.Origins[key] == ScopeProject {
			d.warn(ScopeProject, fmt.Sprintf("%s is read from the global settings only; the project's value is ignored", key))
		}
		v, ok := lookup(d.snap.global, key)
		if !ok {
			d.checkParents(d.snap.global, key)
		}
		return v, ok && v != nil
	}
	v, ok := lookup(d.snap.Settings, key)
	if !ok {
		d.checkParents(d.snap.Settings, key)
	}
	return v, ok && v != nil
}

// checkParents warns (once per prefix) when a dotted prefix of key is set
// to something other than an object ({"worktrees": true}), so the keys
// under it take their defaults with a warning rather than silently.
func (d *valueDecoder) checkParents(m map[string]any, key string) {
	var cur any = m
	prefix := ""
	for seg := range strings.SplitSeq(key, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			if cur != nil && !d.notObject[prefix] {
				if d.notObject == nil {
					d.notObject = map[string]bool{}
				}
				d.notObject[prefix] = true
				d.warn(d.origin(prefix), "malformed settings: "+prefix+" must be an object; the defaults of its keys are used")
			}
			return
		}
		if cur, ok = obj[seg]; !ok {
			return
		}
		if prefix != "" {
			prefix += "."
		}
		prefix += seg
	}
}

// origin is the scope key's value came from.
func (d *valueDecoder) origin(key string) Scope {
	if d.globalOnly {
		return ScopeGlobal
	}
	if o, ok := d.snap.Origins[key]; ok {
		return o
	}
	return ScopeGlobal
}

func (d *valueDecoder) warn(scope Scope, msg string) {
	path := d.snap.Paths.Global
	if scope == ScopeProject {
		path = d.snap.Paths.Project
	}
	d.warnings = append(d.warnings, Warning{Message: msg, Source: WarningSourceSettings, Path: path})
}

func (d *valueDecoder) bad(key, format string, args ...any) {
	d.warn(d.origin(key), "malformed settings: "+key+" "+fmt.Sprintf(format, args...)+"; the default is used")
}

func (d *valueDecoder) str(key, def string) string {
	v, ok := d.get(key)
	if !ok {
		return def
	}
	s, ok := v.(string)
	if !ok {
		d.bad(key, "must be a string")
		return def
	}
	return s
}

func (d *valueDecoder) boolean(key string, def bool) bool {
	v, ok := d.get(key)
	if !ok {
		return def
	}
	b, ok := v.(bool)
	if !ok {
		d.bad(key, "must be true or false")
		return def
	}
	return b
}

// count is a non-negative integer setting.
func (d *valueDecoder) count(key string, def int) int {
	v, ok := d.get(key)
	if !ok {
		return def
	}
	n, ok := v.(json.Number)
	if !ok {
		d.bad(key, "must be an integer of 0 or more")
		return def
	}
	i, err := n.Int64()
	if err != nil || i < 0 || int64(int(i)) != i {
		d.bad(key, "must be an integer of 0 or more, got %s", n)
		return def
	}
	return int(i)
}

// positive is a count setting that must be 1 or more: recovery.keep and
// recovery.maxAgeDays, where 0 would remove a recovery point as soon as
// its action finished (the operation log's points are what gives a
// user's state back; issue 15), and the git.* deadlines, where 0 would
// stop every hook at once. 0 or less is a warning and the default.
func (d *valueDecoder) positive(key string, def int) int {
	v, ok := d.get(key)
	if !ok {
		return def
	}
	n, isNumber := v.(json.Number)
	if !isNumber {
		d.bad(key, "must be an integer of 1 or more")
		return def
	}
	i, err := n.Int64()
	if err != nil || i < 1 || int64(int(i)) != i {
		d.bad(key, "must be an integer of 1 or more, got %s", n)
		return def
	}
	return int(i)
}

// dir is a directory setting, made absolute: "~" and "~/..." against the
// home directory, other relative paths against the directory of the
// settings file it came from (the agent directory, or the project's
// .knightcode folder).
func (d *valueDecoder) dir(key, def string) string {
	v, ok := d.get(key)
	if !ok {
		return def
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		d.bad(key, "must be a non-empty string (a directory)")
		return def
	}
	base := d.snap.agentDir
	if d.origin(key) == ScopeProject {
		base = filepath.Dir(d.snap.Paths.Project)
	}
	p, err := resolvePath(base, s)
	if err != nil {
		d.bad(key, "%q: %v", s, err)
		return def
	}
	return p
}

// resolvePath makes p absolute: "~" and "~/..." against the home
// directory, other relative paths against base.
func resolvePath(base, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}
