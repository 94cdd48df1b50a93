package plugins

// builtinMarketplace is a marketplace known by name without being added.
type builtinMarketplace struct {
	Name   string
	Source string // canonical
}

// builtinMarketplaces are the marketplaces every server knows by name
// (EXTENSIBILITY.md §5 "Known names"): Anthropic's official catalog.
// xAI's (xai-org/plugin-marketplace) is not listed: its catalog's name
// could not be confirmed, and a known name must be the catalog's.
var builtinMarketplaces = []builtinMarketplace{
	{Name: "claude-plugins-official", Source: "github:anthropics/claude-plugins-official"},
}
