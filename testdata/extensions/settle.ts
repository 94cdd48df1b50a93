// agent_end keeps admission (issue 25, EXTENSIBILITY.md §7): the handler
// waits 1 s; the turn is not over until it returns.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("agent_end", async (_e, ctx) => {
		ctx.ui.notify("agent_end began", "info");
		await new Promise((resolve) => setTimeout(resolve, 1000));
		ctx.ui.notify("agent_end returned", "info");
	});
}
