// Package provider is the room of model providers: the Provider interface every
// provider implements and the Registry that lists the configured models
// (model/list), finds the provider of a picked model, and holds the
// credentials store (account/*).
//
// The registry (Load) is built from the built-in models — scripted/demo, the
// OpenAI catalogue (Responses API) and the Anthropic catalogue (Messages API),
// see agent/provider/catalog — plus <agentDir>/models.json, which declares
// scripted models, custom providers of any OpenAI-compatible or
// Anthropic-compatible server, and overrides of the built-in providers'
// baseUrl and headers:
//
//	{"providers": {
//	  "ollama": {
//	    "baseUrl": "http://localhost:11434/v1",
//	    "api": "openai-completions",
//	    "apiKey": "OLLAMA_API_KEY",
//	    "models": [{"id": "qwen3:32b", "name": "Qwen3 32B", "reasoning": true,
//	                "contextWindow": 40960, "maxTokens": 8192,
//	                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]
//	  },
//	  "openrouter": {
//	    "baseUrl": "https://openrouter.ai/api/v1",
//	    "api": "openai-completions",
//	    "apiKey": "OPENROUTER_API_KEY",
//	    "headers": {"X-Title": "knightcode"},
//	    "models": [{"id": "deepseek/deepseek-r1", "reasoning": true, "input": ["text"],
//	                "contextWindow": 163840, "cost": {"input": 0.4, "output": 2}}]
//	  },
//	  "openai": {"baseUrl": "https://my-proxy.example/v1"}
//	}}
//
// "api" is "openai-responses", "openai-completions" or "anthropic-messages";
// "apiKey" is the name of an environment variable (its value is used when
// set) or else the key itself; cost is in US dollars per million tokens. A
// malformed entry becomes a "settings" warning and the rest still loads.
//
// Keys: OPENAI_API_KEY and ANTHROPIC_API_KEY (or a custom provider's apiKey
// variable) win over <agentDir>/auth.json, which account/login/start writes
// through Registry.Credentials (agent/provider/credentials).
//
// Threads' extensions add providers while they are loaded
// (Registry.SetExtensionProviders, extension.go): a configuration-only one
// (pi's ProviderConfig as JSON, in the models.json provider shape) runs
// through the same clients; one with its own stream is usable by its
// owners only (Registry.LookupFor answers *NotLoadedError to the others).
// They stay listed once registered; Available says whether one still is.
//
// Providers live in sub-packages (scripted, openai, anthropic); this package
// wires them and turns a malformed models.json into warnings, never a
// failure.
//
// What the room must not know: threads, JSON-RPC, session files and git.
package provider
