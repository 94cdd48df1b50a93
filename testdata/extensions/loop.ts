// A handler that never returns: the input handler spins on "spin"; the
// runtime interrupts it and the start goes on.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	let n = 0;
	pi.on("input", (event) => {
		if (event.text === "spin") {
			for (;;) {
				n++;
			}
		}
		return { action: "continue" };
	});
}
