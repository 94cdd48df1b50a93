// The order of pi's agent events (issue 25): every handler notifies its
// event (ui/notify), so a test can compare the order with pi's. A run of
// message_update notifies once.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	let last = "";
	const log = (line: string, ctx: ExtensionContext) => {
		if (line === last) return;
		last = line;
		ctx.ui.notify(line, "info");
	};
	pi.on("input", (_e, ctx) => {
		log("input", ctx);
		return { action: "continue" };
	});
	pi.on("before_agent_start", (_e, ctx) => log("before_agent_start", ctx));
	pi.on("agent_start", (_e, ctx) => log("agent_start", ctx));
	pi.on("turn_start", (e, ctx) => log(`turn_start ${e.turnIndex}`, ctx));
	pi.on("context", (e, ctx) => log(`context ${e.messages.length}`, ctx));
	pi.on("message_start", (e, ctx) => log(`message_start ${e.message.role}`, ctx));
	pi.on("message_update", (e, ctx) => log(`message_update ${e.assistantMessageEvent.type}`, ctx));
	pi.on("message_end", (e, ctx) => log(`message_end ${e.message.role}`, ctx));
	pi.on("tool_call", (e, ctx) => log(`tool_call ${e.toolCallId}`, ctx));
	pi.on("tool_result", (e, ctx) => log(`tool_result ${e.toolCallId}`, ctx));
	pi.on("turn_end", (e, ctx) => log(`turn_end ${e.turnIndex} ${e.toolResults.length}`, ctx));
	pi.on("agent_end", (e, ctx) => log(`agent_end ${e.messages.map((m: any) => m.role).join(",")}`, ctx));
}
