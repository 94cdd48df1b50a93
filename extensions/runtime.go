package extensions

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/knightcode/knightcode/agent/tools"
)

//go:embed js/prelude.js
var preludeSource string

//go:embed js/pitui.js
var piTUISource string

// piTUI is the compiled terminal UI pieces of the virtual modules
// (js/pitui.js), run in a runtime when an extension first imports them.
var piTUI = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("knightcode:pitui.js", piTUISource, true)
})

// prelude is the compiled prelude, shared by every runtime (a
// *goja.Program runs in any number of runtimes).
var prelude = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("knightcode:prelude.js", preludeSource, true)
})

// errInterrupted fails a handler whose JavaScript ran too long without
// yielding (runtime.timeout) and everything the runtime was waiting for
// then.
type errInterrupted struct{ after time.Duration }

func (e errInterrupted) Error() string {
	return fmt.Sprintf("it ran for more than %v without returning and was interrupted", e.after)
}

// errStopped answers what waits on a runtime that stopped (the thread
// load was disposed).
var errStopped = errors.New("the extension runtime stopped")

// runtime is the JavaScript runtime of one thread load: one goja.Runtime
// on its own event-loop goroutine, shared by the load's JavaScript
// extensions (EXTENSIBILITY.md §7). Only the loop goroutine touches the
// goja.Runtime and the fields marked (loop); others post jobs (post) and
// wait for their answers (await). Side effects on the thread that may
// block (dialogs aside, which have goroutines of their own) leave the loop
// in order through the outbox.
type runtime struct {
	eng     *Engine
	log     *slog.Logger
	cwd     string
	timeout time.Duration

	vm       *goja.Runtime // (loop)
	kc       *goja.Object  // the Go host object the prelude sees (loop)
	internal *goja.Object  // what the prelude returned (loop)
	parse    goja.Callable // JSON.parse (loop)
	strfy    goja.Callable // JSON.stringify (loop)
	settleFn goja.Callable // Promise.resolve(v).then(ok, fail) (loop)
	errText  goja.Callable // an exception's text (loop)
	modules  map[string]goja.Value
	timers   map[int64]*jsTimer // (loop)
	nextID   int64              // (loop)
	bus      *goja.Object       // pi.events, shared by the load's extensions (loop)

	mu       sync.Mutex
	queue    []func()
	running  *jsExtension // the extension whose JavaScript runs, nil when idle
	seq      uint64       // counts jobs, for the watchdog
	fired    bool         // the watchdog interrupted the running job
	waiting  map[*waiter]struct{}
	leases   []*lease
	extList  []*jsExtension
	stopping bool

	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
	outbox chan func()
	outEnd chan struct{}

	onceMu sync.Mutex
	once   map[string]bool // log lines written once per load

	procMu   sync.Mutex
	procs    *tools.ProcessGroups // where child processes start (child.go)
	ownProcs bool                 // procs are the runtime's own: Dispose stops them
}

// jsTimer is a timer of setTimeout or setInterval.
type jsTimer struct {
	t      *time.Timer
	fn     goja.Callable
	repeat time.Duration // 0 for a one-shot timer
	owner  *jsExtension
}

