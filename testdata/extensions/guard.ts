// tool_call: a bash command holding `rm -rf` is blocked, with a reason the
// model reads; a bash command holding SHOUT is rewritten in place.
import type { ExtensionAPI } from "@knightcode/extension-api";
import { isToolCallEventType } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("tool_call", (event) => {
		if (!isToolCallEventType("bash", event)) return;
		const command: string = event.input.command;
		if (/\brm\s+-rf\b/.test(command)) {
			return { block: true, reason: `blocked by guard.ts: ${command}` };
		}
		if (command.includes("SHOUT")) {
			event.input.command = command.replace("SHOUT", "echo shouted");
		}
	});
}
