package filesearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/knightcode/knightcode/internal/coreerr"
)

// Limits (spec file/search).
const (
	DefaultLimit   = 50
	MaxLimit       = 200
	MaxQueryLen    = 256 // characters
	MaxSearchID    = 128 // characters
	DefaultTTL     = 10 * time.Second
	DefaultCached  = 8
	DefaultActive  = 2
	DefaultPaths   = 200_000
	DefaultBytes   = 32 << 20
	DefaultTimeout = 15 * time.Second
)

// ParamError is the core invalidParams error ([coreerr.ParamError]):
// Field is its wire name ("query"), Message what is wrong with it. rpc
// maps it to invalidParams naming the field.
type ParamError = coreerr.ParamError

// ToolMissingError means neither fd nor fdfind is in PATH. It maps to
// toolMissing.
type ToolMissingError struct {
	Tools []string
}

func (e *ToolMissingError) Error() string {
	return fmt.Sprintf("filesearch: %v not found in PATH: install fd (Debian and Ubuntu: apt install fd-find)", e.Tools)
}

// ErrShuttingDown is every search's answer once the Searcher is closed
// (maps to shuttingDown).
var ErrShuttingDown = errors.New("filesearch: shutting down")

// ErrTimeout is a listing that took longer than the timeout (maps to
// internal).
var ErrTimeout = errors.New("filesearch: listing the files took too long")

// Request is one file/search: Cwd an existing directory (absolute), Query
// 1-256 characters, Limit 1-200 (0: 50), SearchID at most 128 characters
// ("" supersedes nothing).
type Request struct {
	Cwd      string
	Query    string
	Limit    int
	SearchID string
}

// Match is one file found: Path relative to the cwd (slash-separated as fd
// prints it), Score (higher ranks first; comparable within one result
// only) and Indices, the positions in Path of the matched characters
// (counted in Unicode code points).
type Match struct {
	Path    string `json:"path"`
	Score   int    `json:"score"`
	Indices []int  `json:"indices"`
}

// Result is a file/search answer: Files best first, Truncated when the
// listing stopped at a cap.
type Result struct {
	Files     []Match `json:"files"`
	Truncated bool    `json:"truncated"`
}

// Options tune a Searcher; zero fields take the spec's values.
type Options struct {
	TTL       time.Duration    // listing cache lifetime (10 s)
	MaxCached int              // cwds cached (8)
	MaxActive int              // fd processes at once (2)
	MaxPaths  int              // paths per listing (200,000)
	MaxBytes  int64            // fd output per listing (32 MiB)
	Timeout   time.Duration    // per listing (15 s)
	Now       func() time.Time // clock (time.Now)
}

// Searcher answers file/search. Build one per server and Close it at
// shutdown; safe for concurrent use.
type Searcher struct {
	opt    Options
	active chan struct{}
	closed chan struct{}
	runs   sync.WaitGroup // the listing goroutines

	mu       sync.Mutex
	isClosed bool
	cache    map[string]*listing // by cwd: in flight, or done and cacheable
	searches map[string]*search  // by searchId
}

// search is one waiting Search; superseded closes when a newer search
// takes its searchId.
type search struct {
	superseded chan struct{}
}

