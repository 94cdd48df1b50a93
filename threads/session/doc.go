// Package session is knightcode's session file: where transcripts live, their
// pi-compatible append-only JSONL format, the entry tree and its branches, the
// per-file ownership lock, reading saved history without owning it (turns,
// wire items, history pages with stable cursors) and directory listings with
// their .thread-index.json cache.
//
// A session file starts with a header line
//
//	{"type":"session","version":3,"id":"<uuid>","timestamp":"<ISO>","cwd":"...","parentSession"?:"...","workspace"?:{...}}
//
// followed by one entry per line (the header's workspace, knightcode's
// addition, records the managed worktree a thread runs in, see [Workspace];
// pi ignores it), each with type, id (8 hex characters),
// parentId (the previous leaf, null for the first) and timestamp. The current
// branch runs from the last entry (the leaf) back to the root along parentId.
// Durable turn_start/turn_end entries mark turns (ARCHITECTURE.md, "Threads,
// concurrency, persistence"; spec "Threads and turns", "History, listings,
// and large values", "Ownership, unloading, and shutdown").
//
// Ownership: a [Session] returned by [Open] (or a [Create]d one once saved)
// holds an exclusive gofrs/flock lock on the session file itself (not a
// sidecar), so a rename keeps the lock with the transcript and a symlinked
// alias locks the same inode. Within the process a registry keyed by the
// symlink-resolved path gives one owner per file.
//
// Archive, unarchive and delete act on files no one owns: [LockFile] takes
// the same lock and verifies the file has one link, then
// [FileLock.Rename] moves it without ever replacing another file
// ([ExistsError]) and [FileLock.Remove] unlinks it. [ResolveDirs] reads
// the global sessionDir setting through package config's one settings
// reader (config.Store, Snapshot.Values).
//
// The package knows nothing about JSON-RPC, the agent loop, threads as
// goroutines, or git. It builds the plain wire types of rpc/protocol and
// returns typed errors ([ErrLockedElsewhere], [ErrHardLinked],
// [ErrAlreadyLoaded], [ErrInvalidCursor], ...) that the rpc layer maps to
// wire codes.
package session
