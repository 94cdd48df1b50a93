package gitcli

import (
	"context"
	"path/filepath"
)

// Clone runs `git clone --quiet --no-hardlinks -- src dst` in dst's parent
// directory (which must exist): a copy of the repository at src that shares
// no object files with it, so writing the clone never touches src. Bounded
// by [LongTimeout] and ctx. Used by knightcode-demo for its scratch copy;
// the server never clones.
func (r *Runner) Clone(ctx context.Context, src, dst string) error {
	_, err := r.run(ctx, Cmd{Dir: filepath.Dir(dst), Args: []string{"clone", "--quiet", "--no-hardlinks", "--", src, dst},
		Write: true, Timeout: LongTimeout})
	return err
}
