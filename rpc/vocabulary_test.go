package rpc

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads"
)

// TestWireVocabulary keeps the wire's enumerations (protocol.Enums, what
// the schema and the TypeScript declarations list) equal to the values the
// core packages send: conflict and parameter reasons (coreerr, threads'
// noModel and payload/read's), and the agent's thinking levels.
func TestWireVocabulary(t *testing.T) {
	t.Parallel()
	enum := func(name string) []string {
		for _, e := range protocol.Enums() {
			if e.Name == name {
				return e.Values
			}
		}
		t.Fatalf("no enum %s", name)
		return nil
	}
	if diff := cmp.Diff(enum("GitConflictReason"), coreerr.ConflictReasons); diff != "" {
		t.Errorf("GitConflictReason (-wire +coreerr):\n%s", diff)
	}
	params := slices.Concat(coreerr.ParamReasons, []string{threads.ReasonNoModel, threads.ReasonProviderNotLoaded, protocol.PayloadUnknown, protocol.PayloadExpired})
	if diff := cmp.Diff(enum("InvalidParamsReason"), params); diff != "" {
		t.Errorf("InvalidParamsReason (-wire +core):\n%s", diff)
	}
	var levels []string
	for _, l := range append(agent.ThinkingLevels(true), agent.ThinkingXHigh) {
		levels = append(levels, string(l))
	}
	if diff := cmp.Diff(enum("ThinkingLevel"), levels); diff != "" {
		t.Errorf("ThinkingLevel (-wire +agent):\n%s", diff)
	}
}
