// Package rpctest drives an app-server connection line by line for protocol
// tests: a Peer writes raw NDJSON lines to the server and reads the lines it
// answers with, and Run plays a script of steps (send, expect a response or
// notification, close stdin, expect end of output), comparing JSON values
// after unmarshalling them. It works over a subprocess's pipes (end-to-end
// tests of the binary) and over in-memory pipes (rpc.Server.ServeConn).
//
// Only tests import it. It knows nothing beyond NDJSON and JSON.
package rpctest
