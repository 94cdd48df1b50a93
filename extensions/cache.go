package extensions

import (
	"container/list"

	"sync"

	"github.com/dop251/goja"
)

// maxInactive is how many compiled factories no thread leases the cache
// keeps (EXTENSIBILITY.md §7, server/diagnostics inactiveFactories).
const maxInactive = 256

// factoryCache keeps extension entries bundled and compiled, by the
// content hash of their files (bundleKey): a load whose files did not
// change runs the cached *goja.Program instead of bundling and compiling
// again. An entry is leased while a thread load runs it; of the others
// (inactive) at most maxInactive stay, the least recently used going
// first. Safe for concurrent use.
type factoryCache struct {
	mu       sync.Mutex
	byKey    map[string]*factory
	inputs   map[string][]string // entry -> the files of its last bundle
	inactive *list.List          // of *factory, most recently released first
	max      int                 // maxInactive; tests lower it
	compile  singleflight
}

// factory is one compiled bundle.
type factory struct {
	key    string
	prog   *goja.Program
	leases int
	elem   *list.Element // in inactive, when leases == 0
}

// lease is one thread load's hold on a factory; release it once.
type lease struct {
	c    *factoryCache
	f    *factory
	once sync.Once
	prog *goja.Program
}

func newFactoryCache() *factoryCache {
	return &factoryCache{byKey: map[string]*factory{}, inputs: map[string][]string{}, inactive: list.New(), max: maxInactive}
}

// lease returns a lease on the compiled bundle of entry: the cached one
// when the files of its last bundle hash the same, else a new bundle.
// Errors: bundle's (an *ext.SourceError for a located one), a compile
// error of the bundle.
func (c *factoryCache) lease(entry string) (*lease, error) {
	c.mu.Lock()
	inputs := c.inputs[entry]
	c.mu.Unlock()
	if inputs != nil {
		if key, err := bundleKey(entry, inputs); err == nil {
			if l := c.take(key); l != nil {
				return l, nil
			}
		}
	}
	b, err := c.compile.do(entry, func() (compiled, error) {
		b, err := bundle(entry)
		if err != nil {
			return compiled{}, err
		}
		prog, err := goja.Compile(entry+".bundle.js", b.code, false)
		if err != nil {
			return compiled{}, err
		}
		return compiled{b, prog}, nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inputs[entry] = b.inputs
	f := c.byKey[b.key]
	if f == nil {
		f = &factory{key: b.key, prog: b.prog}
		c.byKey[b.key] = f
	}
	return c.leaseLocked(f), nil
}

// take leases the factory of key, if cached.
func (c *factoryCache) take(key string) *lease {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.byKey[key]
	if f == nil {
		return nil
	}
	return c.leaseLocked(f)
}

func (c *factoryCache) leaseLocked(f *factory) *lease {
	if f.elem != nil {
		c.inactive.Remove(f.elem)
		f.elem = nil
	}
	f.leases++
	return &lease{c: c, f: f, prog: f.prog}
}

// release ends the lease; a factory no load leases becomes inactive, and
// the least recently used inactive ones past maxInactive are dropped.
func (l *lease) release() {
	l.once.Do(func() {
		c := l.c
		c.mu.Lock()
		defer c.mu.Unlock()
		f := l.f
		f.leases--
		if f.leases > 0 {
			return
		}
		f.elem = c.inactive.PushFront(f)
		for c.inactive.Len() > c.max {
			old := c.inactive.Remove(c.inactive.Back()).(*factory)
			old.elem = nil
			delete(c.byKey, old.key)
		}
	})
}

// Inactive counts the cached factories no load leases.
func (c *factoryCache) Inactive() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inactive.Len()
}

// compiled is a bundle and its program.
type compiled struct {
	bundled
	prog *goja.Program
}

// singleflight runs one bundle of an entry at a time: loads of the same
// entry that start together share its result.
type singleflight struct {
	mu    sync.Mutex
	calls map[string]*flight
}

type flight struct {
	done chan struct{}
	res  compiled
	err  error
}

func (s *singleflight) do(key string, f func() (compiled, error)) (compiled, error) {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]*flight{}
	}
	if fl := s.calls[key]; fl != nil {
		s.mu.Unlock()
		<-fl.done
		return fl.res, fl.err
	}
	fl := &flight{done: make(chan struct{})}
	s.calls[key] = fl
	s.mu.Unlock()
	fl.res, fl.err = f()
	s.mu.Lock()
	delete(s.calls, key)
	s.mu.Unlock()
	close(fl.done)
	return fl.res, fl.err
}
