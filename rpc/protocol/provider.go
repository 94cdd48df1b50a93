package protocol

// The provider family: turn retries, withdrawn items and accounts (issue 12;
// spec "Threads and turns" and "Subscriptions and replacement").
var (
	// TurnRetry ("turn/retry") announces that the turn's model request
	// failed with a retryable error (rateLimit, network or an HTTP 5xx) and
	// is retried after delayMs, all inside the same turn (subscribers).
	// Retries are bounded by the settings retry.provider.maxRetries and
	// retry.provider.maxRetryDelayMs.
	TurnRetry = serverNotification[TurnRetryParams]("turn/retry")

	// ItemRemoved ("item/removed") withdraws a live item of the running
	// turn: the partial reply of a model request that failed after it had
	// streamed, before the retry streams it again (subscribers).
	ItemRemoved = serverNotification[ItemRemovedParams]("item/removed")

	// AccountRead ("account/read") lists which providers have credentials
	// and where they come from, never the secret.
	AccountRead = clientRequest[AccountReadParams, AccountReadResult]("account/read", Concurrent)

	// AccountLoginStart ("account/login/start") stores an API key for a
	// provider in <agentDir>/auth.json (mode 0600) after checking it with a
	// cheap request when the provider offers one. Errors: invalidParams
	// (field "provider" for an unknown provider, "apiKey" for an empty or
	// refused key), externalFailure providerUnavailable (with data.provider
	// and the network error's words) when the provider cannot be reached
	// or fails on its side, shuttingDown when the server stops meanwhile.
	AccountLoginStart = clientRequest[AccountLoginStartParams, AccountLoginStartResult]("account/login/start", Concurrent)

	// AccountLogout ("account/logout") removes a provider's key from
	// auth.json; an environment variable still provides a key.
	AccountLogout = clientRequest[AccountLogoutParams, AccountLogoutResult]("account/logout", Concurrent)

	// AccountUpdated ("account/updated") is broadcast to every initialized
	// connection after a login or logout changed the stored credentials.
	AccountUpdated = serverNotification[AccountUpdatedParams]("account/updated")
)

// TurnRetryParams are the params of turn/retry: Attempt is the retry's
// 1-based number, DelayMs the wait before it in milliseconds and Error the
// failure being retried.
type TurnRetryParams struct {
	ThreadID string    `json:"threadId"`
	TurnID   string    `json:"turnId"`
	Attempt  int       `json:"attempt"`
	DelayMs  int64     `json:"delayMs"`
	Error    TurnError `json:"error"`
}

// ItemRemovedParams are the params of item/removed: ItemID is the id of the
// withdrawn item.
type ItemRemovedParams struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
}

// AccountReadParams are the (empty) params of account/read.
type AccountReadParams struct{}

// Account credential sources.
const (
	AccountSourceEnv      = "env"      // an environment variable (envVar names it)
	AccountSourceAuthFile = "authFile" // <agentDir>/auth.json (account/login/start)
)

// Account is one provider's credentials, never the secret: HasKey is true
// when a turn on the provider's models can start as far as credentials go
// (false means turn/start answers authRequired; a custom provider that needs
// no key, or has a literal key in models.json, reports true); Source says
// where a stored or environment key comes from (absent when neither), and
// EnvVar names the variable when it is "env" (the environment wins over
// auth.json).
type Account struct {
	Provider string `json:"provider"`
	HasKey   bool   `json:"hasKey"`
	Source   string `json:"source,omitempty"`
	EnvVar   string `json:"envVar,omitempty"`
}

// AccountReadResult is the result of account/read: one Account per
// configured real provider (built-in or from models.json), by provider name.
type AccountReadResult struct {
	Accounts []Account `json:"accounts"`
}

// AccountLoginStartParams are the params of account/login/start: the
// provider (a name of model/list) and its API key.
type AccountLoginStartParams struct {
	Provider string `json:"provider"`
	APIKey   string `json:"apiKey"`
}

// AccountLoginStartResult is the result of account/login/start: the
// provider's account after the login and whether the key was checked with
// the provider (false when the provider offers no cheap check).
type AccountLoginStartResult struct {
	Account   Account `json:"account"`
	Validated bool    `json:"validated"`
}

// AccountLogoutParams are the params of account/logout.
type AccountLogoutParams struct {
	Provider string `json:"provider"`
}

// AccountLogoutResult is the result of account/logout: the provider's
// account afterwards (an environment key still shows).
type AccountLogoutResult struct {
	Account Account `json:"account"`
}

// AccountUpdatedParams are the params of account/updated: every account
// as account/read would answer now.
type AccountUpdatedParams struct {
	Accounts []Account `json:"accounts"`
}
