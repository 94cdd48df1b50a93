// Package client is the Go client of the knightcode app-server protocol: it
// starts `knightcode app-server` as a subprocess (Start), speaks over any
// byte stream (Dial), or connects to a server in the same process over an
// in-memory pipe (NewInProcess), all with the same jsonrpc.Conn code the server
// uses. Spec: app-server.md, Limits and client reference (AppServerClient:
// typed requests with Call, notifications with OnNotification and
// Subscribe, server requests with OnRequest, and payload references read
// back with ReadPayload, ResolveItem and ResolveTurn).
//
// It knows the wire shapes (package protocol) and the frame (package rpc/jsonrpc),
// nothing of threads or git. The server's packages never import it; client
// programs (cmd/knightcode-demo), tests, scripts and benchmarks do.
package client
