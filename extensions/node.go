package extensions

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math/big"
	"os"
	"path"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/dop251/goja"
	"github.com/google/uuid"

	"github.com/knightcode/knightcode/internal/safefile"
)

// providedBuiltins are the Node modules the runtime provides (without
// "node:"): the Node subset of README "Extensions". An import of another
// Node module fails the bundle, naming it.
var providedBuiltins = []string{
	"path", "path/posix", "events", "util", "fs", "fs/promises", "os", "crypto", "timers", "buffer", "process", "url",
	"child_process", "module",
}

// virtualModules are the packages the runtime provides in place of
// node_modules: pi's extension API under its own and knightcode's name,
// typebox, and pi-ai's schema helpers (the prelude's modules).
var virtualModules = map[string]bool{
	"@mariozechner/pi-coding-agent": true,
	"@knightcode/extension-api":     true,
	"@mariozechner/pi-ai":           true,
	"@mariozechner/pi-agent-core":   true,
	"@mariozechner/pi-tui":          true,
	"typebox":                       true,
	"@sinclair/typebox":             true,
}

// require (loop) is the bundle's require: a provided module (made once
// per runtime), else an Error naming the module.
func (rt *runtime) require(c goja.FunctionCall) goja.Value {
	name := c.Argument(0).String()
	key := strings.TrimPrefix(name, "node:")
	if m, ok := rt.modules[key]; ok {
		return m
	}
	var m goja.Value
	switch key {
	case "path", "path/posix":
		m = rt.pathModule()
	case "fs":
		m = rt.fsModule()
	case "fs/promises":
		m = rt.fsModule().Get("promises")
	case "os":
		m = rt.osModule()
	case "crypto":
		m = rt.cryptoModule()
	case "process":
		m = rt.vm.Get("process")
	default:
		f := rt.internal.Get("modules").ToObject(rt.vm).Get(key)
		fn, ok := goja.AssertFunction(f)
		if !ok {
			panic(rt.nodeErr("MODULE_NOT_FOUND", "module \""+name+"\" is not provided by knightcode's extension runtime"))
		}
		v, err := fn(goja.Undefined())
		if err != nil {
			panic(err)
		}
		m = v
	}
	rt.modules[key] = m
	return m
}

// object (loop) is a new object with the functions fs.
func (rt *runtime) object(fs map[string]func(goja.FunctionCall) goja.Value) *goja.Object {
	o := rt.vm.NewObject()
	for name, f := range fs {
		_ = o.Set(name, f)
	}
	return o
}

// args (loop) are c's arguments as strings.
func strArgs(c goja.FunctionCall) []string {
	out := make([]string, 0, len(c.Arguments))
	for _, a := range c.Arguments {
		if goja.IsUndefined(a) {
			continue
		}
		out = append(out, a.String())
	}
	return out
}

// The path module (POSIX, as Node's path.posix). Relative paths resolve
// against the thread's cwd, which process.cwd() also answers.

