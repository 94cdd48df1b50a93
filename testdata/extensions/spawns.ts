import { spawn } from "node:child_process";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

// /spawn A B [untagged]: a long child (sh) that leaves a grandchild
// (sleep A) in its process group and an escapee (sleep B) in a session of
// its own (with "untagged", also without the thread's process tag); once
// the child said so, it notifies "started <pid>".
export default function (pi: ExtensionAPI) {
	pi.registerCommand("spawn", {
		handler: async (args, ctx) => {
			const [a, b, untagged] = args.split(" ");
			const escapee = untagged === "untagged" ? `setsid env -u KNIGHTCODE_PROCTAG sleep ${b}` : `setsid sleep ${b}`;
			const child = spawn("sh", ["-c", `sleep ${a} & ${escapee} & echo started; wait`]);
			child.stdout!.setEncoding("utf8");
			await new Promise((resolve) => child.stdout!.on("data", (d: string) => { if (d.includes("started")) resolve(undefined); }));
			ctx.ui.notify(`started ${child.pid}`, "info");
		},
	});
}
