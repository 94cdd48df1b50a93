package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// TestE2EInitializeClientInfoWithoutVersion checks that clientInfo.version
// is optional: a client naming itself without a version is accepted like
// one that sends no clientInfo at all.
func TestE2EInitializeClientInfoWithoutVersion(t *testing.T) {
	t.Parallel()
	p := start(t, "app-server")
	rpctest.Run(t, p.peer(t), []rpctest.Step{
		{Send: `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"script"}}}`},
		{Expect: initResult(p.home)},
		{Send: e2eInitialized},
		{CloseInput: true},
		{ExpectEOF: true},
	})
	if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if !strings.Contains(p.stderr.String(), `msg="client initialized" conn=1 client=script`) {
		t.Errorf("server log lacks the client's name:\n%s", p.stderr.String())
	}
}

// TestE2EErrorMessages checks the words of errors a user reads: notGitRepo
// names the directory, not git's command line (which stays in the log), and
// refusing to revert the committed scope says why rather than pointing at
// git/unstage.
func TestE2EErrorMessages(t *testing.T) {
	t.Parallel()
	repo := threadsRepo(t)
	noGit, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := startIn(t, t.TempDir())
	thread := s.startThread(t, repo, "")
	plain := s.startThread(t, noGit, "")
	type msg struct{ Code, Message string }
	tests := []struct {
		method string
		params any
		want   msg
	}{
		{protocol.ThreadDiffRead.Name, protocol.ThreadDiffReadParams{ThreadID: plain},
			msg{protocol.CodeNotGitRepo, noGit + " is not a git repository"}},
		{protocol.GitStage.Name, protocol.GitStageParams{ThreadID: plain},
			msg{protocol.CodeNotGitRepo, noGit + " is not a git repository"}},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeCommitted, Commit: "HEAD"},
			msg{protocol.CodeInvalidParams, "scope: the committed scope cannot be reverted: thread/diff/revert changes the working tree and never undoes a commit"}},
		{protocol.ThreadDiffRevert.Name, protocol.ThreadDiffRevertParams{ThreadID: thread, Scope: protocol.ScopeStaged},
			msg{protocol.CodeInvalidParams, "scope: the staged scope cannot be reverted: unstage staged changes with git/unstage"}},
	}
	for _, tt := range tests {
		err := s.call(t, tt.method, tt.params, nil)
		var e *client.Error
		if !errors.As(err, &e) {
			t.Errorf("%s %+v: %v, want an error response", tt.method, tt.params, err)
			continue
		}
		if diff := cmp.Diff(msg{e.Code, e.Message}, tt.want); diff != "" {
			t.Errorf("%s %+v (-got +want):\n%s", tt.method, tt.params, diff)
		}
	}
	s.close(t)
	if log := s.stderr.String(); !strings.Contains(log, "git rev-parse") || !strings.Contains(log, "not a git repository") {
		t.Errorf("server log lacks the cause of notGitRepo:\n%s", log)
	}
}
