package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// outputPipeBytes is the capacity asked for stdout when it is a pipe: the
// default 64 KiB holds less than one payload/read response (a 48 KiB chunk
// is 64 KiB of base64 plus its envelope), so each response would wait for
// the client to drain the pipe halfway through (issue 24). 1 MiB is
// Linux's default /proc/sys/fs/pipe-max-size, the most an unprivileged
// process may ask for.
const outputPipeBytes = 1 << 20

// growOutputPipe asks for outputPipeBytes of capacity in out when it is a
// pipe, best effort: a file, a terminal, a smaller pipe-max-size or a pipe
// already as large is left as it is.
func growOutputPipe(out any) {
	f, ok := out.(*os.File)
	if !ok {
		return
	}
	fd := int(f.Fd())
	if size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0); err != nil || size >= outputPipeBytes {
		return
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, outputPipeBytes)
}
