package jsonrpc

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
//   - a refusal of P's Validate method.
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
	typ      reflect.Type
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
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				fs = append(fs, collectFields(et)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		nonEmpty := false
		for o := range strings.SplitSeq(f.Tag.Get("jsonschema"), ",") {
			nonEmpty = nonEmpty || (o == "minLength=1" && f.Type.Kind() == reflect.String)
		}
		fs = append(fs, field{name: name, required: !optional, nonEmpty: nonEmpty, typ: f.Type})
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
				return InvalidParams(join(path, name), "unknown field; %s", expectedMembers(fs))
			}
		}
		for _, f := range fs.list {
			v, ok := obj[f.name]
			switch {
			case f.required && (!ok || isNull(v)):
				return InvalidParams(join(path, f.name), "required")
			case ok && f.nonEmpty && (isNull(v) || string(v) == `""`):
				return InvalidParams(join(path, f.name), "must not be an empty string or null: leave %s out when you mean none", f.name)
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
