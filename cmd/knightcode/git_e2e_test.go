package main

// End-to-end tests of the git/* operations of issue 10 over the built
// binary (spec: Method reference, git/*): real repositories with a local
// bare remote (file://), an OpenAI-compatible model on a 127.0.0.1
// httptest server that records its requests (the commit message's
// prompt), and a fake gh on PATH that records its arguments. The real gh
// never runs.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/client"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/rpc/rpctest"
)

// modelRecorder is an OpenAI-compatible Chat Completions server that
// answers every request with answer and keeps the request bodies.
type modelRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (rec *modelRecorder) start(t *testing.T, answer string) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, string(body))
		rec.mu.Unlock()
		content, _ := json.Marshal(answer)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":` + string(content) + `},"finish_reason":null}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+d+"\n\n")
		}
	}))
	t.Cleanup(hs.Close)
	return hs
}

func (rec *modelRecorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.bodies...)
}

// startGitServer starts the binary with models.json holding the
// OpenAI-compatible provider "local" (model "m") at modelURL when it is not
// "", and PATH replaced by path when path is not "".
func startGitServer(t *testing.T, modelURL, path string) *diffServer {
	t.Helper()
	env, home := testEnv(t)
	if modelURL != "" {
		cfg := `{"providers": {"local": {"baseUrl": "` + modelURL + `", "api": "openai-completions", "apiKey": "test-key", "models": [{"id": "m"}]}}}`
		writeAgentFile(t, home, "models.json", []byte(cfg))
	}
	if path != "" {
		for i, kv := range env {
			if strings.HasPrefix(kv, "PATH=") {
				env[i] = "PATH=" + path
			}
		}
		env = append(env, "GH_PATH=")
	}
	cmd := exec.Command(binary, "app-server")
	cmd.Env = env
	s, _ := serveDiff(t, cmd, home)
	return s
}

// gitRemoteRepo makes diffRepo's repository with a committer identity and
// an origin remote: a bare repository next to it, by file:// URL, that
// nothing has been pushed to. It returns the work tree and the bare
// repository.
func gitRemoteRepo(t *testing.T) (work, bare string) {
	t.Helper()
	work = diffRepo(t)
	fixtureGit(t, work, "config", "user.name", "Test")
	fixtureGit(t, work, "config", "user.email", "test@example.invalid")
	bare = filepath.Join(t.TempDir(), "remote.git")
	fixtureGit(t, work, "init", "-q", "--bare", "-b", "main", bare)
	fixtureGit(t, work, "remote", "add", "origin", "file://"+bare)
	return work, bare
}

// gitCall sends the typed request m and returns its result and error.
func gitCall[P, R any](t *testing.T, s *diffServer, m protocol.ClientRequest[P, R], p P) (R, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.DefaultTimeout)
	defer cancel()
	return client.Call(ctx, s.c, m, p)
}

// wantGitErr checks that the typed request m fails as want (Paths compared
// only when want has some).
func wantGitErr[P, R any](t *testing.T, s *diffServer, m protocol.ClientRequest[P, R], p P, want wireErr) {
	t.Helper()
	_, err := gitCall(t, s, m, p)
	got := toWireErr(t, err)
	if want.Paths == nil {
		got.Paths = nil
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("%s %s: error (-got +want):\n%s", m.Name, mustJSON(p), diff)
	}
}

