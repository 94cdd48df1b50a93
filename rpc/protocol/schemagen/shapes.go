package schemagen

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// wireNames renames the Go types whose name would mislead a client: the
// wire error is RpcError in the schema and the declarations, since Error
// would shadow JavaScript's Error in every file importing it.
var wireNames = map[reflect.Type]string{
	reflect.TypeFor[protocol.Error](): "RpcError",
}

// defName is the $defs name of a Go type.
func defName(t reflect.Type) string {
	if n, ok := wireNames[t]; ok {
		return n
	}
	return t.Name()
}

// $defs names of the envelope definitions addEnvelopes adds.
const (
	requestIDDef          = "RequestId"
	clientRequestDef      = "ClientRequestMessage"
	clientNotificationDef = "ClientNotificationMessage"
	serverRequestDef      = "ServerRequestMessage"
	serverNotificationDef = "ServerNotificationMessage"
	responseDef           = "ResponseMessage"
	errorResponseDef      = "ErrorResponseMessage"
	serverMessageDef      = "ServerMessage"
	clientMessageDef      = "ClientMessage"
)

// overview is the schema's description and the head of the TypeScript
// declarations: how the conversation goes, for a client developer in any
// language. README.md "Driving the server" says the same.
const overview = `The knightcode app-server protocol: newline-delimited JSON-RPC 2.0 messages without a "jsonrpc" member, one JSON object per line of UTF-8, on the server's stdin (client to server) and stdout (server to client).

Messages. A request is {id, method, params}; the peer answers it with a response {id, result} or an error response {id, error: {code, message, data?}}. A notification is {method, params} and has no id and no answer. Tell them apart by their members: method and id, a request; method without id, a notification; id and result, a response; id and error, an error response. Both sides send requests: the client's, and the server's own (approvals and dialogs), which the client answers.

Ids. A request id is a string or a number, chosen by the side that sends the request and echoed exactly in its answer. The server numbers its requests 1, 2, 3, ... on each connection, independently of the client's ids: the two are separate number spaces, so a server request may carry an id the client also used. Keep the client's pending requests apart from the server's requests: a message with a method is a server request to answer, one without is the answer to a request of the client's.

Serialization. Each client method has a serialization rule (the schema's methods table gives it). concurrent: it runs at once, beside anything else. perThread: requests naming the same threadId run one after another in the order they arrived on this connection, each answered before the next starts; other threads' requests run meanwhile. inline: handled before the server reads the next line (initialize, initialized, turn/interrupt). Answers come in the order requests finish, not the order they were sent. turn/start answers as soon as the turn starts; the turn then runs on its own and reports through notifications, so the thread's reads (thread/diff/read, git/status, file/read, thread/read, ...) answer while a turn runs or waits on an approval. git/commit, git/push, git/pr/create and git/branch/switch can take minutes (hooks, gh): once one starts, the thread's requests behind it run meanwhile (its writes in that checkout answer turnInProgress).

Subscriptions. thread/start, thread/resume, thread/fork and turn/start subscribe the connection that sent them to the thread; thread/unsubscribe withdraws the subscription and thread/replaced moves it to the reloaded thread. Subscribers get the thread's turn, item, delta, queue, usage, warning, ui and background shell notifications and its approvals and dialogs (one subscriber at a time). Every initialized connection gets thread/sidebar, thread/status/changed, thread/turn/completed, thread/archived, thread/unarchived, thread/deleted and account/updated. capabilities.optOutNotifications of initialize filters notifications only.

Items. An item id is unique only within its (thread, turn): key items by threadId, turnId and id. item/completed replaces what item/started and the deltas said.

Errors. code is a string (ErrorCode); errorData maps a code to the shape of its data. invalidParams names the wrong field in data.field; a refusal caused by the state of the repository or the project, not by a parameter, carries data.reason and no field.`

// collectTypes records t and every named struct type reachable from its
// fields (through pointers, slices, arrays and maps) by $defs name.
// Embedded structs without a JSON name are flattened, as the reflector
// does, but their fields are walked.
func collectTypes(t reflect.Type, out map[string]reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.Name() == "" {
		return
	}
	if _, seen := out[defName(t)]; seen {
		return
	}
	out[defName(t)] = t
	for _, f := range protocol.WireFields(t) {
		collectTypes(f.Field.Type, out)
	}
}

// goOnlyPrefix starts a paragraph of a doc comment in package protocol that
// is for Go readers only (Go helpers, how the Go side decodes or compares
// a value): clientText leaves such paragraphs out of the schema and the
// declarations.
const goOnlyPrefix = "Go:"

