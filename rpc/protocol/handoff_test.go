package protocol

import (
	"errors"
	"testing"
)

// ThreadHandoffParams.Validate: branch with to "worktree" and environment
// with to "local" are invalidParams naming the field (issue 9's
// decisions), as are an empty threadId, an unknown direction and an empty
// branch or environment; the valid combinations pass.
func TestThreadHandoffParamsValidate(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	tests := []struct {
		name  string
		p     ThreadHandoffParams
		field string // "" valid
	}{
		{"to local", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal}, ""},
		{"to local with a branch", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal, Branch: s("feature")}, ""},
		{"to worktree", ThreadHandoffParams{ThreadID: "t", To: HandoffToWorktree}, ""},
		{"to worktree with an environment", ThreadHandoffParams{ThreadID: "t", To: HandoffToWorktree, Environment: s("dev")}, ""},
		{"dry run", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal, DryRun: true}, ""},
		{"environment with to local", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal, Environment: s("dev")}, "environment"},
		{"environment with to local and a branch", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal, Branch: s("b"), Environment: s("dev")}, "environment"},
		{"branch with to worktree", ThreadHandoffParams{ThreadID: "t", To: HandoffToWorktree, Branch: s("feature")}, "branch"},
		{"branch with to worktree and an environment", ThreadHandoffParams{ThreadID: "t", To: HandoffToWorktree, Branch: s("b"), Environment: s("dev")}, "branch"},
		{"empty branch", ThreadHandoffParams{ThreadID: "t", To: HandoffToLocal, Branch: s("")}, "branch"},
		{"empty environment", ThreadHandoffParams{ThreadID: "t", To: HandoffToWorktree, Environment: s("")}, "environment"},
		{"no thread", ThreadHandoffParams{To: HandoffToLocal}, "threadId"},
		{"no direction", ThreadHandoffParams{ThreadID: "t"}, "to"},
		{"unknown direction", ThreadHandoffParams{ThreadID: "t", To: "remote"}, "to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate = %v, want an invalidParams *Error", err)
			}
			d, ok := e.Data.(InvalidParamsData)
			if e.Code != CodeInvalidParams || !ok || d.Field != tt.field {
				t.Errorf("Validate = %+v (data %#v), want invalidParams naming %q", e, e.Data, tt.field)
			}
		})
	}
}
