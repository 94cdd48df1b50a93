package threads

import (
	"context"

	"github.com/knightcode/knightcode/threads/session"
)

// TurnTrees are the trees a finished turn's end entry names: the working
// tree (Before, After) and the index (BeforeIndex, AfterIndex, empty in
// session files written before they were recorded) captured before and
// after the turn, all pinned under PinRefPrefix.
type TurnTrees struct {
	TurnID                  string
	Before, After           string
	BeforeIndex, AfterIndex string
}

// LastTurn returns the last finished turn of the loaded thread threadID on
// its current branch with the trees captured before and after it (the
// lastTurn diff scope). ok is false when the thread is not loaded, has no
// finished turn, or its last finished turn has no trees (it ran outside a
// git work tree or a capture failed). A running turn is not finished: the
// one before it is the last turn.
func (m *Manager) LastTurn(threadID string) (trees TurnTrees, ok bool) {
	t, err := m.lookup(threadID)
	if err != nil {
		return TurnTrees{}, false
	}
	_ = t.call(context.Background(), func() error {
		branch := t.sess.Transcript().Branch()
		for i := len(branch) - 1; i >= 0; i-- {
			e := branch[i]
			if e.Type != session.TypeTurnEnd {
				continue
			}
			if e.BeforeTree != "" && e.AfterTree != "" {
				trees = TurnTrees{TurnID: e.TurnID, Before: e.BeforeTree, After: e.AfterTree,
					BeforeIndex: e.BeforeIndexTree, AfterIndex: e.AfterIndexTree}
				ok = true
			}
			return nil
		}
		return nil
	})
	return trees, ok
}
