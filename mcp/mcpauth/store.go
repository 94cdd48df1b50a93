package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"

	"github.com/knightcode/knightcode/internal/atomicfile"
	"github.com/knightcode/knightcode/internal/safefile"
)

// fileName is the token file under the agent directory; the lock file is
// fileName+".lock" beside it.
const fileName = "mcp-auth.json"

// fileMode is the token file's mode: readable by its owner only.
const fileMode = 0o600

// authFile is the JSON shape of mcp-auth.json: one record per server name
// and canonical server URL, keyed by [recordKey].
type authFile struct {
	Version int                `json:"version"`
	Servers map[string]*record `json:"servers"`
}

// record is what a sign-in leaves for one server: the client it registered
// (or was configured with), the token endpoint, and the current tokens.
// Times are RFC 3339; ExpiresAt is zero when the server gave no
// expires_in.
type record struct {
	Name         string    `json:"name"`
	URL          string    `json:"url"`
	ClientID     string    `json:"clientId"`
	ClientSecret string    `json:"clientSecret,omitempty"`
	AuthStyle    string    `json:"tokenEndpointAuth"` // "params" or "header"
	TokenURL     string    `json:"tokenUrl"`
	Scopes       []string  `json:"scopes,omitempty"`
	AccessToken  string    `json:"accessToken"`
	TokenType    string    `json:"tokenType,omitempty"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	ObtainedAt   time.Time `json:"obtainedAt"`
	ExpiresAt    time.Time `json:"expiresAt,omitzero"`
}

// recordKey is a record's key in [authFile]: the server name, a space, the
// canonical URL (a name never holds a space).
func recordKey(name, serverURL string) string {
	return name + " " + CanonicalURL(serverURL)
}

// refreshAt is when the record's access token should be refreshed: at
// 80 % of its lifetime; zero when its lifetime is unknown.
func (r *record) refreshAt() time.Time {
	if r.ExpiresAt.IsZero() {
		return time.Time{}
	}
	return r.ObtainedAt.Add(r.ExpiresAt.Sub(r.ObtainedAt) * 8 / 10)
}

// usable reports whether the record's access token may be sent at now, or
// can be refreshed.
func (r *record) usable(now time.Time) bool {
	if r == nil || r.AccessToken == "" {
		return false
	}
	return r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt) || r.RefreshToken != ""
}

// setToken stores tok, obtained at now, in the record; a token response
// without a refresh token keeps the one the record has (RFC 6749 §6).
func (r *record) setToken(tok *oauth2.Token, now time.Time) {
	r.AccessToken = tok.AccessToken
	r.TokenType = tok.TokenType
	if tok.RefreshToken != "" {
		r.RefreshToken = tok.RefreshToken
	}
	r.ObtainedAt = now
	switch {
	case tok.ExpiresIn > 0:
		r.ExpiresAt = now.Add(time.Duration(tok.ExpiresIn) * time.Second)
	case !tok.Expiry.IsZero():
		r.ExpiresAt = now.Add(time.Until(tok.Expiry))
	default:
		r.ExpiresAt = time.Time{}
	}
}

// oauthConfig is the oauth2 configuration that refreshes the record's
// tokens.
func (r *record) oauthConfig() *oauth2.Config {
	style := oauth2.AuthStyleInParams
	if r.AuthStyle == "header" {
		style = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{
		ClientID:     r.ClientID,
		ClientSecret: r.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: r.TokenURL, AuthStyle: style},
		Scopes:       r.Scopes,
	}
}

// store is the token file of one agent directory.
type store struct {
	path string
}

// errUnchanged ends an update without writing the file.
var errUnchanged = errors.New("unchanged")

// read returns the record for key, or nil when there is none (or no file).
// It takes no lock: the file is only ever replaced whole. It reads through
// safefile.ReadFile: a file that is not regular (a FIFO) or is over
// safefile.ConfigLimit is an error naming it, never a hang.
func (s *store) read(key string) (*record, error) {
	data, err := safefile.ReadFile(s.path, safefile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("mcpauth: %w", err)
	}
	f, err := s.parse(data)
	if err != nil {
		return nil, err
	}
	return f.Servers[key], nil
}

// parse decodes the file's bytes; nil or empty bytes are an empty file.
func (s *store) parse(data []byte) (*authFile, error) {
	f := &authFile{Version: 1, Servers: map[string]*record{}}
	if len(data) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(data, f); err != nil {
		// The error names no content: the file holds secrets.
		return nil, fmt.Errorf("mcpauth: %s is not a valid token file (remove it and sign in again)", s.path)
	}
	if f.Servers == nil {
		f.Servers = map[string]*record{}
	}
	return f, nil
}

// update runs fn on the record for key under the exclusive lock
// <file>.lock (cross-process, and between goroutines: internal/atomicfile
// opens a handle per call), after reading the file afresh. fn returns the
// record to store (nil removes it) or errUnchanged to write nothing; the
// file is written atomically with mode 0600. update returns fn's error
// other than errUnchanged.
func (s *store) update(ctx context.Context, key string, fn func(cur *record) (*record, error)) error {
	err := atomicfile.Update(ctx, s.path+".lock", s.path, fileMode, func(old []byte) ([]byte, error) {
		f, err := s.parse(old)
		if err != nil {
			return nil, err
		}
		next, err := fn(f.Servers[key])
		if err != nil {
			return nil, err
		}
		if next == nil {
			delete(f.Servers, key)
		} else {
			f.Servers[key] = next
		}
		return json.MarshalIndent(f, "", "  ")
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// newStore is the store of agentDir.
func newStore(agentDir string) *store {
	return &store{path: filepath.Join(agentDir, fileName)}
}
