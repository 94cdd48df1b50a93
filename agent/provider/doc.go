// Package provider is the room of model providers: the Provider interface every
// provider implements and the Registry that lists the configured models
// (model/list) and finds the provider of a picked model.
//
// The registry is built from <agentDir>/models.json plus the built-in models
// (scripted/demo). Providers live in sub-packages (agent/provider/scripted);
// this package wires them and turns a malformed models.json into warnings,
// never a failure.
//
// What the room must not know: threads, JSON-RPC, session files and git.
package provider