// New returns a Searcher with opt's limits.
func New(opt Options) *Searcher {
	if opt.TTL <= 0 {
		opt.TTL = DefaultTTL
	}
	if opt.MaxCached <= 0 {
		opt.MaxCached = DefaultCached
	}
	if opt.MaxActive <= 0 {
		opt.MaxActive = DefaultActive
	}
	if opt.MaxPaths <= 0 {
		opt.MaxPaths = DefaultPaths
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultBytes
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Searcher{
		opt:      opt,
		active:   make(chan struct{}, opt.MaxActive),
		closed:   make(chan struct{}),
		cache:    map[string]*listing{},
		searches: map[string]*search{},
	}
}

// Close stops the Searcher: waiting and later searches return
// ErrShuttingDown, running listings are stopped, and Close returns once
// their goroutines have ended (fd is killed; at most about a second for
// its pipes to close).
func (s *Searcher) Close() {
	s.mu.Lock()
	if !s.isClosed {
		s.isClosed = true
		close(s.closed)
		for _, l := range s.cache {
			l.cancel()
		}
	}
	s.mu.Unlock()
	s.runs.Wait()
}

func validate(req *Request) error {
	switch {
	case req.Cwd == "":
		return &ParamError{Field: "cwd", Message: "is required"}
	case !filepath.IsAbs(req.Cwd):
		return &ParamError{Field: "cwd", Message: fmt.Sprintf("%q is not an absolute path", req.Cwd)}
	}
	if st, err := os.Stat(req.Cwd); err != nil || !st.IsDir() {
		return &ParamError{Field: "cwd", Message: fmt.Sprintf("%s is not an existing directory", req.Cwd)}
	}
	if n := utf8.RuneCountInString(req.Query); n < 1 || n > MaxQueryLen || !utf8.ValidString(req.Query) {
		return &ParamError{Field: "query", Message: fmt.Sprintf("must be 1 to %d characters", MaxQueryLen)}
	}
	switch {
	case req.Limit == 0:
		req.Limit = DefaultLimit
	case req.Limit < 1 || req.Limit > MaxLimit:
		return &ParamError{Field: "limit", Message: fmt.Sprintf("must be 1 to %d, got %d", MaxLimit, req.Limit)}
	}
	if utf8.RuneCountInString(req.SearchID) > MaxSearchID {
		return &ParamError{Field: "searchId", Message: fmt.Sprintf("is longer than %d characters", MaxSearchID)}
	}
	req.Cwd = filepath.Clean(req.Cwd)
	return nil
}

// Search answers one file/search. Errors: [*ParamError]; [*ToolMissingError]
// without fd; [ErrTimeout]; [ErrShuttingDown] after Close; ctx's error when
// the caller gave up; other listing failures (fd's exit status and
// stderr) when fd printed nothing. A search superseded by a newer one with
// the same SearchID returns an empty Result and no error.
func (s *Searcher) Search(ctx context.Context, req Request) (Result, error) {
	if err := validate(&req); err != nil {
		return Result{}, err
	}
	me := &search{superseded: make(chan struct{})}
	s.mu.Lock()
	if s.isClosed {
		s.mu.Unlock()
		return Result{}, ErrShuttingDown
	}
	if req.SearchID != "" {
		if prev := s.searches[req.SearchID]; prev != nil {
			close(prev.superseded)
		}
		s.searches[req.SearchID] = me
		defer func() {
			s.mu.Lock()
			if s.searches[req.SearchID] == me {
				delete(s.searches, req.SearchID)
			}
			s.mu.Unlock()
		}()
	}
	l := s.listingLocked(req.Cwd)
	l.waiters++
	s.mu.Unlock()

	select {
	case <-l.done:
		s.leave(l)
	case <-me.superseded:
		s.leave(l)
		if s.closing() {
			return Result{}, ErrShuttingDown
		}
		return Result{Files: []Match{}}, nil
	case <-ctx.Done():
		s.leave(l)
		return Result{}, ctx.Err()
	case <-s.closed:
		s.leave(l)
		return Result{}, ErrShuttingDown
	}
	if s.closing() {
		return Result{}, ErrShuttingDown
	}
	select {
	case <-me.superseded:
		return Result{Files: []Match{}}, nil
	default:
	}
	if l.err != nil && len(l.paths) == 0 {
		return Result{}, l.err
	}
	return Result{Files: rank(l, req.Query, req.Limit), Truncated: l.truncated}, nil
}

func (s *Searcher) closing() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// listingLocked returns the cwd's listing: the cached one while fresh or
// in flight, else a new one started now. s.mu is held.
func (s *Searcher) listingLocked(cwd string) *listing {
	if l := s.cache[cwd]; l != nil {
		select {
		case <-l.done:
			if s.opt.Now().Sub(l.at) < s.opt.TTL {
				l.used = s.opt.Now()
				return l
			}
			delete(s.cache, cwd)
		default:
			return l
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &listing{cwd: cwd, done: make(chan struct{}), cancel: cancel, used: s.opt.Now()}
	s.cache[cwd] = l
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		s.run(ctx, l)
	}()
	return l
}

// leave drops a waiter; the last one to leave a listing still running
// stops it.
func (s *Searcher) leave(l *listing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.waiters--
	select {
	case <-l.done:
	default:
		if l.waiters == 0 {
			l.cancel()
			if s.cache[l.cwd] == l {
				delete(s.cache, l.cwd)
			}
		}
	}
}

// finish records a listing's outcome, caches it when it is cacheable and
// evicts the least recently used listings past MaxCached.
func (s *Searcher) finish(l *listing, cacheable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l.at = s.opt.Now()
	if !cacheable && s.cache[l.cwd] == l {
		delete(s.cache, l.cwd)
	}
	close(l.done)
	for len(s.cache) > s.opt.MaxCached {
		var oldest *listing
		for _, c := range s.cache {
			select {
			case <-c.done:
				if oldest == nil || c.used.Before(oldest.used) {
					oldest = c
				}
			default: // in flight: not evictable
			}
		}
		if oldest == nil {
			break
		}
		delete(s.cache, oldest.cwd)
	}
}