func TestE2EGitStatusOriginLogBranches(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, bare := gitRemoteRepo(t)
	id := s.startThread(t, work, "")

	// A cherry-pick stopped by a conflict: the operation and the
	// conflicted entry are reported.
	fixtureGit(t, work, "switch", "-q", "-c", "side")
	writeFile(t, work, "b.txt", "side\n")
	fixtureGit(t, work, "commit", "-q", "-am", "side b")
	fixtureGit(t, work, "switch", "-q", "main")
	writeFile(t, work, "b.txt", "main\n")
	fixtureGit(t, work, "commit", "-q", "-am", "main b")
	writeFile(t, work, "new.txt", "untracked\n")
	cmd := exec.Command("git", "cherry-pick", "side")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("cherry-pick did not stop on the conflict: %s", out)
	}
	head := strings.TrimSpace(fixtureGit(t, work, "rev-parse", "HEAD"))
	st := mustCall(t, s, protocol.GitStatus, protocol.GitStatusParams{ThreadID: id})
	want := protocol.GitStatusResult{Branch: "main", Head: head, Conflicted: 1, Untracked: 1, Operation: "cherry-pick"}
	if diff := cmp.Diff(st, want); diff != "" {
		t.Errorf("git/status during a cherry-pick (-got +want):\n%s", diff)
	}
	fixtureGit(t, work, "cherry-pick", "--abort")
	os.Remove(filepath.Join(work, "new.txt"))

	origin := mustCall(t, s, protocol.GitOrigin, protocol.GitOriginParams{ThreadID: id})
	if diff := cmp.Diff(origin, protocol.GitOriginResult{Root: work, URL: "file://" + bare, Branch: "main"}); diff != "" {
		t.Errorf("git/origin (-got +want):\n%s", diff)
	}

	log := mustCall(t, s, protocol.GitLog, protocol.GitLogParams{ThreadID: id, Limit: intp(2)})
	var subjects []string
	for i, c := range log.Commits {
		subjects = append(subjects, c.Subject)
		if c.Author.Email != "test@example.invalid" || c.Time == 0 || len(c.Parents) != 1-i {
			t.Errorf("git/log commit %+v", c)
		}
	}
	if diff := cmp.Diff(subjects, []string{"main b", "base"}); diff != "" {
		t.Errorf("git/log subjects (-got +want):\n%s", diff)
	}
	wantGitErr(t, s, protocol.GitLog, protocol.GitLogParams{ThreadID: id, Limit: intp(501)}, wireErr{Code: "invalidParams", Field: "limit"})

	br := mustCall(t, s, protocol.GitBranches, protocol.GitBranchesParams{ThreadID: id})
	var names []string
	for _, b := range br.Branches {
		n := b.Name
		if b.Current {
			n += "*"
		}
		names = append(names, n)
	}
	if diff := cmp.Diff(names, []string{"main*", "side"}); diff != "" {
		t.Errorf("git/branches (-got +want):\n%s", diff)
	}
}

func TestE2EGitCommit(t *testing.T) {
	t.Parallel()
	rec := &modelRecorder{}
	hs := rec.start(t, "```\nUpdate line 3 of a.txt\n```")
	s := startGitServer(t, hs.URL, "")
	work, _ := gitRemoteRepo(t)
	id := s.startThread(t, work, "")

	// With a message: everything is staged first, untracked files too.
	writeFile(t, work, "c.txt", "c\n")
	res := mustCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "add c"})
	if got := strings.TrimSpace(fixtureGit(t, work, "log", "-1", "--format=%H %s")); got != res.Commit+" add c" || res.Branch != "main" {
		t.Errorf("git/commit = %+v; HEAD is %q", res, got)
	}
	if st := fixtureGit(t, work, "status", "--porcelain"); st != "" {
		t.Errorf("after the commit, git status: %q", st)
	}

	// Nothing to commit.
	wantGitErr(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "x"},
		wireErr{Code: "invalidParams", Reason: "nothingToCommit"})

	// No message and no model selected: noModel, and nothing committed.
	writeFile(t, work, "a.txt", replaceLines(map[int]string{3: "changed line"}))
	wantGitErr(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id},
		wireErr{Code: "invalidParams", Field: "message", Reason: "noModel"})
	if n := len(rec.requests()); n != 0 {
		t.Errorf("%d model requests without a model", n)
	}

	// The model writes the message from the staged diff only; with
	// includeUnstaged false the unstaged change to b.txt stays out.
	mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
		ThreadID: id, Model: &protocol.ModelRef{Provider: "local", ID: "m"}})
	fixtureGit(t, work, "add", "a.txt")
	writeFile(t, work, "b.txt", "unstaged change\n")
	res = mustCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, IncludeUnstaged: new(false)})
	if res.Message != "Update line 3 of a.txt" {
		t.Errorf("model-written message %q", res.Message)
	}
	if got := fixtureGit(t, work, "log", "-1", "--format=%B"); strings.TrimSpace(got) != "Update line 3 of a.txt" {
		t.Errorf("committed message %q", got)
	}
	if got := fixtureGit(t, work, "diff", "--name-only", "HEAD~1", "HEAD"); got != "a.txt\n" {
		t.Errorf("committed paths %q, want a.txt only", got)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(reqs[0]), &body); err != nil {
		t.Fatal(err)
	}
	prompt := mustJSON(body.Messages)
	for _, want := range []string{"a.txt", "+changed line", "-line 3"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the model's prompt lacks %q: %s", want, prompt)
		}
	}
	if strings.Contains(prompt, "unstaged change") {
		t.Errorf("the model's prompt holds the unstaged change: %s", prompt)
	}
	if len(body.Messages) != 1 || body.Messages[0].Role != "user" {
		t.Errorf("the model request is not one user message (no conversation): %s", prompt)
	}

	// A pre-commit hook that refuses: hookRejected with its output, and
	// nothing committed or left staged.
	head := fixtureGit(t, work, "rev-parse", "HEAD")
	writeFile(t, work, ".git/hooks/pre-commit", "#!/bin/sh\necho 'no commits on Fridays' >&2\nexit 1\n")
	if err := os.Chmod(filepath.Join(work, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "refused"})
	if got := toWireErr(t, err); got.Code != "gitConflict" || got.Reason != "hookRejected" {
		t.Errorf("git/commit under a refusing hook: %+v", got)
	} else if e, ok := errors.AsType[*client.Error](err); !ok || !strings.Contains(mustJSON(e.Data), "no commits on Fridays") {
		t.Errorf("hookRejected data lacks the hook's output: %v", err)
	}
	if got := fixtureGit(t, work, "rev-parse", "HEAD"); got != head {
		t.Errorf("a refused commit moved HEAD")
	}
	if got := fixtureGit(t, work, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("a refused commit left %q staged", got)
	}

	// Outside the conversation: the thread has no item.
	read := mustCall(t, s, protocol.ThreadRead, protocol.ThreadReadParams{ThreadID: id})
	if len(read.Turns) != 0 {
		t.Errorf("the commit message left turns in the thread: %+v", read.Turns)
	}
}

