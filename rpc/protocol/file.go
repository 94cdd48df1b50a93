package protocol

// Rows of the file methods (spec: Method reference, file/read, file/list,
// file/write). Paths resolve against the thread's cwd like a tool's path.
// They run per thread, so a read sent after a write sees it.
var (
	// FileList ("file/list") lists one folder's entries for a file tree.
	FileList = clientRequest[FileListParams, FileListResult]("file/list", PerThread)

	// FileRead ("file/read") reads a file's text.
	FileRead = clientRequest[FileReadParams, FileReadResult]("file/read", PerThread)

	// FileWrite ("file/write") writes a file's text in place.
	FileWrite = clientRequest[FileWriteParams, FileWriteResult]("file/write", PerThread)
)

// Limits of the file methods (spec: file/read, file/list, file/write).
const (
	// DefaultFileReadBytes is file/read's maxBytes when absent (2 MiB).
	DefaultFileReadBytes = 2 << 20
	// MaxFileReadBytes is the largest maxBytes of file/read (8 MiB).
	MaxFileReadBytes = 8 << 20
	// MaxFileWriteBytes is the most UTF-8 bytes file/write writes (8 MiB).
	MaxFileWriteBytes = 8 << 20
	// MaxFileListEntries is the most entries file/list returns; past it
	// the rest are left out and truncated is true.
	MaxFileListEntries = 5000
	// FileBinarySniff is how many leading bytes file/read looks at for a
	// NUL byte (8 KiB).
	FileBinarySniff = 8 << 10
	// MaxPathBytes bounds every path in params: a string member named path
	// or cwd, or ending in Path or Cwd (and each string of one named
	// paths), longer than this many bytes is invalidParams naming it
	// (issue 15: a 9 MiB path answered internal). Linux's PATH_MAX.
	MaxPathBytes = 4096
)

// FileReadParams are the params of file/read. Path resolves against the
// thread's cwd (absolute paths as they are, "~/" from the home directory).
// MaxBytes is 1 to 8 MiB (default 2 MiB).
type FileReadParams struct {
	ThreadID string `json:"threadId"`
	Path     string `json:"path"`
	MaxBytes *int   `json:"maxBytes,omitempty"`
}

// Validate checks that path is not empty and maxBytes, when given, is 1 byte
// to 8 MiB.
func (p FileReadParams) Validate() error {
	if p.Path == "" {
		return InvalidParams("path", "must not be empty")
	}
	if p.MaxBytes != nil && (*p.MaxBytes < 1 || *p.MaxBytes > MaxFileReadBytes) {
		return InvalidParams("maxBytes", "must be 1 to %d bytes, got %d", MaxFileReadBytes, *p.MaxBytes)
	}
	return nil
}

// FileReadResult is the result of file/read. Path is the file's path
// relative to the thread's cwd, /-separated (absolute when outside it). Size
// is its length in bytes; MtimeMs its modification time in Unix milliseconds
// when read, for file/write's expectedMtimeMs. Text comes only when the file
// is neither Binary (a NUL in its first 8 KiB, or bytes that are not UTF-8)
// nor TooLarge (larger than maxBytes).
type FileReadResult struct {
	Path     string  `json:"path"`
	Size     int64   `json:"size"`
	Binary   bool    `json:"binary"`
	TooLarge bool    `json:"tooLarge"`
	Text     *string `json:"text,omitempty"`
	MtimeMs  int64   `json:"mtimeMs"`
}

// FileListParams are the params of file/list. Path is the folder, resolved
// like file/read's; absent means the thread's cwd.
type FileListParams struct {
	ThreadID string `json:"threadId"`
	Path     string `json:"path,omitempty" jsonschema:"minLength=1"`
}

// FileListResult is the result of file/list: Root is the thread's cwd and
// Entries the folder's entries relative to it, sorted by path. Truncated is
// true when more than 5,000 entries were there and the rest left out.
type FileListResult struct {
	Root      string      `json:"root"`
	Entries   []FileEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// File entry types (FileEntry.Type).
const (
	FileEntryFile      = "file"
	FileEntryDirectory = "directory"
)

// FileEntry is one entry of a file/list folder: Path relative to the
// thread's cwd, /-separated; Type "directory" for a folder or a link to one,
// else "file". Hidden entries are included.
type FileEntry struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// FileWriteParams are the params of file/write. Path resolves like
// file/read's; Text is at most 8 MiB of UTF-8. ExpectedMtimeMs is the
// mtimeMs of the file/read the text came from: a file modified (or removed)
// since is refused with fileChanged and left as it is.
type FileWriteParams struct {
	ThreadID        string `json:"threadId"`
	Path            string `json:"path"`
	Text            string `json:"text"`
	ExpectedMtimeMs *int64 `json:"expectedMtimeMs,omitempty"`
}

// Validate checks that path is not empty and text is at most 8 MiB.
func (p FileWriteParams) Validate() error {
	if p.Path == "" {
		return InvalidParams("path", "must not be empty")
	}
	if len(p.Text) > MaxFileWriteBytes {
		return InvalidParams("text", "at most %d bytes, got %d", MaxFileWriteBytes, len(p.Text))
	}
	return nil
}

// FileWriteResult is the result of file/write: the file's modification time
// after the write, in Unix milliseconds.
type FileWriteResult struct {
	MtimeMs int64 `json:"mtimeMs"`
}
