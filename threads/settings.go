package threads

import (
	"context"
	"slices"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/provider/catalog"
	"github.com/knightcode/knightcode/internal/coreerr"
	"github.com/knightcode/knightcode/rpc/protocol"
	"github.com/knightcode/knightcode/threads/session"
)

// Models answers model/list: every model of every configured provider, with
// its thinking levels (["off"] for a non-reasoning model), and for a real
// provider's model its catalogue limits and prices.
func (m *Manager) Models() protocol.ModelListResult {
	res := protocol.ModelListResult{Models: []protocol.ModelInfo{}}
	for _, mdl := range m.cfg.Models.List() {
		levels := make([]string, len(mdl.ThinkingLevels))
		for i, l := range mdl.ThinkingLevels {
			levels[i] = string(l)
		}
		info := protocol.ModelInfo{
			Provider: mdl.Provider, ID: mdl.ID, Name: mdl.Name,
			ThinkingLevels: levels, ContextWindow: mdl.ContextWindow,
		}
		if c, ok := m.cfg.Models.ModelInfo(mdl.Provider, mdl.ID); ok {
			info.Reasoning, info.Input, info.MaxTokens = c.Reasoning, c.Input, c.MaxTokens
			if c.Cost != (catalog.Price{}) {
				info.Cost = &protocol.ModelPrice{Input: c.Cost.Input, Output: c.Cost.Output, CacheRead: c.Cost.CacheRead, CacheWrite: c.Cost.CacheWrite}
			}
		}
		res.Models = append(res.Models, info)
	}
	return res
}

// UpdateSettings answers thread/settings/update: it validates every given
// setting, then persists model_change, thinking_level_change and
// approval_mode entries and applies them (the running turn's approval hook
// sees a new approval mode at its next tool call; model and thinking level
// apply from the next turn). A model change whose model does not accept
// the current thinking level resets it to "off" (persisted too).
//
// Errors: ErrThreadNotFound; invalidParams "model" for a model not in
// model/list, "thinkingLevel" for a level the (new or current) model does
// not accept (without a model only "off"), "approvalMode" for anything but
// ask and fullAccess.
func (m *Manager) UpdateSettings(ctx context.Context, p protocol.ThreadSettingsUpdateParams) (protocol.ThreadSettingsUpdateResult, error) {
	t, err := m.lookup(p.ThreadID)
	if err != nil {
		return protocol.ThreadSettingsUpdateResult{}, err
	}
	if p.ApprovalMode != "" && !validApproval(p.ApprovalMode) {
		return protocol.ThreadSettingsUpdateResult{}, invalidApproval(p.ApprovalMode)
	}
	if p.Model != nil {
		if _, _, ok := m.cfg.Models.Lookup(p.Model.Provider, p.Model.ID); !ok {
			return protocol.ThreadSettingsUpdateResult{}, unknownModel("model", *p.Model)
		}
	}
	err = t.call(ctx, func() error {
		if t.unloading {
			return t.m.goneErr(t.id)
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
	return protocol.ThreadSettingsUpdateResult{}, err
}

// Providers returns the process's provider registry (the one Config.Models
// gave): account/* read and change its credentials.
func (m *Manager) Providers() *provider.Registry { return m.cfg.Models }
