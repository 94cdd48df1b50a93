// Package protocol holds the wire types of the knightcode app-server
// protocol (spec: app-server.md) and the one table of its methods.
//
// Every request, response and notification that crosses stdin/stdout has a Go
// type here, with JSON field names exactly as the spec writes them and
// optional fields marked omitempty. A struct field without omitempty is
// required on the wire: the rpc frame refuses params that lack one with
// invalidParams, and app-server.schema.json lists it as required.
//
// The method table (methods.go) maps each method name to its params type,
// result type, direction and serialization rule. Everything else is derived
// from it: dispatch in package rpc/jsonrpc, the handler-coverage test, the
// bad-params test and app-server.schema.json (go run
// ./rpc/protocol/internal/genschema). Adding a method is one row in the var
// block of methods.go plus its params/result types in the family's file
// (thread.go, diff.go, ...).
//
// The values a string member takes from a fixed set are listed once, in
// enums.go (Enums: the schema's enumerations, the frame's refusal of an
// empty value); the structs that travel in several shapes (Item,
// ThreadStatus) have their shapes in unions.go. Doc comments are what a
// client developer reads in the schema: a paragraph for Go readers only
// starts with "Go:" (package schemagen).
//
// This is a leaf package: it imports only the standard library, so every
// layer (threads, agent, rpc, client) may import it. It must not know how
// messages are framed, dispatched or answered, nor anything about threads,
// git or sessions beyond the shapes of their wire values.
package protocol
