// Package ext is the extension seam: the Go interface through which a
// thread's extensions act on it, and the thread on them
// (EXTENSIBILITY.md §6, §7, §9; ARCHITECTURE.md "threads/ext"). It is
// modelled on pi's extension API (@mariozechner/pi-coding-agent 0.73.1:
// dist/core/extensions/types.d.ts for the shapes, runner.js for dispatch
// and merging), so the pi extensions people already write can run behind
// it.
//
// What crosses it: handlers of pi's events — session_start (a load's
// extensions are loaded), input (transform or consume a turn's input),
// before_agent_start (the system prompt, messages after the input),
// agent_start and agent_end (the turn's agent run begins; it ended, with
// its messages: the turn keeps admission until these handlers return),
// turn_start and turn_end (one reply and its calls begin; are done),
// message_start, message_update (a reply streaming; dispatched only while
// a handler is registered) and message_end (replace the finalized
// message), context (the messages of one model request), tool_call (block
// a call or change its input, before its approval), tool_result (change a
// result) —, registered tools, commands and providers, messages
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
// handlers chain content, details and isError; message_end handlers chain
// replacements of the same role (another role is a warning and ignored);
// context handlers chain the request's messages; the other events only
// inform.
//
// Where they come (pi 0.73.1's agent-session.ts and pi-agent-core's
// agent-loop.ts): input, before_agent_start, agent_start; per turn
// turn_start, the messages it adds (message_start, then message_end),
// context before the model request, the reply's message_start,
// message_update… and message_end, per call tool_call and tool_result
// then its toolResult's message_start and message_end, turn_end; at the
// end agent_end. A message_end replacement is what the conversation, the
// session file and the thread's items hold; a reply replaced by one
// without text drops its agentMessage item (item/removed; pi has no
// deletion: its replacement is in place, and one without content shows
// nothing), one without a thinking block that reasoning item.
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
// (tool_execution_*, before_provider_request, session_before_*, ...) join
// the typed handlers above the same way. Steering (turn/steer) goes through
// the input handlers too (package threads holds it meanwhile). The UI setters change the thread's
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
