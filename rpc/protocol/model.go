package protocol

// ModelListParams are the (empty) params of model/list.
type ModelListParams struct{}

// ModelInfo is one model of model/list: its provider and id (what
// thread/settings/update takes), a display name, the thinking levels the
// model accepts (["off"] for a non-reasoning model) and its context window
// in tokens (absent when unknown). A real provider's model (the built-in
// OpenAI and Anthropic catalogues and models.json providers) also has its
// reasoning flag, its inputs ("text", "image"), its maximum output in tokens
// and its prices; the scripted models have none of these.
type ModelInfo struct {
	Provider       string      `json:"provider"`
	ID             string      `json:"id"`
	Name           string      `json:"name"`
	ThinkingLevels []string    `json:"thinkingLevels"`
	ContextWindow  int         `json:"contextWindow,omitempty"`
	Reasoning      bool        `json:"reasoning,omitempty"`
	Input          []string    `json:"input,omitempty"`
	MaxTokens      int         `json:"maxTokens,omitempty"`
	Cost           *ModelPrice `json:"cost,omitempty"`
	// Available is false (and only then present) for a model of a provider
	// an extension registered that no loaded thread registers any more
	// (EXTENSIBILITY.md §7 "Extension providers in model/list").
	Available *bool `json:"available,omitempty"`
}

// ModelPrice is a model's price in US dollars per million tokens: input,
// output, cache reads and cache writes (TokenUsage.cost is summed from it).
type ModelPrice struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// ModelListResult is the result of model/list: every model of every
// configured provider.
type ModelListResult struct {
	Models []ModelInfo `json:"models"`
}
