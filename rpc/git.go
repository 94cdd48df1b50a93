package rpc

import (
	"context"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/diffscope"
	"github.com/knightcode/knightcode/internal/gitcli"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
	"github.com/knightcode/knightcode/workspace"
)

// registerGit installs the git family's handlers (spec: Method reference,
// git/*): git/stage, git/unstage and the operations of issue 10, which
// call the workspace git operations on the thread's checkout and only
// translate.
func registerGit(srv *jsonrpc.Server, core Core) {
	jsonrpc.Handle(srv, protocol.GitStage, core.gitStage)
	jsonrpc.Handle(srv, protocol.GitUnstage, core.gitUnstage)
	jsonrpc.Handle(srv, protocol.GitStatus, core.gitStatus)
	jsonrpc.Handle(srv, protocol.GitOrigin, core.gitOrigin)
	jsonrpc.Handle(srv, protocol.GitCommit, core.gitCommit)
	jsonrpc.Handle(srv, protocol.GitPush, core.gitPush)
	jsonrpc.Handle(srv, protocol.GitPRCreate, core.gitPRCreate)
	jsonrpc.Handle(srv, protocol.GitBranches, core.gitBranches)
	jsonrpc.Handle(srv, protocol.GitBranchCreate, core.gitBranchCreate)
	jsonrpc.Handle(srv, protocol.GitBranchSwitch, core.gitBranchSwitch)
	jsonrpc.Handle(srv, protocol.GitLog, core.gitLog)
}

// gitStage answers git/stage inside WithCheckout: diffscope.Differ.Stage of
// one hunk, one file (its path taken literally) or, with neither (both
// absent: the frame refused "" and null), everything of the unstaged scope.
func (c Core) gitStage(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitStageParams) (protocol.GitStageResult, error) {
	paths, err := c.stage(ctx, protocol.GitStage.Name, p, c.Differ.Stage)
	return protocol.GitStageResult{Paths: paths}, err
}

// gitUnstage answers git/unstage inside WithCheckout:
// diffscope.Differ.Unstage of one hunk, one file or, with neither,
// everything of the staged scope.
func (c Core) gitUnstage(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitUnstageParams) (protocol.GitUnstageResult, error) {
	paths, err := c.stage(ctx, protocol.GitUnstage.Name, protocol.GitStageParams(p), c.Differ.Unstage)
	return protocol.GitUnstageResult{Paths: paths}, err
}

// stage runs act (Stage or Unstage: the method named method) on the
// thread's checkout under its fence (threads.ErrTurnInProgress while a
// turn runs there).
func (c Core) stage(ctx context.Context, method string, p protocol.GitStageParams,
	act func(context.Context, string, diffscope.StageOptions) ([]string, error)) ([]string, error) {
	var paths []string
	err := c.Threads.WithCheckout(ctx, p.ThreadID, method, func(cwd string) error {
		var err error
		paths, err = act(ctx, cwd, diffscope.StageOptions{Path: p.Path, HunkID: p.HunkID, Context: p.Context})
		return err
	})
	if err != nil {
		return nil, err
	}
	return nonNil(paths), nil
}

// gitStatus answers git/status: workspace.Status of the thread's checkout.
func (c Core) gitStatus(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitStatusParams) (protocol.GitStatusResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.GitStatusResult{}, err
	}
	s, err := workspace.Status(ctx, c.Git, cwd)
	if err != nil {
		return protocol.GitStatusResult{}, err
	}
	return protocol.GitStatusResult{Branch: s.Branch, Head: s.Head, Upstream: s.Upstream,
		Ahead: s.Ahead, Behind: s.Behind, Staged: s.Staged, Unstaged: s.Unstaged,
		Untracked: s.Untracked, Conflicted: s.Conflicted, Operation: s.Operation}, nil
}

// gitOrigin answers git/origin: workspace.Origin of the thread's checkout.
func (c Core) gitOrigin(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitOriginParams) (protocol.GitOriginResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.GitOriginResult{}, err
	}
	o, err := workspace.Origin(ctx, c.Git, cwd)
	if err != nil {
		return protocol.GitOriginResult{}, err
	}
	return protocol.GitOriginResult{Root: o.Root, URL: o.URL, Branch: o.Branch}, nil
}

