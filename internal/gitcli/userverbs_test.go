package gitcli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatusBranch(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want BranchStatus
	}{
		{"unborn", "# branch.oid (initial)\x00# branch.head main\x00? new\x00", BranchStatus{Head: "main", Untracked: 1}},
		{"detached", "# branch.oid abc\x00# branch.head (detached)\x00", BranchStatus{OID: "abc"}},
		{"upstream and counts",
			"# branch.oid abc\x00# branch.head feat\x00# branch.upstream origin/feat\x00# branch.ab +2 -3\x00" +
				"1 M. N... 100644 100644 100644 a b f1\x00" +
				"1 .M N... 100644 100644 100644 a b f2\x00" +
				"1 MM N... 100644 100644 100644 a b f3\x00" +
				"2 R. N... 100644 100644 100644 a b R100 new name\x00old name\x00" +
				"u UU N... 100644 100644 100644 100644 a b c conflict\x00" +
				"? u1\x00? u2\x00! ignored\x00",
			BranchStatus{OID: "abc", Head: "feat", Upstream: "origin/feat", HasAB: true, Ahead: 2, Behind: 3,
				Staged: 3, Unstaged: 2, Untracked: 2, Conflicted: 1}},
		// A renamed entry's original path never counts as an entry, even
		// when it looks like one.
		{"rename source looks like a record", "2 R. N... 100644 100644 100644 a b R100 x\x00? y\x00",
			BranchStatus{Staged: 1}},
		{"upstream gone", "# branch.oid abc\x00# branch.head f\x00# branch.upstream origin/f\x00", BranchStatus{OID: "abc", Head: "f", Upstream: "origin/f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseStatusBranch([]byte(tt.out))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUserVerbArgv pins the argv and environment of the user's own
// operations: hooks on, message on stdin, no prompts, one refspec.
func TestUserVerbArgv(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", "")
	tests := []struct {
		name  string
		call  func(r *Repo) error
		args  []string // the last call's
		env   []string
		hooks bool
		stdin string
	}{
		{"Commit", func(r *Repo) error { _, err := r.Commit(ctx, "$(rm -rf /)\n"); return err },
			[]string{"commit", "-F", "-"}, []string{"GIT_EDITOR=:"}, true, "$(rm -rf /)\n"},
		{"Push", func(r *Repo) error {
			_, err := r.Push(ctx, PushOptions{Remote: "origin", Refspec: "refs/heads/a:refs/heads/a", SetUpstream: true})
			return err
		}, []string{"push", "--set-upstream", "--no-follow-tags", "--recurse-submodules=no", "--porcelain", "--", "origin", "refs/heads/a:refs/heads/a"},
			[]string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS_REQUIRE=never", "GCM_INTERACTIVE=never", "GIT_SSH_COMMAND=ssh -o BatchMode=yes"}, true, ""},
		{"LsRemoteHead", func(r *Repo) error { _, err := r.LsRemoteHead(ctx, "origin"); return err },
			[]string{"ls-remote", "--symref", "--", "origin", "HEAD"},
			[]string{"GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS_REQUIRE=never", "GCM_INTERACTIVE=never", "GIT_SSH_COMMAND=ssh -o BatchMode=yes"}, false, ""},
		{"Switch", func(r *Repo) error { return r.Switch(ctx, "b", SwitchOptions{Hooks: true}) },
			[]string{"switch", "--guess", "b"}, nil, true, ""},
		{"Switch -c", func(r *Repo) error { return r.Switch(ctx, "b", SwitchOptions{Create: true}) },
			[]string{"switch", "--no-guess", "-c", "b"}, nil, false, ""},
		{"AddEverything", func(r *Repo) error { return r.AddEverything(ctx) },
			[]string{"add", "--all", "--", "."}, nil, false, ""},
		{"Log", func(r *Repo) error {
			_, err := r.Log(ctx, LogOptions{Revs: []string{"^B", "HEAD"}, MaxCount: 5})
			return err
		}, []string{"log", "--no-color", "--format=%H%x00%P%x00%an%x00%ae%x00%at%x00%s", "--max-count=5", "--end-of-options", "^B", "HEAD", "--"}, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cmds []Cmd
			var stdin string
			r := &Runner{gitPath: "git", exec: func(_ context.Context, c Cmd, read func(io.Reader) error) error {
				cmds = append(cmds, c)
				if c.Stdin != nil {
					b, _ := io.ReadAll(c.Stdin)
					stdin = string(b)
				}
				if c.Args[0] == "config" {
					return &Error{Args: c.Args, ExitCode: 1}
				}
				return read(strings.NewReader(""))
			}}
			repo := &Repo{Root: "/repo", GitDir: "/repo/.git", CommonDir: "/repo/.git", git: r, dir: "/repo"}
			if err := tt.call(repo); err != nil {
				t.Fatal(err)
			}
			c := cmds[len(cmds)-1]
			if diff := cmp.Diff(tt.args, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.env, c.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if c.Hooks != tt.hooks {
				t.Errorf("Hooks = %v, want %v", c.Hooks, tt.hooks)
			}
			if stdin != tt.stdin {
				t.Errorf("stdin = %q, want %q", stdin, tt.stdin)
			}
			if hooksOff := strings.Contains(strings.Join(argv(c), " "), "core.hooksPath=/dev/null"); hooksOff == tt.hooks {
				t.Errorf("argv %q: hooks off = %v with Hooks %v", argv(c), hooksOff, tt.hooks)
			}
		})
	}
}

// TestPushKeepsUserSSHCommand: a core.sshCommand (or GIT_SSH_COMMAND)
// the user set is not replaced by BatchMode.
func TestPushKeepsUserSSHCommand(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GIT_SSH_COMMAND", "")
	t.Setenv("GIT_SSH", "")
	var last Cmd
	r := &Runner{gitPath: "git", exec: func(_ context.Context, c Cmd, read func(io.Reader) error) error {
		last = c
		if c.Args[0] == "config" {
			return read(strings.NewReader("ssh -i key\n"))
		}
		return read(strings.NewReader(""))
	}}
	repo := &Repo{Root: "/repo", GitDir: "/repo/.git", CommonDir: "/repo/.git", git: r, dir: "/repo"}
	if _, err := repo.Push(ctx, PushOptions{Remote: "o", Refspec: "refs/heads/a:refs/heads/a"}); err != nil {
		t.Fatal(err)
	}
	for _, kv := range last.Env {
		if strings.HasPrefix(kv, "GIT_SSH_COMMAND=") {
			t.Errorf("env has %q although core.sshCommand is set", kv)
		}
	}
}

func TestParseLsRemoteHead(t *testing.T) {
	tests := []struct {
		out  string
		want RemoteHead
	}{
		{"ref: refs/heads/trunk\tHEAD\n0123abcd\tHEAD\n", RemoteHead{Branch: "trunk", Commit: "0123abcd"}},
		{"0123abcd\tHEAD\n", RemoteHead{Commit: "0123abcd"}},
		{"", RemoteHead{}},
		{"ref: refs/tags/v1\tHEAD\n", RemoteHead{}},
	}
	for _, tt := range tests {
		if got := ParseLsRemoteHead([]byte(tt.out)); got != tt.want {
			t.Errorf("ParseLsRemoteHead(%q) = %+v, want %+v", tt.out, got, tt.want)
		}
	}
}
