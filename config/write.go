package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/knightcode/knightcode/internal/atomicfile"
)

// settingsLockWait bounds the wait for a settings file's lock.
const settingsLockWait = 30 * time.Second

// maxKeyLen bounds a dotted key, in bytes.
const maxKeyLen = 512

// forbiddenSegments are key segments refused everywhere: a JavaScript
// reader of the same file (pi, extensions) would treat them as prototype
// pollution (spec config/write).
var forbiddenSegments = map[string]bool{"__proto__": true, "constructor": true, "prototype": true}

// WriteRequest is one config/write: set the dotted Key of the Scope's file to
// Value, a JSON value (nil or JSON null deletes the leaf). Cwd is required
// for ScopeProject. ExpectedVersion, when set, must equal the file's version
// under the lock (VersionNone for an absent file).
type WriteRequest struct {
	Scope           Scope
	Key             string
	Value           json.RawMessage
	Cwd             string
	ExpectedVersion *string
}

// SplitKey splits a dotted settings key into its segments. Errors:
// [*ParamError] (field "key") for an empty key or segment, a key over 512
// bytes, invalid UTF-8, control or surrounding space characters, and the
// segments __proto__, constructor and prototype.
func SplitKey(key string) ([]string, error) {
	bad := func(format string, args ...any) error {
		return &ParamError{Field: "key", Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case key == "":
		return nil, bad("is empty")
	case len(key) > maxKeyLen:
		return nil, bad("is longer than %d bytes", maxKeyLen)
	case !utf8.ValidString(key):
		return nil, bad("is not valid UTF-8")
	}
	segs := strings.Split(key, ".")
	for _, seg := range segs {
		switch {
		case seg == "":
			return nil, bad("%q has an empty segment", key)
		case forbiddenSegments[seg]:
			return nil, bad("%q: the segment %q is not allowed", key, seg)
		case strings.TrimSpace(seg) != seg:
			return nil, bad("%q: segment %q has surrounding spaces", key, seg)
		case strings.IndexFunc(seg, unicode.IsControl) >= 0:
			return nil, bad("%q has a control character", key)
		}
	}
	return segs, nil
}

// fileQueues holds one semaphore per settings file path, shared by every
// Store of the process: writes of one file queue here before they compete
// for its flock with other processes (spec config/write: "a per-file queue
// across manager instances").
var fileQueues sync.Map // path -> chan struct{}

func queueOf(path string) chan struct{} {
	q, _ := fileQueues.LoadOrStore(path, make(chan struct{}, 1))
	return q.(chan struct{})
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("unchanged")

// Write applies one config/write and returns the file's new version (the
// SHA-256 of the bytes written; VersionNone when deleting from an absent
// file, which is not created).
//
// The edit is a read-modify-write of the one file under its gofrs/flock
// (<agentDir>/settings.json.lock for the global file; the project's
// .knightcode folder itself for the project file, so nothing new appears in
// the user's checkout), after a per-file in-process queue. Under the lock:
// ExpectedVersion is compared with the current bytes' hash; the file is
// parsed (blank is {}); the migrations run; the leaf is set or deleted
// (deleting also removes the objects it leaves empty); the result is
// written atomically with every other key kept in its order. Nothing is
// written when nothing changed. There is no settings cache: the next Read
// sees the write. A legacy key (retry.maxRetries, [migrations]) is
// written to its canonical key, where the reader looks.
//
// Before anything is written the value is checked against the known
// settings ([knownSettings], the table the reader uses too): a value the
// server would ignore is refused, not stored. An integer setting's number
// is stored as its plain integer literal (30.0 and 3e1 as 30), the value
// the reader reads.
//
// Errors: [*ParamError] for a bad scope ("scope"), key ("key") or value
// ("value"), a project write without cwd or at a cwd that is not an
// existing directory ("cwd"), an untrusted project ("cwd", Reason
// ReasonUntrusted), a key running through a value that is not an object
// ("key"), a known setting's value of the wrong type or out of its range
// ("value", naming the key and what it takes), a key inside a known
// setting ("key"), a global-only setting written to the project file
// ("scope"), a legacy key inside an object value that does not fit its
// canonical key or is given beside it ("value"), and a NUL byte in a
// setting naming files ("value"); [*VersionConflictError] when ExpectedVersion does not
// match; [*CorruptError] when the file does not parse (it is left as it
// is); lock, read and write failures.
func (s *Store) Write(ctx context.Context, req WriteRequest) (string, error) {
	segs, err := SplitKey(req.Key)
	if err != nil {
		return "", err
	}
	key := canonicalKey(req.Key)
	if key != req.Key {
		segs = strings.Split(key, ".")
	}
	var value any // nil: delete
	if len(req.Value) > 0 && !bytes.Equal(bytes.TrimSpace(req.Value), []byte("null")) {
		if !json.Valid(req.Value) {
			return "", &ParamError{Field: "value", Message: "is not valid JSON"}
		}
		raw := json.RawMessage(bytes.TrimSpace(req.Value))
		if raw[0] == '{' {
			if value, err = decodeObject(raw); err != nil {
				return "", &ParamError{Field: "value", Message: err.Error()}
			}
		} else {
			value = raw
		}
	}
	path, lockPath, err := s.writeTarget(ctx, req.Scope, req.Cwd, SettingsFile)
	if err != nil {
		return "", err
	}
	var v any // value decoded with json.Number, nil when deleting
	if value != nil {
		dec := json.NewDecoder(bytes.NewReader(req.Value))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return "", &ParamError{Field: "value", Message: "is not valid JSON"}
		}
		if err := checkKeys(v, key); err != nil {
			return "", err
		}
	}
	if err := checkWrite(req.Scope, key, v); err != nil {
		return "", err
	}
	value = integerLiterals(key, value)
	return updateFile(ctx, path, lockPath, 0, req.ExpectedVersion, migrate, func(o *object) (bool, error) {
		if value == nil {
			return o.deleteAt(segs), nil
		}
		if err := o.setAt(segs, value); err != nil {
			var no *errNotObject
			if errors.As(err, &no) {
				return false, &ParamError{Field: "key", Message: fmt.Sprintf("%q: %s", key, no.Error())}
			}
			return false, err
		}
		return true, nil
	})
}

// checkKeys refuses a value holding an object key __proto__, constructor
// or prototype at any depth, arrays included.
func checkKeys(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if forbiddenSegments[k] {
				return &ParamError{Field: "value", Message: fmt.Sprintf("%s: the key %q is not allowed", at, k)}
			}
			if err := checkKeys(sub, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, sub := range v {
			if err := checkKeys(sub, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTarget returns the file named file a write of scope goes to
// (<agentDir>/<file>, or <project>/.knightcode/<file> for cwd's project)
// and the lock it takes: <file>.lock beside the global file; the project's
// .knightcode folder itself for a project file, so nothing new appears in
// the user's checkout. Errors: [*ParamError] for a bad scope ("scope"), a
// project write without cwd or at a cwd that is not an existing directory
// ("cwd"), and an untrusted project (Reason [ReasonUntrusted]).
func (s *Store) writeTarget(ctx context.Context, scope Scope, cwd, file string) (path, lockPath string, err error) {
	switch scope {
	case ScopeGlobal:
		path = filepath.Join(s.agentDir, file)
		return path, path + ".lock", nil
	case ScopeProject:
		if cwd == "" {
			return "", "", &ParamError{Field: "cwd", Message: "is required for a project write"}
		}
		t, err := s.trustOf(ctx, cwd)
		if err != nil {
			return "", "", err
		}
		if t.Trusted == nil || !*t.Trusted {
			return "", "", &ParamError{Reason: ReasonUntrusted,
				Message: fmt.Sprintf("project %s is not trusted: trust it (project/trust/set) before writing its %s", t.Project, file)}
		}
		path = filepath.Join(t.Project, ProjectDir, file)
		return path, filepath.Dir(path), nil
	}
	return "", "", &ParamError{Field: "scope", Message: fmt.Sprintf("%q is not global or project", scope)}
}

// updateFile runs migrate (when not nil) and then edit on the parsed JSON
// object file at path, under the file's in-process queue and its flock on
// lockPath, and writes the result atomically when either changed it. It
// returns the file's version afterwards. perm is the file's mode; 0 keeps
// the existing file's mode (0644 for a new file). Errors: [*VersionConflictError]
// when expected is set and differs; [*CorruptError] when the file does not
// parse; edit's error; lock, read and write failures.
func updateFile(ctx context.Context, path, lockPath string, perm os.FileMode, expected *string, migrate func(*object) bool, edit func(*object) (bool, error)) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, settingsLockWait)
	defer cancel()
	q := queueOf(path)
	select {
	case q <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("config: wait for %s: %w", path, ctx.Err())
	}
	defer func() { <-q }()

	newVersion := ""
	if perm == 0 {
		perm = 0o644
		if st, err := os.Stat(path); err == nil {
			perm = st.Mode().Perm()
		}
	}
	err := atomicfile.Update(ctx, lockPath, path, perm, func(old []byte) ([]byte, error) {
		cur := VersionNone
		if old != nil {
			cur = version(old)
		}
		newVersion = cur
		if expected != nil && *expected != cur {
			return nil, &VersionConflictError{Path: path, Version: cur}
		}
		o, err := parseObject(old)
		if err != nil {
			ce := &CorruptError{Path: path, Err: err}
			var se *syntaxError
			if errors.As(err, &se) {
				ce.Line, ce.Column = lineColumn(old, se.offset)
			}
			return nil, ce
		}
		migrated := migrate != nil && migrate(o)
		changed, err := edit(o)
		if err != nil {
			return nil, err
		}
		if !changed && !migrated {
			return nil, errUnchanged
		}
		data, err := o.marshal()
		if err != nil {
			return nil, err
		}
		if bytes.Equal(data, old) {
			return nil, errUnchanged
		}
		newVersion = version(data)
		return data, nil
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	if err != nil {
		return "", err
	}
	return newVersion, nil
}
