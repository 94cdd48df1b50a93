// registerProvider in its two forms (EXTENSIBILITY.md §7 "Extension
// providers in model/list"):
//   - ext-config, configuration-only: an OpenAI-compatible server at
//     $KC_E2E_PROVIDER_URL, its key in $KC_E2E_KEY; every thread may use it
//     while a loaded thread registers it;
//   - ext-func, with streamSimple: it echoes the last user text, streamed
//     in two deltas; only threads that load this extension may use it.
// The command /drop-config unregisters ext-config.
import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

function lastUserText(context: any): string {
	const users = context.messages.filter((m: any) => m.role === "user");
	const content = users.length > 0 ? users[users.length - 1].content : "";
	if (typeof content === "string") return content;
	return content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
}

export default function (pi: ExtensionAPI) {
	pi.registerProvider("ext-config", {
		baseUrl: process.env.KC_E2E_PROVIDER_URL,
		api: "openai-completions",
		apiKey: "KC_E2E_KEY",
		models: [{ id: "m1", name: "Config M1", reasoning: false, input: ["text"], cost, contextWindow: 32000, maxTokens: 4096 }],
	});
	pi.registerProvider("ext-func", {
		api: "echo-api",
		models: [{ id: "echo", name: "Echo", reasoning: true, input: ["text"], cost, contextWindow: 8000, maxTokens: 1000 }],
		streamSimple: (model, context) => {
			const stream = createAssistantMessageEventStream();
			const reply = `echo (${model.provider}/${model.id}): ${lastUserText(context)}`;
			setTimeout(() => {
				const partial: any = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id };
				stream.push({ type: "start", partial });
				stream.push({ type: "text_start", contentIndex: 0, partial });
				const half = Math.floor(reply.length / 2);
				stream.push({ type: "text_delta", contentIndex: 0, delta: reply.slice(0, half), partial });
				stream.push({ type: "text_delta", contentIndex: 0, delta: reply.slice(half), partial });
				stream.push({
					type: "done",
					reason: "stop",
					message: {
						role: "assistant",
						content: [{ type: "text", text: reply }],
						api: model.api,
						provider: model.provider,
						model: model.id,
						usage: { input: 3, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 8, cost: { ...cost, total: 0 } },
						stopReason: "stop",
						timestamp: Date.now(),
					},
				} as any);
				stream.end();
			}, 1);
			return stream;
		},
	} as any);
	pi.registerCommand("drop-config", {
		description: "unregister ext-config",
		handler: async () => {
			pi.unregisterProvider("ext-config");
		},
	});
}
