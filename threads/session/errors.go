package session

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is; the typed errors below wrap
// them and carry details.
var (
	// ErrLockedElsewhere: another process owns the session file (wire code
	// threadLockedElsewhere).
	ErrLockedElsewhere = errors.New("session file is locked by another process")
	// ErrHardLinked: the session file has more than one hard link and is
	// refused as a transcript to own (wire code archiveConflict).
	ErrHardLinked = errors.New("session file is hard-linked")
	// ErrAlreadyLoaded: this process already owns the file, possibly through
	// another (symlinked) path; the error is a *LoadedError naming the owner.
	ErrAlreadyLoaded = errors.New("session file is already loaded in this process")
	// ErrInvalidCursor: a history cursor is malformed, belongs to another
	// session, or its anchor is no longer on the current branch (wire code
	// invalidCursor).
	ErrInvalidCursor = errors.New("invalid history cursor")
	// ErrNotSession: the file does not start with a valid session header.
	ErrNotSession = errors.New("not a session file")
	// ErrOwnershipLost: the path no longer names the file this process
	// locked (it was replaced or removed); the session must stop writing.
	ErrOwnershipLost = errors.New("session file ownership lost")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("session is closed")
	// ErrUnknownEntry: SetLeaf named an entry id that is not in the file.
	ErrUnknownEntry = errors.New("unknown session entry")
)

// LockedError reports that another process holds the lock on Path.
// errors.Is(err, ErrLockedElsewhere) is true.
type LockedError struct {
	Path string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("session file %s is locked by another process", e.Path)
}

// Unwrap returns ErrLockedElsewhere.
func (e *LockedError) Unwrap() error { return ErrLockedElsewhere }

// HardLinkError reports a session file with Links (> 1) hard links.
// errors.Is(err, ErrHardLinked) is true.
type HardLinkError struct {
	Path  string
	Links uint64
}

func (e *HardLinkError) Error() string {
	return fmt.Sprintf("session file %s has %d hard links; refusing to own it", e.Path, e.Links)
}

// Unwrap returns ErrHardLinked.
func (e *HardLinkError) Unwrap() error { return ErrHardLinked }

// LoadedError reports that Owner, a Session of this process, already owns the
// file that was asked for (the same path or a symlinked alias of it).
// errors.Is(err, ErrAlreadyLoaded) is true.
type LoadedError struct {
	Path  string
	Owner *Session
}

func (e *LoadedError) Error() string {
	return fmt.Sprintf("session file %s is already loaded in this process", e.Path)
}

// Unwrap returns ErrAlreadyLoaded.
func (e *LoadedError) Unwrap() error { return ErrAlreadyLoaded }
