// Package approval is the pure logic of tool-call approvals: which calls run
// without asking, which ask and with what choices, and the shell prefix grants
// behind acceptPrefixForSession.
//
// Shell prefixes (prefix.go, bash.go, powershell.go, programs.go) follow
// shared/design/SHELL-PREFIX.md rule by rule (R1-R12): Derive turns a command
// into the program plus its known subcommand path, or into nothing, failing
// closed on every form the rules do not positively understand; Match allows a
// later command only when its own derived prefix is exactly a granted one.
// R12 is applied to every row of the table (programs.go): a command that
// reconfigures what later commands run, puts programs where they are looked
// up, or runs a program its line does not name derives no prefix, and
// options that do the same are not covered by a grant. README.md lists the
// programs that can be granted by prefix and those that never are. The
// policy (policy.go) decides one call from the thread's mode, the tool, its
// input, the checkout and the session's grants (Grants).
//
// What the room must not know: JSON-RPC and server requests, threads and
// their loads, session files, and git. It never runs a command; it reads the
// filesystem only to resolve symlinks in the paths the file tools name.
package approval
