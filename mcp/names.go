package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// MaxToolName is the longest model tool name (the providers' limit,
// EXTENSIBILITY.md §9 "Deterministic tool names").
const MaxToolName = 64

// toolPrefix begins every model tool name of an MCP server's tool.
const toolPrefix = "mcp__"

// SearchToolName is the one model tool of the servers whose exposure is
// "search" (EXTENSIBILITY.md §2 "exposure").
const SearchToolName = "mcp"

// ToolName is the model tool name of the tool of server
// (EXTENSIBILITY.md §9): "mcp__<server>__<tool>" with every character
// outside [A-Za-z0-9_-] replaced by "_". A name longer than MaxToolName
// keeps its beginning and the end of the tool's name (its readable,
// distinguishing tail), joined by "_<8 hex digits of the SHA-256 of the
// full, unsanitized name>_", 64 characters in all. It depends on server
// and tool only, never on what else is connected.
func ToolName(server, tool string) string {
	full := toolPrefix + server + "__" + tool
	name := sanitize(full)
	if len(name) <= MaxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(full))
	hash := hex.EncodeToString(sum[:])[:8]
	const budget = MaxToolName - 10 // "_" + 8 hex + "_"
	head := sanitize(toolPrefix + server + "__")
	tail := sanitize(tool)
	n := min(len(tail), budget-min(len(head), budget/2))
	tail = tail[len(tail)-n:]
	return name[:budget-n] + "_" + hash + "_" + tail
}

// sanitize replaces each character of s outside [A-Za-z0-9_-] by "_" (one
// per character, not per byte).
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// visible reports whether the tool named name with _meta meta is a model
// tool of a server configured with enabled and disabled tools
// (EXTENSIBILITY.md §2 "Hidden tools"): one the configuration does not
// hide (hidden), and not app-only (_meta.ui.visibility without "model"),
// which is never a model tool.
func visible(name string, meta map[string]any, enabled, disabled []string) bool {
	return !hidden(name, enabled, disabled) && !appOnly(meta)
}

// hidden reports whether a server configured with enabled and disabled
// tools hides the tool named name: enabledTools, when the entry has it
// (non-nil), is an allowlist and wins; else disabledTools hides the tools
// it names.
func hidden(name string, enabled, disabled []string) bool {
	if enabled != nil {
		return !slices.Contains(enabled, name)
	}
	return slices.Contains(disabled, name)
}

// appOnly reports whether _meta.ui.visibility is a list without "model"
// (MCP Apps; a missing visibility is ["model", "app"]).
func appOnly(meta map[string]any) bool {
	vis := visibility(meta)
	return vis != nil && !slices.Contains(vis, any("model"))
}
