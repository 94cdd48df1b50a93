package protocol

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Direction says who sends a method and whether it is answered.
type Direction int

const (
	// ClientRequestDir is a request the client sends and the server answers.
	ClientRequestDir Direction = iota + 1
	// ClientNotificationDir is a notification the client sends (initialized).
	ClientNotificationDir
	// ServerRequestDir is a request the server sends and the client answers
	// (approvals, dialogs).
	ServerRequestDir
	// ServerNotificationDir is a notification the server sends; clients can
	// filter these with capabilities.optOutNotifications.
	ServerNotificationDir
)

// String returns the direction's name as the schema writes it:
// clientRequest, clientNotification, serverRequest or serverNotification.
func (d Direction) String() string {
	switch d {
	case ClientRequestDir:
		return "clientRequest"
	case ClientNotificationDir:
		return "clientNotification"
	case ServerRequestDir:
		return "serverRequest"
	case ServerNotificationDir:
		return "serverNotification"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// Serialization says how the rpc frame schedules a client request or
// notification relative to the messages that follow it on the same
// connection. It is meaningless for server-sent methods.
type Serialization int

const (
	// Concurrent runs the handler on its own goroutine; the reader goes on at
	// once.
	Concurrent Serialization = iota + 1
	// Inline runs the handler on the connection's reader goroutine before the
	// next line is read. Only for handlers that never block: initialize,
	// initialized and turn/interrupt.
	Inline
	// PerThread runs requests naming the same params.threadId one after
	// another in arrival order on this connection (the thread's lane);
	// different threads run concurrently. A request without a threadId runs
	// as Concurrent (its handler refuses it with invalidParams). A handler of
	// long work (git/commit, git/push, git/pr/create, git/branch/switch)
	// leaves the lane once admitted (jsonrpc.LeaveLane), so the requests
	// behind it run meanwhile (issue 22).
	PerThread
)

// String returns the rule's name as the schema writes it: concurrent, inline
// or perThread.
func (s Serialization) String() string {
	switch s {
	case Concurrent:
		return "concurrent"
	case Inline:
		return "inline"
	case PerThread:
		return "perThread"
	}
	return fmt.Sprintf("Serialization(%d)", int(s))
}

// Method is one row of the method table.
type Method struct {
	// Name is the wire method name, e.g. "thread/start".
	Name string
	// Direction says who sends it and whether it is answered.
	Direction Direction
	// Serialization applies to client-sent methods (zero for server-sent).
	Serialization Serialization
	// Params is the Go type params decode into.
	Params reflect.Type
	// Result is the Go type of the result; nil for notifications.
	Result reflect.Type
}

// ClientRequest names a client-to-server request whose params decode into P
// and whose result is R. Values are created only by rows of the method table;
// package jsonrpc installs handlers by them (jsonrpc.Handle) so a handler's types
// always match the table.
type ClientRequest[P, R any] struct{ Name string }

// ClientNotification names a client-to-server notification with params P.
type ClientNotification[P any] struct{ Name string }

// ServerRequest names a server-to-client request with params P, answered with
// a result R (jsonrpc.Conn.Call).
type ServerRequest[P, R any] struct{ Name string }

// ServerNotification names a server-to-client notification with params P.
// Send it with jsonrpc.Notify(conn, n, p) or jsonrpc.Broadcast(srv, n, p), or
// make a Notification of it with With for code that must not know the
// transport (package threads).
type ServerNotification[P any] struct{ Name string }

// With returns the notification n with params p, ready to send: the only way
// to make a Notification, so its params always have the table's type.
func (n ServerNotification[P]) With(p P) Notification {
	return Notification{method: n.Name, params: p}
}

// Notification is one server notification ready to send: a method of the
// table and its params of the table's type (made by ServerNotification.With).
// The zero Notification has no method and cannot be sent.
type Notification struct {
	method string
	params any
}

// Method returns the notification's method name, e.g. "turn/started".
func (n Notification) Method() string { return n.method }

// Params returns the notification's params, a value of the table's params
// type for the method.
func (n Notification) Params() any { return n.params }

// ThreadScoped is implemented by the params of every PerThread method: the
// rpc frame serializes requests by ThreadKey (params.threadId) without
// parsing the params a second time.
type ThreadScoped interface {
	// ThreadKey returns params.threadId ("" when absent).
	ThreadKey() string
}

// table is the method table, filled by the rows of methods.go (and any family
// file's rows) during package initialization and never written after it.
var table = map[string]Method{}

func addRow(m Method) {
	if m.Name == "" || strings.TrimSpace(m.Name) != m.Name {
		panic(fmt.Sprintf("protocol: bad method name %q", m.Name))
	}
	if _, dup := table[m.Name]; dup {
		panic("protocol: method " + m.Name + " is in the table twice")
	}
	table[m.Name] = m
}

func clientRequest[P, R any](name string, rule Serialization) ClientRequest[P, R] {
	addRow(Method{Name: name, Direction: ClientRequestDir, Serialization: rule,
		Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R]()})
	return ClientRequest[P, R]{Name: name}
}

func clientNotification[P any](name string, rule Serialization) ClientNotification[P] {
	addRow(Method{Name: name, Direction: ClientNotificationDir, Serialization: rule,
		Params: reflect.TypeFor[P]()})
	return ClientNotification[P]{Name: name}
}

func serverRequest[P, R any](name string) ServerRequest[P, R] {
	addRow(Method{Name: name, Direction: ServerRequestDir,
		Params: reflect.TypeFor[P](), Result: reflect.TypeFor[R]()})
	return ServerRequest[P, R]{Name: name}
}

func serverNotification[P any](name string) ServerNotification[P] {
	addRow(Method{Name: name, Direction: ServerNotificationDir, Params: reflect.TypeFor[P]()})
	return ServerNotification[P]{Name: name}
}

// Methods returns every row of the method table, sorted by name.
func Methods() []Method {
	ms := make([]Method, 0, len(table))
	for _, m := range table {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Method) int { return strings.Compare(a.Name, b.Name) })
	return ms
}

// Lookup returns the table row of the method name.
func Lookup(name string) (Method, bool) {
	m, ok := table[name]
	return m, ok
}
