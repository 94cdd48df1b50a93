// Package scripted is the built-in offline model provider ("scripted"): each
// model plays a script of canned replies, one per model request, streaming its
// thinking and text as several deltas with optional delays. It makes the agent
// loop, the thread server and the demo testable without a network.
//
// A script is {"responses": [R, ...]}; see Response for R. A model's position
// in its script belongs to the model value inside one Provider and survives
// across turns for the life of the process: one script is one conversation.
// Two threads using the same scripted model share that position.
//
// The built-in model scripted/demo (Demo) is embedded in the binary; its script
// edits testdata/demo/notes.md of this repository, relative to the thread's cwd.
//
// What the room must not know: threads, JSON-RPC, session files, git, and the
// agent/provider registry (which imports this package).
package scripted
