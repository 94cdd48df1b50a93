// record.mjs loads every example extension entry of pi 0.73.1 with pi's
// own loader under Node (discoverAndLoadExtensions: jiti and pi's
// ExtensionAPI, whose registrations it records) and prints, per entry,
// the commands, tools and events it registered, or its load error, as
// JSON: the expectation package extensions' TestPiExamples compares
// knightcode's runtime with (expected.json).
//
// Run once, in a folder where @mariozechner/pi-coding-agent@0.73.1 is
// installed, on the package's own examples/extensions (with their own
// dependencies installed: npm install in with-deps,
// custom-provider-anthropic and sandbox):
//
//	node record.mjs <package>/examples/extensions > expected.json
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const pi = await import(pathToFileURL(path.join(process.cwd(), "node_modules/@mariozechner/pi-coding-agent/dist/index.js")).href);
const root = path.resolve(process.argv[2]);

// entries are the extension entry files under root, as pi discovers them:
// a .ts or .js file, or a folder's package.json pi.extensions, else its
// index.ts.
function entries() {
	const out = [];
	for (const name of fs.readdirSync(root).sort()) {
		const p = path.join(root, name);
		if (fs.statSync(p).isDirectory()) {
			const pkg = path.join(p, "package.json");
			const listed = fs.existsSync(pkg) ? JSON.parse(fs.readFileSync(pkg, "utf8")).pi?.extensions : undefined;
			for (const rel of listed ?? ["index.ts"]) {
				if (fs.existsSync(path.join(p, rel))) out.push(path.join(name, rel));
			}
		} else if (name.endsWith(".ts") || name.endsWith(".js")) {
			out.push(name);
		}
	}
	return out;
}

const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-agent-"));
const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "pi-cwd-"));
const result = {};
for (const rel of entries()) {
	const { extensions, errors } = await pi.discoverAndLoadExtensions([path.join(root, rel)], cwd, agentDir);
	const x = extensions[0];
	result[path.normalize(rel)] = errors.length > 0
		? { error: errors.map((e) => e.error).join("; ") }
		: {
			commands: [...x.commands.keys()].sort(),
			tools: [...x.tools.keys()].sort(),
			events: [...x.handlers.keys()].sort(),
		};
}
process.stdout.write(JSON.stringify(result, null, "\t") + "\n");
