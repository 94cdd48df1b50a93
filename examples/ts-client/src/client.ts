// A small, generic client of knightcode app-server, typed only by the
// generated declarations (app-server.d.ts at the repository's root): the
// method maps type every request's params and result, and narrowing a
// message by its members and its method narrows its params.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createInterface } from "node:readline";

import type {
  ClientMessage,
  ClientNotificationMethod,
  ClientNotifications,
  ClientRequestMethod,
  ClientRequests,
  RequestId,
  RpcError,
  ServerMessage,
  ServerNotificationMessage,
  ServerNotificationMethod,
  ServerNotifications,
  ServerRequestMessage,
  ServerRequestMethod,
  ServerRequests,
} from "../../../app-server.js";

/** A request of ours that the server answered with an error. */
export class ServerError extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcError,
  ) {
    super(`${method}: ${error.code}: ${error.message}`);
  }
}

/** Answers to the server's requests (approvals, dialogs), by method. */
export type ServerRequestHandlers = {
  [M in ServerRequestMethod]?: (
    params: ServerRequests[M]["params"],
  ) => Promise<ServerRequests[M]["result"]>;
};

interface Pending {
  method: string;
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

export class AppServerClient {
  private nextId = 1;
  // Our own requests only: the server numbers its requests in a space of
  // their own, so a server request's id may equal one of these.
  private readonly pending = new Map<RequestId, Pending>();
  private readonly listeners = new Set<(n: ServerNotificationMessage) => void>();
  private readonly exited: Promise<number | null>;

  private constructor(
    private readonly proc: ChildProcessWithoutNullStreams,
    private readonly handlers: ServerRequestHandlers,
  ) {
    this.exited = new Promise((resolve) => proc.on("exit", (code) => resolve(code)));
    createInterface({ input: proc.stdout }).on("line", (line) => this.receive(JSON.parse(line) as ServerMessage));
    proc.on("exit", () => {
      for (const p of this.pending.values()) p.reject(new Error(`the server exited before answering ${p.method}`));
      this.pending.clear();
    });
  }

  /** Starts `<binary> app-server` with env and runs the handshake. */
  static async start(binary: string, env: NodeJS.ProcessEnv, handlers: ServerRequestHandlers): Promise<AppServerClient> {
    const proc = spawn(binary, ["app-server"], { env, stdio: ["pipe", "pipe", "pipe"] });
    proc.stderr.resume(); // the server's log
    const c = new AppServerClient(proc, handlers);
    const init = await c.request("initialize", { clientInfo: { name: "ts-client-example", version: "1" } });
    if (init.serverInfo.name !== "knightcode") throw new Error(`unexpected server ${init.serverInfo.name}`);
    c.notify("initialized", {});
    return c;
  }

  /** Sends a request and resolves to its result, typed by the method map. */
  request<M extends ClientRequestMethod>(method: M, params: ClientRequests[M]["params"]): Promise<ClientRequests[M]["result"]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve: (r) => resolve(r as ClientRequests[M]["result"]), reject });
      this.write({ id, method, params } as ClientMessage);
    });
  }

  notify<M extends ClientNotificationMethod>(method: M, params: ClientNotifications[M]["params"]): void {
    this.write({ method, params } as ClientMessage);
  }

  /** Calls f with every notification until the returned function is called. */
  onNotification(f: (n: ServerNotificationMessage) => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Resolves to the params of the first notification method that satisfies ok. */
  waitFor<M extends ServerNotificationMethod>(
    method: M,
    ok: (params: ServerNotifications[M]["params"]) => boolean = () => true,
  ): Promise<ServerNotifications[M]["params"]> {
    return new Promise((resolve) => {
      const off = this.onNotification((n) => {
        if (n.method !== method) return;
        const params = n.params as ServerNotifications[M]["params"];
        if (ok(params)) {
          off();
          resolve(params);
        }
      });
    });
  }

  /** Closes the server's stdin (it shuts down) and waits for it to exit. */
  async close(): Promise<number | null> {
    this.proc.stdin.end();
    return this.exited;
  }

  private write(msg: ClientMessage): void {
    this.proc.stdin.write(JSON.stringify(msg) + "\n");
  }

  private receive(msg: ServerMessage): void {
    if ("method" in msg) {
      if ("id" in msg) void this.answer(msg);
      else for (const f of [...this.listeners]) f(msg);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if ("error" in msg) p.reject(new ServerError(p.method, msg.error));
    else p.resolve(msg.result);
  }

  private async answer(msg: ServerRequestMessage): Promise<void> {
    const handler = this.handlers[msg.method] as ((params: typeof msg.params) => Promise<unknown>) | undefined;
    if (!handler) {
      // Any error answer declines an approval and cancels a dialog.
      this.write({ id: msg.id, error: { code: "methodNotFound", message: `this client answers no ${msg.method}` } });
      return;
    }
    try {
      this.write({ id: msg.id, result: await handler(msg.params) });
    } catch (err) {
      this.write({ id: msg.id, error: { code: "internal", message: String(err) } });
    }
  }
}
