package approval

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// neverPrefixes walks the program tables and returns every subcommand path
// that never gets a prefix (R12), as "git config", "docker compose cp".
func neverPrefixes() []string {
	var out []string
	var walk func(path string, t *cmdTable)
	walk = func(path string, t *cmdTable) {
		for name, s := range t.subs {
			if s.never != "" {
				out = append(out, path+" "+name)
			}
			if s.next != nil {
				walk(path+" "+name, s.next)
			}
		}
	}
	for prog, t := range programs[ShellBash] {
		walk(prog, t)
	}
	sort.Strings(out)
	return out
}

// TestREADMEListsNeverPrefixes keeps the README's list of the commands a
// prefix grant never covers (the issue asked for it to say which programs
// can be granted and which never) true to the tables: each one is named
// there, and each derives nothing whatever follows it.
func TestREADMEListsNeverPrefixes(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const heading = "#### Which commands a prefix grant can cover"
	_, section, ok := strings.Cut(string(data), heading)
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	never := neverPrefixes()
	if len(never) < 18 {
		t.Fatalf("only %d never-prefix commands in the tables: %v", len(never), never)
	}
	for _, cmd := range never {
		if !strings.Contains(section, "`"+cmd+"`") {
			t.Errorf("README.md's %q section does not name `%s`", heading, cmd)
		}
		for _, tail := range []string{"", " --help", " x y"} {
			if p, ok := Derive(ShellBash, cmd+tail); ok {
				t.Errorf("%q derived %q", cmd+tail, p)
			}
		}
	}
}