// clientText makes a doc comment of package protocol client-facing: it
// leaves out the paragraphs starting with goOnlyPrefix, renames a renamed
// type at the start of its own comment (field "" ), and writes the Go names
// of t's fields as their JSON names ("ClientMessageID" -> "clientMessageId"),
// so a comment that follows Go's conventions reads right to a client of
// any language. Everything else must already be written for a client: no
// document pointers, issue numbers or Go API names (TestClientFacingText).
func clientText(t reflect.Type, field, text string) string {
	if text == "" {
		return ""
	}
	var keep []string
	for _, p := range strings.Split(text, "\n\n") {
		if !strings.HasPrefix(strings.TrimSpace(p), goOnlyPrefix) {
			keep = append(keep, p)
		}
	}
	text = strings.Join(keep, "\n\n")
	if n := defName(t); field == "" && n != t.Name() {
		if rest, ok := strings.CutPrefix(text, t.Name()+" "); ok {
			text = n + " " + rest
		}
	}
	if t.Kind() != reflect.Struct {
		return text
	}
	for _, f := range protocol.WireFields(t) {
		if f.Field.Name != f.Name {
			// A whole word, not part of a dotted name (a JSON path such
			// as error.message stays as written).
			re := regexp.MustCompile(`(^|[^A-Za-z0-9_.])` + regexp.QuoteMeta(f.Field.Name) + `\b`)
			text = re.ReplaceAllString(text, "${1}"+f.Name)
		}
	}
	return text
}

// applyEnums makes every member with a protocol.Enum refer to its
// enumeration ($defs named Enum.Name): a string member is the enumeration,
// a list of strings a list of it, a map of strings a map to it. The
// member keeps its own description. It fails when an Enum names a member
// no type of the document has, or a member of another kind.
func applyEnums(doc *document, types map[string]reflect.Type) error {
	used := map[protocol.Member]bool{}
	for _, name := range slices.Sorted(maps.Keys(types)) {
		def := doc.Defs[name]
		if def == nil || def.Properties == nil {
			continue
		}
		for _, f := range protocol.WireFields(types[name]) {
			e, ok := protocol.EnumOf(f.Owner, f.Name)
			if !ok {
				continue
			}
			used[protocol.Member{Type: f.Owner, Name: f.Name}] = true
			prop, ok := def.Properties.Get(f.Name)
			if !ok {
				return fmt.Errorf("%s has no property %s", name, f.Name)
			}
			ref := &jsonschema.Schema{Ref: "#/$defs/" + e.Name}
			switch {
			case f.Field.Type.Kind() == reflect.String:
				*prop = jsonschema.Schema{Ref: ref.Ref, Description: prop.Description}
			case f.Field.Type.Kind() == reflect.Slice && f.Field.Type.Elem().Kind() == reflect.String:
				prop.Items = ref
			case f.Field.Type.Kind() == reflect.Map && f.Field.Type.Elem().Kind() == reflect.String:
				prop.AdditionalProperties = ref
			default:
				return fmt.Errorf("%s.%s has enum %s but is a %v, not a string, a list or a map of strings", name, f.Name, e.Name, f.Field.Type)
			}
			if _, dup := doc.Defs[e.Name]; !dup {
				doc.Defs[e.Name] = enumSchema(e)
			} else if types[e.Name] != nil {
				return fmt.Errorf("enum %s has the name of a type", e.Name)
			}
		}
	}
	for _, e := range protocol.Enums() {
		for _, m := range e.Members {
			if !used[m] {
				return fmt.Errorf("enum %s names %s.%s, which no message has", e.Name, m.Type.Name(), m.Name)
			}
		}
	}
	return nil
}

// enumSchema is an Enum's definition: a closed one is a string enumeration;
// an open one is any string, its known values listed (anyOf the
// enumeration and a plain string), which the declarations render as the
// values' union with any other string.
func enumSchema(e protocol.Enum) *jsonschema.Schema {
	vals := make([]any, len(e.Values))
	for i, v := range e.Values {
		vals[i] = v
	}
	if !e.Open {
		return &jsonschema.Schema{Type: "string", Enum: vals, Description: e.Doc}
	}
	return &jsonschema.Schema{Description: e.Doc,
		AnyOf: []*jsonschema.Schema{{Type: "string", Enum: vals}, {Type: "string"}}}
}

// applyUnions replaces the definition of every protocol.Union's struct by
// the union of its shapes: each shape a definition of its own holding the
// tag as a constant and only its members, required when the struct
// requires them or the shape says so; the struct's name becomes oneOf the
// shapes, and TagEnum the enumeration of the tags.
func applyUnions(doc *document) error {
	for _, u := range protocol.Unions() {
		name := defName(u.Type)
		def := doc.Defs[name]
		if def == nil || def.Properties == nil {
			return fmt.Errorf("union %s is not an object of the document", name)
		}
		tag, ok := def.Properties.Get(u.Tag)
		if !ok {
			return fmt.Errorf("union %s has no tag member %s", name, u.Tag)
		}
		union := &jsonschema.Schema{Description: def.Description}
		tags := &jsonschema.Schema{Type: "string", Description: u.TagDoc}
		for _, sh := range u.Shapes {
			if _, dup := doc.Defs[sh.Name]; dup {
				return fmt.Errorf("shape %s of %s has the name of another definition", sh.Name, name)
			}
			s := &jsonschema.Schema{Type: "object", Description: sh.Doc, Properties: jsonschema.NewProperties(),
				AdditionalProperties: jsonschema.FalseSchema, Required: []string{u.Tag}}
			for _, m := range sh.Members {
				if _, ok := def.Properties.Get(m); !ok {
					return fmt.Errorf("shape %s names %s, which %s does not have", sh.Name, m, name)
				}
			}
			for p := def.Properties.Oldest(); p != nil; p = p.Next() {
				switch {
				case p.Key == u.Tag:
					s.Properties.Set(p.Key, &jsonschema.Schema{Const: sh.Tag, Description: tag.Description})
				case slices.Contains(sh.Members, p.Key):
					s.Properties.Set(p.Key, p.Value)
					if slices.Contains(def.Required, p.Key) || slices.Contains(sh.Required, p.Key) {
						s.Required = append(s.Required, p.Key)
					}
				}
			}
			for _, m := range sh.Required {
				if !slices.Contains(sh.Members, m) {
					return fmt.Errorf("shape %s requires %s, which it does not carry", sh.Name, m)
				}
			}
			doc.Defs[sh.Name] = s
			union.OneOf = append(union.OneOf, &jsonschema.Schema{Ref: "#/$defs/" + sh.Name})
			tags.Enum = append(tags.Enum, sh.Tag)
		}
		if _, dup := doc.Defs[u.TagEnum]; dup {
			return fmt.Errorf("tag enumeration %s of %s has the name of another definition", u.TagEnum, name)
		}
		doc.Defs[name] = union
		doc.Defs[u.TagEnum] = tags
	}
	return nil
}