// newRuntime starts the runtime of a thread load in cwd whose child
// processes start in procs (the thread's; nil for the runtime's own): the
// loop and outbox goroutines, then the prelude on the loop. Errors: the
// prelude's.
func newRuntime(eng *Engine, cwd string, procs *tools.ProcessGroups) (*runtime, error) {
	rt := &runtime{
		eng: eng, log: eng.log, cwd: cwd, timeout: eng.timeout, procs: procs,
		modules: map[string]goja.Value{}, timers: map[int64]*jsTimer{}, waiting: map[*waiter]struct{}{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		outbox: make(chan func(), 256), outEnd: make(chan struct{}), once: map[string]bool{},
	}
	go rt.loop()
	go rt.drainOutbox()
	errc := make(chan error, 1)
	rt.post(func() { errc <- rt.setup() })
	if err := <-errc; err != nil {
		rt.Dispose()
		return nil, err
	}
	return rt, nil
}

// setup (loop) makes the goja.Runtime, its Go host and the prelude's
// globals.
func (rt *runtime) setup() error {
	prog, err := prelude()
	if err != nil {
		return err
	}
	vm := goja.New()
	rt.vm = vm
	rt.kc = vm.NewObject()
	rt.installHost()
	rt.installChildProcess()
	rt.installFetch()
	v, err := vm.RunProgram(prog)
	if err != nil {
		return fmt.Errorf("the extension prelude: %w", err)
	}
	fn, _ := goja.AssertFunction(v)
	res, err := fn(goja.Undefined(), rt.kc)
	if err != nil {
		return fmt.Errorf("the extension prelude: %w", err)
	}
	rt.internal = res.ToObject(vm)
	json := vm.Get("JSON").ToObject(vm)
	rt.parse, _ = goja.AssertFunction(json.Get("parse"))
	rt.strfy, _ = goja.AssertFunction(json.Get("stringify"))
	rt.settleFn, _ = goja.AssertFunction(rt.internal.Get("settle"))
	rt.errText, _ = goja.AssertFunction(rt.internal.Get("errorText"))
	ee, _ := goja.AssertConstructor(rt.internal.Get("EventEmitter"))
	if rt.bus, err = ee(nil); err != nil {
		return err
	}
	vm.Set("process", rt.processModule())
	vm.Set("global", vm.GlobalObject())
	return nil
}

// post queues f to run on the loop. After the runtime stopped f is
// dropped.
func (rt *runtime) post(f func()) {
	rt.mu.Lock()
	if rt.stopping {
		rt.mu.Unlock()
		return
	}
	rt.queue = append(rt.queue, f)
	rt.mu.Unlock()
	select {
	case rt.wake <- struct{}{}:
	default:
	}
}

// loop runs the posted jobs in order until quit.
func (rt *runtime) loop() {
	defer close(rt.done)
	for {
		select {
		case <-rt.quit:
			return
		case <-rt.wake:
		}
		for {
			rt.mu.Lock()
			if len(rt.queue) == 0 {
				rt.mu.Unlock()
				break
			}
			f := rt.queue[0]
			rt.queue[0] = nil
			rt.queue = rt.queue[1:]
			rt.mu.Unlock()
			select {
			case <-rt.quit:
				return
			default:
			}
			f()
		}
	}
}

// run (loop) runs f, JavaScript of extension x, under the watchdog: when
// it has not returned after rt.timeout its JavaScript is interrupted
// (goja's Interrupt takes effect when control is in JavaScript: a Go call
// it made finishes first), x is marked interrupted and everything waiting
// on the runtime fails.
func (rt *runtime) run(x *jsExtension, f func()) {
	rt.mu.Lock()
	rt.seq++
	seq := rt.seq
	outer := rt.running
	rt.running = x
	rt.mu.Unlock()
	if outer != nil { // a nested run (a job that runs JavaScript of another)
		f()
		rt.mu.Lock()
		rt.running = outer
		rt.mu.Unlock()
		return
	}
	dog := time.AfterFunc(rt.timeout, func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if rt.seq == seq && rt.running != nil {
			rt.fired = true
			rt.vm.Interrupt(errInterrupted{rt.timeout})
		}
	})
	f()
	dog.Stop()
	rt.mu.Lock()
	rt.running = nil
	fired := rt.fired
	rt.fired = false
	var waiting []*waiter
	if fired {
		for w := range rt.waiting {
			waiting = append(waiting, w)
		}
		clear(rt.waiting)
	}
	rt.mu.Unlock()
	rt.vm.ClearInterrupt()
	if !fired {
		return
	}
	if x != nil {
		x.interrupted = true
		rt.log.Warn("an extension's JavaScript was interrupted", "path", x.path, "after", rt.timeout)
	}
	for _, w := range waiting {
		w.finish(errInterrupted{rt.timeout})
	}
}

