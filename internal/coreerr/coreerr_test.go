package coreerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorsWrapAndRead(t *testing.T) {
	var err error = fmt.Errorf("revert: %w", Conflict(ReasonDiffChanged, []string{"a.txt"}, "read the diff again"))
	ce, ok := errors.AsType[*ConflictError](err)
	if !ok || ce.Reason != ReasonDiffChanged || len(ce.Paths) != 1 {
		t.Fatalf("AsType = %+v, %v", ce, ok)
	}
	if got, want := ce.Error(), "conflict (diffChanged): a.txt: read the diff again"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	pe := Param("hunkId", "must not be empty")
	if got, want := pe.Error(), "invalid hunkId: must not be empty"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
