// ctx.newSession (issue 25): /fresh replaces the thread by a new one;
// withSession gets the new thread's context, which notifies what a call on
// the old, captured context threw.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("fresh", {
		description: "Start a new session",
		handler: async (_args, ctx) => {
			await ctx.newSession({
				withSession: async (fresh) => {
					let outcome = "the old context still works";
					try {
						ctx.ui.notify("from the old context", "info");
					} catch (e: any) {
						outcome = `old context: ${e.message}`;
					}
					fresh.ui.notify(outcome, "info");
				},
			});
		},
	});
}