// waiter is a Go caller waiting for a JavaScript value to settle.
type waiter struct {
	once sync.Once
	ch   chan error
}

func (w *waiter) finish(err error) { w.once.Do(func() { w.ch <- err }) }

// await runs start on the loop (JavaScript of extension x: a handler's
// call) and waits until the value it returns settles (a promise resolves
// or rejects; any other value at once); settle converts the value on the
// loop. It returns start's or settle's error, the rejection or throw as a
// *jsError, errInterrupted, errStopped, or ctx's error when ctx ends first
// (the JavaScript goes on, unheard).
func (rt *runtime) await(ctx context.Context, x *jsExtension, start func() (goja.Value, error), settle func(goja.Value) error) error {
	w := &waiter{ch: make(chan error, 1)}
	rt.post(func() {
		rt.run(x, func() {
			v, err := start()
			if err != nil {
				w.finish(rt.jsErr(x, err))
				return
			}
			rt.mu.Lock()
			rt.waiting[w] = struct{}{}
			rt.mu.Unlock()
			done := func(err error) {
				rt.mu.Lock()
				delete(rt.waiting, w)
				rt.mu.Unlock()
				w.finish(err)
			}
			ok := rt.vm.ToValue(func(c goja.FunctionCall) goja.Value {
				done(settle(c.Argument(0)))
				return goja.Undefined()
			})
			fail := rt.vm.ToValue(func(c goja.FunctionCall) goja.Value {
				done(rt.jsErr(x, &goja.Exception{}, c.Argument(0)))
				return goja.Undefined()
			})
			if _, err := rt.settleFn(goja.Undefined(), v, ok, fail); err != nil {
				done(rt.jsErr(x, err))
			}
		})
	})
	select {
	case err := <-w.ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-rt.done:
		return errStopped
	}
}

// do runs f on the loop as JavaScript of extension x and waits for it.
// Errors: f's; errStopped.
func (rt *runtime) do(x *jsExtension, f func() error) error {
	errc := make(chan error, 1)
	rt.post(func() { rt.run(x, func() { errc <- f() }) })
	select {
	case err := <-errc:
		return err
	case <-rt.done:
		return errStopped
	}
}

// jsError is a JavaScript throw or rejection: its text and, when the
// stack names one, the position in the extension's source (mapped through
// the bundle's source map).
type jsError struct {
	text         string
	file         string
	line, column int
}

func (e *jsError) Error() string {
	if e.file == "" {
		return e.text
	}
	return fmt.Sprintf("%s (at %s:%d:%d)", e.text, e.file, e.line, e.column)
}

// jsErr (loop) is err, an error of a call into JavaScript, as the error a
// Go caller reports: an interrupt as errInterrupted, a throw as a
// *jsError; with a value given, that rejection value instead.
func (rt *runtime) jsErr(x *jsExtension, err error, value ...goja.Value) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		return errInterrupted{rt.timeout}
	}
	var v goja.Value
	var ex *goja.Exception
	switch {
	case len(value) > 0:
		v = value[0]
	case errors.As(err, &ex):
		v = ex.Value()
	default:
		return err
	}
	je := &jsError{text: rt.text(v)}
	if x != nil {
		je.file, je.line, je.column = x.position(rt, v, ex)
	}
	return je
}

// text (loop) is the text of a thrown value.
func (rt *runtime) text(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	s, err := rt.errText(goja.Undefined(), v)
	if err != nil {
		return v.String()
	}
	return s.String()
}

// toJSON (loop) is JSON.stringify(v) ("" for undefined and functions).
func (rt *runtime) toJSON(v goja.Value) (string, error) {
	s, err := rt.strfy(goja.Undefined(), v)
	if err != nil {
		return "", rt.jsErr(nil, err)
	}
	if goja.IsUndefined(s) {
		return "", nil
	}
	return s.String(), nil
}