func normalizePath(p string) string {
	if p == "" {
		return "."
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

func joinPaths(parts []string) string {
	parts = slices.DeleteFunc(slices.Clone(parts), func(s string) bool { return s == "" })
	if len(parts) == 0 {
		return "."
	}
	return normalizePath(strings.Join(parts, "/"))
}

func (rt *runtime) resolvePath(parts []string) string {
	out := ""
	for i := len(parts) - 1; i >= 0 && !strings.HasPrefix(out, "/"); i-- {
		if parts[i] == "" {
			continue
		}
		if out == "" {
			out = parts[i]
		} else {
			out = parts[i] + "/" + out
		}
	}
	if !strings.HasPrefix(out, "/") {
		out = rt.cwd + "/" + out
	}
	return path.Clean(out)
}

func trimSlashes(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" && strings.HasPrefix(p, "/") {
		return "/"
	}
	return t
}

func dirname(p string) string {
	if p == "" {
		return "."
	}
	t := trimSlashes(p)
	if t == "/" {
		return "/"
	}
	i := strings.LastIndex(t, "/")
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return strings.TrimRight(t[:i], "/")
}

func basename(p, ext string) string {
	t := trimSlashes(p)
	if t == "/" {
		return ""
	}
	b := t[strings.LastIndex(t, "/")+1:]
	if ext != "" && b != ext && strings.HasSuffix(b, ext) {
		b = b[:len(b)-len(ext)]
	}
	return b
}

func extname(p string) string {
	b := basename(p, "")
	i := strings.LastIndex(b, ".")
	if i <= 0 || b == ".." {
		return ""
	}
	return b[i:]
}

func (rt *runtime) relativePath(from, to string) string {
	a, b := rt.resolvePath([]string{from}), rt.resolvePath([]string{to})
	if a == b {
		return ""
	}
	r, err := filepath.Rel(a, b)
	if err != nil {
		return b
	}
	return r
}

func (rt *runtime) pathModule() *goja.Object {
	vm := rt.vm
	str := func(c goja.FunctionCall, i int) string {
		a := c.Argument(i)
		if goja.IsUndefined(a) || goja.IsNull(a) {
			if i == 0 {
				panic(vm.NewTypeError(`The "path" argument must be of type string`))
			}
			return ""
		}
		return a.String()
	}
	m := rt.object(map[string]func(goja.FunctionCall) goja.Value{
		"join":       func(c goja.FunctionCall) goja.Value { return vm.ToValue(joinPaths(strArgs(c))) },
		"resolve":    func(c goja.FunctionCall) goja.Value { return vm.ToValue(rt.resolvePath(strArgs(c))) },
		"normalize":  func(c goja.FunctionCall) goja.Value { return vm.ToValue(normalizePath(str(c, 0))) },
		"dirname":    func(c goja.FunctionCall) goja.Value { return vm.ToValue(dirname(str(c, 0))) },
		"basename":   func(c goja.FunctionCall) goja.Value { return vm.ToValue(basename(str(c, 0), str(c, 1))) },
		"extname":    func(c goja.FunctionCall) goja.Value { return vm.ToValue(extname(str(c, 0))) },
		"isAbsolute": func(c goja.FunctionCall) goja.Value { return vm.ToValue(strings.HasPrefix(str(c, 0), "/")) },
		"relative": func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(rt.relativePath(str(c, 0), str(c, 1)))
		},
		"parse": func(c goja.FunctionCall) goja.Value {
			p := str(c, 0)
			root := ""
			if strings.HasPrefix(p, "/") {
				root = "/"
			}
			base, ext := basename(p, ""), extname(p)
			dir := dirname(p)
			if !strings.Contains(trimSlashes(p), "/") && root == "" {
				dir = ""
			}
			return vm.ToValue(map[string]string{"root": root, "dir": dir, "base": base, "ext": ext, "name": strings.TrimSuffix(base, ext)})
		},
		"format": func(c goja.FunctionCall) goja.Value {
			o := c.Argument(0).ToObject(vm)
			get := func(k string) string {
				v := o.Get(k)
				if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
					return ""
				}
				return v.String()
			}
			base := get("base")
			if base == "" {
				base = get("name") + get("ext")
			}
			dir := get("dir")
			if dir == "" {
				dir = get("root")
				return vm.ToValue(dir + base)
			}
			if dir == get("root") {
				return vm.ToValue(dir + base)
			}
			return vm.ToValue(dir + "/" + base)
		},
		"toNamespacedPath": func(c goja.FunctionCall) goja.Value { return c.Argument(0) },
	})
	_ = m.Set("sep", "/")
	_ = m.Set("delimiter", ":")
	_ = m.Set("posix", m)
	return m
}

// The os module.
func (rt *runtime) osModule() *goja.Object {
	vm := rt.vm
	m := rt.object(map[string]func(goja.FunctionCall) goja.Value{
		"homedir": func(goja.FunctionCall) goja.Value { h, _ := os.UserHomeDir(); return vm.ToValue(h) },
		"tmpdir":  func(goja.FunctionCall) goja.Value { return vm.ToValue(os.TempDir()) },
		"platform": func(goja.FunctionCall) goja.Value {
			return vm.ToValue(nodePlatform())
		},
		"arch":     func(goja.FunctionCall) goja.Value { return vm.ToValue(nodeArch()) },
		"hostname": func(goja.FunctionCall) goja.Value { h, _ := os.Hostname(); return vm.ToValue(h) },
		"type": func(goja.FunctionCall) goja.Value {
			return vm.ToValue(map[string]string{"linux": "Linux", "darwin": "Darwin", "win32": "Windows_NT"}[nodePlatform()])
		},
		"cpus": func(goja.FunctionCall) goja.Value {
			cpus := make([]map[string]any, goruntime.NumCPU())
			for i := range cpus {
				cpus[i] = map[string]any{"model": "", "speed": 0}
			}
			return vm.ToValue(cpus)
		},
	})
	_ = m.Set("EOL", "\n")
	return m
}

