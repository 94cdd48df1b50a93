// Package credentials is the store of provider API keys:
// <agentDir>/auth.json plus environment variables, an environment variable
// winning over the file.
//
// auth.json is {"<provider>": {"type": "api_key", "key": "<secret>"}} (pi's
// shape), created with mode 0600 and written atomically
// (internal/atomicfile). Secrets are never logged and never part of an error
// or of List's answer.
//
// What the room must not know: HTTP, threads, JSON-RPC.
package credentials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/safefile"
)

// File is the name of the credentials file in the agent directory.
const File = "auth.json"

// Source says where a provider's key comes from.
type Source string

// The sources of a key.
const (
	SourceNone Source = ""         // no key
	SourceEnv  Source = "env"      // an environment variable
	SourceFile Source = "authFile" // auth.json (account/login/start)
)

// EnvVars names the environment variable of each built-in provider's key.
var EnvVars = map[string]string{
	"openai":    "OPENAI_API_KEY",
	"anthropic": "ANTHROPIC_API_KEY",
}

// Entry is one provider's credentials as List shows them: never the secret.
type Entry struct {
	Provider string `json:"provider"`
	Source   Source `json:"source"`
	// EnvVar is the environment variable holding the key when Source is
	// "env".
	EnvVar string `json:"envVar,omitempty"`
}

// Store reads and writes <agentDir>/auth.json. Its methods are safe for
// concurrent use within one process; the file is re-read on every call so
// another process's login is seen.
type Store struct {
	path string
	// env names extra environment variables per provider (custom
	// providers whose models.json apiKey names a set variable).
	env    map[string]string
	getenv func(string) string
	mu     sync.Mutex
}

// New returns the store of agentDir. env maps custom provider names to the
// environment variable their key may come from (EnvVars are always
// consulted for the built-in providers); it may be nil.
func New(agentDir string, env map[string]string) *Store {
	e := map[string]string{}
	for k, v := range EnvVars {
		e[k] = v
	}
	for k, v := range env {
		e[k] = v
	}
	return &Store{path: filepath.Join(agentDir, File), env: e, getenv: os.Getenv}
}

// Path returns the path of auth.json.
func (s *Store) Path() string { return s.path }

type fileEntry struct {
	Type string `json:"type"`
	Key  string `json:"key"`
}

// read loads auth.json (empty when missing). A malformed file is an error
// naming the file, never its content; so is one that is not a regular file
// or is over safefile.ConfigLimit (safefile.ReadFile: a FIFO never blocks).
func (s *Store) read() (map[string]fileEntry, error) {
	data, err := safefile.ReadFile(s.path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]fileEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: cannot read %s: %w", s.path, err)
	}
	m := map[string]fileEntry{}
	if err := json.Unmarshal(data, &m); err != nil {
		// The decoder's message may quote the file: keep only its kind.
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("credentials: %s is not valid JSON (offset %d)", s.path, syn.Offset)
		}
		return nil, fmt.Errorf("credentials: %s does not have the shape {\"<provider>\": {\"type\", \"key\"}}", s.path)
	}
	return m, nil
}

// Get returns provider's key and its source: the environment variable when
// set and not empty, else auth.json's key, else ("", SourceNone). A broken
// auth.json is an error (the environment still wins over it).
func (s *Store) Get(provider string) (string, Source, error) {
	if v := s.envVar(provider); v != "" {
		if key := s.getenv(v); key != "" {
			return key, SourceEnv, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return "", SourceNone, err
	}
	if e, ok := m[provider]; ok && e.Key != "" {
		return e.Key, SourceFile, nil
	}
	return "", SourceNone, nil
}

// Key is Get without the source, "" on any error: the form a provider's
// APIKey callback wants.
func (s *Store) Key(provider string) string {
	k, _, _ := s.Get(provider)
	return k
}

func (s *Store) envVar(provider string) string { return s.env[provider] }

// Set stores key as provider's key in auth.json (created 0600, replaced
// atomically; a file with other permissions is rewritten 0600). An empty
// provider or key is an error.
func (s *Store) Set(provider, key string) error {
	if provider == "" || key == "" {
		return errors.New("credentials: provider and key must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	m[provider] = fileEntry{Type: "api_key", Key: key}
	return s.write(m)
}

// Delete removes provider's key from auth.json; deleting a missing key is
// not an error. It does not touch the environment: List still shows an
// environment key.
func (s *Store) Delete(provider string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil {
		return err
	}
	if _, ok := m[provider]; !ok {
		return nil
	}
	delete(m, provider)
	return s.write(m)
}

func (s *Store) write(m map[string]fileEntry) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	if err := atomicfile.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("credentials: cannot write %s: %w", s.path, err)
	}
	return nil
}

// List returns which providers have a key and from where, sorted by
// provider: every provider whose environment variable is set, and every
// provider of auth.json; never a secret.
func (s *Store) List() ([]Entry, error) {
	seen := map[string]Entry{}
	for p, v := range s.env {
		if s.getenv(v) != "" {
			seen[p] = Entry{Provider: p, Source: SourceEnv, EnvVar: v}
		}
	}
	s.mu.Lock()
	m, err := s.read()
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	for p, e := range m {
		if _, ok := seen[p]; !ok && e.Key != "" {
			seen[p] = Entry{Provider: p, Source: SourceFile}
		}
	}
	out := make([]Entry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int {
		switch {
		case a.Provider < b.Provider:
			return -1
		case a.Provider > b.Provider:
			return 1
		}
		return 0
	})
	return out, nil
}
