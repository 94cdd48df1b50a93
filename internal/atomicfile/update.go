package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/internal/safefile"
)

// lockRetry is how often Update tries the lock again while another holder
// has it.
const lockRetry = 10 * time.Millisecond

// Update is a read-modify-write of the file at path that no concurrent
// Update of the same lock can interleave with: under an exclusive
// gofrs/flock on lockPath (cross-process, and between goroutines: each call
// opens its own handle), it reads path, calls fn with its bytes (nil when
// the file does not exist) and writes what fn returns with [WriteFile]
// (mode perm), releasing the lock after the write.
//
// lockPath is either a lock file, created when missing (mode 0600) and left
// in place, usually path+".lock" next to the file; or an existing
// directory, which is locked as it is (nothing is created: for a file that
// lives in a user's project, where a lock file would show as an untracked
// file). The directory of path is created when missing, before locking.
//
// Update is for configuration and state files: path is read through
// safefile.ReadFile, at most safefile.ConfigLimit (16 MiB), so a FIFO, a
// device or a symlink to one there is refused at once (the lock is not held
// on a read that never ends) and nothing is written.
//
// Update waits for the lock, trying again every 10 ms, until ctx ends.
// Errors: fn's error as it is (the file is left alone); ctx's error when it
// ended before the lock was taken, and other lock, read and write errors
// (safefile's refusals among them), wrapped with the path concerned.
func Update(ctx context.Context, lockPath, path string, perm os.FileMode, fn func(old []byte) ([]byte, error)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	var opts []flock.Option
	if st, err := os.Stat(lockPath); err == nil && st.IsDir() {
		opts = append(opts, flock.SetFlag(os.O_RDONLY))
	}
	fl := flock.New(lockPath, opts...)
	ok, err := fl.TryLockContext(ctx, lockRetry)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("atomicfile: lock %s: %w", lockPath, err)
	}
	defer fl.Unlock()
	old, err := safefile.ReadFile(path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	if err := WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	return nil
}