func nodePlatform() string {
	if goruntime.GOOS == "windows" {
		return "win32"
	}
	return goruntime.GOOS
}

func nodeArch() string {
	switch goruntime.GOARCH {
	case "amd64":
		return "x64"
	case "386":
		return "ia32"
	}
	return goruntime.GOARCH
}

// The process object: env (a copy of the server's environment), cwd()
// (the thread's), platform, arch, argv, nextTick.
func (rt *runtime) processModule() *goja.Object {
	vm := rt.vm
	env := vm.NewObject()
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			_ = env.Set(k, v)
		}
	}
	p := rt.object(map[string]func(goja.FunctionCall) goja.Value{
		"cwd": func(goja.FunctionCall) goja.Value { return vm.ToValue(rt.cwd) },
		"nextTick": func(c goja.FunctionCall) goja.Value {
			q, _ := goja.AssertFunction(vm.Get("queueMicrotask"))
			fn, _ := goja.AssertFunction(c.Argument(0))
			args := c.Arguments[min(1, len(c.Arguments)):]
			_, _ = q(goja.Undefined(), vm.ToValue(func(goja.FunctionCall) goja.Value {
				if fn != nil {
					_, _ = fn(goja.Undefined(), args...)
				}
				return goja.Undefined()
			}))
			return goja.Undefined()
		},
		"uptime": func(goja.FunctionCall) goja.Value { return vm.ToValue(0) },
	})
	_ = p.Set("env", env)
	_ = p.Set("platform", nodePlatform())
	_ = p.Set("arch", nodeArch())
	_ = p.Set("argv", []string{"knightcode", "app-server"})
	_ = p.Set("pid", os.Getpid())
	return p
}

// The crypto module: createHash (md5, sha1, sha256, sha512) with
// update(data[, encoding]) and digest([encoding]), randomUUID,
// randomBytes, getRandomValues.
func (rt *runtime) cryptoModule() *goja.Object {
	vm := rt.vm
	bufFrom, _ := goja.AssertFunction(rt.internal.Get("Buffer").ToObject(vm).Get("from"))
	toBuffer := func(b []byte) goja.Value {
		v, err := bufFrom(rt.internal.Get("Buffer"), vm.ToValue(vm.NewArrayBuffer(b)))
		if err != nil {
			panic(err)
		}
		return v
	}
	m := rt.object(map[string]func(goja.FunctionCall) goja.Value{
		"createHash": func(c goja.FunctionCall) goja.Value {
			var h hash.Hash
			switch strings.ToLower(c.Argument(0).String()) {
			case "md5":
				h = md5.New()
			case "sha1":
				h = sha1.New()
			case "sha256":
				h = sha256.New()
			case "sha512":
				h = sha512.New()
			default:
				panic(rt.nodeErr("ERR_OSSL_EVP_UNSUPPORTED", "Digest method not supported: "+c.Argument(0).String()))
			}
			o := vm.NewObject()
			_ = o.Set("update", func(c goja.FunctionCall) goja.Value {
				d := c.Argument(0)
				if s, ok := d.Export().(string); ok {
					b, err := encodeString(s, c.Argument(1).String())
					if goja.IsUndefined(c.Argument(1)) {
						b, err = []byte(s), nil
					}
					if err != nil {
						rt.throw("%v", err)
					}
					h.Write(b)
				} else {
					h.Write(rt.bytes(d))
				}
				return o
			})
			_ = o.Set("digest", func(c goja.FunctionCall) goja.Value {
				sum := h.Sum(nil)
				if goja.IsUndefined(c.Argument(0)) {
					return toBuffer(sum)
				}
				s, err := decodeBytes(sum, c.Argument(0).String())
				if err != nil {
					rt.throw("%v", err)
				}
				return vm.ToValue(s)
			})
			return o
		},
		"randomUUID": func(goja.FunctionCall) goja.Value { return vm.ToValue(uuid.NewString()) },
		"randomBytes": func(c goja.FunctionCall) goja.Value {
			b := make([]byte, c.Argument(0).ToInteger())
			_, _ = rand.Read(b)
			return toBuffer(b)
		},
		"getRandomValues": func(c goja.FunctionCall) goja.Value {
			_, _ = rand.Read(rt.bytes(c.Argument(0)))
			return c.Argument(0)
		},
	})
	return m
}

