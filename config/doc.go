// Package config holds knightcode's server-owned configuration state: the
// project trust store (<agentDir>/trust.json, spec project/trust/read and
// project/trust/set) and the settings files: the one reader of the global
// <agentDir>/settings.json and a trusted project's .knightcode/settings.json
// (spec config/read; [Store.Read], [Snapshot.Values]).
//
// It takes paths and plain Go values and returns typed errors
// ([*ParamError] for invalidParams naming a field); it must not know about
// threads, JSON-RPC or git worktrees: where a directory's project is (for a
// managed worktree, the project it was made from) is asked of a
// [ProjectFunc] the caller supplies (workspace.(*Manager).Project).
package config
