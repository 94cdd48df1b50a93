package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/rpctest"
)

// responseLine is a response read off the server's stdout.
type responseLine struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readResponses reads the server's output from sc to its end and returns
// the responses by id (notifications are skipped).
func readResponses(t *testing.T, sc *bufio.Scanner) map[string]responseLine {
	t.Helper()
	out := map[string]responseLine{}
	for sc.Scan() {
		var r responseLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output line %q: %v", sc.Bytes(), err)
		}
		if r.ID != nil {
			out[string(r.ID)] = r
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stdoutLines reads p's stdout line by line.
func stdoutLines(p *proc) *bufio.Scanner {
	sc := bufio.NewScanner(p.stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	return sc
}

// outcome is "result" or the error code of a response ("none" when absent).
func outcome(rs map[string]responseLine, id string) string {
	r, ok := rs[id]
	switch {
	case !ok:
		return "none"
	case r.Error != nil:
		return r.Error.Code + ": " + r.Error.Message
	}
	return "result"
}

// TestE2EShutdownAnswersAcceptedRequests checks the order of shutdown on
// stdin EOF (spec, "Ownership, unloading, and shutdown": new input stops,
// accepted requests still receive answers): requests read before the end of
// input run against the loaded threads before the threads unload, so
// pipelined diff reads of a thread all get results (never threadNotFound),
// and a thread/start written just before stdin closed starts its thread.
func TestE2EShutdownAnswersAcceptedRequests(t *testing.T) {
	t.Parallel()
	t.Run("pipelined diff reads", func(t *testing.T) {
		t.Parallel()
		repo := threadsRepo(t)
		writeFile(t, repo, "a.txt", "changed\n")
		p := start(t, "app-server")
		sc := stdoutLines(p)
		in := e2eInitialize + "\n" + e2eInitialized + "\n" +
			fmt.Sprintf(`{"id":2,"method":"thread/start","params":{"cwd":%q}}`, repo) + "\n"
		if _, err := p.stdin.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		var started struct {
			Result struct {
				Thread struct {
					ID string `json:"id"`
				} `json:"thread"`
			} `json:"result"`
		}
		for started.Result.Thread.ID == "" {
			if !sc.Scan() {
				t.Fatalf("output ended before thread/start answered: %v", sc.Err())
			}
			if line := sc.Bytes(); strings.HasPrefix(string(line), `{"id":2,`) {
				if err := json.Unmarshal(line, &started); err != nil || started.Result.Thread.ID == "" {
					t.Fatalf("thread/start: %s", line)
				}
			}
		}
		const n = 8
		var batch strings.Builder
		for i := range n {
			fmt.Fprintf(&batch, `{"id":%d,"method":"thread/diff/read","params":{"threadId":%q}}`+"\n", 10+i, started.Result.Thread.ID)
		}
		// One write, then EOF: the server reads every request before it
		// sees the end of its input.
		if _, err := p.stdin.Write([]byte(batch.String())); err != nil {
			t.Fatal(err)
		}
		if err := p.stdin.Close(); err != nil {
			t.Fatal(err)
		}
		rs := readResponses(t, sc)
		got, want := map[string]string{}, map[string]string{}
		for i := range n {
			id := fmt.Sprint(10 + i)
			got[id], want[id] = outcome(rs, id), "result"
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("diff reads accepted before stdin EOF (-got +want):\n%s", diff)
		}
		if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
			t.Errorf("exit code %d", code)
		}
	})
	t.Run("thread/start written right before EOF", func(t *testing.T) {
		t.Parallel()
		repo := threadsRepo(t)
		p := start(t, "app-server")
		in := e2eInitialize + "\n" + e2eInitialized + "\n" +
			fmt.Sprintf(`{"id":2,"method":"thread/start","params":{"cwd":%q}}`, repo) + "\n"
		if _, err := p.stdin.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
		if err := p.stdin.Close(); err != nil {
			t.Fatal(err)
		}
		rs := readResponses(t, stdoutLines(p))
		if got := outcome(rs, "2"); got != "result" {
			t.Errorf("thread/start accepted before stdin EOF answered %s, want a result", got)
		}
		if code := p.wait(t, rpctest.DefaultTimeout); code != 0 {
			t.Errorf("exit code %d", code)
		}
	})
}