func TestE2EGitPushAndBranches(t *testing.T) {
	t.Parallel()
	s := startGitServer(t, "", "")
	work, bare := gitRemoteRepo(t)
	id := s.startThread(t, work, "")

	// The first push sets the upstream.
	res := mustCall(t, s, protocol.GitPush, protocol.GitPushParams{ThreadID: id})
	if res.Branch != "main" || res.Remote != "origin" || !res.SetUpstream {
		t.Errorf("git/push = %+v", res)
	}
	head := fixtureGit(t, work, "rev-parse", "HEAD")
	if got := fixtureGit(t, bare, "rev-parse", "main"); got != head {
		t.Errorf("remote main %q, HEAD %q", got, head)
	}
	if up := fixtureGit(t, work, "rev-parse", "--abbrev-ref", "main@{upstream}"); up != "origin/main\n" {
		t.Errorf("upstream %q", up)
	}
	if st := mustCall(t, s, protocol.GitStatus, protocol.GitStatusParams{ThreadID: id}); st.Upstream != "origin/main" || st.Ahead != 0 {
		t.Errorf("git/status after the push: %+v", st)
	}

	// Someone else pushes; our push is rejected as non-fast-forward.
	other := filepath.Join(t.TempDir(), "other")
	fixtureGit(t, work, "clone", "-q", "file://"+bare, other)
	writeFile(t, other, "theirs.txt", "theirs\n")
	fixtureGit(t, other, "add", "theirs.txt")
	fixtureGit(t, other, "commit", "-q", "-m", "theirs")
	fixtureGit(t, other, "push", "-q", "origin", "main")
	writeFile(t, work, "ours.txt", "ours\n")
	mustCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id, Message: "ours"})
	wantGitErr(t, s, protocol.GitPush, protocol.GitPushParams{ThreadID: id}, wireErr{Code: "gitConflict", Reason: "pushRejected"})

	// Branch create: switched to at HEAD; exists; invalid name.
	br := mustCall(t, s, protocol.GitBranchCreate, protocol.GitBranchCreateParams{ThreadID: id, Name: "feature"})
	if br.Branch != "feature" {
		t.Errorf("git/branch/create = %+v", br)
	}
	if got := fixtureGit(t, work, "symbolic-ref", "--short", "HEAD"); got != "feature\n" {
		t.Errorf("HEAD is %q after git/branch/create", got)
	}
	wantGitErr(t, s, protocol.GitBranchCreate, protocol.GitBranchCreateParams{ThreadID: id, Name: "feature"},
		wireErr{Code: "gitConflict", Reason: "branchExists"})
	wantGitErr(t, s, protocol.GitBranchCreate, protocol.GitBranchCreateParams{ThreadID: id, Name: "a..b"},
		wireErr{Code: "invalidParams", Field: "name"})

	// Branch switch refused over a local change the switch would
	// overwrite, and over an ignored file the branch tracks.
	writeFile(t, work, "b.txt", "feature b\n")
	fixtureGit(t, work, "commit", "-q", "-am", "feature b")
	writeFile(t, work, "ignored.log", "tracked on feature\n")
	fixtureGit(t, work, "add", "ignored.log")
	fixtureGit(t, work, "commit", "-q", "-m", "feature log")
	mustCall(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "main"})
	writeFile(t, work, "b.txt", "local edit\n")
	wantGitErr(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "feature"},
		wireErr{Code: "gitConflict", Reason: "localChanges", Paths: []string{"b.txt"}})
	if got := readFile(t, work, "b.txt"); got != "local edit\n" {
		t.Errorf("the refused switch changed b.txt: %q", got)
	}
	fixtureGit(t, work, "checkout", "--", "b.txt")
	writeFile(t, work, ".git/info/exclude", "*.log\n")
	writeFile(t, work, "ignored.log", "the user's own\n")
	wantGitErr(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "feature"},
		wireErr{Code: "gitConflict", Reason: "localChanges", Paths: []string{"ignored.log"}})
	if got := readFile(t, work, "ignored.log"); got != "the user's own\n" {
		t.Errorf("the refused switch changed ignored.log: %q", got)
	}
	os.Remove(filepath.Join(work, "ignored.log"))
	if sw := mustCall(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "feature"}); sw.Branch != "feature" {
		t.Errorf("git/branch/switch = %+v", sw)
	}
	wantGitErr(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "nosuch"},
		wireErr{Code: "invalidParams", Field: "name"})

	// A detached HEAD is not pushed.
	fixtureGit(t, work, "switch", "-q", "--detach")
	wantGitErr(t, s, protocol.GitPush, protocol.GitPushParams{ThreadID: id},
		wireErr{Code: "invalidParams", Reason: "detachedHead"})
}

