package threads

import (
	"context"
	"errors"
	"slices"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/threads/session"
)

// SettingsUpdate is what [Manager.UpdateSettings] changes: the model
// (nil: unchanged), the thinking level and the approval mode ("":
// unchanged).
type SettingsUpdate struct {
	Model         *ModelRef
	ThinkingLevel string
	ApprovalMode  string
}

// UpdateSettings changes the settings of the loaded thread id
// (thread/settings/update): it validates every given setting, then persists model_change, thinking_level_change and
// approval_mode entries and applies them (the running turn's approval hook
// sees a new approval mode at its next tool call; model and thinking level
// apply from the next turn). A model change whose model does not accept
// the current thinking level resets it to "off" (persisted too).
//
// Errors: ErrThreadNotFound; invalidParams "model" for a model not in
// model/list, "thinkingLevel" for a level the (new or current) model does
// not accept (without a model only "off"), "approvalMode" for anything but
// ask and fullAccess.
func (m *Manager) UpdateSettings(ctx context.Context, id string, p SettingsUpdate) error {
	t, err := m.lookup(id)
	if err != nil {
		return err
	}
	if p.ApprovalMode != "" && !validApproval(p.ApprovalMode) {
		return invalidApproval(p.ApprovalMode)
	}
	if p.Model != nil {
		_, _, err := m.cfg.Models.LookupFor(t.runner(), p.Model.Provider, p.Model.ID)
		if nl := (*provider.NotLoadedError)(nil); errors.As(err, &nl) {
			return providerNotLoaded(nl)
		}
		if err != nil {
			return unknownModel("model", *p.Model)
		}
	}
	return t.call(ctx, func() error {
		if t.unloading {
			return t.gone()
		}
		st := t.settings
		var entries []session.Entry
		if p.Model != nil {
			st.Provider, st.Model = p.Model.Provider, p.Model.ID
			entries = append(entries, session.NewModelChange(st.Provider, st.Model))
		}
		levels := []agent.ThinkingLevel{agent.ThinkingOff}
		if _, mdl, ok := m.cfg.Models.Lookup(st.Provider, st.Model); ok {
			levels = mdl.ThinkingLevels
		}
		switch {
		case p.ThinkingLevel != "":
			if !slices.Contains(levels, agent.ThinkingLevel(p.ThinkingLevel)) {
				return coreerr.Param("thinkingLevel", "%q is not one of the model's thinking levels %v", p.ThinkingLevel, levels)
			}
			st.Thinking = p.ThinkingLevel
			entries = append(entries, session.NewThinkingLevelChange(st.Thinking))
		case p.Model != nil && !slices.Contains(levels, agent.ThinkingLevel(st.Thinking)):
			st.Thinking = string(agent.ThinkingOff)
			entries = append(entries, session.NewThinkingLevelChange(st.Thinking))
		}
		if p.ApprovalMode != "" {
			st.Approval = p.ApprovalMode
			entries = append(entries, session.NewApprovalMode(st.Approval))
		}
		for _, e := range entries {
			if _, err := t.append(e); err != nil {
				return err
			}
		}
		t.settings = st
		t.approval.Store(st.Approval)
		return nil
	})
}
