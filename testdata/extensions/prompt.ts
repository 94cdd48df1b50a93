// before_agent_start: the system prompt gains a line naming the prompt,
// and a message goes after the input.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("before_agent_start", async (event) => {
		await new Promise((resolve) => setTimeout(resolve, 1));
		return {
			systemPrompt: `${event.systemPrompt}\n\nAlways answer like a pirate (prompt: ${event.prompt}).`,
			message: { customType: "pirate", content: "Arr, remember the pirate voice.", display: false },
		};
	});
}
