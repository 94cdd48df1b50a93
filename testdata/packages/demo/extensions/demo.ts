// A pi package's extension (EXTENSIBILITY.md §8): it registers /demo and
// appends " P" to every input, so a test sees where it runs in the
// dispatch order (packages' extensions load last).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("demo", { description: "A package's command", handler: async () => {} });
	pi.on("input", async (event) => ({ action: "transform", text: event.text + " P" }));
}
