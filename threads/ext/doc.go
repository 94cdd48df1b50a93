// Package ext is the extension seam: the Go interface through which a
// thread's extensions act on it, and the thread on them
// (EXTENSIBILITY.md §6, §7, §9; ARCHITECTURE.md "threads/ext"). It is
// modelled on pi's extension API (@mariozechner/pi-coding-agent 0.73.1:
// dist/core/extensions/types.d.ts for the shapes, runner.js for dispatch
// and merging), so the pi extensions people already write can run behind
// it.
//
// What crosses it: handlers of pi's events — input (transform or consume
// a turn's input), before_agent_start (the system prompt, messages after
// the input), tool_call (block a call or change its input, before its
// approval), tool_result (change a result), turn_end (a reply and its
// calls are done) —, registered tools, commands and providers, messages
// and session entries an extension sends (API.SendMessage,
// API.AppendEntry), and the thread's UI (UI: dialogs, ask_user's
// questions, notices, statuses, widgets, title, working indicator). Every
// value is a Go struct that marshals to pi's JSON, so a JavaScript runtime
// or a Node host can sit behind it; the package knows nothing of JSON-RPC
// or of package threads.
//
// Who implements and who calls it:
//   - An Extension is {Path, Load}: Load registers through an API, once
//     per thread load. The thread's built-ins (package threads/builtin:
//     ask_user, background_shell) are Extensions written in Go; the
//     JavaScript runtime (package extensions) and the MCP client (package
//     mcp) will provide theirs the same way, wired in by cmd/knightcode
//     (threads.Config.Extensions). threads never imports them.
//   - Package threads makes one Runner per thread load with its Host (the
//     thread: id, cwd, mode, UI routed through its server requests,
//     warnings to its subscribers, message delivery, session entries),
//     dispatches the events at their places in a start and a turn, gives
//     the model the registered tools beside its own, and disposes the
//     Runner when the thread unloads.
//
// Dispatch order (pi's runner.ts): the extensions in load order — the
// built-ins first, then the later sources in the order of EXTENSIBILITY.md
// §7 (project, global, settings, -e, packages) —, each extension's
// handlers in registration order. Results merge as in pi: an input
// handler sees the text the previous one left and the first "handled"
// ends the dispatch; before_agent_start handlers chain the system prompt
// and each may add a message; a tool_call handler sees the input the
// previous one left and the first block ends the dispatch; tool_result
// handlers chain content, details and isError.
//
// Failure rules: a handler that returns an error or panics is a warning
// (Host.Warn: a subscriber-only warning of source "extension" with the
// threadId, spec "Threads and turns") and the dispatch goes on without
// its answer — except a tool_call handler, whose failure blocks the call
// (fail closed) with a reason the model reads. A Load that fails is a
// load warning (the thread's start, resume and fork results carry it) and
// the extension keeps nothing it registered. A tool whose Execute fails
// gives the model an error result. Nothing an extension does can stop the
// thread: the seam answers for it.
//
// Not here yet, for the runtimes that need them: pi's other events
// (session_start, agent_start/agent_end, message_*, context, ...) join the
// typed handlers above the same way; steering (turn/steer) does not go
// through the input handlers yet. The UI setters change the thread's
// extension UI (the snapshot of the start, resume and fork results, and
// the live ui/state and ui/widget notifications); views are checked by
// CheckView; UI.OnViewEvent handlers get the ui/event requests.
//
// Providers (pi's registerProvider): a Host that is a ProviderHost hears
// the load's providers once its extensions are loaded, at each later
// registration and unregistration, and at Dispose (nil); package threads
// gives them to the process's provider registry, which lists them in
// model/list and resolves a thread's model through them.
//
// Interrupts (spec "Threads and turns"): handlers get a context.Context
// that ends when what they serve is interrupted; turn/interrupt answers at
// once and never waits for a handler, and a handler already running
// finishes unheard.
package ext
