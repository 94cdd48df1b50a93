// Package tools holds the agent's built-in tools: read, bash, edit and write
// ([All], in that order) and ask_user ([AskUser], which asks a person
// through the caller's [AskFunc]), each an agent.Tool with a name, a
// description and a JSON Schema for its arguments. Paths resolve against
// the thread's cwd given at construction; completed edit and write calls
// report details.fileChanges with a unified diff. Every failure is an error
// result for the model, never a panic or a Go error. read, edit and write
// open only regular files outside /proc, /sys and /dev (internal/safefile),
// so no path can block a call.
//
// bash's commands and what they leave running belong to a thread's
// [ProcessGroups] (procgroups.go: process groups, the EnvProcTag token and,
// on Linux, a reaper process per command, [RunReaper]), which stops them
// when the thread's session ends; the commands run with run_in_background
// are its [BackgroundShells] (bgshells.go; spec thread/backgroundShells/*).
//
// What the room must not know: threads, approvals policy (the caller's
// agent.Options.Approve decides), JSON-RPC, session files, and git (bash runs
// whatever the model asks, git included, as a shell command).
package tools
