// registerTool: stamp writes a file under the thread's cwd with Node's fs
// and reports it in details.fileChanges; with "malformed" it reports
// details whose fileChanges is not a list (ignored as a whole), with
// "fail" it throws (an error result).
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { Type } from "typebox";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "stamp",
		label: "Stamp",
		description: "Write a stamp file.",
		parameters: Type.Object({
			file: Type.String({ description: "the file to write, relative to the cwd" }),
			text: Type.Optional(Type.String()),
			mode: Type.Optional(Type.Union([Type.Literal("ok"), Type.Literal("malformed"), Type.Literal("fail")])),
		}),
		async execute(toolCallId, params, signal, onUpdate, ctx) {
			if (params.mode === "fail") {
				throw new Error(`stamp ${params.file} refused`);
			}
			const abs = path.resolve(ctx.cwd, params.file);
			await fs.writeFile(abs, (params.text ?? "stamped") + "\n");
			const details =
				params.mode === "malformed"
					? { fileChanges: "not a list" }
					: { fileChanges: [{ path: abs, kind: "add" }] };
			return { content: [{ type: "text", text: `stamped ${params.file} (${toolCallId})` }], details };
		},
	});
}
