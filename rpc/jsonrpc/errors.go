package jsonrpc

import (
	"errors"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// Error is the wire error {code, message, data?} (protocol.Error). Codes are
// the protocol.Code* constants. errors.Is(err, &Error{Code: c}) compares
// codes only; IsCode is the short form.
type Error = protocol.Error

// Errorf returns an *Error with code (a protocol.Code* constant) and a
// formatted message.
func Errorf(code, format string, args ...any) *Error {
	return protocol.Errorf(code, format, args...)
}

// InvalidParams returns an invalidParams *Error naming field, a dotted JSON
// path ("" for the params as a whole), in its message and data.field.
func InvalidParams(field, format string, args ...any) *Error {
	return protocol.InvalidParams(field, format, args...)
}

// IsCode reports whether err is, or wraps, an *Error with code.
func IsCode(err error, code string) bool {
	return errors.Is(err, &Error{Code: code})
}

var (
	// ErrConnClosed is returned by Conn.Call, Conn.Notify and Server.Broadcast
	// once the connection is closed or closing, and by a pending Call whose
	// connection went away before the reply.
	ErrConnClosed = errors.New("jsonrpc: connection closed")

	// ErrOutputOverflow is the cause of a connection aborted because more
	// than Config.MaxPendingOutput bytes (64 MiB; spec: Limits) were waiting
	// to be written to a peer that does not read.
	ErrOutputOverflow = errors.New("jsonrpc: pending output limit exceeded")

	// ErrShuttingDown is the context cause of handler contexts cancelled at
	// the shutdown grace deadline (9 s after stdin EOF or a signal).
	ErrShuttingDown = Errorf(protocol.CodeShuttingDown, "the server is shutting down")
)

// ErrorMapper maps an error of a core package to a wire error. It returns
// false for errors it does not know.
//
// Mappers are how typed errors of lower layers (threads, diffscope,
// workspace, handoff, config, gitcli) become codes: the wiring in
// cmd/knightcode passes one per package in Config.ErrorMappers, written with
// MapSentinel or MapAs. Core packages never import rpc to do this.
type ErrorMapper func(error) (*Error, bool)

// MapSentinel returns an ErrorMapper that maps every error matching target
// (errors.Is) to code, with the error's text as message.
func MapSentinel(target error, code string) ErrorMapper {
	return func(err error) (*Error, bool) {
		if errors.Is(err, target) {
			return &Error{Code: code, Message: err.Error()}, true
		}
		return nil, false
	}
}

// MapAs returns an ErrorMapper for errors of type T (errors.As), converting
// them with conv, e.g. a *diffscope.ConflictError to gitConflict with
// data {reason, paths}.
func MapAs[T error](conv func(T) *Error) ErrorMapper {
	return func(err error) (*Error, bool) {
		var t T
		if errors.As(err, &t) {
			return conv(t), true
		}
		return nil, false
	}
}

// ToWireError maps err to the error a client receives, in this order: nil
// stays nil; an *Error anywhere in the chain is returned as is; each mapper
// is tried in order; anything else is internal with the
// generic message "internal error" (the caller logs the cause: the client
// never sees internal details).
func ToWireError(err error, mappers ...ErrorMapper) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	for _, m := range mappers {
		if e, ok := m(err); ok && e != nil {
			return e
		}
	}
	return &Error{Code: protocol.CodeInternal, Message: "internal error"}
}
