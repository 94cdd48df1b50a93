package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gofrs/flock"

	"github.com/knightcode/knightcode/config"
	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/safefile"
)

// lockWait bounds the wait for the state file's and an identity's lock.
const lockWait = 2 * time.Minute

// state is <agentDir>/plugins/state.json, the server's own bookkeeping
// (never in a settings file, so settings stay diff-friendly): the
// installs this server made, per identity ({scope, commit}, scope "global"
// or a project path), which keep cache folders from being collected; and
// per marketplace (by canonical source) its catalog's name and when it was
// last fetched.
type state struct {
	Installs     map[string][]install     `json:"installs,omitempty"`
	Marketplaces map[string]marketFetched `json:"marketplaces,omitempty"`
}

type install struct {
	Scope  string `json:"scope"`
	Commit string `json:"commit"`
}

type marketFetched struct {
	Name      string `json:"name"`
	UpdatedAt string `json:"updatedAt"`
}

func (m *Manager) statePath() string { return filepath.Join(m.agentDir, "plugins", "state.json") }

// readState reads state.json; a missing file is an empty state, a corrupt
// one an error, and so is one that is not a regular file or is over
// safefile.ConfigLimit (safefile.ReadFile).
func (m *Manager) readState() (*state, error) {
	data, err := safefile.ReadFile(m.statePath(), safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseState(m.statePath(), data)
}

func parseState(path string, data []byte) (*state, error) {
	st := &state{}
	if len(data) > 0 {
		if err := json.Unmarshal(data, st); err != nil {
			return nil, fmt.Errorf("plugins: %s is corrupt (left as it is): %w", path, err)
		}
	}
	if st.Installs == nil {
		st.Installs = map[string][]install{}
	}
	if st.Marketplaces == nil {
		st.Marketplaces = map[string]marketFetched{}
	}
	return st, nil
}

// updateState edits state.json under its lock and writes it atomically.
func (m *Manager) updateState(ctx context.Context, edit func(*state)) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	return atomicfile.Update(ctx, m.statePath()+".lock", m.statePath(), 0o600, func(old []byte) ([]byte, error) {
		st, err := parseState(m.statePath(), old)
		if err != nil {
			return nil, err
		}
		edit(st)
		data, err := json.MarshalIndent(st, "", "  ")
		return append(data, '\n'), err
	})
}

// setInstall records (commit != "") or forgets (commit "") the install of
// identity in scope.
func (st *state) setInstall(identity, scope, commit string) {
	list := slices.DeleteFunc(st.Installs[identity], func(i install) bool { return i.Scope == scope })
	if commit != "" {
		list = append(list, install{Scope: scope, Commit: commit})
	}
	if len(list) == 0 {
		delete(st.Installs, identity)
		return
	}
	st.Installs[identity] = list
}

// lockIdentity takes the per-identity lock (a gofrs/flock under
// <agentDir>/plugins/locks/, so two servers sharing the agent directory
// serialize too): installs, updates and removals of one identity swap one
// at a time. Fetches run outside it.
func (m *Manager) lockIdentity(ctx context.Context, identity string) (func(), error) {
	dir := filepath.Join(m.agentDir, "plugins", "locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	fl := flock.New(filepath.Join(dir, config.ShortHash(identity)+".lock"))
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("plugins: lock %s: %w", identity, err)
	}
	return func() { _ = fl.Unlock() }, nil
}

// collect removes the cache folders of identity that no install of this
// server and no entry of the global settings references (EXTENSIBILITY.md
// §4: folders are collected once no scope references them). Call it under
// the identity's lock. Failures are left for the next collection.
func (m *Manager) collect(ctx context.Context, identity string, extra ...string) {
	st, err := m.readState()
	if err != nil {
		return
	}
	keep := map[string]bool{}
	for _, c := range extra {
		keep[c] = true
	}
	for _, i := range st.Installs[identity] {
		keep[i.Commit] = true
	}
	if snap, err := m.store.Read(ctx, ""); err == nil {
		var entries []config.PluginEntry
		if snap.ScopeEntries(config.ScopeGlobal, config.PluginsKey, &entries) != nil {
			return // a malformed registry: collect nothing
		}
		for _, e := range entries {
			if e.Identity == identity {
				keep[e.Commit] = true
			}
		}
	}
	dir := config.PluginCacheDir(m.agentDir, identity)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	left := 0
	for _, e := range ents {
		if keep[e.Name()] {
			left++
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
	if left == 0 {
		_ = os.Remove(dir)
	}
}
