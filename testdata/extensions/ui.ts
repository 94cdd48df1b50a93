// The extension UI from JavaScript (issue 26): session_start sets a
// status, the widget checks with a view, a widget of lines below the
// editor and two component factories (terminal-only: one log line per
// load); its view event handler sets checks again for the toggle verbose,
// after a pause (the ui/event waits for it); /ui-note sends a message
// with a view.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

function checks(verbose: boolean) {
	return {
		type: "stack",
		children: [
			{ type: "text", text: "Checks" },
			{ type: "toggle", id: "verbose", value: verbose, label: "Verbose" },
			{ type: "button", id: "run", label: "Run" },
		],
	};
}

export default function (pi: ExtensionAPI) {
	pi.on("session_start", async (event, ctx) => {
		ctx.ui.setStatus("ui", `started ${event.reason}`);
		ctx.ui.setWidget("checks", checks(false));
		ctx.ui.setWidget("plain", ["line one", "  indented"], { placement: "belowEditor" });
		ctx.ui.setWidget("factory", () => ({ render: () => ["never"] }));
		ctx.ui.setWidget("factory", () => ({ render: () => ["again"] }));
		(ctx.ui as any).onViewEvent(async (e: { widgetKey: string; id: string; value?: unknown }) => {
			if (e.widgetKey === "checks" && e.id === "verbose") {
				await new Promise((resolve) => setTimeout(resolve, 30));
				ctx.ui.setWidget("checks", checks(e.value === true));
			}
		});
	});
	pi.registerCommand("ui-note", {
		description: "Send a message with a view",
		handler: async (_args, _ctx) => {
			pi.sendMessage({
				customType: "ui-note",
				content: "3 checks",
				display: true,
				view: { type: "list", items: [{ type: "text", text: "3 checks" }] },
			} as any);
		},
	});
}
