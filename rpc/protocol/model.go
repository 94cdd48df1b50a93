package protocol

// ModelListParams are the (empty) params of model/list.
type ModelListParams struct{}

// ModelInfo is one model of model/list: its provider and id (what
// thread/settings/update takes), a display name, the thinking levels the
// model accepts (["off"] for a non-reasoning model) and its context window
// in tokens (absent when unknown).
type ModelInfo struct {
	Provider       string   `json:"provider"`
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	ThinkingLevels []string `json:"thinkingLevels"`
	ContextWindow  int      `json:"contextWindow,omitempty"`
}

// ModelListResult is the result of model/list: every model of every
// configured provider.
type ModelListResult struct {
	Models []ModelInfo `json:"models"`
}
