package coreerr

import (
	"errors"
	"fmt"
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
