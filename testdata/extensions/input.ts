// input: "please " is dropped from every input (a transform), and an input
// starting with "skip:" is consumed (turn/start answers "handled").
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("input", async (event) => {
		if (event.text.startsWith("skip:")) {
			return { action: "handled" };
		}
		if (event.text.includes("please ")) {
			return { action: "transform", text: event.text.replaceAll("please ", "") };
		}
		return { action: "continue" };
	});
}
