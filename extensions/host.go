package extensions

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/dop251/goja"
)

// installHost (loop) sets the Go host object kc the prelude builds on:
// the log, timers, byte encodings and URL parsing.
func (rt *runtime) installHost() {
	vm, kc := rt.vm, rt.kc
	set := func(name string, f func(goja.FunctionCall) goja.Value) { _ = kc.Set(name, f) }
	_ = kc.Set("agentDir", rt.eng.agentDir)
	_ = kc.Set("require", rt.require)
	_ = kc.Set("builtinModules", providedBuiltins)
	set("log", func(c goja.FunctionCall) goja.Value {
		level, msg := c.Argument(0).String(), c.Argument(1).String()
		path := ""
		rt.mu.Lock()
		if rt.running != nil {
			path = rt.running.path
		}
		rt.mu.Unlock()
		switch level {
		case "error":
			rt.log.Error("extension console", "path", path, "message", msg)
		case "warn":
			rt.log.Warn("extension console", "path", path, "message", msg)
		case "debug":
			rt.log.Debug("extension console", "path", path, "message", msg)
		default:
			rt.log.Info("extension console", "path", path, "message", msg)
		}
		return goja.Undefined()
	})
	set("setTimer", func(c goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(c.Argument(0))
		if !ok {
			rt.throw("a timer needs a function")
		}
		ms := c.Argument(1).ToFloat()
		if ms < 1 || ms != ms {
			ms = 1
		}
		d := time.Duration(ms * float64(time.Millisecond))
		rt.nextID++
		id := rt.nextID
		t := &jsTimer{fn: fn}
		if c.Argument(2).ToBoolean() {
			t.repeat = d
		}
		rt.mu.Lock()
		t.owner = rt.running
		rt.mu.Unlock()
		rt.timers[id] = t
		t.t = time.AfterFunc(d, func() { rt.post(func() { rt.fire(id) }) })
		return vm.ToValue(id)
	})
	set("clearTimer", func(c goja.FunctionCall) goja.Value {
		id := c.Argument(0).ToInteger()
		if t := rt.timers[id]; t != nil {
			t.t.Stop()
			delete(rt.timers, id)
		}
		return goja.Undefined()
	})
	set("encode", func(c goja.FunctionCall) goja.Value {
		b, err := encodeString(c.Argument(0).String(), c.Argument(1).String())
		if err != nil {
			rt.throw("%v", err)
		}
		return vm.ToValue(vm.NewArrayBuffer(b))
	})
	set("decode", func(c goja.FunctionCall) goja.Value {
		s, err := decodeBytes(rt.bytes(c.Argument(0)), c.Argument(1).String())
		if err != nil {
			rt.throw("%v", err)
		}
		return vm.ToValue(s)
	})
	set("isEncoding", func(c goja.FunctionCall) goja.Value {
		_, err := encodeString("", c.Argument(0).String())
		return vm.ToValue(err == nil)
	})
	set("resolvePath", func(c goja.FunctionCall) goja.Value {
		p := rt.resolvePath([]string{c.Argument(0).String()})
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return vm.ToValue(p)
	})
	set("visibleWidth", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(ansi.StringWidth(c.Argument(0).String()))
	})
	set("truncate", func(c goja.FunctionCall) goja.Value {
		return vm.ToValue(ansi.Truncate(c.Argument(0).String(), int(c.Argument(1).ToInteger()), c.Argument(2).String()))
	})
	var ui goja.Value
	set("uiModules", func(goja.FunctionCall) goja.Value {
		if ui == nil {
			prog, err := piTUI()
			if err != nil {
				panic(vm.NewGoError(err))
			}
			f, err := vm.RunProgram(prog)
			if err != nil {
				panic(err)
			}
			fn, _ := goja.AssertFunction(f)
			if ui, err = fn(goja.Undefined(), kc); err != nil {
				panic(err)
			}
		}
		return ui
	})
	set("parseURL", func(c goja.FunctionCall) goja.Value {
		u, err := parseURL(c.Argument(0).String(), c.Argument(1))
		if err != nil {
			panic(rt.nodeErr("ERR_INVALID_URL", "Invalid URL: "+c.Argument(0).String()))
		}
		return vm.ToValue(u)
	})
}

// fire (loop) runs the timer id, and again later for an interval.
func (rt *runtime) fire(id int64) {
	t := rt.timers[id]
	if t == nil {
		return
	}
	if t.repeat > 0 {
		t.t.Reset(t.repeat)
	} else {
		delete(rt.timers, id)
	}
	rt.run(t.owner, func() {
		if _, err := t.fn(goja.Undefined()); err != nil {
			path := ""
			if t.owner != nil {
				path = t.owner.path
			}
			rt.log.Warn("an extension's timer threw", "path", path, "err", rt.jsErr(t.owner, err))
		}
	})
}

