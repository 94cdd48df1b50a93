package extensions

import (
	"context"
	"testing"

	"github.com/knightcode/knightcode/threads/ext"
)

func TestSmoke(t *testing.T) {
	r, _, w, _ := loadRunner(t, 0, t.TempDir(), fixture(t, "input.ts"), fixture(t, "throws.ts"), fixture(t, "syntax.ts"), fixture(t, "spawns.ts"))
	t.Logf("warnings %+v", w)
	res := r.Input(context.Background(), ext.InputEvent{Text: "please go", Source: "interactive"})
	t.Logf("res %+v", res)
}
