package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/gitcli"
)

// benchManager is a manager over a new agent directory holding what a
// user with a few plugins has: n installed (from local folders, trusted,
// each with a skill, a command and an MCP server), one added folder
// marketplace listing n plugins, and one added marketplace whose remote is
// never fetched (a closed port: a list that reached for it would fail or
// hang, not answer).
func benchManager(b *testing.B, n int) *Manager {
	b.Helper()
	ctx := context.Background()
	root := b.TempDir()
	agentDir := filepath.Join(root, "agent")
	git, err := gitcli.New()
	if err != nil {
		b.Fatal(err)
	}
	m := New(config.NewStore(agentDir, config.NewTrustStore(agentDir, nil)), git, filepath.Join(root, "home"))
	write := func(dir, name, body string) {
		b.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	market := filepath.Join(root, "market")
	catalog := `{"name":"acme","owner":{"name":"Acme"},"plugins":[`
	for i := range n {
		name := fmt.Sprintf("tool-%d", i)
		dir := filepath.Join(root, name)
		write(dir, ".claude-plugin/plugin.json", `{"name":"`+name+`","version":"1.0.0"}`)
		write(dir, "skills/review/SKILL.md", "---\nname: review\ndescription: Review.\n---\nReview.\n")
		write(dir, "commands/check.md", "Check.\n")
		write(dir, ".mcp.json", `{"mcpServers":{"lint":{"command":"lint","args":["${TOKEN}"]}}}`)
		if _, err := m.Install(ctx, InstallRequest{Scope: config.ScopeGlobal, Source: dir, Trust: true}); err != nil {
			b.Fatal(err)
		}
		write(market, "plugins/"+name+"/commands/x.md", "X.\n")
		if i > 0 {
			catalog += ","
		}
		catalog += `{"name":"` + name + `","source":"./plugins/` + name + `","version":"1.0.0"}`
	}
	write(market, ".claude-plugin/marketplace.json", catalog+"]}")
	if _, _, err := m.MarketplaceAdd(ctx, config.ScopeGlobal, "", market, ""); err != nil {
		b.Fatal(err)
	}
	if err := m.addEntry(ctx, config.ScopeGlobal, "", marketEntry{Name: "far", Source: "git:http://127.0.0.1:1/far.git"}); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkMarketplaceList is plugin/marketplace/list from local state
// (EXTENSIBILITY.md §5 test 7: the goal is an answer in < 100 ms): the two
// built-in marketplaces (never fetched), a folder marketplace of 20
// plugins and one whose remote is unreachable.
func BenchmarkMarketplaceList(b *testing.B) {
	m := benchManager(b, 20)
	ctx := context.Background()
	for b.Loop() {
		rows, err := m.MarketplaceList(ctx, "")
		if err != nil || len(rows) != 4 {
			b.Fatalf("%d rows: %v", len(rows), err)
		}
	}
}

// BenchmarkPluginList is plugin/list from local state: 20 installed,
// trusted plugins, each read from its cache folder.
func BenchmarkPluginList(b *testing.B) {
	m := benchManager(b, 20)
	ctx := context.Background()
	for b.Loop() {
		l, err := m.List(ctx, "")
		if err != nil || len(l.Plugins) != 20 {
			b.Fatalf("%+v: %v", l, err)
		}
	}
}
