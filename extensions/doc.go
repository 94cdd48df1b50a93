// Package extensions is the JavaScript runtime behind the extension seam
// (package threads/ext; EXTENSIBILITY.md §7; ARCHITECTURE.md
// "extensions"): it runs pi extensions (@mariozechner/pi-coding-agent
// 0.73.1's ExtensionAPI) in-process.
//
//   - Engine.Extension turns an entry file into an ext.Extension. Its Load
//     bundles the entry with esbuild (bundle.go: TypeScript, ES modules and
//     node_modules into one CommonJS script for Node, target es2017, inline
//     source map; the virtual modules and the Node subset stay for the
//     runtime's require; any other Node module fails the bundle naming
//     it), compiles it once into a *goja.Program kept in the factory cache
//     (cache.go: by content hash, at most 256 inactive entries plus the
//     leased ones), and runs its module and factory.
//   - The extensions of one thread load share one runtime (runtime.go: a
//     goja.Runtime on its own event-loop goroutine, kept with
//     ext.API.Shared and disposed with the load): timers and promises run
//     there; the rest of the server reaches it only through the seam, with
//     JSON-shaped values (events go in through JSON.parse, answers come
//     out through JSON.stringify), so another backend could replace it.
//     JavaScript that runs past the handler timeout (5 s) is interrupted.
//   - The API objects (api.go) follow the table Members (members.go):
//     every member of pi's ExtensionAPI, ExtensionContext,
//     ExtensionCommandContext and ExtensionUIContext is implemented,
//     log-only, a no-op, or not yet (it throws an Error naming itself).
//   - The Node subset is Go where it touches the system (node.go, host.go:
//     path, fs, os, crypto, process, encodings, URL parsing, timers;
//     child.go: child processes, started in the thread's process groups
//     as its bash commands are; fetch.go: HTTP over net/http) and
//     JavaScript where it is plain code (js/prelude.js: events, util,
//     Buffer, URLSearchParams, AbortController, child_process's and
//     fetch's objects, typebox, the virtual modules; js/pitui.js: pi-tui's
//     text helpers and components, which render plain lines and are
//     drawn nowhere, and pi-coding-agent's UI and helper members).
//   - ExtensionsFor, Discover and Entries find a thread's extensions in
//     §7's order: a trusted project's .knightcode/extensions/, the global
//     <agentDir>/extensions/, the -e paths.
//
// What the room must not know: threads, JSON-RPC, session files, git. It
// imports only threads/ext and agent (content blocks).
package extensions