// longGitOperation runs fn, the work of the long git method name
// (git/commit, git/push, git/pr/create, git/branch/switch: the user's
// hooks or gh may run for minutes), as a threads.Manager.RunOperation of
// the thread: once admitted it leaves the thread's request lane
// (jsonrpc.LeaveLane), so the thread's reads answer meanwhile while its
// other writes are refused turnInProgress naming name, and turn/interrupt
// of the thread stops it (issue 22). fn gets git bounded by the
// checkout's hook deadline and the deadlines (the git.* settings).
func (c Core) longGitOperation(ctx context.Context, threadID, name string, fence bool,
	fn func(ctx context.Context, git *gitcli.Runner, cwd string, limits config.GitValues) error) error {
	return c.Threads.RunOperation(ctx, threadID, threads.Operation{Name: name, Fence: fence}, func(ctx context.Context, cwd string) error {
		jsonrpc.LeaveLane(ctx)
		limits := c.Threads.GitDeadlines(ctx, cwd)
		return fn(ctx, c.Git.WithHookTimeout(limits.HookTimeout), cwd, limits)
	})
}

// gitCommit answers git/commit as a long operation (longGitOperation):
// with a message, workspace.Commit; without one, workspace.PrepareCommit
// reads the staged diff the commit would record, the thread's model writes
// the message from it alone (workspace.CommitMessage through
// threads.Manager.Ask: outside the conversation), and workspace.Commit
// commits only if the index still holds the tree the message was written
// from (else gitConflict concurrentChange). No fence: a turn may run
// meanwhile, concurrentChange guards the commit (issue 10's decisions).
func (c Core) gitCommit(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitCommitParams) (protocol.GitCommitResult, error) {
	var res protocol.GitCommitResult
	err := c.longGitOperation(ctx, p.ThreadID, protocol.GitCommit.Name, false, func(ctx context.Context, git *gitcli.Runner, cwd string, _ config.GitValues) error {
		include := p.IncludeUnstaged == nil || *p.IncludeUnstaged
		msg, expected := p.Message, ""
		if msg == "" {
			draft, err := workspace.PrepareCommit(ctx, git, cwd, include)
			if err != nil {
				return err
			}
			ask := func(ctx context.Context, prompt string) (string, error) {
				return c.Threads.Ask(ctx, p.ThreadID, prompt)
			}
			if msg, err = workspace.CommitMessage(ctx, draft.Diff, ask); err != nil {
				return err
			}
			expected = draft.IndexTree
		}
		made, err := workspace.Commit(ctx, git, c.Differ.Oplog(), cwd, msg, include, expected)
		if err != nil {
			return err
		}
		if c.Workspace != nil {
			// A managed worktree's registry row follows its HEAD (what a
			// restore re-creates it at once git forgot it).
			_ = c.Workspace.RecordHead(cwd, made.Commit)
		}
		res = protocol.GitCommitResult{Commit: made.Commit, Branch: made.Branch, Message: msg}
		return nil
	})
	return res, err
}

// gitPush answers git/push as a long operation (longGitOperation, the
// pre-push hook): workspace.Push of the thread's checkout.
func (c Core) gitPush(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitPushParams) (protocol.GitPushResult, error) {
	var res protocol.GitPushResult
	err := c.longGitOperation(ctx, p.ThreadID, protocol.GitPush.Name, false, func(ctx context.Context, git *gitcli.Runner, cwd string, _ config.GitValues) error {
		pushed, err := workspace.Push(ctx, git, cwd)
		if err != nil {
			return err
		}
		res = protocol.GitPushResult{Branch: pushed.Branch, Remote: pushed.Remote, SetUpstream: pushed.SetUpstream, Output: pushed.Output}
		return nil
	})
	return res, err
}

