// Package agent is the coding agent's run loop and its data model.
//
// It holds the LLM message model that session files store (pi-compatible JSON:
// user, assistant and toolResult messages with tagged content blocks), the
// request and stream-event types a model provider speaks (Request, StreamEvent,
// Streamer), the model description listed by model/list (Model), the error
// classification the spec's turn errors use (ClassifyError), the agent
// directory (Dir), and Run: stream a reply, run its tool calls through the
// caller's hooks (CheckTool, Approve, AfterTool: the thread's extensions and
// its approval gate), feed the results back, and repeat until a reply asks
// for no tool. Its other hooks (TurnStart, TurnEnd, MessageStart,
// MessageUpdate, MessageEnd, Context) are pi's agent events at pi's places;
// MessageEnd may replace a message before it is recorded, Context the
// messages of one request.
//
// What the room must not know: JSON-RPC, threads, session files, turns and item
// ids, and git. Providers live in agent/provider (which imports this package),
// tools in agent/tools; this package imports neither — the caller passes a
// Streamer and a []Tool in.
package agent
