package extensions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/dop251/goja"

	"github.com/knightcode/knightcode/agent/tools"
)

// child_process (README "Extensions", issue 25): the Go half is two host
// functions, kc.spawn and kc.spawnSync; js/prelude.js builds Node's
// ChildProcess, spawn, exec, execFile and their Sync forms on them. Every
// child starts through the thread's process groups
// (tools.ProcessGroups.Start, as the bash tool's commands do): the leader
// of a process group of its own, under a reaper where there are reapers,
// with the thread's token; so it and whatever it leaves running end with
// the thread (unload, archive, server exit). A runtime whose host offers
// no process groups (tests) has its own, stopped when it is disposed.

// childSpec is what kc.spawn and kc.spawnSync take: the executable (found
// on PATH when it has no "/"), its arguments, the working directory (the
// thread's cwd when empty; relative to it otherwise), the environment
// ("k=v"; nil for the server's), and which of stdin, stdout and stderr are
// pipes ("pipe") or /dev/null ("ignore").
type childSpec struct {
	file  string
	args  []string
	dir   string
	env   []string
	stdio [3]string
}

// readSpec (loop) reads a childSpec from kc.spawn's arguments: file,
// args (array), options {cwd, env (array of "k=v"), stdio (three
// strings)}.
func (rt *runtime) readSpec(c goja.FunctionCall) childSpec {
	s := childSpec{file: c.Argument(0).String(), stdio: [3]string{"pipe", "pipe", "pipe"}}
	if err := rt.fromJS(c.Argument(1), &s.args); err != nil {
		panic(rt.vm.NewTypeError("child_process: the arguments are not strings"))
	}
	var opts struct {
		Cwd   string    `json:"cwd"`
		Env   []string  `json:"env"`
		Stdio [3]string `json:"stdio"`
	}
	if err := rt.fromJS(c.Argument(2), &opts); err != nil {
		panic(rt.vm.NewTypeError("child_process: " + err.Error()))
	}
	s.dir = rt.cwd
	if opts.Cwd != "" {
		s.dir = rt.resolvePath([]string{opts.Cwd})
	}
	s.env = opts.Env
	for i, m := range opts.Stdio {
		if m == "ignore" {
			s.stdio[i] = m
		}
	}
	return s
}

// child is a started child process: the pipes of its stdio that are
// pipes (nil otherwise; ours are the server's ends).
type child struct {
	proc                  *tools.Process
	stdin, stdout, stderr *os.File
}

// startChild starts s through the runtime's process groups. Errors: a
// program not found (exec.ErrNotFound, wrapped), a working directory that
// does not exist, os/exec's.
func (rt *runtime) startChild(s childSpec) (*child, error) {
	path := s.file
	if !bytes.ContainsRune([]byte(path), '/') {
		p, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = p
	}
	if _, err := os.Stat(s.dir); err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: append([]string{s.file}, s.args...), Dir: s.dir, Env: s.env}
	ch := &child{}
	var theirs []*os.File
	defer func() {
		for _, f := range theirs {
			f.Close()
		}
	}()
	pipe := func(i int) (*os.File, error) {
		if s.stdio[i] != "pipe" {
			return nil, nil
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		if i == 0 {
			cmd.Stdin, theirs = r, append(theirs, r)
			return w, nil
		}
		theirs = append(theirs, w)
		if i == 1 {
			cmd.Stdout = w
		} else {
			cmd.Stderr = w
		}
		return r, nil
	}
	var err error
	closeOurs := func() {
		for _, f := range []*os.File{ch.stdin, ch.stdout, ch.stderr} {
			if f != nil {
				f.Close()
			}
		}
	}
	if ch.stdin, err = pipe(0); err == nil {
		if ch.stdout, err = pipe(1); err == nil {
			ch.stderr, err = pipe(2)
		}
	}
	if err != nil {
		closeOurs()
		return nil, err
	}
	if ch.proc, err = rt.processes().Start(cmd); err != nil {
		closeOurs()
		return nil, err
	}
	return ch, nil
}

// processes are the process groups children start in: the thread's, or
// the runtime's own (made on first use, stopped by Dispose).
func (rt *runtime) processes() *tools.ProcessGroups {
	rt.procMu.Lock()
	defer rt.procMu.Unlock()
	if rt.procs == nil {
		rt.procs, rt.ownProcs = tools.NewProcessGroups(), true
	}
	return rt.procs
}

