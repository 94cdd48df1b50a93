package rpc

import (
	"context"
	"testing"

	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// TestThreadListLimit checks thread/list's limit rule: when given it is 1
// to threads.MaxListLimit (0 included: an empty page is never what a
// caller means), refused before the thread manager is asked.
func TestThreadListLimit(t *testing.T) {
	for _, limit := range []int{0, -1, threads.MaxListLimit + 1} {
		_, err := Core{}.threadList(context.Background(), nil, protocol.ThreadListParams{Limit: &limit})
		if got := invalidField(err); got != "limit" {
			t.Errorf("limit %d: %v, want invalidParams limit", limit, err)
		}
	}
}
