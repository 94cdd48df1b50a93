// A folder extension: package.json lists this entry; it imports a local
// module.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { greeting } from "./greeting";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("greet", { description: greeting("pkg"), handler: async () => {} });
}