// fromJS (loop) decodes v into out through its JSON; undefined and null
// leave out as it is.
func (rt *runtime) fromJS(v goja.Value, out any) error {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	s, err := rt.toJSON(v)
	if err != nil || s == "" {
		return err
	}
	if err := json.Unmarshal([]byte(s), out); err != nil {
		return fmt.Errorf("the value it returned does not have the expected shape: %v", err)
	}
	return nil
}

// value (loop) is the JavaScript value of data (JSON).
func (rt *runtime) value(data []byte) (goja.Value, error) {
	if len(data) == 0 {
		return goja.Undefined(), nil
	}
	return rt.parse(goja.Undefined(), rt.vm.ToValue(string(data)))
}

// throw (loop) panics with a JavaScript Error of message, as a Go
// function called from JavaScript throws.
func (rt *runtime) throw(format string, args ...any) {
	panic(rt.vm.NewGoError(fmt.Errorf(format, args...)))
}

// logOnce writes msg to the server log once per key per thread load.
func (rt *runtime) logOnce(key, msg string, args ...any) {
	rt.onceMu.Lock()
	seen := rt.once[key]
	rt.once[key] = true
	rt.onceMu.Unlock()
	if !seen {
		rt.log.Info(msg, args...)
	}
}

// send queues f, a side effect on the thread, to run off the loop after
// those queued before it.
func (rt *runtime) send(f func()) {
	rt.mu.Lock()
	stopping := rt.stopping
	rt.mu.Unlock()
	if stopping {
		return
	}
	select {
	case rt.outbox <- f:
	case <-rt.quit:
	}
}

// flush (not on the loop) returns once the side effects sent before it
// ran (or the runtime stopped).
func (rt *runtime) flush() {
	done := make(chan struct{})
	rt.send(func() { close(done) })
	select {
	case <-done:
	case <-rt.quit:
	}
}

// jsValue (loop) is err, the error of a call into JavaScript, as the value
// a promise rejects with: the thrown value, else an Error of err.
func (rt *runtime) jsValue(err error) goja.Value {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return ex.Value()
	}
	return rt.vm.NewGoError(err)
}

func (rt *runtime) drainOutbox() {
	defer close(rt.outEnd)
	for {
		select {
		case f := <-rt.outbox:
			f()
		case <-rt.quit:
			return
		}
	}
}

// shutdownGrace is how long the session_shutdown handlers of an unloading
// thread have (EXTENSIBILITY.md §7, "Preemption").
const shutdownGrace = 2 * time.Second

// Dispose ends the runtime with its thread load (ext.API.Shared disposes
// it): each extension's session_shutdown handlers run, together for at
// most shutdownGrace, then the loop stops (JavaScript still running is
// interrupted; child processes end when the runtime started them in
// process groups of its own), its timers end and the factory leases are
// released.
func (rt *runtime) Dispose() {
	rt.mu.Lock()
	if rt.stopping {
		rt.mu.Unlock()
		return
	}
	exts := rt.exts()
	rt.mu.Unlock()
	if rt.vm != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		for _, x := range exts {
			x.shutdown(ctx)
		}
		cancel()
	}
	rt.mu.Lock()
	rt.stopping = true
	if rt.running != nil && rt.vm != nil {
		rt.vm.Interrupt(errStopped)
	}
	leases := rt.leases
	rt.leases = nil
	rt.mu.Unlock()
	// The runtime's own child processes end now (a sync child may hold the
	// loop); the thread's end with the thread, before it disposes its
	// extensions.
	rt.procMu.Lock()
	own := rt.procs
	if !rt.ownProcs {
		own = nil
	}
	rt.procMu.Unlock()
	if own != nil {
		if err := own.StopAll(context.Background()); err != nil {
			rt.log.Warn("stopping the extensions' child processes", "err", err)
		}
	}
	close(rt.quit)
	<-rt.done
	<-rt.outEnd
	for _, t := range rt.timers {
		t.t.Stop()
	}
	for _, l := range leases {
		l.release()
	}
}
