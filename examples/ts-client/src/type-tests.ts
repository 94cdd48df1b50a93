// Type tests of the generated declarations. Each line marked with a
// ts-expect-error directive must fail to compile (tsc fails when one
// compiles), so the types keep rejecting what the server rejects; the other
// lines must compile. Nothing here runs.

import type {
  ApprovalMode,
  ClientRequestMessage,
  DiffScope,
  ErrorCode,
  GitConflictReason,
  Item,
  ItemToolCallRequestApprovalResult,
  RpcError,
  ServerMessage,
  ThreadStartParams,
  ThreadStatus,
  ToolCallStatus,
} from "../../../app-server.js";

export const modes: ApprovalMode[] = ["ask", "fullAccess"];
// @ts-expect-error a misspelled enum value
export const misspelledMode: ApprovalMode = "asks";
// @ts-expect-error a scope that is not one of the six
export const misspelledScope: DiffScope = "lastturn";

export const accept: ItemToolCallRequestApprovalResult = { decision: "accept", message: "fine" };
// @ts-expect-error a decision the protocol does not have
export const approve: ItemToolCallRequestApprovalResult = { decision: "approve" };

export const start: ThreadStartParams = { cwd: "/repo", approvalMode: "ask" };
// @ts-expect-error a missing required member (cwd)
export const noCwd: ThreadStartParams = { approvalMode: "ask" };
// @ts-expect-error a member thread/start does not take
export const extra: ThreadStartParams = { cwd: "/repo", threadId: "t" };

// Each status carries exactly its own members.
export const active: ThreadStatus = { type: "active", waitingOn: ["approval"] };
// @ts-expect-error an active status without waitingOn
export const noWaiting: ThreadStatus = { type: "active" };
// @ts-expect-error waiting on something that is not an approval or a dialog
export const waitingOnCoffee: ThreadStatus = { type: "active", waitingOn: ["coffee"] };

export const statuses: ToolCallStatus[] = ["inProgress", "completed", "failed", "declined"];

export function toolName(item: Item): string {
  if (item.type === "toolCall") return item.name;
  // @ts-expect-error only a tool call has a name
  return item.name;
}

// The params of a request follow its method.
export const startMessage: ClientRequestMessage = { id: 1, method: "thread/start", params: { cwd: "/repo" } };
// @ts-expect-error thread/start's params with turn/start's members
export const wrongParams: ClientRequestMessage = { id: 2, method: "thread/start", params: { threadId: "t", text: "hi" } };

// The wire error does not shadow JavaScript's Error.
export const jsError: Error = new Error("still JavaScript's");
export const wireError: RpcError = { code: "gitConflict", message: "conflict", data: { reason: "diffChanged", paths: [] } };
// @ts-expect-error a JavaScript Error is not a wire error (no code)
export const notWire: RpcError = new Error("x");

// Open sets take the known values and any other a newer server may send.
export const known: ErrorCode = "threadLockedElsewhere";
export const newer: ErrorCode = "someFutureCode";
export const newerReason: GitConflictReason = "someFutureReason";

export function isResponse(m: ServerMessage): boolean {
  // @ts-expect-error a notification has no id
  if ("method" in m && !("id" in m)) return m.id !== undefined;
  return "result" in m;
}