// addEnvelopes adds the message envelopes: the request id, each direction's
// requests and notifications (method an enumeration of that direction's
// methods), responses, error responses, and the two unions of what each
// side receives. The declarations type them by the method maps instead.
func addEnvelopes(doc *document) error {
	methods := map[string][]any{}
	for _, m := range protocol.Methods() {
		d := m.Direction.String()
		methods[d] = append(methods[d], m.Name)
	}
	ref := func(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }
	object := func(desc string, required []string, props ...any) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "object", Description: desc, Properties: jsonschema.NewProperties(),
			AdditionalProperties: jsonschema.FalseSchema, Required: required}
		for i := 0; i < len(props); i += 2 {
			s.Properties.Set(props[i].(string), props[i+1].(*jsonschema.Schema))
		}
		return s
	}
	method := func(dir protocol.Direction) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", Enum: methods[dir.String()], Description: "The method's name."}
	}
	params := func(dir protocol.Direction) *jsonschema.Schema {
		return &jsonschema.Schema{Description: "The method's params, of the type methods gives for it (a " + dir.String() + ")."}
	}
	id := func(desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Ref: "#/$defs/" + requestIDDef, Description: desc}
	}
	defs := map[string]*jsonschema.Schema{
		requestIDDef: {Description: "A request's id: a string or a number, chosen by the side that sends the request and echoed exactly in its answer. " +
			"The server numbers its own requests on each connection, independently of the client's ids.",
			OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}}},
		clientRequestDef: object("A request the client sends; the server answers it with a ResponseMessage or an ErrorResponseMessage carrying its id. "+
			"Absent params are the same as {}.", []string{"id", "method"},
			"id", id("Chosen by the client, unique among its requests not yet answered."), "method", method(protocol.ClientRequestDir),
			"params", params(protocol.ClientRequestDir)),
		clientNotificationDef: object("A notification the client sends (initialized); it has no id and no answer.", []string{"method"},
			"method", method(protocol.ClientNotificationDir), "params", params(protocol.ClientNotificationDir)),
		serverRequestDef: object("A request the server sends (an approval or a dialog); the client answers it with a ResponseMessage carrying the same id. "+
			"Its id is of the server's own numbering, unrelated to the client's ids.", []string{"id", "method", "params"},
			"id", id("Chosen by the server."), "method", method(protocol.ServerRequestDir), "params", params(protocol.ServerRequestDir)),
		serverNotificationDef: object("A notification the server sends; it has no id and no answer.", []string{"method", "params"},
			"method", method(protocol.ServerNotificationDir), "params", params(protocol.ServerNotificationDir)),
		responseDef: object("The answer to a request that succeeded: the request's id and the method's result.", []string{"id", "result"},
			"id", id("The id of the request answered."), "result", &jsonschema.Schema{Description: "The method's result, of the type methods gives for it."}),
		errorResponseDef: object("The answer to a request that failed: the request's id and the error.", []string{"id", "error"},
			"id", id("The id of the request answered."), "error", ref(defName(reflect.TypeFor[protocol.Error]()))),
		serverMessageDef: {Description: "A line the server writes: an answer to a client request, a server request or a server notification.",
			OneOf: []*jsonschema.Schema{ref(responseDef), ref(errorResponseDef), ref(serverRequestDef), ref(serverNotificationDef)}},
		clientMessageDef: {Description: "A line the client writes: a client request, a client notification or an answer to a server request.",
			OneOf: []*jsonschema.Schema{ref(clientRequestDef), ref(clientNotificationDef), ref(responseDef), ref(errorResponseDef)}},
	}
	for name, def := range defs {
		if _, dup := doc.Defs[name]; dup {
			return fmt.Errorf("a protocol type is named %s, an envelope's name", name)
		}
		doc.Defs[name] = def
	}
	return nil
}