// gitPRCreate answers git/pr/create as a long operation
// (longGitOperation: gh within git.ghTimeoutSeconds): workspace.PRCreate
// of the thread's checkout, its --base the worktree's baseRef when that
// names a branch (threads.Manager.WorktreeBaseRef), else the remote's
// default branch.
func (c Core) gitPRCreate(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitPRCreateParams) (protocol.GitPRCreateResult, error) {
	var res protocol.GitPRCreateResult
	err := c.longGitOperation(ctx, p.ThreadID, protocol.GitPRCreate.Name, false, func(ctx context.Context, git *gitcli.Runner, cwd string, limits config.GitValues) error {
		pr, err := workspace.PRCreate(ctx, git, cwd, workspace.PROptions{Title: p.Title, Body: p.Body, Draft: p.Draft,
			BaseRef: c.Threads.WorktreeBaseRef(p.ThreadID), GhTimeout: limits.GhTimeout})
		if err != nil {
			return err
		}
		res = protocol.GitPRCreateResult{URL: pr.URL, Number: pr.Number}
		return nil
	})
	return res, err
}

// gitBranches answers git/branches: workspace.Branches of the thread's
// checkout.
func (c Core) gitBranches(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitBranchesParams) (protocol.GitBranchesResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.GitBranchesResult{}, err
	}
	bs, err := workspace.Branches(ctx, c.Git, cwd)
	if err != nil {
		return protocol.GitBranchesResult{}, err
	}
	out := make([]protocol.GitBranch, 0, len(bs))
	for _, b := range bs {
		out = append(out, protocol.GitBranch{Name: b.Name, Ref: b.Ref, Remote: b.Remote, Current: b.Current,
			Commit: b.Commit, Upstream: b.Upstream, Ahead: b.Ahead, Behind: b.Behind, UpstreamGone: b.UpstreamGone})
	}
	return protocol.GitBranchesResult{Branches: out}, nil
}

// gitBranchCreate answers git/branch/create inside WithCheckout
// (turnInProgress while a turn runs there): workspace.BranchCreate.
func (c Core) gitBranchCreate(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitBranchCreateParams) (protocol.GitBranchCreateResult, error) {
	err := c.Threads.WithCheckout(ctx, p.ThreadID, protocol.GitBranchCreate.Name, func(cwd string) error {
		return workspace.BranchCreate(ctx, c.Git, cwd, p.Name)
	})
	if err != nil {
		return protocol.GitBranchCreateResult{}, err
	}
	return protocol.GitBranchCreateResult{Branch: p.Name}, nil
}

// gitBranchSwitch answers git/branch/switch as a long operation with a
// fence (longGitOperation: the post-checkout hook; turnInProgress while a
// turn runs there): workspace.BranchSwitch, under a journal of the
// server's operation log (the Differ's).
func (c Core) gitBranchSwitch(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitBranchSwitchParams) (protocol.GitBranchSwitchResult, error) {
	err := c.longGitOperation(ctx, p.ThreadID, protocol.GitBranchSwitch.Name, true, func(ctx context.Context, git *gitcli.Runner, cwd string, _ config.GitValues) error {
		return workspace.BranchSwitch(ctx, git, c.Differ.Oplog(), cwd, p.Name)
	})
	if err != nil {
		return protocol.GitBranchSwitchResult{}, err
	}
	return protocol.GitBranchSwitchResult{Branch: p.Name}, nil
}

// gitLog answers git/log: workspace.Log of the thread's checkout since its
// base (threads.Manager.BranchBase: the worktree's base commit; for the
// user's checkout the default branch).
func (c Core) gitLog(ctx context.Context, _ *jsonrpc.Conn, p protocol.GitLogParams) (protocol.GitLogResult, error) {
	cwd, err := c.Threads.Checkout(p.ThreadID)
	if err != nil {
		return protocol.GitLogResult{}, err
	}
	o := workspace.LogOptions{BaseRef: c.Threads.BranchBase(p.ThreadID)}
	if p.Limit != nil {
		o.Limit = *p.Limit
	}
	res, err := workspace.Log(ctx, c.Git, cwd, o)
	if err != nil {
		return protocol.GitLogResult{}, err
	}
	commits := make([]protocol.GitLogCommit, 0, len(res.Commits))
	for _, e := range res.Commits {
		commits = append(commits, protocol.GitLogCommit{ID: e.ID, Parents: nonNil(e.Parents), Subject: e.Subject,
			Author: protocol.GitAuthor{Name: e.AuthorName, Email: e.AuthorEmail}, Time: e.Time * 1000})
	}
	return protocol.GitLogResult{Base: res.Base, Commits: commits}, nil
}