// fakeGh writes a gh script into a new directory that also links git, and
// returns the directory (a PATH of its own) and the file the script
// appends its arguments to, one call per line. The script prints a pull
// request's URL; with withGh false there is no gh at all.
func fakeGh(t *testing.T, withGh bool) (dir, argsFile string) {
	t.Helper()
	if !withGh {
		return ghDir(t, "")
	}
	return ghDir(t, "echo https://github.com/o/r/pull/7\n")
}

// ghDir is fakeGh with the script's answer given: body runs after the
// script recorded its arguments and read its stdin ("" for no gh).
func ghDir(t *testing.T, body string) (dir, argsFile string) {
	t.Helper()
	dir = t.TempDir()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(gitPath, filepath.Join(dir, "git")); err != nil {
		t.Fatal(err)
	}
	argsFile = filepath.Join(t.TempDir(), "gh-args")
	if body != "" {
		script := "#!/bin/sh\necho \"$*\" >> '" + argsFile + "'\ncat > /dev/null\n" + body
		if err := os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir, argsFile
}

func TestE2EGitPRCreate(t *testing.T) {
	t.Parallel()
	path, argsFile := fakeGh(t, true)
	s := startGitServer(t, "", path+string(os.PathListSeparator)+"/bin")
	work, bare := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	fixtureGit(t, work, "push", "-q", "-u", "origin", "main")
	fixtureGit(t, work, "switch", "-q", "-c", "topic")
	writeFile(t, work, "t.txt", "t\n")
	fixtureGit(t, work, "add", "t.txt")
	fixtureGit(t, work, "commit", "-q", "-m", "topic")

	pr := mustCall(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Topic", Draft: true})
	if diff := cmp.Diff(pr, protocol.GitPRCreateResult{URL: "https://github.com/o/r/pull/7", Number: 7}); diff != "" {
		t.Errorf("git/pr/create (-got +want):\n%s", diff)
	}
	// It pushed the branch first (no upstream).
	if got, want := fixtureGit(t, bare, "rev-parse", "topic"), fixtureGit(t, work, "rev-parse", "HEAD"); got != want {
		t.Errorf("remote topic %q, HEAD %q", got, want)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	// origin's HEAD is not known locally (a push does not set it): the
	// base is what the remote says its HEAD is.
	if got, want := string(args), "pr create --head topic --base main --fill --title Topic --draft\n"; got != want {
		t.Errorf("gh args %q, want %q", got, want)
	}

	// A detached HEAD is refused before gh runs.
	fixtureGit(t, work, "switch", "-q", "--detach")
	wantGitErr(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id},
		wireErr{Code: "invalidParams", Reason: "detachedHead"})
	if again, _ := os.ReadFile(argsFile); string(again) != string(args) {
		t.Errorf("gh ran on a detached HEAD: %q", again)
	}
}

func TestE2EGitPRCreateWithoutGh(t *testing.T) {
	t.Parallel()
	path, _ := fakeGh(t, false)
	s := startGitServer(t, "", path)
	work, _ := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	fixtureGit(t, work, "switch", "-q", "-c", "topic")
	wantGitErr(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id}, wireErr{Code: "toolMissing"})
}

// TestE2EGitPRCreateAnswers checks git/pr/create's answers of issue 22
// over the binary, with a fake gh that fails as GitHub's API sometimes
// does and a local bare origin whose default branch (develop) is not known
// locally: gh gets --base develop (from git ls-remote --symref); its
// failure is externalFailure toolFailed with gh's words and exit code; a
// 300 KB title is invalidParams "title"; a branch with no history in
// common with the base is invalidParams noCommonHistory naming both. The
// refusals come before gh runs.
func TestE2EGitPRCreateAnswers(t *testing.T) {
	t.Parallel()
	path, argsFile := ghDir(t, "echo 'GraphQL: Something went wrong while executing your query.' >&2\nexit 1\n")
	s := startGitServer(t, "", path+string(os.PathListSeparator)+"/bin")
	work, bare := gitRemoteRepo(t)
	id := s.startThread(t, work, "")
	fixtureGit(t, work, "push", "-q", "origin", "main", "main:develop")
	fixtureGit(t, bare, "symbolic-ref", "HEAD", "refs/heads/develop")
	fixtureGit(t, work, "switch", "-q", "-c", "topic")
	writeFile(t, work, "t.txt", "t\n")
	fixtureGit(t, work, "add", "t.txt")
	fixtureGit(t, work, "commit", "-q", "-m", "topic")

	_, err := gitCall(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Topic"})
	code, data := rawErr(t, err)
	if code != protocol.CodeExternalFailure || string(data) != `{"reason":"toolFailed","tool":"gh","exitCode":1,"output":"GraphQL: Something went wrong while executing your query."}` {
		t.Errorf("gh's failure: %s %s", code, data)
	}
	if e, ok := errors.AsType[*client.Error](err); !ok || !strings.Contains(e.Message, "GraphQL: Something went wrong while executing your query.") {
		t.Errorf("gh's failure: message %v lacks gh's words", err)
	}
	args, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(args), "pr create --head topic --base develop --fill --title Topic\n"; got != want {
		t.Errorf("gh args %q, want %q", got, want)
	}

	_, err = gitCall(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: strings.Repeat("t", 300*1024)})
	if got := toWireErr(t, err); got.Code != protocol.CodeInvalidParams || got.Field != "title" {
		t.Errorf("a 300 KB title: %+v, want invalidParams title", got)
	}

	fixtureGit(t, work, "switch", "-q", "--orphan", "unrelated")
	writeFile(t, work, "u.txt", "u\n")
	fixtureGit(t, work, "add", "u.txt")
	fixtureGit(t, work, "commit", "-q", "-m", "unrelated root")
	_, err = gitCall(t, s, protocol.GitPRCreate, protocol.GitPRCreateParams{ThreadID: id, Title: "Unrelated"})
	if got := toWireErr(t, err); got.Code != protocol.CodeInvalidParams || got.Field != "" || got.Reason != "noCommonHistory" {
		t.Errorf("an unrelated branch: %+v", got)
	}
	if e, ok := errors.AsType[*client.Error](err); !ok || !strings.Contains(e.Message, "unrelated") || !strings.Contains(e.Message, "origin/develop") {
		t.Errorf("an unrelated branch: message %v does not name both branches", err)
	}
	if again, _ := os.ReadFile(argsFile); string(again) != string(args) {
		t.Errorf("gh ran for a refused request: %q", again)
	}
	if out := fixtureGit(t, bare, "branch", "--list", "unrelated"); out != "" {
		t.Errorf("the unrelated branch was pushed: %q", out)
	}
}

// TestE2EGitBranchRefusedDuringTurn checks that git/branch/create and
// git/branch/switch answer turnInProgress while a turn runs in the
// checkout, and change nothing.
func TestE2EGitBranchRefusedDuringTurn(t *testing.T) {
	t.Parallel()
	s := startDiffServer(t, map[string]string{"slow": slowScript})
	work, _ := gitRemoteRepo(t)
	fixtureGit(t, work, "branch", "other")
	id := s.startThread(t, work, "slow")
	turnID, from := s.startTurn(t, id, "take your time")
	busy := wireErr{Code: protocol.CodeTurnInProgress}
	wantGitErr(t, s, protocol.GitBranchCreate, protocol.GitBranchCreateParams{ThreadID: id, Name: "feature"}, busy)
	wantGitErr(t, s, protocol.GitBranchSwitch, protocol.GitBranchSwitchParams{ThreadID: id, Name: "other"}, busy)
	if got := fixtureGit(t, work, "symbolic-ref", "--short", "HEAD"); got != "main\n" {
		t.Errorf("HEAD is %q after refused branch operations", got)
	}
	mustCall(t, s, protocol.TurnInterrupt, protocol.TurnInterruptParams{ThreadID: id, TurnID: turnID})
	s.waitNote(t, &from, protocol.TurnCompletedNotification.Name, nil)
	s.waitNote(t, &from, protocol.TurnDiffUpdated.Name, nil)
	if br := mustCall(t, s, protocol.GitBranchCreate, protocol.GitBranchCreateParams{ThreadID: id, Name: "feature"}); br.Branch != "feature" {
		t.Errorf("git/branch/create after the turn = %+v", br)
	}
}

// TestE2EGitCommitModelFails commits without a message on a thread whose
// model fails (issue 22 QA, L4: a bare internal): the answer is
// externalFailure modelFailed naming the provider, with the failure's kind
// as a turn reports it and the provider's words; nothing is committed.
func TestE2EGitCommitModelFails(t *testing.T) {
	t.Parallel()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	t.Cleanup(refusing.Close)
	tests := []struct {
		name           string
		start          func(t *testing.T, work string) (*diffServer, string)
		provider, kind string
		words          string
	}{
		{"scripted error", func(t *testing.T, work string) (*diffServer, string) {
			s := startDiffServer(t, map[string]string{"m": script(map[string]any{"error": "boom: provider overloaded"})})
			return s, s.startThread(t, work, "m")
		}, "scripted", "provider", "boom: provider overloaded"},
		{"HTTP 401", func(t *testing.T, work string) (*diffServer, string) {
			s := startGitServer(t, refusing.URL, "")
			id := s.startThread(t, work, "")
			mustCall(t, s, protocol.ThreadSettingsUpdate, protocol.ThreadSettingsUpdateParams{
				ThreadID: id, Model: &protocol.ModelRef{Provider: "local", ID: "m"}})
			return s, id
		}, "local", "auth", "Incorrect API key provided"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work, _ := gitRemoteRepo(t)
			s, id := tc.start(t, work)
			writeFile(t, work, "a.txt", "a change\n")
			head, status := fixtureGit(t, work, "rev-parse", "HEAD"), fixtureGit(t, work, "status", "--porcelain")
			_, err := gitCall(t, s, protocol.GitCommit, protocol.GitCommitParams{ThreadID: id})
			e, ok := errors.AsType[*client.Error](err)
			if !ok || e.Code != protocol.CodeExternalFailure || !strings.Contains(e.Message, tc.words) {
				t.Fatalf("git/commit with a failing model: %v, want externalFailure with %q", err, tc.words)
			}
			var data protocol.ExternalFailureData
			if err := json.Unmarshal(e.Data.(json.RawMessage), &data); err != nil {
				t.Fatal(err)
			}
			if want := (protocol.ExternalFailureData{Reason: "modelFailed", Provider: tc.provider, Kind: tc.kind}); data != want {
				t.Errorf("data %+v, want %+v", data, want)
			}
			if h, st := fixtureGit(t, work, "rev-parse", "HEAD"), fixtureGit(t, work, "status", "--porcelain"); h != head || st != status {
				t.Errorf("the failed commit changed the checkout: HEAD %s -> %s, status %q -> %q", head, h, status, st)
			}
		})
	}
}
