// Package plugins installs, trusts, updates and removes plugins and the
// marketplaces (catalogs) they come from: the spec's plugin/* methods
// (spec: Method reference, "plugin/*"), with the decisions of
// EXTENSIBILITY.md §4 and §5.
//
// A plugin is a folder in Claude Code's format, which Grok Build also
// reads (config.ReadPluginDir reads it: config owns what a thread loads).
// Sources (ParseSource) are GitHub repositories (owner/repo, cloned from
// GitHubBase, which git's url.<base>.insteadOf may rewrite), git URLs,
// absolute folders and name@marketplace entries, with a ref and a path.
//
// Decisions and where they come from:
//   - Content, not version strings (claude-code #14061, #32983, #41922:
//     stale caches when the version string did not change): every commit
//     is its own immutable folder <agentDir>/plugins/cache/<hash of
//     identity>/<commit>/, a folder source's "commit" is a hash of its
//     contents, and plugin/update compares commits. A fetch clones into
//     <agentDir>/plugins/tmp/ outside every lock and moves in by a rename,
//     so a failed fetch changes nothing.
//   - Trust is the server's (Grok's --trust; never Codex's "install is
//     consent"): records in trust.json, keyed by identity and canonical
//     source, written under the lock project/trust/set takes; never read
//     from a settings file. plugin/set never revokes; uninstalling from
//     every scope the record lists does. MCP servers an update adds or
//     changes wait for approval (their hashes are in the record).
//   - Registries are settings entries ("plugins", "marketplaces"),
//     written through config.Store.EditSettingsList (config/write's lock
//     and atomic write); this server's own bookkeeping (installs, catalog
//     fetch times) is <agentDir>/plugins/state.json. An identity's swaps
//     serialize on a file lock, so two installs end in one.
//   - Lists read local state only; plugin/marketplace/update fetches.
//   - Claude Code's state (~/.claude/plugins/) and Grok Build's ($GROK_HOME
//     or ~/.grok: config.toml, installed-plugins/registry.json) are read,
//     never written, for importable plugins and known marketplaces.
//
// The MCP runtime gets the active plugins' servers from
// [Manager.MCPServers].
package plugins