// The fs module and fs.promises: readFile, writeFile, appendFile,
// existsSync, readdir, stat/lstat, mkdir, rm, unlink, rename, each as
// xSync, x(…, callback) and promises.x. Relative paths resolve against the
// thread's cwd. Failures are Node errors with code (ENOENT, ...), syscall
// and path. File contents are read and written only through
// internal/safefile (readRegular, writeRegular): a FIFO, a device, a
// socket, anything under /proc, /sys or /dev or on a kernel pseudo file
// system is refused with EINVAL (a folder with EISDIR), so no path can
// block the event loop or read forever (issue 15, "Inputs that wedge a
// thread").

// maxReadFile is the largest file readFile reads, in bytes: Node's
// kIoMaxLength (2 GiB - 1), past which Node fails with
// ERR_FS_FILE_TOO_LARGE.
const maxReadFile = 1<<31 - 1

// errFileTooLarge is Node's ERR_FS_FILE_TOO_LARGE: a file of size bytes,
// more than maxReadFile.
type errFileTooLarge struct{ size int64 }

func (e errFileTooLarge) Error() string {
	return fmt.Sprintf("File size (%d) is greater than 2 GiB", e.size)
}

// readRegular reads the whole regular file at the absolute path p through
// internal/safefile, giving up after safefile.ReadTimeout (a hung network
// or FUSE file system). Errors: *safefile.Error for a refused path,
// errFileTooLarge, the file system's *fs.PathError.
func readRegular(p string) ([]byte, error) { return readCapped(p, maxReadFile) }

// readCapped reads the whole regular file at the absolute path p with
// safefile.ReadFile (at most limit bytes, giving up after
// safefile.ReadTimeout). Errors: *safefile.Error for a refused path,
// errFileTooLarge (with the size found, more than limit) for a file past
// limit, the file system's *fs.PathError.
func readCapped(p string, limit int64) ([]byte, error) {
	b, err := safefile.ReadFile(p, limit)
	if errors.Is(err, safefile.ErrTooLarge) {
		size := limit + 1
		if fi, serr := os.Stat(p); serr == nil && fi.Size() > limit {
			size = fi.Size()
		}
		return nil, errFileTooLarge{size}
	}
	return b, err
}

