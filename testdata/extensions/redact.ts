// message_end (issue 25): an assistant reply naming "secret <word>" is
// replaced by one saying "[redacted]"; one saying "drop me" is replaced by
// one without content, which drops its item.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("message_end", (e) => {
		const m: any = e.message;
		if (m.role !== "assistant") return;
		const text = m.content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("");
		if (text.includes("drop me")) return { message: { ...m, content: [] } };
		if (text.includes("secret")) {
			return { message: { ...m, content: [{ type: "text", text: text.replace(/secret \w+/, "[redacted]") }] } };
		}
	});
}
