// steer (issue 25): steering goes through the input handlers. "upper:" is
// upper-cased (a transform), "eat" is consumed, and "hold" is held (the
// handler never settles, after a notice saying so).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("input", async (event, ctx) => {
		if (event.text === "eat") {
			return { action: "handled" };
		}
		if (event.text.startsWith("upper:")) {
			return { action: "transform", text: event.text.slice("upper:".length).toUpperCase() };
		}
		if (event.text === "hold") {
			ctx.ui.notify("holding", "info");
			await new Promise(() => {});
		}
		return { action: "continue" };
	});
}
