// Package safefile opens the files that the agent's tools and the file/*
// methods read or write on a caller's behalf so that no path can wedge the
// server (issue 15, "Inputs that wedge a thread"): only regular files are
// opened, never a FIFO, a device, a socket or a folder, and never anything
// under /proc, /sys or /dev, nor on a kernel pseudo file system wherever it
// is mounted (procfs files such as /proc/kmsg stat as regular and still block
// a reader). The open itself cannot block (O_NONBLOCK, and O_NOCTTY so a
// terminal never becomes the server's controlling terminal), and NewReader
// makes every read give up when its context ends.
//
// What the room must not know: threads, tools, JSON-RPC, git and what the
// files hold. It is a leaf: it imports the standard library and x/sys only.
package safefile
