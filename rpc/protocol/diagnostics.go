package protocol

// ServerDiagnosticsParams are the (empty) params of server/diagnostics.
type ServerDiagnosticsParams struct{}

// ServerDiagnosticsResult is the result of server/diagnostics: counters of the
// shared server, not only the asking connection.
type ServerDiagnosticsResult struct {
	// RSSBytes is the process's resident set size in bytes.
	RSSBytes int64 `json:"rssBytes"`
	// HeapBytes is the server's heap memory in use, in bytes.
	//
	// Go: runtime.MemStats.HeapAlloc.
	HeapBytes int64 `json:"heapBytes"`
	// UptimeMs is the time since the server started, in milliseconds.
	UptimeMs int64 `json:"uptimeMs"`
	ThreadCounters
}

// ThreadCounters are the server/diagnostics counters kept by the threads
// layer (jsonrpc.DiagnosticsSource).
type ThreadCounters struct {
	// LoadedThreads is the number of threads loaded and owned by this process.
	LoadedThreads int64 `json:"loadedThreads"`
	// LoadingThreads is the number of threads being loaded.
	LoadingThreads int64 `json:"loadingThreads"`
	// PayloadFiles is the number of payload spool files alive.
	PayloadFiles int64 `json:"payloadFiles"`
	// PayloadBytes is the bytes held by payload spool files.
	PayloadBytes int64 `json:"payloadBytes"`
	// InactiveFactories is the number of inactive extension factories cached
	// (at most 256).
	InactiveFactories int64 `json:"inactiveFactories"`
	// ListingFilesOpened counts transcript and parent-header opens by
	// thread/list scans since the server started.
	ListingFilesOpened int64 `json:"listingFilesOpened"`
	// ListingBytesScanned counts transcript bytes read by thread/list scans
	// since the server started (parent-header lookups add no bytes).
	ListingBytesScanned int64 `json:"listingBytesScanned"`
}
