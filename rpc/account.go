package rpc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/knightcode/knightcode/agent"
	"github.com/knightcode/knightcode/agent/provider"
	"github.com/knightcode/knightcode/agent/provider/credentials"
	"github.com/knightcode/knightcode/agent/provider/scripted"
	"github.com/knightcode/knightcode/rpc/jsonrpc"
	"github.com/knightcode/knightcode/rpc/protocol"
)

// registerAccount installs account/read, account/login/start and
// account/logout on the credentials of the process's provider registry,
// core.Models (issue 12).
func registerAccount(srv *jsonrpc.Server, core Core) {
	a := &accounts{srv: srv, reg: core.Models}
	jsonrpc.Handle(srv, protocol.AccountRead, a.read)
	jsonrpc.Handle(srv, protocol.AccountLoginStart, a.loginStart)
	jsonrpc.Handle(srv, protocol.AccountLogout, a.logout)
}

// accounts are the account/* handlers over reg's credentials. A change
// broadcasts account/updated to every initialized connection; changes are
// serialized, so the notifications go out in order.
type accounts struct {
	srv *jsonrpc.Server
	reg *provider.Registry
	mu  sync.Mutex // serializes changes
}

// changed broadcasts account/updated (failures are logged).
func (a *accounts) changed() {
	list, err := readAccounts(a.reg)
	if err != nil {
		a.srv.Logger().Warn("reading the accounts for account/updated failed", "err", err)
		return
	}
	if err := jsonrpc.Broadcast(a.srv, protocol.AccountUpdated, protocol.AccountUpdatedParams{Accounts: list}); err != nil {
		a.srv.Logger().Warn("broadcasting account/updated failed", "err", err)
	}
}

// read answers account/read: every real provider's account.
func (a *accounts) read(context.Context, *jsonrpc.Conn, protocol.AccountReadParams) (protocol.AccountReadResult, error) {
	list, err := readAccounts(a.reg)
	return protocol.AccountReadResult{Accounts: list}, err
}

// loginStart answers account/login/start: the key is checked with the
// provider, then stored. A login in flight is cancelled when shutdown
// begins (its key check is a network request) and answers shuttingDown.
func (a *accounts) loginStart(ctx context.Context, _ *jsonrpc.Conn, p protocol.AccountLoginStartParams) (protocol.AccountLoginStartResult, error) {
	if err := checkAccountProvider(a.reg, p.Provider); err != nil {
		return protocol.AccountLoginStartResult{}, err
	}
	key := strings.TrimSpace(p.APIKey)
	if key == "" {
		return protocol.AccountLoginStartResult{}, protocol.InvalidParams("apiKey", "must not be empty")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-a.srv.ShuttingDown():
			cancel(jsonrpc.ErrShuttingDown)
		case <-ctx.Done():
		}
	}()
	validated := true
	switch err := a.reg.ValidateKey(ctx, p.Provider, key); {
	case err == nil:
	case errors.Is(err, provider.ErrNoValidation):
		validated = false
	case ctx.Err() != nil:
		if cause := context.Cause(ctx); cause != nil && errors.Is(cause, jsonrpc.ErrShuttingDown) {
			return protocol.AccountLoginStartResult{}, jsonrpc.ErrShuttingDown
		}
		return protocol.AccountLoginStartResult{}, ctx.Err()
	case agent.ErrorKind(err) == agent.ErrorKindAuth:
		return protocol.AccountLoginStartResult{}, protocol.InvalidParams("apiKey", "the provider %s refused the key: %v", p.Provider, err)
	case errors.As(err, new(*provider.UnavailableError)):
		return protocol.AccountLoginStartResult{}, err // externalFailure providerUnavailable (errmap)
	default:
		return protocol.AccountLoginStartResult{}, &protocol.Error{Code: protocol.CodeInternal,
			Message: "checking the key with provider " + p.Provider + " failed: " + err.Error()}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.reg.Credentials().Set(p.Provider, key); err != nil {
		return protocol.AccountLoginStartResult{}, err
	}
	a.changed()
	acct, err := readAccount(a.reg, p.Provider)
	return protocol.AccountLoginStartResult{Account: acct, Validated: validated}, err
}

// logout answers account/logout: the stored key is removed.
func (a *accounts) logout(_ context.Context, _ *jsonrpc.Conn, p protocol.AccountLogoutParams) (protocol.AccountLogoutResult, error) {
	if err := checkAccountProvider(a.reg, p.Provider); err != nil {
		return protocol.AccountLogoutResult{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.reg.Credentials().Delete(p.Provider); err != nil {
		return protocol.AccountLogoutResult{}, err
	}
	a.changed()
	acct, err := readAccount(a.reg, p.Provider)
	return protocol.AccountLogoutResult{Account: acct}, err
}

// accountProviders returns the names of the registry's real providers (every
// provider of model/list but the scripted one and those extensions
// registered), sorted.
func accountProviders(reg *provider.Registry) []string {
	return slices.DeleteFunc(reg.Names(), func(n string) bool { return n == scripted.Name })
}

// checkAccountProvider refuses an empty or unknown provider name
// (invalidParams "provider").
func checkAccountProvider(reg *provider.Registry, name string) error {
	if name == "" {
		return protocol.InvalidParams("provider", "must not be empty")
	}
	if !slices.Contains(accountProviders(reg), name) {
		return protocol.InvalidParams("provider", "%q is not a provider of model/list that takes an API key", name)
	}
	return nil
}

// readAccounts lists every real provider's account; never a secret.
func readAccounts(reg *provider.Registry) ([]protocol.Account, error) {
	entries, err := reg.Credentials().List()
	if err != nil {
		return nil, err
	}
	out := []protocol.Account{}
	for _, name := range accountProviders(reg) {
		out = append(out, account(reg, name, entries))
	}
	return out, nil
}

// readAccount is one provider's account.
func readAccount(reg *provider.Registry, name string) (protocol.Account, error) {
	entries, err := reg.Credentials().List()
	if err != nil {
		return protocol.Account{}, err
	}
	return account(reg, name, entries), nil
}

func account(reg *provider.Registry, name string, entries []credentials.Entry) protocol.Account {
	a := protocol.Account{Provider: name, HasKey: reg.HasKey(name)}
	if i := slices.IndexFunc(entries, func(e credentials.Entry) bool { return e.Provider == name }); i >= 0 {
		a.Source, a.EnvVar = string(entries[i].Source), entries[i].EnvVar
	}
	return a
}
