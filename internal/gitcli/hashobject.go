package gitcli

import (
	"context"
	"io"
)

// HashOptions shape a `git hash-object --stdin`: Write (-w) stores the blob
// in the object database; Path (--path=<p>), when set, converts the input
// as git add would for that repository-relative path (clean filters,
// end-of-line conversion: gitattributes(5)); without it the bytes are hashed
// as they are (--stdin implies --no-filters).
type HashOptions struct {
	Write bool
	Path  string
}

// HashObject returns the blob id of data (`hash-object [-w] --stdin
// [--path=<p>]`), bounded by [LongTimeout].
func (r *Repo) HashObject(ctx context.Context, data io.Reader, o HashOptions) (string, error) {
	args := []string{"hash-object"}
	if o.Write {
		args = append(args, "-w")
	}
	args = append(args, "--stdin")
	if o.Path != "" {
		args = append(args, "--path="+o.Path)
	}
	c := r.cmd(args...)
	if o.Write {
		c = write(c)
	}
	c.Stdin = data
	c.Timeout = LongTimeout
	return trimmed(r.git.run(ctx, c))
}
