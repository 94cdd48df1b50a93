package gitcli

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
)

// This file holds the verbs of the git/* methods: the user's own
// operations (commit, push, switch), which run the user's hooks as the git
// CLI would ([Cmd.Hooks]), and the reads they need (status, branches, log,
// remotes, configuration).

// StatusBranch returns `status --porcelain=v2 --branch -z
// --untracked-files=all --ignore-submodules=none`: a read
// (GIT_OPTIONAL_LOCKS=0), so it never refreshes or writes the index.
// Parse it with [ParseStatusBranch]. Bounded by [LongTimeout].
func (r *Repo) StatusBranch(ctx context.Context) ([]byte, error) {
	c := r.cmd("status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignore-submodules=none")
	c.Timeout = LongTimeout
	return r.git.run(ctx, c)
}

// BranchStatus is what [ParseStatusBranch] reads from `git status --porcelain=v2
// --branch -z` (git-status(1), "Porcelain Format Version 2").
type BranchStatus struct {
	// OID is the commit of HEAD ("" when unborn: git's "(initial)").
	OID string
	// Head is the branch checked out ("" when detached).
	Head string
	// Upstream is the upstream as git names it ("origin/main"), "" when
	// none.
	Upstream string
	// HasAB reports that Ahead and Behind were given (an upstream that
	// exists).
	HasAB         bool
	Ahead, Behind int
	// Counts of entries: Staged (index differs from HEAD), Unstaged (work
	// tree differs from the index), Untracked, Conflicted (unmerged). A
	// changed entry counts in both Staged and Unstaged when both differ.
	Staged, Unstaged, Untracked, Conflicted int
}

// ParseStatusBranch parses the output of [Repo.StatusBranch]. Headers are "#
// branch.oid", "# branch.head", "# branch.upstream", "# branch.ab";
// entries are "1" (changed), "2" (renamed or copied, followed by one more
// NUL-terminated original path), "u" (unmerged), "?" (untracked) and "!"
// (ignored, not counted).
func ParseStatusBranch(out []byte) BranchStatus {
	var s BranchStatus
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			key, val, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
			switch key {
			case "branch.oid":
				if val != "(initial)" {
					s.OID = val
				}
			case "branch.head":
				if val != "(detached)" {
					s.Head = val
				}
			case "branch.upstream":
				s.Upstream = val
			case "branch.ab":
				a, b, _ := strings.Cut(val, " ")
				ahead, err1 := strconv.Atoi(strings.TrimPrefix(a, "+"))
				behind, err2 := strconv.Atoi(strings.TrimPrefix(b, "-"))
				if err1 == nil && err2 == nil {
					s.HasAB, s.Ahead, s.Behind = true, ahead, behind
				}
			}
		case '1', '2':
			// "1 XY ..." / "2 XY ..."; a "2" record is followed by its
			// original path.
			if len(rec) >= 4 {
				if rec[2] != '.' {
					s.Staged++
				}
				if rec[3] != '.' {
					s.Unstaged++
				}
			}
			if rec[0] == '2' {
				i++
			}
		case 'u':
			s.Conflicted++
		case '?':
			s.Untracked++
		}
	}
	return s
}