// writeRegular writes b to the regular file at the absolute path p,
// created (0o666 before the umask) when missing, its parent folder not;
// flag is os.O_TRUNC (writeFile: replaced in place, as Node does) or
// os.O_APPEND (appendFile). It opens through internal/safefile, like the
// write tool and file/write: a symlink writes its target, and one swapped
// in after the path was resolved is not followed. Errors as readRegular's.
func writeRegular(p string, flag int, b []byte) error {
	f, _, err := safefile.OpenFile(p, os.O_WRONLY|os.O_CREATE|flag, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// fsOp is one fs operation: parse reads the arguments on the loop and
// returns the work to do (off the loop for the async forms) and how its
// result becomes a JavaScript value (on the loop).
type fsOp func(c goja.FunctionCall) (work func() (any, error), toJS func(any) goja.Value)

func (rt *runtime) fsModule() *goja.Object {
	if m, ok := rt.modules["fs"]; ok {
		return m.(*goja.Object)
	}
	vm := rt.vm
	abs := func(v goja.Value) string {
		return rt.resolvePath([]string{rt.pathArg(v)})
	}
	// fdOr is the work of readFile, writeFile or appendFile (syscall sc)
	// given a number, a file descriptor in Node: the runtime has none, so
	// it fails with errNoFD instead of using a file named "0".
	fdOr := func(v goja.Value, sc string, work func() func() (any, error)) func() (any, error) {
		if fd, ok := fdArg(v); ok {
			return func() (any, error) { return nil, errNoFD{fd, sc} }
		}
		return work()
	}
	encodingOf := func(v goja.Value) string {
		if o, ok := v.(*goja.Object); ok {
			v = o.Get("encoding")
		}
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return ""
		}
		return v.String()
	}
	bufFrom, _ := goja.AssertFunction(rt.internal.Get("Buffer").ToObject(vm).Get("from"))
	toJSBytes := func(enc string) func(any) goja.Value {
		return func(r any) goja.Value {
			b := r.([]byte)
			if enc != "" {
				s, err := decodeBytes(b, enc)
				if err != nil {
					rt.throw("%v", err)
				}
				return vm.ToValue(s)
			}
			v, _ := bufFrom(goja.Undefined(), vm.ToValue(vm.NewArrayBuffer(b)))
			return v
		}
	}
	undef := func(any) goja.Value { return goja.Undefined() }
	data := func(v goja.Value, enc string) []byte {
		if s, ok := v.Export().(string); ok {
			b, err := encodeString(s, enc)
			if err != nil {
				rt.throw("%v", err)
			}
			return b
		}
		return slices.Clone(rt.bytes(v))
	}
	statJS := func(r any) goja.Value {
		fi := r.(fs.FileInfo)
		o := vm.NewObject()
		mode := fi.Mode()
		_ = o.Set("size", fi.Size())
		_ = o.Set("mtimeMs", float64(fi.ModTime().UnixNano())/1e6)
		_ = o.Set("mtime", vm.ToValue(fi.ModTime()))
		_ = o.Set("mode", uint32(mode.Perm())|fileType(mode))
		_ = o.Set("isFile", func(goja.FunctionCall) goja.Value { return vm.ToValue(mode.IsRegular()) })
		_ = o.Set("isDirectory", func(goja.FunctionCall) goja.Value { return vm.ToValue(mode.IsDir()) })
		_ = o.Set("isSymbolicLink", func(goja.FunctionCall) goja.Value { return vm.ToValue(mode&fs.ModeSymlink != 0) })
		setTypeTests(vm, o, mode)
		return o
	}
	ops := map[string]struct {
		syscall string
		op      fsOp
	}{
		"readFile": {"open", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			enc := encodingOf(c.Argument(1))
			return fdOr(c.Argument(0), "read", func() func() (any, error) {
				p := abs(c.Argument(0))
				return func() (any, error) { return readRegular(p) }
			}), toJSBytes(enc)
		}},
		"writeFile": {"open", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			b := data(c.Argument(1), encodingOf(c.Argument(2)))
			return fdOr(c.Argument(0), "write", func() func() (any, error) {
				p := abs(c.Argument(0))
				return func() (any, error) { return nil, writeRegular(p, os.O_TRUNC, b) }
			}), undef
		}},
		"appendFile": {"open", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			b := data(c.Argument(1), encodingOf(c.Argument(2)))
			return fdOr(c.Argument(0), "write", func() func() (any, error) {
				p := abs(c.Argument(0))
				return func() (any, error) { return nil, writeRegular(p, os.O_APPEND, b) }
			}), undef
		}},
		"readdir": {"scandir", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			typed := false
			if o, ok := c.Argument(1).(*goja.Object); ok {
				typed = o.Get("withFileTypes") != nil && o.Get("withFileTypes").ToBoolean()
			}
			return func() (any, error) { return os.ReadDir(p) }, func(r any) goja.Value {
				var out []any
				for _, e := range r.([]fs.DirEntry) {
					if !typed {
						out = append(out, e.Name())
						continue
					}
					d, t := vm.NewObject(), e.Type()
					_ = d.Set("name", e.Name())
					_ = d.Set("parentPath", p)
					_ = d.Set("isFile", func(goja.FunctionCall) goja.Value { return vm.ToValue(t.IsRegular()) })
					_ = d.Set("isDirectory", func(goja.FunctionCall) goja.Value { return vm.ToValue(t.IsDir()) })
					_ = d.Set("isSymbolicLink", func(goja.FunctionCall) goja.Value { return vm.ToValue(t&fs.ModeSymlink != 0) })
					setTypeTests(vm, d, t)
					out = append(out, d)
				}
				return vm.NewArray(out...)
			}
		}},
		"stat": {"stat", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			return func() (any, error) { return os.Stat(p) }, statJS
		}},
		"lstat": {"lstat", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			return func() (any, error) { return os.Lstat(p) }, statJS
		}},
		"mkdir": {"mkdir", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			recursive := false
			if o, ok := c.Argument(1).(*goja.Object); ok && o.Get("recursive") != nil {
				recursive = o.Get("recursive").ToBoolean()
			}
			return func() (any, error) {
					if !recursive {
						return nil, os.Mkdir(p, 0o777)
					}
					_, err := os.Stat(p)
					if err := os.MkdirAll(p, 0o777); err != nil {
						return nil, err
					}
					if err == nil {
						return nil, nil
					}
					return p, nil // Node answers the first directory made
				}, func(r any) goja.Value {
					if r == nil {
						return goja.Undefined()
					}
					return vm.ToValue(r)
				}
		}},
		"rm": {"rm", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			var recursive, force bool
			if o, ok := c.Argument(1).(*goja.Object); ok {
				recursive = o.Get("recursive") != nil && o.Get("recursive").ToBoolean()
				force = o.Get("force") != nil && o.Get("force").ToBoolean()
			}
			return func() (any, error) {
				var err error
				if recursive {
					if _, err = os.Lstat(p); err == nil {
						err = os.RemoveAll(p)
					}
				} else if fi, lerr := os.Lstat(p); lerr == nil && fi.IsDir() {
					err = errRmDir{} // Node's rm needs recursive for a folder, even an empty one
				} else {
					err = unlink(p)
				}
				if force && errors.Is(err, fs.ErrNotExist) {
					err = nil
				}
				return nil, err
			}, undef
		}},
		"unlink": {"unlink", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			p := abs(c.Argument(0))
			return func() (any, error) { return nil, unlink(p) }, undef
		}},
		"rename": {"rename", func(c goja.FunctionCall) (func() (any, error), func(any) goja.Value) {
			from, to := abs(c.Argument(0)), abs(c.Argument(1))
			return func() (any, error) { return nil, os.Rename(from, to) }, undef
		}},
	}
	m := vm.NewObject()
	promises := vm.NewObject()
	for name, o := range ops {
		op, sc := o.op, o.syscall
		_ = m.Set(name+"Sync", func(c goja.FunctionCall) goja.Value {
			work, toJS := op(c)
			r, err := work()
			if err != nil {
				panic(rt.fsErr(err, sc, c.Argument(0)))
			}
			return toJS(r)
		})
		_ = promises.Set(name, func(c goja.FunctionCall) goja.Value {
			work, toJS := op(c)
			p, resolve, reject := vm.NewPromise()
			rt.async(work, func(r any, err error) {
				if err != nil {
					_ = reject(rt.fsErr(err, sc, c.Argument(0)))
					return
				}
				_ = resolve(toJS(r))
			})
			return vm.ToValue(p)
		})
		_ = m.Set(name, func(c goja.FunctionCall) goja.Value {
			cb, ok := goja.AssertFunction(c.Argument(len(c.Arguments) - 1))
			if !ok {
				panic(vm.NewTypeError(`The "cb" argument must be of type function`))
			}
			work, toJS := op(c)
			rt.async(work, func(r any, err error) {
				if err != nil {
					_, _ = cb(goja.Undefined(), rt.fsErr(err, sc, c.Argument(0)))
					return
				}
				_, _ = cb(goja.Undefined(), goja.Null(), toJS(r))
			})
			return goja.Undefined()
		})
	}
	_ = m.Set("existsSync", func(c goja.FunctionCall) goja.Value {
		a := c.Argument(0)
		if goja.IsUndefined(a) || goja.IsNull(a) {
			return vm.ToValue(false)
		}
		_, err := os.Stat(abs(a))
		return vm.ToValue(err == nil)
	})
	_ = promises.Set("access", func(c goja.FunctionCall) goja.Value {
		p := abs(c.Argument(0))
		pr, resolve, reject := vm.NewPromise()
		rt.async(func() (any, error) { _, err := os.Stat(p); return nil, err }, func(_ any, err error) {
			if err != nil {
				_ = reject(rt.fsErr(err, "access", c.Argument(0)))
				return
			}
			_ = resolve(goja.Undefined())
		})
		return vm.ToValue(pr)
	})
	_ = m.Set("promises", promises)
	_ = m.Set("constants", map[string]int{"F_OK": 0, "R_OK": 4, "W_OK": 2, "X_OK": 1})
	rt.modules["fs"] = m
	return m
}

