package config

import (
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
// in the shape of settings (spec config/read "defaults"), from
// [knownSettings]; worktrees.root's default is <agentDir>/worktrees:
//
//	defaultProvider, defaultModel   ""  (no model chosen: pick one with thread/settings/update)
//	defaultThinkingLevel            "off"
//	defaultTools                    ["read","bash","edit","write"]; entries "+name"/"-name"
//	                                add to/remove from that list, plain names replace it
//	                                (global settings only)
//	sessionDir                      ""  (the per-project layout; global settings only)
//	worktrees.root                  <agentDir>/worktrees ("~" is the home directory, a
//	                                relative path is relative to agentDir; global only)
//	worktrees.keep                  20 (0 to 1000; global only)
//	worktrees.branchPrefix          "knightcode/"
//	retry.provider.maxRetries       3 (0 to 100)
//	retry.provider.maxRetryDelayMs  60000 (0 to 3600000)
//	compaction.enabled              true
//	compaction.reserveTokens        16384 (0 to 10000000)
//	compaction.keepRecentTokens     20000 (0 to 10000000)
//	recovery.keep                   200 (1 to 100000; global only)
//	recovery.maxAgeDays             14 (1 to 3650; global only)
//	git.hookTimeoutSeconds          600 (1 to 86400: a git call running the user's hooks)
//	git.ghTimeoutSeconds            120 (1 to 86400: gh pr create)
//	extensions, skills, prompts, themes  []  (resource paths and +/-/! patterns)
func Defaults(agentDir string) map[string]any {
	out := map[string]any{}
	for _, s := range knownSettings {
		v := s.Default
		switch d := v.(type) {
		case []string:
			v = append([]string{}, d...)
		case string:
			if s.kind == kindDir {
				v = filepath.Join(agentDir, d)
			}
		}
		segs := strings.Split(s.Key, ".")
		m := out
		for _, seg := range segs[:len(segs)-1] {
			sub, ok := m[seg].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[seg] = sub
			}
			m = sub
		}
		m[segs[len(segs)-1]] = v
	}
	return out
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

// Values decodes the settings of the snapshot into [Values]. A value that
// does not fit its row of [knownSettings] (type or range) is ignored (its
// default applies) with a warning of source "settings" naming the key, the
// values it takes and the file it came from; a global-only key set in the
// project file gives a warning too. The warnings do not repeat
// Snapshot.Errors.
func (snap *Snapshot) Values() (Values, []Warning) {
	d := valueDecoder{snap: snap}
	v := Values{
		DefaultProvider:      d.str("defaultProvider"),
		DefaultModel:         d.str("defaultModel"),
		DefaultThinkingLevel: d.str("defaultThinkingLevel"),
		Worktrees: WorktreeValues{
			Root:         d.dir("worktrees.root"),
			Keep:         d.int("worktrees.keep"),
			BranchPrefix: d.str("worktrees.branchPrefix"),
		},
		Retry: RetryValues{
			MaxRetries:      d.int("retry.provider.maxRetries"),
			MaxRetryDelayMs: d.int("retry.provider.maxRetryDelayMs"),
		},
		Compaction: CompactionValues{
			Enabled:          d.boolean("compaction.enabled"),
			ReserveTokens:    d.int("compaction.reserveTokens"),
			KeepRecentTokens: d.int("compaction.keepRecentTokens"),
		},
		Recovery: RecoveryValues{
			Keep:       d.int("recovery.keep"),
			MaxAgeDays: d.int("recovery.maxAgeDays"),
		},
		Git: GitValues{
			HookTimeout: time.Duration(d.int("git.hookTimeoutSeconds")) * time.Second,
			GhTimeout:   time.Duration(d.int("git.ghTimeoutSeconds")) * time.Second,
		},
	}
	v.SessionDir = d.str("sessionDir")
	v.DefaultTools = ResolveDefaultTools(d.list("defaultTools"), BuiltinTools)
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

// valueDecoder reads typed values from a snapshot, each checked against
// its row of [knownSettings], collecting warnings.
type valueDecoder struct {
	snap      *Snapshot
	warnings  []Warning
	notObject map[string]bool // prefixes reported as not an object
}

// value returns the value of the known setting key that fits its row, and
// whether there is one (nil values count as unset; a value that does not
// fit is reported and not returned). A global-only key is read from the
// global file, a project value reported.
func (d *valueDecoder) value(key string) (Setting, any, bool) {
	s := knownSetting(key)
	var v any
	var ok bool
	if s.GlobalOnly {
		if v, ok := lookup(d.snap.project, key); ok && v != nil {
			d.warn(ScopeProject, fmt.Sprintf("%s is read from the global settings only; the project's value is ignored", key))
		}
		if v, ok = lookup(d.snap.global, key); !ok {
			d.checkParents(d.snap.global, key, ScopeGlobal)
		}
	} else if v, ok = lookup(d.snap.Settings, key); !ok {
		d.checkParents(d.snap.Settings, key, "")
	}
	if !ok || v == nil {
		return s, nil, false
	}
	if err := s.check(v); err != nil {
		d.warn(d.scopeOf(s), "malformed settings: "+err.Error()+"; the default is used")
		return s, nil, false
	}
	return s, v, true
}

// scopeOf is the file the value of s was read from.
func (d *valueDecoder) scopeOf(s Setting) Scope {
	if s.GlobalOnly {
		return ScopeGlobal
	}
	return d.origin(s.Key)
}

// checkParents warns (once per prefix) when a dotted prefix of key is set
// to something other than an object ({"worktrees": true}), so the keys
// under it take their defaults with a warning rather than silently. scope
// is the file m is ("" for the merged settings: the prefix's origin).
func (d *valueDecoder) checkParents(m map[string]any, key string, scope Scope) {
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
				at := scope
				if at == "" {
					at = d.origin(prefix)
				}
				d.warn(at, "malformed settings: "+prefix+" must be an object; the defaults of its keys are used")
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

// str is a string setting.
func (d *valueDecoder) str(key string) string {
	s, v, ok := d.value(key)
	if !ok {
		return s.Default.(string)
	}
	return v.(string)
}

// boolean is a true-or-false setting.
func (d *valueDecoder) boolean(key string) bool {
	s, v, ok := d.value(key)
	if !ok {
		return s.Default.(bool)
	}
	return v.(bool)
}

// int is an integer setting within its row's range.
func (d *valueDecoder) int(key string) int {
	s, v, ok := d.value(key)
	if !ok {
		return s.Default.(int)
	}
	i, _ := asInt(v)
	return int(i)
}

// list is an array-of-strings setting.
func (d *valueDecoder) list(key string) []string {
	s, v, ok := d.value(key)
	if !ok {
		return s.Default.([]string)
	}
	l, _ := stringList(v)
	return l
}

// dir is a directory setting, made absolute: "~" and "~/..." against the
// home directory, other relative paths against the directory of the
// settings file it came from (the agent directory, or the project's
// .knightcode folder); the default is relative to the agent directory.
func (d *valueDecoder) dir(key string) string {
	s, v, ok := d.value(key)
	def := filepath.Join(d.snap.agentDir, s.Default.(string))
	if !ok {
		return def
	}
	base := d.snap.agentDir
	if d.scopeOf(s) == ScopeProject {
		base = filepath.Dir(d.snap.Paths.Project)
	}
	p, err := resolvePath(base, v.(string))
	if err != nil {
		d.warn(d.scopeOf(s), fmt.Sprintf("malformed settings: %s %q: %v; the default is used", key, v, err))
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
