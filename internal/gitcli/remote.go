package gitcli

import (
	"context"
	"path/filepath"
	"strings"
	"time"
)

// This file holds the verbs that fetch from a remote repository into a
// folder of the server's own (plugin and marketplace sources): a clone
// into a temporary folder, the commit a ref names there, and a detached
// checkout of it. Credentials come from git's own credential helpers;
// GIT_TERMINAL_PROMPT=0 (every call) means a source that needs a password
// fails instead of waiting for one.

// FetchTimeout bounds a clone of a plugin or marketplace source.
const FetchTimeout = 5 * time.Minute

// CloneSource runs `git clone --quiet --no-checkout -- url dst` in dst's
// parent directory (which must exist): dst becomes a new repository with
// url's branches as origin/* and its tags, and no work tree files yet
// (check one out with [Runner.CheckoutDetached]). url is anything git
// clones: https://, ssh (git@host:path), file:// or a local path, after
// git's url.<base>.insteadOf rewriting. Bounded by [FetchTimeout] and
// ctx. Errors: an [*Error] with git's stderr.
func (r *Runner) CloneSource(ctx context.Context, url, dst string) error {
	_, err := r.run(ctx, Cmd{Dir: filepath.Dir(dst), Args: []string{"clone", "--quiet", "--no-checkout", "--", url, dst},
		Write: true, Timeout: FetchTimeout})
	return err
}

// ResolveCommit returns the commit rev names in the repository at dir,
// from `git rev-parse --verify --quiet --end-of-options <rev>^{commit}`
// (full hex). Errors: an [*Error] (exit 1 and no stderr) when rev names
// no commit.
func (r *Runner) ResolveCommit(ctx context.Context, dir, rev string) (string, error) {
	out, err := r.run(ctx, Cmd{Dir: dir, Args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// CheckoutDetached runs `git checkout --quiet --detach <commit> --` in
// the repository at dir: its work tree becomes commit's files (hooks off,
// as for every call that is not the user's own operation). Bounded by
// [LongTimeout].
func (r *Runner) CheckoutDetached(ctx context.Context, dir, commit string) error {
	_, err := r.run(ctx, Cmd{Dir: dir, Args: []string{"checkout", "--quiet", "--detach", commit, "--"}, Write: true, Timeout: LongTimeout})
	return err
}
