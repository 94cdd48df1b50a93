package gitcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Object is one object read from the object database.
type Object struct {
	// ID is the object's full hex id.
	ID string
	// Type is blob, tree, commit or tag.
	Type string
	// Size is the object's size in bytes.
	Size int64
	// Data is the object's content; nil for [CatFile.Info].
	Data []byte
}

// CatFile is a long-lived `git cat-file --batch-command` process: the default
// object reader of knightcode (ARCHITECTURE.md, "Object reads"). It is safe
// for concurrent use; requests are serialized. Close ends the process.
//
// Requests share one stream of answers, so a request that fails mid-way (a
// write to or read from the process fails, the process died or its ctx
// ended, or git answers something unexpected) leaves the stream possibly out
// of step: the CatFile is then broken and every later request fails at once
// with [ErrCatFileBroken]. Close it and start another. An object that is
// missing is an ordinary answer and breaks nothing.
type CatFile struct {
	mu     sync.Mutex
	stdin  io.WriteCloser
	stdout *bufio.Reader
	done   chan error
	cancel context.CancelFunc
	closed bool
	broken error // the failure that broke the stream; nil while usable
}

// ErrCatFileBroken is returned (wrapped, with the first failure's text) by
// every request of a [CatFile] after a request failed mid-way: no later
// answer could be trusted to belong to its request.
var ErrCatFileBroken = errors.New("cat-file process unusable after a failed request")

// ErrCatFileClosed is returned by requests of a [CatFile] after Close.
var ErrCatFileClosed = errors.New("cat-file process closed")

// StartCatFile starts a cat-file process in dir. The process lives until
// Close or until ctx ends. It never takes a lock (GIT_OPTIONAL_LOCKS=0).
func (r *Runner) StartCatFile(ctx context.Context, dir string) (*CatFile, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := Cmd{Dir: dir, Args: []string{"cat-file", "--batch-command"}, Timeout: 24 * time.Hour}
	cmd, _, cancelRun, err := r.command(ctx, c)
	if err != nil {
		cancel()
		return nil, err
	}
	stderr := &capWriter{max: maxStderr}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		cancelRun()
		return nil, r.wrap(c, cmd, stderr, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		cancelRun()
		return nil, r.wrap(c, cmd, stderr, err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		cancelRun()
		return nil, r.wrap(c, cmd, stderr, err)
	}
	cf := &CatFile{stdin: stdin, stdout: bufio.NewReaderSize(stdout, 64<<10), done: make(chan error, 1),
		cancel: func() { cancel(); cancelRun() }}
	go func() {
		// Reaps the process; started by StartCatFile, ends when git exits
		// (Close closes stdin, or the context kills it).
		err := cmd.Wait()
		if err != nil {
			err = r.wrap(c, cmd, stderr, err)
		}
		cf.done <- err
	}()
	return cf, nil
}

// Info returns an object's type and size without its content. A name that
// resolves to no object returns [ErrObjectMissing].
func (c *CatFile) Info(oid string) (Object, error) {
	return c.request("info", oid, false)
}

// Read returns an object with its content. A name that resolves to no object
// returns [ErrObjectMissing]. Names may be anything cat-file accepts
// ("<tree>:<path>" included) but must not contain a newline.
func (c *CatFile) Read(oid string) (Object, error) {
	return c.request("contents", oid, true)
}

// request sends one request and reads its answer; a failure other than a
// missing object breaks c (see [CatFile]).
func (c *CatFile) request(verb, name string, withData bool) (Object, error) {
	if strings.ContainsAny(name, "\n\x00") {
		return Object{}, fmt.Errorf("cat-file: object name %q: %w", name, ErrObjectMissing)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Object{}, ErrCatFileClosed
	}
	if c.broken != nil {
		return Object{}, fmt.Errorf("%w: %v", ErrCatFileBroken, c.broken)
	}
	obj, err := c.exchange(verb, name, withData)
	if err != nil && !errors.Is(err, ErrObjectMissing) {
		c.broken = err
	}
	return obj, err
}

// exchange writes one request and reads its answer (c.mu held).
func (c *CatFile) exchange(verb, name string, withData bool) (Object, error) {
	if _, err := io.WriteString(c.stdin, verb+" "+name+"\n"); err != nil {
		return Object{}, fmt.Errorf("cat-file: %w", err)
	}
	header, err := c.stdout.ReadString('\n')
	if err != nil {
		return Object{}, fmt.Errorf("cat-file: %w", err)
	}
	header = strings.TrimSuffix(header, "\n")
	if strings.HasSuffix(header, " missing") || strings.HasSuffix(header, " ambiguous") {
		return Object{}, fmt.Errorf("cat-file %s: %w", name, ErrObjectMissing)
	}
	fields := strings.Fields(header)
	if len(fields) != 3 {
		return Object{}, fmt.Errorf("cat-file: unexpected header %q", header)
	}
	size, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil {
		return Object{}, fmt.Errorf("cat-file: unexpected header %q", header)
	}
	obj := Object{ID: fields[0], Type: fields[1], Size: size}
	if !withData {
		return obj, nil
	}
	obj.Data = make([]byte, size)
	if _, err := io.ReadFull(c.stdout, obj.Data); err != nil {
		return Object{}, fmt.Errorf("cat-file: %w", err)
	}
	if b, err := c.stdout.ReadByte(); err != nil || b != '\n' {
		return Object{}, fmt.Errorf("cat-file: missing object terminator")
	}
	return obj, nil
}

// Close ends the process and waits for it.
func (c *CatFile) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	_ = c.stdin.Close()
	err := <-c.done
	c.cancel()
	return err
}
