package protocol

// Row of file/search (spec: Method reference, file/search).
var (
	// FileSearch ("file/search") fuzzy-searches the files of a directory.
	FileSearch = clientRequest[FileSearchParams, FileSearchResult]("file/search", Concurrent)
)

// FileSearchParams are the params of file/search: Cwd an existing directory
// (absolute); Query 1-256 characters; Limit 1-200 (default 50); SearchID at
// most 128 characters: a newer search with the same id (from any
// connection) supersedes this one, which then answers {files: [],
// truncated: false}.
type FileSearchParams struct {
	Cwd      string `json:"cwd"`
	Query    string `json:"query"`
	Limit    *int   `json:"limit,omitempty"`
	SearchID string `json:"searchId,omitempty"`
}

// FileSearchResult is the result of file/search: files best first;
// Truncated when the listing stopped at 200,000 paths or 32 MiB.
type FileSearchResult struct {
	Files     []FileMatch `json:"files"`
	Truncated bool        `json:"truncated"`
}

// FileMatch is one file found: Path relative to cwd (/-separated), Score
// (higher first; comparable within one result) and Indices, the positions
// of the matched characters in Path, in Unicode code points.
type FileMatch struct {
	Path    string `json:"path"`
	Score   int    `json:"score"`
	Indices []int  `json:"indices"`
}

// Validate checks that cwd and query are given and limit, when given, is 1
// to 200 (the rest is checked by the search itself).
func (p FileSearchParams) Validate() error {
	if p.Cwd == "" {
		return InvalidParams("cwd", "must not be empty")
	}
	if p.Query == "" {
		return InvalidParams("query", "must be 1 to 256 characters")
	}
	if p.Limit != nil && (*p.Limit < 1 || *p.Limit > 200) {
		return InvalidParams("limit", "must be 1 to 200, got %d", *p.Limit)
	}
	return nil
}