// exitOf is how a child ended, from its wait error: its code (or null)
// and Node's signal name (or null); err when it says neither.
func exitOf(vm *goja.Runtime, waitErr error) (code, signal goja.Value, err error) {
	if waitErr == nil {
		return vm.ToValue(0), goja.Null(), nil
	}
	c, words, ok := tools.ExitStatus(waitErr)
	if !ok {
		return goja.Null(), goja.Null(), waitErr
	}
	if c >= 0 {
		return vm.ToValue(c), goja.Null(), nil
	}
	return goja.Null(), vm.ToValue(signalName(words)), nil
}

// signalName is Node's name of the signal that os/exec's words name
// ("signal: killed" → "SIGKILL").
func signalName(words string) string {
	for name, s := range signals {
		if "signal: "+s.String() == words || len(words) > 8 && words[8:] == s.String()+" (core dumped)" {
			return name
		}
	}
	return "SIGKILL"
}

// signals are the signals child.kill accepts by name.
var signals = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT, "SIGKILL": syscall.SIGKILL,
	"SIGTERM": syscall.SIGTERM, "SIGABRT": syscall.SIGABRT, "SIGALRM": syscall.SIGALRM, "SIGPIPE": syscall.SIGPIPE,
}

// killChild (loop) sends the signal sig names (a name or a number;
// SIGTERM when undefined) to pid; false when it could not be sent.
func (rt *runtime) killChild(pid int, sig goja.Value) bool {
	s := syscall.SIGTERM
	switch {
	case sig == nil || goja.IsUndefined(sig) || goja.IsNull(sig):
	case isString(sig):
		v, ok := signals[sig.String()]
		if !ok {
			panic(rt.nodeErr("ERR_UNKNOWN_SIGNAL", "Unknown signal: "+sig.String()))
		}
		s = v
	default:
		s = syscall.Signal(sig.ToInteger())
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(s) == nil
}

func isString(v goja.Value) bool {
	_, ok := v.Export().(string)
	return ok
}

// installChildProcess (loop) adds kc.spawn and kc.spawnSync to the host.
//
// kc.spawn(file, args, options, onData(fd, bytes), onExit(code, signal),
// onClose(error)) starts a child and returns {pid, write(bytes),
// end(), kill(signal)} or throws a Node error (ENOENT, ...). onData runs
// for each chunk of stdout (fd 1) and stderr (fd 2), onExit when the child
// has exited, onClose once it has exited and its pipes are closed (with
// the error when it could not be waited for).
//
// kc.spawnSync(file, args, options, input, timeoutMs) runs a child to the
// end (killing it with SIGKILL after timeoutMs when > 0) and returns
// {pid, status, signal, stdout, stderr} (bytes) or throws as kc.spawn.
func (rt *runtime) installChildProcess() {
	vm, kc := rt.vm, rt.kc
	spawnErr := func(err error, s childSpec) *goja.Object {
		code := "EIO"
		var errno syscall.Errno
		switch {
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
			code = "ENOENT"
		case errors.As(err, &errno) && errnoCodes[errno] != "":
			code = errnoCodes[errno]
		}
		e := rt.nodeErr(code, "spawn "+s.file+" "+code)
		_ = e.Set("errno", -int(errno))
		_ = e.Set("syscall", "spawn "+s.file)
		_ = e.Set("path", s.file)
		_ = e.Set("spawnargs", s.args)
		return e
	}
	_ = kc.Set("spawn", func(c goja.FunctionCall) goja.Value {
		s := rt.readSpec(c)
		onData, _ := goja.AssertFunction(c.Argument(3))
		onExit, _ := goja.AssertFunction(c.Argument(4))
		onClose, _ := goja.AssertFunction(c.Argument(5))
		ch, err := rt.startChild(s)
		if err != nil {
			panic(spawnErr(err, s))
		}
		rt.mu.Lock()
		owner := rt.running
		rt.mu.Unlock()
		onLoop := func(f func()) { rt.post(func() { rt.run(owner, f) }) }
		var readers sync.WaitGroup
		for fd, f := range map[int]*os.File{1: ch.stdout, 2: ch.stderr} {
			if f == nil {
				continue
			}
			readers.Add(1)
			go func() {
				defer readers.Done()
				defer f.Close()
				buf := make([]byte, 32*1024)
				for {
					n, err := f.Read(buf)
					if n > 0 {
						chunk := bytes.Clone(buf[:n])
						onLoop(func() { _, _ = onData(goja.Undefined(), vm.ToValue(fd), vm.ToValue(vm.NewArrayBuffer(chunk))) })
					}
					if err != nil {
						return
					}
				}
			}()
		}
		in := newStdinWriter(ch.stdin)
		go func() {
			waitErr := ch.proc.Wait()
			if in != nil {
				in.close() // nobody reads it any more
			}
			onLoop(func() {
				code, sig, err := exitOf(vm, waitErr)
				if err == nil {
					_, _ = onExit(goja.Undefined(), code, sig)
				}
			})
			readers.Wait()
			onLoop(func() {
				_, _, err := exitOf(vm, waitErr)
				if err != nil {
					_, _ = onClose(goja.Undefined(), vm.NewGoError(err))
					return
				}
				_, _ = onClose(goja.Undefined())
			})
		}()
		o := vm.NewObject()
		_ = o.Set("pid", ch.proc.Pid)
		_ = o.Set("write", func(c goja.FunctionCall) goja.Value {
			if in == nil {
				return vm.ToValue(false)
			}
			in.write(bytes.Clone(rt.bytes(c.Argument(0))))
			return vm.ToValue(true)
		})
		_ = o.Set("end", func(goja.FunctionCall) goja.Value {
			if in != nil {
				in.close()
			}
			return goja.Undefined()
		})
		_ = o.Set("kill", func(c goja.FunctionCall) goja.Value {
			return vm.ToValue(rt.killChild(ch.proc.Pid, c.Argument(0)))
		})
		return o
	})
	_ = kc.Set("spawnSync", func(c goja.FunctionCall) goja.Value {
		s := rt.readSpec(c)
		var input []byte
		if in := c.Argument(3); !goja.IsUndefined(in) && !goja.IsNull(in) {
			input = bytes.Clone(rt.bytes(in))
		} else if s.stdio[0] == "pipe" {
			s.stdio[0] = "ignore" // no input: stdin is /dev/null, so it does not wait
		}
		ch, err := rt.startChild(s)
		if err != nil {
			panic(spawnErr(err, s))
		}
		if ms := c.Argument(4).ToFloat(); ms > 0 {
			t := time.AfterFunc(time.Duration(ms*float64(time.Millisecond)), func() { rt.killChildPid(ch.proc.Pid) })
			defer t.Stop()
		}
		var out, errOut bytes.Buffer
		var wg sync.WaitGroup
		drain := func(f *os.File, b *bytes.Buffer) {
			if f == nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer f.Close()
				_, _ = io.Copy(b, f)
			}()
		}
		drain(ch.stdout, &out)
		drain(ch.stderr, &errOut)
		if ch.stdin != nil {
			go func() {
				_, _ = ch.stdin.Write(input)
				ch.stdin.Close()
			}()
		}
		waitErr := ch.proc.Wait()
		wg.Wait()
		code, sig, err := exitOf(vm, waitErr)
		if err != nil {
			panic(vm.NewGoError(err))
		}
		o := vm.NewObject()
		_ = o.Set("pid", ch.proc.Pid)
		_ = o.Set("status", code)
		_ = o.Set("signal", sig)
		_ = o.Set("stdout", vm.NewArrayBuffer(out.Bytes()))
		_ = o.Set("stderr", vm.NewArrayBuffer(errOut.Bytes()))
		return o
	})
}

