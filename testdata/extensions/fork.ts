// ctx.fork (issue 25): "/forkat <entryId> [at]" forks the thread at that
// session entry (before it, pi's default, or at it); withSession notifies
// from the forked thread; a refused entry notifies the error's message.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (event, ctx) => {
		if (event.reason === "fork") {
			ctx.ui.notify("session_start fork", "info");
		}
	});
	pi.registerCommand("forkat", {
		description: "Fork the thread at a session entry",
		handler: async (args, ctx) => {
			const [entryId, position] = args.trim().split(/\s+/);
			try {
				await ctx.fork(entryId, {
					position: position === "at" ? "at" : "before",
					withSession: async (forked) => forked.ui.notify("forked", "info"),
				});
			} catch (e: any) {
				ctx.ui.notify(`fork failed: ${e.message}`, "error");
			}
		},
	});
}
