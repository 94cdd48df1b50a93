// Package builtin holds the thread's built-in extensions: behaviour the
// spec shapes as an extension, written in Go against the extension seam
// (package threads/ext) and loaded first in every thread load
// (EXTENSIBILITY.md §7's order: built-ins, then project, global, settings,
// -e and package extensions).
//
//   - AskUser: the ask_user tool, asking through the thread's
//     UI.Questions (item/toolCall/requestUserInput).
//   - BackgroundShells: the background_shell notices telling the model
//     that background commands ended, with the next turn or steered into
//     the running one.
//
// What the room must not know: JSON-RPC, connections, the thread manager
// (it acts only through ext.API and ext.Thread; package threads builds
// these extensions and feeds BackgroundShells its registry's events).
package builtin
