// Package gittest builds git repositories for tests and benchmarks: an
// isolated environment (no real home directory, no system config), small
// fixture helpers ([InitCommit], [Write], [WriteFile], [CommitFixture]),
// crash simulation ([CrashAt] in process, [RunKilled] and the crash
// matrices by SIGKILL), and [MkRepo] and [MkSourceRepo], the deterministic
// large-repository generators the benchmarks build once per run with
// [BenchRepo]. Fixture code here runs git directly; product code never
// imports this package (the dependency test allows it only from tests).
//
// It knows git's command line and the filesystem, nothing of knightcode's
// own packages (it imports none: every package's tests can use it), and it
// is never the code under test: product behaviour goes through
// internal/gitcli.
package gittest