// async (loop) runs work on a goroutine of its own and then done with its
// result on the loop, as JavaScript of the extension running now.
func (rt *runtime) async(work func() (any, error), done func(any, error)) {
	rt.mu.Lock()
	x := rt.running
	rt.mu.Unlock()
	go func() {
		r, err := work()
		rt.post(func() { rt.run(x, func() { done(r, err) }) })
	}()
}

// fsErr (loop) is err as Node's error: code, errno, syscall, path and
// Node's message ("ENOENT: no such file or directory, open '<path>'"); a
// path internal/safefile refused is EINVAL (EISDIR for a folder) with its
// reason as the description; errFileTooLarge is Node's RangeError with
// code ERR_FS_FILE_TOO_LARGE.
func (rt *runtime) fsErr(err error, syscallName string, p goja.Value) *goja.Object {
	var big errFileTooLarge
	if errors.As(err, &big) {
		ctor, _ := goja.AssertConstructor(rt.vm.Get("RangeError"))
		e, _ := ctor(nil, rt.vm.ToValue(big.Error()))
		_ = e.Set("code", "ERR_FS_FILE_TOO_LARGE")
		return e
	}
	var fd errNoFD
	if errors.As(err, &fd) {
		e := rt.nodeErr("EBADF", fd.Error())
		_ = e.Set("errno", -int(syscall.EBADF))
		_ = e.Set("syscall", fd.syscall)
		return e
	}
	if errors.As(err, new(errRmDir)) {
		// Node's SystemError (lib/internal/errors.js ERR_FS_EISDIR).
		e := rt.nodeErr("ERR_FS_EISDIR", "Path is a directory: rm returned EISDIR (is a directory) "+p.String())
		info := rt.vm.NewObject()
		for k, v := range map[string]any{"code": "EISDIR", "message": "is a directory", "path": p.String(), "syscall": "rm", "errno": int(syscall.EISDIR)} {
			_ = info.Set(k, v)
		}
		for k, v := range map[string]any{"name": "SystemError", "errno": int(syscall.EISDIR), "syscall": "rm", "path": p.String(), "info": info} {
			_ = e.Set(k, v)
		}
		return e
	}
	code, desc := "EIO", err.Error()
	var errno syscall.Errno
	var refused *safefile.Error
	switch {
	case errors.As(err, &refused):
		// Node opens these; knightcode refuses them (issue 15): EISDIR as
		// Node answers for a folder, EINVAL for the rest, saying why.
		code, errno, desc = "EINVAL", syscall.EINVAL, refused.Error()
		if refused.Mode.IsDir() {
			code, errno = "EISDIR", syscall.EISDIR
		}
	case errors.Is(err, context.DeadlineExceeded):
		code, errno, desc = "ETIMEDOUT", syscall.ETIMEDOUT, err.Error()
	case errors.As(err, &errno):
		if c, ok := errnoCodes[errno]; ok {
			code = c
		}
		desc = errno.Error()
		if d, ok := uvDescriptions[errno]; ok {
			desc = d
		}
	}
	msg := code + ": " + desc + ", " + syscallName + " '" + p.String() + "'"
	e := rt.nodeErr(code, msg)
	_ = e.Set("errno", -int(errno))
	_ = e.Set("syscall", syscallName)
	_ = e.Set("path", p.String())
	return e
}

