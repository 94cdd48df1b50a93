package rpc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// validator is implemented by params types with rules beyond their JSON
// shape. Validate returns an invalidParams *Error naming the field
// (protocol.InvalidParams); any other error becomes invalidParams as is.
type validator interface{ Validate() error }

// decodeParams decodes a request's params into dst (a pointer to a params
// struct) and checks them: absent or null params are {}; unknown members are
// ignored; a value of the wrong type, a missing required member (a field
// without omitempty) or a Validate refusal is an invalidParams *Error naming
// the field.
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
	if err := checkRequired(reflect.TypeOf(dst).Elem(), raw, ""); err != nil {
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
	typ      reflect.Type
}

var fieldCache sync.Map // reflect.Type -> []field

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// fieldsOf lists t's JSON members like encoding/json does (embedded structs
// without a name flattened, "-" skipped); required are those without
// omitempty or omitzero.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
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
				fs = append(fs, fieldsOf(et)...)
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
		fs = append(fs, field{name: name, required: !optional, typ: f.Type})
	}
	fieldCache.Store(t, fs)
	return fs
}

// checkRequired reports the first required member missing (or null) from raw,
// a value that already decoded into type t, walking nested objects, arrays
// and maps. Types with their own UnmarshalJSON are leaves.
func checkRequired(t reflect.Type, raw json.RawMessage, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(raw) == 0 || isNull(raw) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for _, f := range fieldsOf(t) {
			v, ok := obj[f.name]
			if f.required && (!ok || isNull(v)) {
				return InvalidParams(join(path, f.name), "required")
			}
			if ok {
				if err := checkRequired(f.typ, v, join(path, f.name)); err != nil {
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
			if err := checkRequired(t.Elem(), it, path+"["+strconv.Itoa(i)+"]"); err != nil {
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
		for k, it := range items {
			if err := checkRequired(t.Elem(), it, join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
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