// killChildPid sends SIGKILL to pid (a timeout of a sync child: off the
// loop).
func (rt *runtime) killChildPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(syscall.SIGKILL)
	}
}

// stdinWriter writes a child's stdin in order on a goroutine of its own,
// so that a full pipe never blocks the loop: write queues, close closes
// the pipe after what was queued (or at once, on a broken pipe).
type stdinWriter struct {
	f      *os.File
	mu     sync.Mutex
	queue  [][]byte
	closed bool
	wake   chan struct{}
}

func newStdinWriter(f *os.File) *stdinWriter {
	if f == nil {
		return nil
	}
	w := &stdinWriter{f: f, wake: make(chan struct{}, 1)}
	go w.run()
	return w
}

func (w *stdinWriter) write(b []byte) {
	w.mu.Lock()
	if !w.closed {
		w.queue = append(w.queue, b)
	}
	w.mu.Unlock()
	w.signal()
}

func (w *stdinWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
}

func (w *stdinWriter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run ends once the pipe is closed.
func (w *stdinWriter) run() {
	defer w.f.Close()
	broken := false
	for range w.wake {
		for {
			w.mu.Lock()
			if len(w.queue) == 0 {
				closed := w.closed
				w.mu.Unlock()
				if closed {
					return
				}
				break
			}
			b := w.queue[0]
			w.queue = w.queue[1:]
			w.mu.Unlock()
			if !broken {
				_, err := w.f.Write(b)
				broken = err != nil
			}
		}
	}
}