// bytes (loop) are the bytes of a Uint8Array, ArrayBuffer or other view
// (shared with JavaScript: read them before returning to it).
func (rt *runtime) bytes(v goja.Value) []byte {
	switch x := v.Export().(type) {
	case []byte:
		return x
	case goja.ArrayBuffer:
		return x.Bytes()
	}
	o, ok := v.(*goja.Object)
	if !ok {
		rt.throw("expected bytes, got %s", v.String())
	}
	buf, ok := o.Get("buffer").Export().(goja.ArrayBuffer)
	if !ok {
		rt.throw("expected bytes, got %s", v.String())
	}
	off, n := int(o.Get("byteOffset").ToInteger()), int(o.Get("byteLength").ToInteger())
	return buf.Bytes()[off : off+n]
}

// nodeErr (loop) is a Node-style error {code, message} to throw.
func (rt *runtime) nodeErr(code, msg string) *goja.Object {
	f, _ := goja.AssertFunction(rt.internal.Get("nodeError"))
	v, _ := f(goja.Undefined(), rt.vm.ToValue(code), rt.vm.ToValue(msg))
	return v.ToObject(rt.vm)
}

// encodeString is s in Node's encoding enc (utf8, base64, base64url, hex,
// latin1/binary, ascii, utf16le). Errors: an unknown encoding.
func encodeString(s, enc string) ([]byte, error) {
	switch strings.ToLower(enc) {
	case "utf8", "utf-8", "":
		return []byte(s), nil
	case "base64", "base64url":
		s = strings.TrimRight(strings.Map(func(r rune) rune {
			switch r {
			case '-':
				return '+'
			case '_':
				return '/'
			case ' ', '\n', '\r', '\t':
				return -1
			}
			return r
		}, s), "=")
		b, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil { // Node decodes up to the first bad character
			b, _ = base64.RawStdEncoding.DecodeString(s[:len(s)/4*4])
		}
		return b, nil
	case "hex":
		if len(s)%2 == 1 {
			s = s[:len(s)-1]
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, nil
		}
		return b, nil
	case "latin1", "binary", "ascii":
		b := make([]byte, 0, len(s))
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u))
		}
		return b, nil
	case "utf16le", "utf-16le", "ucs2", "ucs-2":
		u := utf16.Encode([]rune(s))
		b := make([]byte, 2*len(u))
		for i, c := range u {
			b[2*i], b[2*i+1] = byte(c), byte(c>>8)
		}
		return b, nil
	}
	return nil, &unknownEncoding{enc}
}

// decodeBytes is b decoded from Node's encoding enc (see encodeString).
func decodeBytes(b []byte, enc string) (string, error) {
	switch strings.ToLower(enc) {
	case "utf8", "utf-8", "":
		if utf8.Valid(b) {
			return string(b), nil
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), nil
	case "base64":
		return base64.StdEncoding.EncodeToString(b), nil
	case "base64url":
		return base64.RawURLEncoding.EncodeToString(b), nil
	case "hex":
		return hex.EncodeToString(b), nil
	case "latin1", "binary":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	case "ascii":
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c & 0x7f)
		}
		return string(r), nil
	case "utf16le", "utf-16le", "ucs2", "ucs-2":
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		return string(utf16.Decode(u)), nil
	}
	return "", &unknownEncoding{enc}
}

type unknownEncoding struct{ enc string }

func (e *unknownEncoding) Error() string { return "Unknown encoding: " + e.enc }

// parseURL parses input against base (undefined for none) as the WHATWG
// URL parser would for the URLs extensions use (absolute, or relative to
// an absolute base), with net/url. Errors: not an absolute URL.
func parseURL(input string, base goja.Value) (map[string]string, error) {
	u, err := url.Parse(strings.TrimSpace(input))
	if err != nil {
		return nil, err
	}
	if base != nil && !goja.IsUndefined(base) {
		b, err := url.Parse(base.String())
		if err != nil || b.Scheme == "" {
			return nil, errInvalidURL
		}
		u = b.ResolveReference(u)
	}
	if u.Scheme == "" {
		return nil, errInvalidURL
	}
	u.Scheme = strings.ToLower(u.Scheme)
	special := u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "ws" || u.Scheme == "wss" || u.Scheme == "file" || u.Scheme == "ftp"
	if special && u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	port := u.Port()
	if (u.Scheme == "http" || u.Scheme == "ws") && port == "80" || (u.Scheme == "https" || u.Scheme == "wss") && port == "443" {
		u.Host = u.Hostname()
		port = ""
	}
	pass, _ := u.User.Password()
	out := map[string]string{
		"href": u.String(), "protocol": u.Scheme + ":", "username": u.User.Username(), "password": pass,
		"host": u.Host, "hostname": u.Hostname(), "port": port, "pathname": u.EscapedPath(),
		"search": "", "hash": "", "origin": "null",
	}
	if u.Opaque != "" {
		out["pathname"] = u.Opaque
	}
	if u.RawQuery != "" {
		out["search"] = "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out["hash"] = "#" + u.EscapedFragment()
	}
	if special && u.Scheme != "file" {
		out["origin"] = u.Scheme + "://" + u.Host
	}
	return out, nil
}

var errInvalidURL = &url.Error{Op: "parse", Err: errNotAbsolute}

var errNotAbsolute = errorString("not an absolute URL")

type errorString string

func (e errorString) Error() string { return string(e) }
