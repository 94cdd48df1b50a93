package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// validator is implemented by params types with rules beyond their JSON
// shape. Validate returns an invalidParams *Error naming the field
// (protocol.InvalidParams); any other error becomes invalidParams as is.
type validator interface{ Validate() error }

// decodeParams decodes a request's params into dst (a pointer to a params
// struct) and checks them. It is the one decoding path of every client
// request and notification (Handle installs it); replies to server requests
// are not params and never pass through it (a reply of the wrong shape is a
// decline or a cancel, spec: Approvals).
//
// Absent or null params are {}. Each of these is an invalidParams *Error
// naming the field by its dotted JSON path (issue 8, "Wire strictness"):
//   - a member the params type does not have, at any depth ("unknown
//     field"); values of free-form members (json.RawMessage, maps of strings,
//     the method names of capabilities.optOutNotifications) are data, not
//     members, and are not checked;
//   - a value of the wrong JSON type;
//   - a missing or null required member (a field without omitempty/omitzero);
//   - an empty string or null in a member tagged jsonschema:"minLength=1"
//     (path, hunkId and turnId of the destructive methods: only an absent
//     member means "all", never "" or null);
//   - an empty string in an id member (id, or a name ending in Id: no id
//     is empty, so "" is a client's mistake, not a lookup that fails), or
//     in a member that takes the values of a protocol.Enum (scope "" is
//     not the default scope: leave the member out for that);
//   - a member given twice in one object (encoding/json would keep the
//     last silently; which one the client meant is unknown);
//   - a path member (path, cwd, paths, or a name ending in Path, Cwd or
//     Paths) longer than protocol.MaxPathBytes, or a string member longer
//     than its jsonschema:"maxLength=N";
//   - a refusal of P's Validate method.
//
// A null optional member is the member left out.
func decodeParams(raw json.RawMessage, dst any) error {
	if len(raw) == 0 || isNull(raw) {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return InvalidParams("", "params must be a JSON %s, got %s", jsonKind(te.Type), te.Value)
			}
			return InvalidParams(te.Field, "expected %s, got %s", jsonKind(te.Type), te.Value)
		}
		return InvalidParams("", "%v", err)
	}
	// A member given twice anywhere, free-form values (config/write's
	// value) included, is ambiguous: refused before the members are read.
	if at, dup := duplicateMemberDeep(raw); dup {
		return InvalidParams(at, "given more than once")
	}
	if err := checkMembers(reflect.TypeOf(dst).Elem(), raw, ""); err != nil {
		return err
	}
	if v, ok := dst.(validator); ok {
		if err := v.Validate(); err != nil {
			if e, ok := errors.AsType[*Error](err); ok {
				return e
			}
			return InvalidParams("", "%v", err)
		}
	}
	return nil
}

// jsonKind names the JSON kind a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.String()
}

// field is one JSON member of a struct type.
type field struct {
	name     string
	required bool
	// nonEmpty is set by jsonschema:"minLength=1" on a string field: when
	// the member is present it must be a non-empty string.
	nonEmpty bool
	// noEmptyString is set on string id members (id, or a name ending in
	// Id), cwd members (cwd, or a name ending in Cwd: "" is neither every
	// project nor none) and string members that take a protocol.Enum's
	// values: "" is refused (null stays the member left out).
	noEmptyString bool
	// enum lists the values of a string member's protocol.Enum.
	enum []string
	// maxBytes bounds a string member (or each string of a []string one)
	// in bytes; 0 means no bound. Path members get protocol.MaxPathBytes
	// (isPathMember); jsonschema:"maxLength=N" sets N.
	maxBytes int
	typ      reflect.Type
}

// isPathMember reports whether a member named name holds a path: path,
// cwd, paths, or a name ending in Path, Cwd or Paths.
func isPathMember(name string) bool {
	switch name {
	case "path", "cwd", "paths":
		return true
	}
	return strings.HasSuffix(name, "Path") || strings.HasSuffix(name, "Cwd") || strings.HasSuffix(name, "Paths")
}

// structFields are the JSON members of a struct type, by name and in
// declaration order.
type structFields struct {
	list   []field
	byName map[string]field
}

