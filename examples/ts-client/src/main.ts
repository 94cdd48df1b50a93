// The example client's flow, against the built binary on the offline
// scripted model: a thread in a scratch repository asks before its edit,
// the client accepts, then reads the uncommitted diff and reverts one of
// its two hunks.
//
//	node dist/main.js <path to the knightcode binary>

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { Item, ItemToolCallRequestApprovalParams, ThreadStatus } from "../../../app-server.js";
import { AppServerClient } from "./client.js";

const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
  "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"];

/** One line per item, by its type: the union narrows each case. */
export function describe(item: Item): string {
  switch (item.type) {
    case "userMessage":
      return `user: ${item.text ?? ""}`;
    case "agentMessage":
      return `agent: ${item.text ?? ""}`;
    case "reasoning":
      return `reasoning: ${(item.text ?? "").length} characters`;
    case "toolCall":
      // declined: the approval was refused and the call never ran.
      return `tool ${item.name}: ${item.status}${item.fileChanges ? ` (${item.fileChanges.map((f) => `${f.kind} ${f.path}`).join(", ")})` : ""}`;
    case "compaction":
      return "compaction";
    case "extensionMessage":
      return `extension ${item.extension ?? "?"}: ${item.text ?? ""}`;
    default: {
      const unknown: never = item;
      return `an item of a newer server: ${JSON.stringify(unknown)}`;
    }
  }
}

/** What a sidebar shows for a status. */
export function statusLabel(s: ThreadStatus): string {
  switch (s.type) {
    case "active":
      return s.waitingOn.length > 0 ? `waiting on ${s.waitingOn.join(" and ")}` : "working";
    case "systemError":
      return `error: ${s.message}`;
    case "idle":
    case "notLoaded":
      return s.type;
  }
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_AUTHOR_NAME: "Example", GIT_AUTHOR_EMAIL: "example@example.invalid", GIT_COMMITTER_NAME: "Example", GIT_COMMITTER_EMAIL: "example@example.invalid" },
  });
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`check failed: ${what}`);
}

async function main(): Promise<void> {
  const binary = process.argv[2];
  if (!binary) throw new Error("usage: node dist/main.js <path to the knightcode binary>");
  const root = realpathSync(mkdtempSync(join(tmpdir(), "knightcode-ts-client-")));
  try {
    // A repository with one committed file of 20 lines.
    const repo = join(root, "repo");
    mkdirSync(repo);
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "notes.txt"), words.join("\n") + "\n");
    git(repo, "add", "notes.txt");
    git(repo, "commit", "-q", "-m", "notes");

    // The offline model's script: an edit far apart in two places, then a reply.
    const home = join(root, "home");
    const agentDir = join(home, "agent");
    mkdirSync(agentDir, { recursive: true });
    const script = join(root, "script.json");
    writeFileSync(script, JSON.stringify({
      responses: [
        { toolCalls: [{ id: "call-1", name: "edit", arguments: { path: "notes.txt", edits: [
          { oldText: "bravo", newText: "BRAVO" }, { oldText: "sierra", newText: "SIERRA" }] } }] },
        { text: "Capitalized bravo and sierra." },
      ],
    }));
    writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { scripted: { models: [{ id: "ts", script }] } } }));

    const approvals: ItemToolCallRequestApprovalParams[] = [];
    const client = await AppServerClient.start(binary, { ...process.env, HOME: home, KNIGHTCODE_CODING_AGENT_DIR: agentDir, GIT_CONFIG_NOSYSTEM: "1" }, {
      "item/toolCall/requestApproval": async (params) => {
        approvals.push(params);
        check(params.decisions.includes("accept"), `accept is offered: ${params.decisions.join(", ")}`);
        return { decision: "accept" };
      },
    });

    const { thread } = await client.request("thread/start", { cwd: repo, approvalMode: "ask", model: { provider: "scripted", id: "ts" } });
    console.log(`thread ${thread.id}: ${statusLabel(thread.status)}`);

    // Items are keyed by (thread, turn, id): ids repeat across turns.
    const items = new Map<string, Item>();
    client.onNotification((n) => {
      if (n.method === "item/completed") items.set(`${n.params.threadId}/${n.params.turnId}/${n.params.item.id}`, n.params.item);
      if (n.method === "thread/status/changed" && n.params.threadId === thread.id) console.log(`status: ${statusLabel(n.params.status)}`);
    });
    const completed = client.waitFor("turn/completed", (p) => p.threadId === thread.id);
    const started = await client.request("turn/start", { threadId: thread.id, text: "Capitalize bravo and sierra in notes.txt" });
    check(started.status === "started", `turn/start ${started.status}`);
    const { turn } = await completed;
    check(turn.status === "completed", `turn ${turn.status}`);
    check(approvals.length === 1 && approvals[0]?.tool === "edit", "one approval, for the edit");
    for (const item of items.values()) console.log(describe(item));

    // The uncommitted diff: one file, two hunks.
    const diff = await client.request("thread/diff/read", { threadId: thread.id, scope: "uncommitted" });
    const file = diff.files.find((f) => f.path === "notes.txt");
    check(file !== undefined && file.status === "modified" && file.hunks.length === 2, `two hunks in notes.txt: ${JSON.stringify(diff.files)}`);
    const [first] = file!.hunks;
    console.log(`reverting ${first!.header}`);
    const reverted = await client.request("thread/diff/revert", { threadId: thread.id, hunkId: first!.id });
    check(reverted.paths.length === 1 && reverted.paths[0] === "notes.txt", `revert changed ${reverted.paths.join(", ")}`);

    // Hunk ids change once a file changes: read again.
    const after = await client.request("thread/diff/read", { threadId: thread.id });
    check(after.files.length === 1 && after.files[0]?.hunks.length === 1, "one hunk left");
    const text = readFileSync(join(repo, "notes.txt"), "utf8");
    check(text.includes("\nbravo\n") && text.includes("\nSIERRA\n"), `notes.txt after the revert:\n${text}`);

    const code = await client.close();
    check(code === 0, `the server exited ${code}`);
    console.log("ok: a turn with an approval, a diff read and a hunk revert");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exit(1);
});