// AddEverything stages the whole work tree: changes, deletions and
// untracked files, never ignored ones (`add --all -- .` at the root),
// bounded by [LongTimeout]. Internal: no hooks.
func (r *Repo) AddEverything(ctx context.Context) error {
	c := write(r.cmd("add", "--all", "--", "."))
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// Commit runs the user's `git commit -F -` with message on stdin (never a
// shell or a command-line argument), running the user's hooks and commit
// signing as the git CLI would ([Cmd.Hooks]; core.hooksPath is left as the
// user set it). It commits the index as it is (no --all). Bounded by
// [LongTimeout] (hooks may run tests). A refusal is an [*Error] whose
// Stderr holds git's and the hooks' output (git sends a hook's stdout to
// stderr); the returned stdout is what git printed (its summary, or
// "nothing to commit").
func (r *Repo) Commit(ctx context.Context, message string) (stdout []byte, err error) {
	c := write(r.cmd("commit", "-F", "-"))
	c.Hooks = true
	c.Stdin = strings.NewReader(message)
	// No editor ever opens (a hook or commit.verbose cannot ask for one).
	c.Env = append(c.Env, "GIT_EDITOR=:")
	c.Timeout = LongTimeout
	return r.git.run(ctx, c)
}

// PushOptions shape [Repo.Push]: Remote is the remote's name; Refspec is
// the one explicit refspec pushed; SetUpstream adds --set-upstream.
type PushOptions struct {
	Remote      string
	Refspec     string
	SetUpstream bool
}

// Push runs the user's `git push [--set-upstream] --no-follow-tags
// --recurse-submodules=no --porcelain -- <remote> <refspec>` with the
// user's hooks (pre-push), never prompting: GIT_TERMINAL_PROMPT=0,
// GIT_ASKPASS= (empty, which turns off core.askPass and SSH_ASKPASS for
// git), SSH_ASKPASS_REQUIRE=never, GCM_INTERACTIVE=never, and
// GIT_SSH_COMMAND="ssh -o BatchMode=yes" unless GIT_SSH_COMMAND,
// GIT_SSH or core.sshCommand is set. Nothing but the refspec is pushed:
// no tags (push.followTags), no submodules (push.recurseSubmodules).
// Bounded by [LongTimeout]. A refusal is an [*Error] with git's stderr;
// stdout is git's --porcelain report.
func (r *Repo) Push(ctx context.Context, o PushOptions) (stdout []byte, err error) {
	if o.Remote == "" || o.Refspec == "" {
		return nil, errors.New("gitcli: push needs a remote and a refspec")
	}
	args := []string{"push"}
	if o.SetUpstream {
		args = append(args, "--set-upstream")
	}
	args = append(args, "--no-follow-tags", "--recurse-submodules=no", "--porcelain", "--", o.Remote, o.Refspec)
	c := write(r.cmd(args...))
	c.Hooks = true
	if err := r.noPrompt(ctx, &c); err != nil {
		return nil, err
	}
	c.Timeout = LongTimeout
	return r.git.run(ctx, c)
}

// noPrompt makes c, a call that talks to a remote, fail rather than ask
// for credentials: GIT_TERMINAL_PROMPT=0, GIT_ASKPASS= (empty, which
// turns off core.askPass and SSH_ASKPASS for git),
// SSH_ASKPASS_REQUIRE=never, GCM_INTERACTIVE=never, and
// GIT_SSH_COMMAND="ssh -o BatchMode=yes" unless GIT_SSH_COMMAND, GIT_SSH
// or core.sshCommand is set.
func (r *Repo) noPrompt(ctx context.Context, c *Cmd) error {
	c.Env = append(c.Env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS_REQUIRE=never", "GCM_INTERACTIVE=never")
	if os.Getenv("GIT_SSH_COMMAND") == "" && os.Getenv("GIT_SSH") == "" {
		if _, set, err := r.ConfigGet(ctx, "core.sshCommand"); err != nil {
			return err
		} else if !set {
			c.Env = append(c.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
		}
	}
	return nil
}

// RemoteHead is the HEAD of a remote repository as `git ls-remote
// --symref` reports it: Branch is the branch HEAD names ("main"; "" when
// the remote's HEAD is detached or not reported), Commit its commit.
type RemoteHead struct {
	Branch string
	Commit string
}

// LsRemoteHead asks remote (a remote's name or URL) which branch its HEAD
// names: `git ls-remote --symref -- <remote> HEAD`, which is how `git
// remote set-head --auto` and `git clone` learn a remote's default branch
// (git-ls-remote(1)); nothing is written. It talks to the remote without
// prompting (as [Repo.Push] does). Bounded by [DefaultTimeout]. Errors:
// an [*Error] with git's stderr when the remote cannot be reached or
// read.
func (r *Repo) LsRemoteHead(ctx context.Context, remote string) (RemoteHead, error) {
	c := r.cmd("ls-remote", "--symref", "--", remote, "HEAD")
	if err := r.noPrompt(ctx, &c); err != nil {
		return RemoteHead{}, err
	}
	out, err := r.git.run(ctx, c)
	if err != nil {
		return RemoteHead{}, err
	}
	return ParseLsRemoteHead(out), nil
}

// ParseLsRemoteHead parses `git ls-remote --symref <remote> HEAD`:
// "ref: refs/heads/main\tHEAD" then "<oid>\tHEAD".
func ParseLsRemoteHead(out []byte) RemoteHead {
	var h RemoteHead
	for line := range strings.SplitSeq(string(out), "\n") {
		left, name, ok := strings.Cut(line, "\t")
		if !ok || name != "HEAD" {
			continue
		}
		if ref, ok := strings.CutPrefix(left, "ref: "); ok {
			h.Branch = strings.TrimPrefix(ref, "refs/heads/")
			if h.Branch == ref {
				h.Branch = ""
			}
			continue
		}
		h.Commit = left
	}
	return h
}

// SwitchOptions shape [Repo.Switch]: Create makes a new branch at HEAD
// (-c); Hooks runs the user's post-checkout hook.
type SwitchOptions struct {
	Create bool
	Hooks  bool
}

// Switch runs `git switch [--no-guess] [-c] <name>`: an existing local
// branch, or (without Create) a remote-tracking branch of the same name on
// exactly one remote, which git then creates and tracks (its --guess).
// With Create the branch is made at HEAD and git refuses a name that
// exists ("already exists"). git refuses, changing nothing, when the
// switch would overwrite local changes or untracked files; it overwrites
// ignored files silently (the caller checks those). Bounded by
// [LongTimeout].
func (r *Repo) Switch(ctx context.Context, name string, o SwitchOptions) error {
	args := []string{"switch"}
	if o.Create {
		args = append(args, "--no-guess", "-c", name)
	} else {
		args = append(args, "--guess", name)
	}
	c := write(r.cmd(args...))
	c.Hooks = o.Hooks
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// RunHook runs the user's hook name with args as git itself runs it
// (`git hook run --ignore-missing <name> -- <args>`, git 2.36 or later;
// core.hooksPath as the user set it): for the steps of the user's own
// operations that knightcode performs with plumbing (the post-checkout
// hook of git/branch/switch). A missing hook is not an error; a hook's
// refusal is an [*Error] whose Stderr holds its output.
func (r *Repo) RunHook(ctx context.Context, name string, args ...string) error {
	c := r.cmd(append([]string{"hook", "run", "--ignore-missing", name, "--"}, args...)...)
	c.Hooks = true
	c.Write = true
	c.Timeout = LongTimeout
	_, err := r.git.run(ctx, c)
	return err
}

// SetUpstream makes upstream (a remote-tracking branch's short name,
// "origin/x") the upstream of the local branch (`branch
// --set-upstream-to=<upstream> -- <branch>`): git writes branch.<b>.remote
// and branch.<b>.merge as `git switch --guess` does.
func (r *Repo) SetUpstream(ctx context.Context, branch, upstream string) error {
	_, err := r.git.run(ctx, write(r.cmd("branch", "--set-upstream-to="+upstream, "--", branch)))
	return err
}

// CheckRefFormat reports whether ref is a well-formed full ref name
// (`check-ref-format <ref>`: exit 0 valid, 1 invalid).
func (r *Repo) CheckRefFormat(ctx context.Context, ref string) (bool, error) {
	_, err := r.git.run(ctx, r.cmd("check-ref-format", ref))
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	}
	return false, err
}

// ConfigGet reads the last value of key (`config --get <key>`); set is
// false when it is not set (exit 1).
func (r *Repo) ConfigGet(ctx context.Context, key string) (value string, set bool, err error) {
	out, err := r.git.run(ctx, r.cmd("config", "--get", key))
	if exitCode(err) == 1 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSuffix(string(out), "\n"), true, nil
}

// Remotes lists the remotes' names in the order `git remote` prints them.
func (r *Repo) Remotes(ctx context.Context) ([]string, error) {
	out, err := r.git.run(ctx, r.cmd("remote"))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// RemoteGetURL returns the URL git fetches remote from, with
// url.<base>.insteadOf applied (`remote get-url <remote>`).
func (r *Repo) RemoteGetURL(ctx context.Context, remote string) (string, error) {
	return trimmed(r.git.run(ctx, r.cmd("remote", "get-url", remote)))
}

// LogOptions select commits for [Repo.Log]: Revs are the revisions and
// ranges (e.g. "<base>..HEAD", "HEAD"); MaxCount limits the commits (0:
// all).
type LogOptions struct {
	Revs     []string
	MaxCount int
}

// LogEntry is one commit of [Repo.Log]: ID, Parents, the author's Name,
// Email and Time (Unix seconds), and the Subject (the message's first
// paragraph on one line, git's %s).
type LogEntry struct {
	ID, Subject             string
	Parents                 []string
	AuthorName, AuthorEmail string
	AuthorTime              int64
}

// Log lists commits newest first (`log --no-color --format=%H%x00%P%x00
// %an%x00%ae%x00%at%x00%s [--max-count=<n>] --end-of-options <revs> --`).
func (r *Repo) Log(ctx context.Context, o LogOptions) ([]LogEntry, error) {
	args := []string{"log", "--no-color", "--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%s"}
	if o.MaxCount > 0 {
		args = append(args, "--max-count="+strconv.Itoa(o.MaxCount))
	}
	args = append(append(append(args, "--end-of-options"), o.Revs...), "--")
	c := r.cmd(args...)
	c.Timeout = LongTimeout
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	var list []LogEntry
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\x00", 6)
		if len(f) != 6 {
			return nil, errors.New("gitcli: unexpected log output " + strconv.Quote(line))
		}
		t, _ := strconv.ParseInt(f[4], 10, 64)
		list = append(list, LogEntry{ID: f[0], Parents: strings.Fields(f[1]), AuthorName: f[2], AuthorEmail: f[3], AuthorTime: t, Subject: f[5]})
	}
	return list, nil
}

// LsFilesCached returns the index entries at or under paths (`ls-files
// -z --cached -- <paths>`, literal pathspecs, in calls of at most 1000
// paths), as git lists them: a directory path lists the entries under it.
func (r *Repo) LsFilesCached(ctx context.Context, paths []string) ([]string, error) {
	var list []string
	for start := 0; start < len(paths); start += 1000 {
		chunk := paths[start:min(start+1000, len(paths))]
		c := r.cmd(append([]string{"ls-files", "-z", "--cached", "--"}, chunk...)...)
		out, err := r.git.run(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				list = append(list, p)
			}
		}
	}
	return list, nil
}

// DiffTreeAdded returns the paths that tree to has and tree from does not
// (`diff-tree -r -z --name-only --no-renames --diff-filter=A <from>
// <to>`).
func (r *Repo) DiffTreeAdded(ctx context.Context, from, to string) ([]string, error) {
	c := r.cmd("diff-tree", "-r", "-z", "--name-only", "--no-renames", "--diff-filter=A", from, to)
	c.Timeout = LongTimeout
	out, err := r.git.run(ctx, c)
	if err != nil {
		return nil, err
	}
	var list []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			list = append(list, p)
		}
	}
	return list, nil
}
