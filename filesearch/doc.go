// Package filesearch answers file/search (spec "file/search"): fuzzy
// search over the files of a directory, listed by fd and ranked by
// github.com/sahilm/fuzzy with file-name matches first.
//
// Listing: fd (Debian installs it as fdfind; both names are looked up in
// PATH at each listing) runs with an argument array, never a shell:
// `-t f --hidden --exclude .git --print0 --strip-cwd-prefix --color never`
// in the cwd, so hidden files are listed and .gitignore, .ignore and
// .fdignore are respected. Outside a git repository, an fd with
// --no-require-git (fd 9 and later) gets it; an older one (Debian's 8.6)
// applies .gitignore files only inside a repository, so the cwd's own
// .gitignore is passed with --ignore-file and nested .gitignore files are
// not applied there. Listings are cached per cwd for ten
// seconds, at most eight cwds; at most two fd processes run at once;
// a listing stops at 200,000 paths or 32 MiB of output and is then kept
// with truncated set; one that takes over 15 seconds fails. Concurrent
// searches of one cwd share one listing, which is stopped when no search
// waits for it any longer. A listing that failed with some output is used
// but never cached; one that failed empty is an error.
//
// Searches with the same searchId (from any connection) supersede each
// other: the older one answers an empty result at once. After
// [Searcher.Close] every search, waiting or new, fails with
// [ErrShuttingDown].
//
// The package knows nothing of JSON-RPC, threads or git: it takes a
// directory and plain values and returns plain values and typed errors
// ([*ParamError], [*ToolMissingError], [ErrShuttingDown], [ErrTimeout]).
package filesearch
