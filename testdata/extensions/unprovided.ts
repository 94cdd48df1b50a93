import { createServer } from "node:net";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("serve", { handler: async () => { createServer(); } });
}
