package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
)

// helperEnv makes the test binary act as a second process that opens a
// session file (see TestMain).
const (
	helperEnv     = "KNIGHTCODE_SESSION_TEST_HELPER"
	helperFileEnv = "KNIGHTCODE_SESSION_TEST_FILE"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "hold":
		os.Exit(helperHold(os.Getenv(helperFileEnv)))
	case "try":
		os.Exit(helperTry(os.Getenv(helperFileEnv)))
	}
	os.Exit(m.Run())
}

// helperHold opens the file, prints "owned", holds it until stdin closes,
// then appends one entry and exits.
func helperHold(path string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Printf("error %v\n", err)
		return 1
	}
	fmt.Println("owned")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if _, err := s.Append(NewSessionInfo("from the helper")); err != nil {
		fmt.Printf("error %v\n", err)
		return 1
	}
	if err := s.Close(); err != nil {
		return 1
	}
	return 0
}

// helperTry tries to open the file once and prints the outcome.
func helperTry(path string) int {
	s, err := Open(path)
	switch {
	case err == nil:
		s.Close()
		fmt.Println("owned")
	case errors.Is(err, ErrLockedElsewhere):
		fmt.Println("lockedElsewhere")
	default:
		fmt.Printf("error %v\n", err)
	}
	return 0
}

// helper starts the test binary as a second process in mode on path.
func helper(t *testing.T, mode, path string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, EnvAgentDir+"="+filepath.Join(home, "agent"),
		helperEnv+"="+mode, helperFileEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, bufio.NewReader(stdout)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("helper output: %q, %v", line, err)
	}
	return strings.TrimSpace(line)
}

// tryOther reports what a second process gets when it opens path.
func tryOther(t *testing.T, path string) string {
	t.Helper()
	cmd, stdin, out := helper(t, "try", path)
	stdin.Close()
	got := readLine(t, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	return got
}

// tryLockOther reports whether a fresh lock on path can be taken (a second
// open file description, which conflicts with the owner's flock).
func tryLockOther(t *testing.T, path string) bool {
	t.Helper()
	fl := flock.New(lockPath(path), flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		fl.Unlock()
	}
	return ok
}

func TestLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newSaved(t, dir, userMsg(t, "hi", 1))
	file := s.File()
	alias := filepath.Join(t.TempDir(), "alias.jsonl")
	if err := os.Symlink(file, alias); err != nil {
		t.Fatal(err)
	}

	// This process owns it: another process is refused, by path or alias.
	if got := tryOther(t, file); got != "lockedElsewhere" {
		t.Errorf("second process while owned: %q, want lockedElsewhere", got)
	}
	if got := tryOther(t, alias); got != "lockedElsewhere" {
		t.Errorf("second process through a symlink while owned: %q, want lockedElsewhere", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The other process owns it: this one is refused with a typed error.
	cmd, stdin, out := helper(t, "hold", alias)
	if got := readLine(t, out); got != "owned" {
		t.Fatalf("helper: %q, want owned", got)
	}
	_, err := Open(file)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLockedElsewhere) {
		t.Errorf("Open while another process owns it = %v, want *LockedError", err)
	}
	if _, err := Read(file); err != nil {
		t.Errorf("Read while another process owns it: %v (reading needs no ownership)", err)
	}
	stdin.Close()
	if got, _ := io.ReadAll(out); len(got) != 0 {
		t.Errorf("helper said %q", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}

	// Released: this process can own it again and sees the helper's entry.
	s2, err := Open(file)
	if err != nil {
		t.Fatalf("Open after the other process exited: %v", err)
	}
	defer s2.Close()
	if got := s2.Transcript().Title(); got != "from the helper" {
		t.Errorf("title = %q, want the helper's entry", got)
	}
}

func TestSymlinkAliasesShareOneOwner(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "hi", 1))
	file := s.File()
	alias := filepath.Join(t.TempDir(), "alias.jsonl")
	if err := os.Symlink(file, alias); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, alias} {
		_, err := Open(p)
		var le *LoadedError
		if !errors.As(err, &le) || le.Owner != s {
			t.Errorf("Open(%s) = %v, want *LoadedError naming the owner", p, err)
		}
		if got, ok := Lookup(p); !ok || got != s {
			t.Errorf("Lookup(%s) = %p, %v, want the owner", p, got, ok)
		}
	}
	s.Close()
	if _, ok := Lookup(alias); ok {
		t.Errorf("Lookup after Close found an owner")
	}
	s2, err := Open(alias)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, want := s2.File(), file; got != want {
		t.Errorf("File() opened through an alias = %q, want the resolved %q", got, want)
	}
}

func TestHardLinkedTranscriptIsRefused(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "hi", 1))
	file := s.File()
	s.Close()
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Link(file, link); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	for _, p := range []string{file, link} {
		_, err := Open(p)
		var he *HardLinkError
		if !errors.As(err, &he) || he.Links != 2 || !errors.Is(err, ErrHardLinked) {
			t.Errorf("Open(%s) = %v, want *HardLinkError with 2 links", p, err)
		}
		if !tryLockOther(t, p) {
			t.Errorf("a refused Open kept the lock on %s", p)
		}
	}
	if _, err := Read(link); err != nil {
		t.Errorf("Read of a hard-linked file: %v (reading owns nothing)", err)
	}
}

func TestAppendAfterOwnershipLossFails(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir(), userMsg(t, "hi", 1))
	file := s.File()
	replacement := file + ".new"
	if err := os.WriteFile(replacement, []byte(`{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(replacement, file); err != nil {
		t.Fatal(err)
	}
	_, err := s.Append(userMsg(t, "lost", 2))
	wantErr(t, err, ErrOwnershipLost)
	if raw, _ := os.ReadFile(file); strings.Contains(string(raw), "lost") {
		t.Errorf("the entry was written into the replacement file")
	}
	s.Close()
	_, err = s.Append(userMsg(t, "closed", 3))
	wantErr(t, err, ErrClosed)
}

func TestSetLeafForksAndValidates(t *testing.T) {
	t.Parallel()
	s := newSaved(t, t.TempDir())
	es := mustAppend(t, s, userMsg(t, "a", 1), assistantMsg(t, "b", 2))
	wantErr(t, s.SetLeaf("nope"), ErrUnknownEntry)
	if err := s.SetLeaf(es[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := s.Transcript().Branch(); !cmpIDs(got, es[0].ID) {
		t.Errorf("branch after SetLeaf = %v", ids(got))
	}
	forked := mustAppend(t, s, assistantMsg(t, "c", 3))[0]
	if forked.ParentID != es[0].ID {
		t.Errorf("forked parentId = %q, want %q", forked.ParentID, es[0].ID)
	}
	if err := s.SetLeaf(""); err != nil {
		t.Fatal(err)
	}
	if got := s.Transcript().Branch(); len(got) != 0 {
		t.Errorf("branch with an empty leaf = %v, want none", ids(got))
	}
}

func cmpIDs(es []Entry, want ...string) bool {
	got := ids(es)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
