// registerCommand: /hello name sets a status and notifies; the command is
// listed by command/list {threadId}.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("hello", {
		description: "Say hello",
		handler: async (args, ctx) => {
			ctx.ui.setStatus("hello", `hello ${args}`);
			ctx.ui.notify(`Hello, ${args}!`, "info");
			pi.appendEntry("hello", { who: args });
		},
	});
}
