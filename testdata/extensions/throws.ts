// A throw while loading: the warning names this file, line 9, column 8
// (the "new" of the Error thrown).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

type Config = { name: string };

export default function (pi: ExtensionAPI) {
	const config: Config | undefined = undefined;
	throw new Error(`no config for ${pi === undefined ? "?" : "this thread"}: ${config}`);
}
