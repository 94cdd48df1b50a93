package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
)

// TestE2EStrictDestructiveParams sends the destructive methods misspelled
// members and empty or null path, hunkId and turnId over the binary: each is
// invalidParams naming the member, and none of them changes the working
// tree, the index or an untracked file (issue 8 item 6: "hunk_id" once
// reverted the whole file; issue 15: "" or null once widened a revert to the
// whole scope).
func TestE2EStrictDestructiveParams(t *testing.T) {
	t.Parallel()
	repo := diffRepo(t)
	edited := replaceLines(map[int]string{2: "LINE 2", 15: "LINE 15"})
	writeFile(t, repo, "a.txt", edited)
	writeFile(t, repo, "b.txt", "B staged\n")
	fixtureGit(t, repo, "add", "b.txt")
	writeFile(t, repo, "n.txt", "untracked work\n")
	s := startDiffServer(t, nil)
	thread := s.startThread(t, repo, "")
	hunk := fileOf(t, s.readDiff(t, protocol.ThreadDiffReadParams{ThreadID: thread}), "a.txt").Hunks[0].ID

	statusBefore := fixtureGit(t, repo, "status", "--porcelain", "--untracked-files=all")
	indexBefore := readIndex(t, repo)

	invalid := func(field string) wireErr { return wireErr{Code: protocol.CodeInvalidParams, Field: field} }
	revert, stage, unstage := protocol.ThreadDiffRevert.Name, protocol.GitStage.Name, protocol.GitUnstage.Name
	tests := []struct {
		method string
		params string // with THREAD for the thread id, HUNK for a valid hunk id
		want   wireErr
	}{
		{revert, `{"threadId":THREAD,"hunk_id":HUNK}`, invalid("hunk_id")},
		{revert, `{"threadId":THREAD,"path":"a.txt","hunk_id":HUNK}`, invalid("hunk_id")},
		{revert, `{"threadId":THREAD,"Path":"a.txt"}`, invalid("Path")},
		{revert, `{"threadId":THREAD,"scope":"uncommitted","paths":["a.txt"]}`, invalid("paths")},
		{revert, `{"threadId":THREAD,"path":""}`, invalid("path")},
		{revert, `{"threadId":THREAD,"path":null}`, invalid("path")},
		{revert, `{"threadId":THREAD,"hunkId":""}`, invalid("hunkId")},
		{revert, `{"threadId":THREAD,"hunkId":null}`, invalid("hunkId")},
		{revert, `{"threadId":THREAD,"path":"a.txt","hunkId":""}`, invalid("hunkId")},
		{revert, `{"threadId":THREAD,"scope":"lastTurn","turnId":""}`, invalid("turnId")},
		{revert, `{"threadId":THREAD,"scope":"lastTurn","turnId":null}`, invalid("turnId")},
		{stage, `{"threadId":THREAD,"hunk_id":HUNK}`, invalid("hunk_id")},
		{stage, `{"threadId":THREAD,"path":""}`, invalid("path")},
		{stage, `{"threadId":THREAD,"path":null}`, invalid("path")},
		{stage, `{"threadId":THREAD,"hunkId":""}`, invalid("hunkId")},
		{unstage, `{"threadId":THREAD,"file":"b.txt"}`, invalid("file")},
		{unstage, `{"threadId":THREAD,"path":""}`, invalid("path")},
		{unstage, `{"threadId":THREAD,"hunkId":null}`, invalid("hunkId")},
	}
	for _, tt := range tests {
		params := json.RawMessage(replaceAll(tt.params, map[string]string{"THREAD": mustJSON(thread), "HUNK": mustJSON(hunk)}))
		s.wantErr(t, tt.method, params, tt.want)
	}
	// The index first: git status may refresh it (its stat data of files
	// written within the index's second) and so rewrite it itself.
	if !readIndex(t, repo).same(indexBefore) {
		t.Errorf("the index changed")
	}
	if got := fixtureGit(t, repo, "status", "--porcelain", "--untracked-files=all"); got != statusBefore {
		t.Errorf("status changed by refused requests:\n%s\nwant:\n%s", got, statusBefore)
	}
	if got := readFile(t, repo, "a.txt"); got != edited {
		t.Errorf("a.txt changed:\n%s", got)
	}
	if got := readFile(t, repo, "n.txt"); got != "untracked work\n" {
		t.Errorf("n.txt changed: %q", got)
	}
}

// replaceAll replaces each key of repl in s by its value.
func replaceAll(s string, repl map[string]string) string {
	for k, v := range repl {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// misspell returns a wrong spelling of the JSON member name that a lenient
// decoder would still take: the snake_case form of a camelCase name
// ("hunkId" -> "hunk_id"), else the name capitalized ("path" -> "Path",
// which encoding/json matches case-insensitively).
func misspell(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	if s := b.String(); s != name {
		return s
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// jsonMembers lists the JSON member names of struct type t with a zero
// value of each, embedded structs flattened.
func jsonMembers(t reflect.Type) map[string]json.RawMessage {
	members := map[string]json.RawMessage{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonMembers(f.Type) {
				members[k] = v
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		zero, err := json.Marshal(reflect.Zero(f.Type).Interface())
		if err != nil {
			panic(err)
		}
		members[name] = zero
	}
	return members
}
