package coreerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorsWrapAndRead(t *testing.T) {
	var err error = fmt.Errorf("revert: %w", Conflict(ReasonDiffChanged, []string{"a.txt"}, "hunk gone"))
	ce, ok := errors.AsType[*ConflictError](err)
	if !ok || ce.Reason != ReasonDiffChanged || len(ce.Paths) != 1 {
		t.Fatalf("AsType = %+v, %v", ce, ok)
	}
	if got, want := ce.Error(), "conflict (diffChanged): a.txt: hunk gone: the diff changed since it was read; read the diff again (thread/diff/read) for current hunk ids"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	pe := Param("hunkId", "must not be empty")
	if got, want := pe.Error(), "invalid hunkId: must not be empty"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// A conflict's message names at most MessagePaths paths and counts the
// rest; Paths keeps them all.
func TestConflictMessageBounded(t *testing.T) {
	var paths []string
	for i := range MessagePaths + 5 {
		paths = append(paths, fmt.Sprintf("f%02d", i))
	}
	ce := Conflict(ReasonLocalChanges, paths, "move them")
	want := "conflict (localChanges): f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19 and 5 more: move them"
	if got := ce.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if len(ce.Paths) != MessagePaths+5 {
		t.Errorf("Paths = %d, want %d", len(ce.Paths), MessagePaths+5)
	}
	ce.Paths = paths[:MessagePaths]
	if got := ce.Error(); strings.Contains(got, "more") || !strings.Contains(got, "f19: move them") {
		t.Errorf("Error() = %q, want every path", got)
	}
}