var fieldCache sync.Map // reflect.Type -> *structFields

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// fieldsOf lists t's JSON members like encoding/json does (embedded structs
// without a name flattened, "-" and unexported fields skipped); required are
// those without omitempty or omitzero.
func fieldsOf(t reflect.Type) *structFields {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*structFields)
	}
	fs := &structFields{byName: map[string]field{}}
	for _, f := range collectFields(t) {
		if _, dup := fs.byName[f.name]; !dup {
			fs.list = append(fs.list, f)
			fs.byName[f.name] = f
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

func collectFields(t reflect.Type) []field {
	var fs []field
	for _, wf := range protocol.WireFields(t) {
		f, name := wf.Field, wf.Name
		nonEmpty, maxBytes := false, 0
		var enum []string
		isString := f.Type.Kind() == reflect.String || (f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.String)
		if isString && isPathMember(name) {
			maxBytes = protocol.MaxPathBytes
		}
		for o := range strings.SplitSeq(f.Tag.Get("jsonschema"), ",") {
			nonEmpty = nonEmpty || (o == "minLength=1" && f.Type.Kind() == reflect.String)
			if v, ok := strings.CutPrefix(o, "maxLength="); ok && isString {
				if n, err := strconv.Atoi(v); err == nil && n > 0 {
					maxBytes = n
				}
			}
		}
		if e, ok := protocol.EnumOf(wf.Owner, name); ok && f.Type.Kind() == reflect.String {
			enum = e.Values
		}
		isID := name == "id" || strings.HasSuffix(name, "Id")
		isCwd := name == "cwd" || strings.HasSuffix(name, "Cwd")
		noEmpty := f.Type.Kind() == reflect.String && (isID || isCwd || len(enum) > 0 && !slices.Contains(enum, ""))
		fs = append(fs, field{name: name, required: !wf.Optional, nonEmpty: nonEmpty, noEmptyString: noEmpty, enum: enum,
			maxBytes: maxBytes, typ: f.Type})
	}
	return fs
}

// checkMembers reports the first unknown member, missing (or null) required
// member, or empty member tagged minLength=1 in raw, a value that already
// decoded into type t, walking nested objects, arrays and maps. Types with
// their own UnmarshalJSON are leaves unless they are structs given as a JSON
// object (their members are still the struct's fields); json.RawMessage is
// always a leaf.
func checkMembers(t reflect.Type, raw json.RawMessage, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) && (t.Kind() != reflect.Struct || raw[0] != '{') {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		fs := fieldsOf(t)
		for _, name := range slices.Sorted(maps.Keys(obj)) {
			if _, ok := fs.byName[name]; !ok {
				return InvalidParams(join(path, truncate(name, 200)), "unknown field; %s", expectedMembers(fs))
			}
		}
		for _, f := range fs.list {
			v, ok := obj[f.name]
			switch {
			case f.required && (!ok || isNull(v)):
				return InvalidParams(join(path, f.name), "required")
			case ok && f.nonEmpty && f.required && string(v) == `""`:
				return InvalidParams(join(path, f.name), "must not be an empty string")
			case ok && f.nonEmpty && (isNull(v) || string(v) == `""`):
				return InvalidParams(join(path, f.name), "must not be an empty string or null: leave %s out when you mean none", f.name)
			case ok && f.noEmptyString && string(v) == `""` && len(f.enum) > 0 && f.required:
				return InvalidParams(join(path, f.name), "must be one of %s, not an empty string", strings.Join(f.enum, ", "))
			case ok && f.noEmptyString && string(v) == `""` && len(f.enum) > 0:
				return InvalidParams(join(path, f.name), "must be one of %s, not an empty string (leave %s out for the default)", strings.Join(f.enum, ", "), f.name)
			case ok && f.noEmptyString && string(v) == `""`:
				return InvalidParams(join(path, f.name), "must not be an empty string")
			case ok && f.maxBytes > 0 && len(v) > f.maxBytes:
				if err := checkLength(v, f.maxBytes, join(path, f.name)); err != nil {
					return err
				}
			}
			if ok {
				if err := checkMembers(f.typ, v, join(path, f.name)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if !hasStruct(t.Elem()) {
			return nil
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, it := range items {
			if err := checkMembers(t.Elem(), it, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || !hasStruct(t.Elem()) {
			return nil
		}
		var items map[string]json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(items)) {
			if err := checkMembers(t.Elem(), items[k], join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// duplicateMemberDeep reports the first member name that occurs twice in
// one object anywhere in the JSON value raw (objects inside objects and
// arrays included), as a dotted path ("answers.color.label"; array items
// as [i]). A value that is not valid JSON reports none.
func duplicateMemberDeep(raw []byte) (string, bool) {
	return dupIn(json.NewDecoder(bytes.NewReader(raw)), "", true)
}

// duplicateMember reports the first member name that occurs twice at the
// top level of the JSON object raw (names compared exactly, as members
// are); what the members hold is not looked into.
func duplicateMember(raw []byte) (string, bool) {
	return dupIn(json.NewDecoder(bytes.NewReader(raw)), "", false)
}

// dupIn reads one value from dec (its path at) and reports the first
// duplicate member of it, and with deep of the values inside it.
func dupIn(dec *json.Decoder, at string, deep bool) (string, bool) {
	tok, err := dec.Token()
	if err != nil {
		return "", false
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return "", false
			}
			name, _ := tok.(string)
			if seen[name] {
				return join(at, truncate(name, 200)), true
			}
			seen[name] = true
			if !deep {
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return "", false
				}
			} else if path, dup := dupIn(dec, join(at, truncate(name, 200)), deep); dup {
				return path, true
			}
		}
		_, _ = dec.Token() // }
	case json.Delim('['):
		for i := 0; deep && dec.More(); i++ {
			if path, dup := dupIn(dec, at+"["+strconv.Itoa(i)+"]", deep); dup {
				return path, true
			}
		}
		_, _ = dec.Token() // ]
	}
	return "", false
}

// checkLength refuses a string (or a string of an array of strings) raw
// longer than max bytes once decoded, naming it at path.
func checkLength(raw json.RawMessage, max int, path string) error {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if len(one) > max {
			return InvalidParams(path, "%d bytes long; at most %d", len(one), max)
		}
		return nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for i, s := range many {
			if len(s) > max {
				return InvalidParams(path+"["+strconv.Itoa(i)+"]", "%d bytes long; at most %d", len(s), max)
			}
		}
	}
	return nil
}

// expectedMembers says which members an object takes, for the message of an
// unknown one.
func expectedMembers(fs *structFields) string {
	if len(fs.list) == 0 {
		return "this object takes no members"
	}
	names := make([]string, len(fs.list))
	for i, f := range fs.list {
		names[i] = f.name
	}
	return "expected " + strings.Join(names, ", ")
}

// hasStruct reports whether values of t can hold a struct to check.
func hasStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
