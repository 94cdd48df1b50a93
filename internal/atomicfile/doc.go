// Package atomicfile replaces files so that a reader sees the old content or
// the new, never a torn write (ARCHITECTURE.md, "Files are written
// atomically"), and serializes read-modify-write updates of one file across
// goroutines and processes with a gofrs/flock.
//
// It knows nothing of what the files hold (no JSON, no schema, no
// knightcode types) and nothing of git: callers parse and produce the bytes.
package atomicfile