// uvDescriptions are libuv's words for an errno where Go's differ (Node's
// messages are libuv's).
var uvDescriptions = map[syscall.Errno]string{
	syscall.EISDIR: "illegal operation on a directory",
}

var errnoCodes = map[syscall.Errno]string{
	syscall.ENOENT: "ENOENT", syscall.EEXIST: "EEXIST", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM",
	syscall.ENOTDIR: "ENOTDIR", syscall.EISDIR: "EISDIR", syscall.ENOTEMPTY: "ENOTEMPTY", syscall.EBUSY: "EBUSY",
	syscall.EMFILE: "EMFILE", syscall.EROFS: "EROFS", syscall.EXDEV: "EXDEV", syscall.ELOOP: "ELOOP",
	syscall.ENAMETOOLONG: "ENAMETOOLONG", syscall.EINVAL: "EINVAL", syscall.ENXIO: "ENXIO",
	syscall.ETIMEDOUT: "ETIMEDOUT", syscall.EBADF: "EBADF",
}

// fileType is the S_IF* bits of mode, as Node's stat mode has them.
func fileType(mode fs.FileMode) uint32 {
	switch {
	case mode.IsDir():
		return syscall.S_IFDIR
	case mode&fs.ModeSymlink != 0:
		return syscall.S_IFLNK
	case mode.IsRegular():
		return syscall.S_IFREG
	}
	return 0
}

// errNoFD is a file descriptor given where Node takes one (readFile,
// writeFile, appendFile): the runtime opens none, so it is Node's EBADF
// for syscall, saying why.
type errNoFD struct {
	fd      int64
	syscall string
}

func (e errNoFD) Error() string {
	return fmt.Sprintf("EBADF: bad file descriptor, %s (file descriptors are not supported by knightcode's extension runtime: %d)", e.syscall, e.fd)
}

// errRmDir is rm of a folder without recursive: Node's ERR_FS_EISDIR.
type errRmDir struct{}

func (errRmDir) Error() string { return "is a directory" }

