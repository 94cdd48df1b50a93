package plugins

// builtinMarketplace is a marketplace known by name without being added.
type builtinMarketplace struct {
	Name   string
	Source string // canonical
}

// builtinMarketplaces are the marketplaces every server knows by name
// (EXTENSIBILITY.md §5 "Known names"), each named as its catalog names
// itself: Anthropic's official catalog, and xAI's, whose
// .grok-plugin/marketplace.json calls itself "xai-official".
var builtinMarketplaces = []builtinMarketplace{
	{Name: "claude-plugins-official", Source: "github:anthropics/claude-plugins-official"},
	{Name: "xai-official", Source: "github:xai-org/plugin-marketplace"},
}
