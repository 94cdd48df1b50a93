// Command knightcode-demo runs knightcode's main job end to end as a real
// client would (README, `make demo`): it makes a scratch clone of a
// repository (default: the one the working directory is in), spawns
// `knightcode app-server` with a temporary home and agent directory, starts
// a thread on the clone in fullAccess, picks the built-in offline model
// scripted/demo, runs one turn (the model reads testdata/demo/notes.md,
// edits two of its lines and runs a shell command), tells the streamed turn
// as a story (one line per event: messages and reasoning whole, tool calls
// with their arguments and output in words, the turn's end with its token
// usage and file totals), reads the uncommitted diff with its hunk ids,
// reverts one hunk by its id and reads the diff again, which must show the
// one hunk left, and says why that hunk's id changed.
//
// Usage:
//
//	knightcode-demo [-bin bin/knightcode] [-repo <repository>]
//
// It exits 1 on any failure, saying what failed, with the server's log.
// It is a client program built on package client: it drives the server only
// through the protocol and must not import the server's packages (rpc's
// handlers, threads, diffscope); git runs only for the scratch clone, through
// internal/gitcli.
package main
