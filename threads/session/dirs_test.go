package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/knightcode/knightcode/rpc/protocol"
)

func TestResolveDirsPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flag     string
		env      string
		settings string // contents of <agentDir>/settings.json; "" = no file
		// ROOT, HOME and AGENT at the start of a path stand for temp directories
		wantOverride string
		wantSource   string
		wantWarning  *protocol.Warning
	}{
		{name: "flag wins", flag: "ROOT/flag", env: "ROOT/env", settings: `{"sessionDir":"ROOT/settings"}`,
			wantOverride: "ROOT/flag", wantSource: SourceFlag},
		{name: "env next", env: "ROOT/env", settings: `{"sessionDir":"ROOT/settings"}`,
			wantOverride: "ROOT/env", wantSource: SourceEnv},
		{name: "settings next", settings: `{"theme":"dark","sessionDir":"ROOT/settings"}`,
			wantOverride: "ROOT/settings", wantSource: SourceSettings},
		{name: "settings tilde", settings: `{"sessionDir":"~/my-sessions"}`,
			wantOverride: "HOME/my-sessions", wantSource: SourceSettings},
		{name: "per-project layout", settings: `{"theme":"dark"}`, wantSource: SourceProject},
		{name: "no settings file", wantSource: SourceProject},
		{name: "malformed settings", settings: "{\n  \"sessionDir\": \"ROOT/x\",\n  oops\n}",
			wantSource:  SourceProject,
			wantWarning: &protocol.Warning{Source: "settings", Path: "AGENT/settings.json", Line: 3, Column: 3}},
		{name: "not an object", settings: `["sessionDir"]`, wantSource: SourceProject,
			wantWarning: &protocol.Warning{Source: "settings", Path: "AGENT/settings.json", Line: 1, Column: 1}},
		{name: "sessionDir not a string", settings: `{"sessionDir":42}`, wantSource: SourceProject,
			wantWarning: &protocol.Warning{Source: "settings", Path: "AGENT/settings.json"}},
		{name: "malformed settings do not hide the env", env: "ROOT/env", settings: `{`,
			wantOverride: "ROOT/env", wantSource: SourceEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := isolate(t)
			root := t.TempDir()
			home := os.Getenv("HOME")
			expand := func(s string) string {
				for prefix, dir := range map[string]string{"ROOT": root, "HOME": home, "AGENT": agent} {
					if rest, ok := strings.CutPrefix(s, prefix); ok {
						return dir + rest
					}
				}
				return s
			}
			if tc.env != "" {
				t.Setenv(EnvSessionDir, expand(tc.env))
			}
			if tc.settings != "" {
				os.MkdirAll(agent, 0o700)
				text := strings.ReplaceAll(tc.settings, "ROOT", root)
				if err := os.WriteFile(filepath.Join(agent, "settings.json"), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d, warnings, err := ResolveDirs(expand(tc.flag))
			if err != nil {
				t.Fatal(err)
			}
			want := Dirs{AgentDir: agent, Override: expand(tc.wantOverride), Source: tc.wantSource}
			if diff := cmp.Diff(d, want); diff != "" {
				t.Errorf("dirs (-got +want):\n%s", diff)
			}
			var wantWarnings []protocol.Warning
			if tc.wantWarning != nil {
				w := *tc.wantWarning
				w.Path = expand(w.Path)
				wantWarnings = []protocol.Warning{w}
			}
			for i := range warnings {
				if warnings[i].Message == "" {
					t.Errorf("warning without a message: %+v", warnings[i])
				}
				warnings[i].Message = ""
			}
			if diff := cmp.Diff(warnings, wantWarnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			if d.Override != "" {
				if got := d.ForCwd("/any/project"); got != d.Override {
					t.Errorf("ForCwd with an override = %q, want the shared %q", got, d.Override)
				}
			}
		})
	}
}

func TestAgentDir(t *testing.T) {
	isolate(t)
	home := os.Getenv("HOME")
	work := t.TempDir()
	t.Chdir(work)
	tests := []struct{ name, env, want string }{
		{"default", "", filepath.Join(home, ".knightcode", "agent")},
		{"absolute", "/srv/agent/", "/srv/agent"},
		{"tilde", "~/agents/k", filepath.Join(home, "agents", "k")},
		{"tildeAlone", "~", home},
		{"relative", "rel/dir", filepath.Join(work, "rel", "dir")},
	}
	for _, tc := range tests {
		t.Setenv(EnvAgentDir, tc.env)
		got, err := AgentDir()
		if err != nil {
			t.Fatalf("%s: AgentDir: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: AgentDir() with %s=%q = %q, want %q", tc.name, EnvAgentDir, tc.env, got, tc.want)
		}
	}
}

func TestProjectLayout(t *testing.T) {
	agent := isolate(t)
	d, _, err := ResolveDirs("")
	if err != nil {
		t.Fatal(err)
	}
	for cwd, want := range map[string]string{
		"/home/u/project":   "--home-u-project--",
		"/":                 "----",
		`C:\Users\u\proj`:   "--C--Users-u-proj--",
		"/srv/a:b/my-thing": "--srv-a-b-my-thing--",
	} {
		if got := ProjectDirName(cwd); got != want {
			t.Errorf("ProjectDirName(%q) = %q, want %q", cwd, got, want)
		}
	}
	if got, want := d.ForCwd("/home/u/project"), filepath.Join(agent, "sessions", "--home-u-project--"); got != want {
		t.Errorf("ForCwd = %q, want %q", got, want)
	}
	roots, err := d.Roots()
	if err != nil || len(roots) != 0 {
		t.Errorf("Roots() without sessions = %v, %v", roots, err)
	}
	for _, p := range []string{"/b", "/a"} {
		os.MkdirAll(d.ForCwd(p), 0o700)
	}
	roots, _ = d.Roots()
	want := []string{filepath.Join(agent, "sessions", "--a--"), filepath.Join(agent, "sessions", "--b--")}
	if diff := cmp.Diff(roots, want); diff != "" {
		t.Errorf("Roots() (-got +want):\n%s", diff)
	}
}

// TestProjectDirNameLongCwd saves a session of a project whose path is 400
// bytes long (issue 15: the folder name went over the file system's 255-byte
// limit and every save failed): the name keeps its readable start, fits
// MaxNameBytes, is stable, and differs for cwds that differ only at the end.
func TestProjectDirNameLongCwd(t *testing.T) {
	agent := isolate(t)
	d, _, err := ResolveDirs("")
	if err != nil {
		t.Fatal(err)
	}
	long := "/home/u/" + strings.Repeat("deep-folder/", 32) // 392 bytes
	long += strings.Repeat("x", 400-len(long))
	accented := "/home/u/" + strings.Repeat("é", 200) // a cut inside a 2-byte rune
	for _, cwd := range []string{long, accented} {
		name := ProjectDirName(cwd)
		if len(name) > MaxNameBytes || len(name) < MaxNameBytes-3 || !utf8.ValidString(name) {
			t.Errorf("ProjectDirName(%d-byte cwd) = %q (%d bytes), want valid UTF-8 of at most %d bytes", len(cwd), name, len(name), MaxNameBytes)
		}
		if !strings.HasPrefix(name, "--home-u-") || !strings.HasSuffix(name, "--") {
			t.Errorf("ProjectDirName(%d-byte cwd) = %q, want the readable layout --home-u-...--", len(cwd), name)
		}
		if again := ProjectDirName(cwd); again != name {
			t.Errorf("ProjectDirName is not stable: %q then %q", name, again)
		}
	}
	if a, b := ProjectDirName(long), ProjectDirName(long[:len(long)-1]+"y"); a == b {
		t.Errorf("two cwds differing in their last byte share the folder %q", a)
	}

	dir := d.ForCwd(long)
	if got, want := dir, filepath.Join(agent, "sessions", ProjectDirName(long)); got != want {
		t.Errorf("ForCwd = %q, want %q", got, want)
	}
	s, err := Create(dir, CreateOptions{Cwd: long})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAppend(t, s, userMsg(t, "hello", 1), assistantMsg(t, "hi", 2))
	if tr := mustRead(t, s.Path()); len(tr.Entries) != 2 {
		t.Errorf("saved session holds %d entries, want 2", len(tr.Entries))
	}
	roots, err := d.Roots()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(roots, []string{dir}); diff != "" {
		t.Errorf("Roots() (-got +want):\n%s", diff)
	}
}

// TestResolveDirsUnreadableSettings: a settings.json that cannot be read (a
// directory here) is a startup warning, not a failure.
func TestResolveDirsUnreadableSettings(t *testing.T) {
	agent := t.TempDir()
	t.Setenv(EnvAgentDir, agent)
	t.Setenv(EnvSessionDir, "")
	if err := os.Mkdir(filepath.Join(agent, SettingsFile), 0o700); err != nil {
		t.Fatal(err)
	}
	d, warnings, err := ResolveDirs("")
	if err != nil {
		t.Fatalf("ResolveDirs: %v", err)
	}
	if d.Source != SourceProject {
		t.Errorf("source %q, want %q", d.Source, SourceProject)
	}
	if len(warnings) != 1 || warnings[0].Source != "settings" || warnings[0].Path != filepath.Join(agent, SettingsFile) {
		t.Errorf("warnings %+v, want one of source settings naming the file", warnings)
	}
}