// unlink removes the file (or symlink) at p as unlink(2) does: never a
// folder, which is EISDIR as Linux answers (os.Remove would fall back to
// rmdir and delete an empty one). Errors: *fs.PathError.
func unlink(p string) error {
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		return &fs.PathError{Op: "unlink", Path: p, Err: syscall.EISDIR}
	}
	if err := syscall.Unlink(p); err != nil {
		return &fs.PathError{Op: "unlink", Path: p, Err: err}
	}
	return nil
}

// fdArg is v as a file descriptor: a number that is a non-negative
// integer.
func fdArg(v goja.Value) (int64, bool) {
	switch x := v.Export().(type) {
	case int64:
		return x, x >= 0
	case float64:
		return int64(x), x >= 0 && x == float64(int64(x))
	}
	return 0, false
}

// pathArg (loop) is the path a fs function's path argument v names: a
// string, a Buffer (or another Uint8Array) of its bytes, or a file: URL
// (a URL object or a "file://" string). Anything else throws Node's
// TypeError with code ERR_INVALID_ARG_TYPE ("The "path" argument must be
// of type string or an instance of Buffer or URL. Received ...").
func (rt *runtime) pathArg(v goja.Value) string {
	var p string
	o, isObj := v.(*goja.Object)
	switch {
	case !isObj && v != nil && v.ExportType() != nil && v.ExportType().Kind() == reflect.String:
		p = v.String()
	case isObj && isBytes(o):
		p = string(rt.bytes(v))
	case isObj && isURL(o):
		p = o.Get("href").String()
	default:
		e := rt.vm.NewTypeError(`The "path" argument must be of type string or an instance of Buffer or URL. Received ` + received(v))
		_ = e.Set("code", "ERR_INVALID_ARG_TYPE")
		panic(e)
	}
	if u, ok := strings.CutPrefix(p, "file://"); ok {
		p = u
	}
	return p
}

// isBytes reports whether o is a typed array view (a Buffer, a Uint8Array).
func isBytes(o *goja.Object) bool {
	b := o.Get("buffer")
	if b == nil {
		return false
	}
	_, ok := b.Export().(goja.ArrayBuffer)
	return ok && o.Get("byteLength") != nil
}

// isURL reports whether o is a URL as Node's isURL tells one (an href and
// a protocol, no auth or path).
func isURL(o *goja.Object) bool {
	href, proto := o.Get("href"), o.Get("protocol")
	return href != nil && proto != nil && !goja.IsUndefined(href) && !goja.IsUndefined(proto) &&
		(o.Get("auth") == nil || goja.IsUndefined(o.Get("auth"))) && (o.Get("path") == nil || goja.IsUndefined(o.Get("path")))
}

// received describes v as Node's ERR_INVALID_ARG_TYPE does
// (determineSpecificType): "undefined", "null", "function f", "an
// instance of Object", "type number (1)".
func received(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if o, ok := v.(*goja.Object); ok {
		if _, fn := goja.AssertFunction(o); fn {
			return "function " + o.Get("name").String()
		}
		if c, ok := o.Get("constructor").(*goja.Object); ok {
			if n := c.Get("name"); n != nil && n.String() != "" {
				return "an instance of " + n.String()
			}
		}
		return v.String()
	}
	s := v.String()
	if len(s) > 28 {
		s = s[:25] + "..."
	}
	if _, ok := v.Export().(string); ok {
		s = "'" + s + "'"
	}
	return fmt.Sprintf("type %s (%s)", typeOf(v), s)
}

// typeOf is JavaScript's typeof of the primitive v.
func typeOf(v goja.Value) string {
	switch v.Export().(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case *big.Int:
		return "bigint"
	}
	return "symbol"
}

// setTypeTests sets Node's Stats (and Dirent) file type tests on o:
// isFIFO, isSocket, isBlockDevice, isCharacterDevice.
func setTypeTests(vm *goja.Runtime, o *goja.Object, mode fs.FileMode) {
	for name, is := range map[string]bool{
		"isFIFO":            mode&fs.ModeNamedPipe != 0,
		"isSocket":          mode&fs.ModeSocket != 0,
		"isBlockDevice":     mode&fs.ModeDevice != 0 && mode&fs.ModeCharDevice == 0,
		"isCharacterDevice": mode&fs.ModeCharDevice != 0,
	} {
		_ = o.Set(name, func(goja.FunctionCall) goja.Value { return vm.ToValue(is) })
	}
}
