package protocol

// Rows of the archive methods (spec: "Ownership, unloading, and shutdown":
// archive/unarchive; Method reference, thread/delete).
var (
	// ThreadArchive ("thread/archive") unloads a thread, snapshots and
	// deletes its worktree, and moves its transcript to the archive.
	ThreadArchive = clientRequest[ThreadArchiveParams, ThreadArchiveResult]("thread/archive", PerThread)

	// ThreadUnarchive ("thread/unarchive") moves an archived transcript
	// back.
	ThreadUnarchive = clientRequest[ThreadUnarchiveParams, ThreadUnarchiveResult]("thread/unarchive", PerThread)

	// ThreadDelete ("thread/delete") permanently removes an archived
	// transcript.
	ThreadDelete = clientRequest[ThreadDeleteParams, ThreadDeleteResult]("thread/delete", PerThread)

	// ThreadArchived ("thread/archived") tells every initialized connection
	// that a thread was archived.
	ThreadArchived = serverNotification[ThreadArchivedParams]("thread/archived")

	// ThreadUnarchived ("thread/unarchived") tells every initialized
	// connection that a thread was unarchived.
	ThreadUnarchived = serverNotification[ThreadUnarchivedParams]("thread/unarchived")

	// ThreadDeleted ("thread/deleted") tells every initialized connection
	// that a thread was deleted.
	ThreadDeleted = serverNotification[ThreadDeletedParams]("thread/deleted")
)

// ThreadArchiveParams are the params of thread/archive.
type ThreadArchiveParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadArchiveResult is the (empty) result of thread/archive.
type ThreadArchiveResult struct{}

// ThreadUnarchiveParams are the params of thread/unarchive.
type ThreadUnarchiveParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadUnarchiveResult is the result of thread/unarchive: the thread as
// saved (not loaded; its worktree, if it had one, still deleted).
type ThreadUnarchiveResult struct {
	Thread Thread `json:"thread"`
}

// ThreadDeleteParams are the params of thread/delete.
type ThreadDeleteParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadDeleteResult is the (empty) result of thread/delete.
type ThreadDeleteResult struct{}

// ThreadArchivedParams are the params of thread/archived.
type ThreadArchivedParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadUnarchivedParams are the params of thread/unarchived.
type ThreadUnarchivedParams struct {
	ThreadID string `json:"threadId"`
}

// ThreadDeletedParams are the params of thread/deleted.
type ThreadDeletedParams struct {
	ThreadID string `json:"threadId"`
}

// ArchiveConflictData is the data of an archiveConflict error: Path is the
// transcript concerned; Links is its hard-link count when it is refused for
// being hard-linked; Destination is the file a move found in its way; and
// Surviving lists the files that exist after the refusal (nothing was moved,
// removed or overwritten), for recovery.
type ArchiveConflictData struct {
	Path        string   `json:"path"`
	Links       uint64   `json:"links,omitempty"`
	Destination string   `json:"destination,omitempty"`
	Surviving   []string `json:"surviving,omitempty"`
}
