// context (issue 25): user messages marked [private] reach the model only
// in the request they are the last message of; the conversation keeps them.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("context", (e) => {
		const last = e.messages.length - 1;
		return {
			messages: e.messages.filter(
				(m: any, i) => i === last || m.role !== "user" || !JSON.stringify(m.content).includes("[private]"),
			),
		};
	});
}
