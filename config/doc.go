// Package config holds knightcode's server-owned configuration state:
//
//   - the project trust store, <agentDir>/trust.json ([TrustStore]; spec
//     project/trust/read and project/trust/set);
//   - the settings files, read by the one settings reader of the server
//     ([Store.Read]: the global <agentDir>/settings.json and, for an
//     explicitly trusted project, <project>/.knightcode/settings.json,
//     merged with per-leaf origins, versions and parse warnings; spec
//     config/read), decoded into plain typed values for other packages
//     ([Snapshot.Values], [Defaults]) and written one dotted key at a time
//     ([Store.Write]; spec config/write);
//   - <agentDir>/tools.json ([Tools]; spec tool/settings/read and write) and
//     the resolution of a thread's tools ([ResolveDefaultTools],
//     [ResolveTools]);
//   - resources: extensions, skills, prompt templates and themes found in
//     each scope's folders and settings, enabled by +/-/! patterns
//     ([Store.Resources], [Store.SetResource]; spec resource/list and
//     resource/set), the commands they offer ([ResourceSet.Commands]; spec
//     command/list) and the expansion of "/template args" and
//     "/skill:name" ([ResourceSet.Expand]);
//   - the MCP servers files, <agentDir>/mcp.json and a trusted project's
//     .knightcode/mcp.json in Claude Code's mcpServers format, listed with
//     project servers and overrides applied ([Store.MCPList]) and edited one
//     entry at a time ([Store.MCPAdd], [Store.MCPUpdate], [Store.MCPRemove];
//     spec mcp/list, mcp/add, mcp/update, mcp/remove);
//   - context files, AGENTS.md and CLAUDE.md ([ContextFiles]).
//
// Every write is a read-modify-write under a gofrs/flock per file, written
// atomically (internal/atomicfile), keeping unknown keys and their order; a
// file that is not valid JSON is reported and never overwritten.
//
// It takes paths and plain Go values and returns typed errors
// ([*ParamError] for invalidParams naming a field, with Reason "untrusted"
// for a refused project write; [*VersionConflictError] for configConflict;
// [*CorruptError] for a file that does not parse) and warnings in the wire
// shape ([Warning], convertible to protocol.Warning); it must not know about
// threads, JSON-RPC or git worktrees: where a directory's project is (for a
// managed worktree, the project it was made from) is asked of a
// [ProjectFunc] the caller supplies (workspace.(*Manager).Project).
package config
