// Package procgroup makes a command, before its caller starts it, the
// leader of a process group of its own whose context's cancellation ends
// the whole group ([Setup]: SIGKILL; [SetupGraceful]: SIGTERM, then
// SIGKILL a grace later, [Stop]), and ends a group on demand ([Kill],
// [Stop]), so that what a command starts (git's helpers, a user's hook, a
// script's background jobs) does not outlive it.
//
// On Unix the group is a POSIX process group (setpgid; the group id is the
// leader's pid) and signals go to -pid. On Windows, which has no process
// groups in that sense, the command gets a console process group of its own
// (CREATE_NEW_PROCESS_GROUP) and "the group" is the leader with its
// descendants, found from the system's process snapshot by parent pid
// (Windows does not re-parent the children of an exited process).
//
// It must not know what the commands are; it starts nothing itself.
package procgroup
