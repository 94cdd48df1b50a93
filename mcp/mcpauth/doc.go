// Package mcpauth signs the user in to HTTP MCP servers that need OAuth
// and keeps their tokens (issue 27, "Sign-in"; EXTENSIBILITY.md §2 "OAuth
// sign-in" and §9 decision 10). The MCP runtime (package mcp) gives each
// HTTP connection the [auth.OAuthHandler] of [Manager.Handler] and runs
// [Manager.SignIn] for /mcp login <name>.
//
// Decisions:
//
//   - The interactive flow is go-sdk v1.8.0's auth.AuthorizationCodeHandler
//     (protected resource metadata, RFC 9728; authorization server
//     metadata, RFC 8414; dynamic client registration, RFC 7591, unless the
//     config names a client; PKCE S256; RFC 8707 resource), not a copy of
//     it. The redirect is a loopback listener on 127.0.0.1 (RFC 8252 §7.3).
//     Only SignIn is interactive: the connection handler refreshes but
//     never opens a browser; without a usable token it answers
//     [ErrSignInRequired], which the runtime shows as "sign-in required".
//   - The authorization URL comes from the MCP server, so it is opened only
//     after [CheckURL] (https, or http on a loopback host; no user-info;
//     at most 8 KiB), through an argument array (xdg-open, open, rundll32
//     url.dll,FileProtocolHandler), never a shell (CVE-2025-6514). It is
//     given to the caller's notify first, for a machine without a browser.
//     Every request of the flow, and the authorization, token and
//     registration endpoints of the discovered metadata, are checked the
//     same way in the HTTP transport handed to go-sdk, because go-sdk has
//     no hook between discovery and use (see checkedTransport).
//   - Tokens live in <agentDir>/mcp-auth.json, mode 0600, written
//     atomically (internal/atomicfile), one record per server name and
//     canonical URL, holding the client registration too so a refresh
//     works after a restart. Tokens and secrets are never logged and never
//     part of an error.
//   - Refresh happens at 80 % of expires_in and once on a 401. Every
//     refresh, and every write, holds an exclusive gofrs/flock on
//     <agentDir>/mcp-auth.json.lock and re-reads the record under it:
//     across goroutines and processes one refresh grant is sent per
//     rotation, and a caller that finds the tokens already rotated uses
//     them and sends nothing (peer complaints: openai/codex #27165,
//     opencode #34582, mcp-remote #256). The token file is read on every
//     request, so another process's rotation is seen at once.
//   - Only invalid_grant clears a record, and only when the refresh token
//     it answered is still the stored one (re-read after the answer).
//   - A sign-in expires after 5 minutes; [Manager.Close] cancels the
//     pending ones (spec "Shutdown": pending login flows cancel).
//
// What the room must not know: threads, JSON-RPC, the mcp.json format
// (the caller passes a [Config] with ${VAR} expanded) and how the URL
// reaches the user (notify is the caller's).
package mcpauth
