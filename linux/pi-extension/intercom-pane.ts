// intercom-pane seat registration for pi.
//
// Install: copy this file to ~/.pi/agent/extensions/intercom-pane.ts (every pi: coordinator and
// workers). At session start, at the start and settlement of every agent run, after `/tree`
// moves its branch, and at shutdown, it runs `intercom-pane register` from inside this pi, so the
// board knows which pane the seat lives in and that a turn is running before pi writes anything
// to its session file. At session start it also runs `intercom-pane ensure-monitor`, which
// places the sidebar above the coordinator (and does nothing for workers).
//
// It never blocks pi: each call is spawned and forgotten, with a short timeout, and any failure
// (no intercom-pane on PATH, a refusal) is ignored. Set INTERCOM_PANE_BIN to use another binary
// and INTERCOM_PANE_CONFIG to pass `--config` (the same data root the board reads).

import { spawn } from "node:child_process";

type Ctx = {
  cwd: string;
  sessionManager: {
    getSessionId(): string | undefined;
    getSessionFile(): string | undefined;
    getSessionDir?(): string | undefined;
  };
};

type Pi = { on(event: string, handler: (event: unknown, ctx: Ctx) => unknown): void };

const TIMEOUT_MS = 3000;

// pi builds a new extension runtime for every session it switches to (/new, /resume, /fork),
// while the process stays the same; `register` ignores an event whose seq is not above the
// last one it recorded for this process and session. So the counter lives on the process, and
// never falls behind the clock: a fresh runtime's first event still outranks the old ones.
const SEQ_KEY = "__intercomPaneSeq";
const nextSeq = (): number => {
  const g = globalThis as unknown as Record<string, number | undefined>;
  const next = Math.max((g[SEQ_KEY] ?? 0) + 1, Date.now());
  g[SEQ_KEY] = next;
  return next;
};

export default function (pi: Pi) {
  const bin = process.env.INTERCOM_PANE_BIN || "intercom-pane";

  // Resolves when the command ends or after TIMEOUT_MS; only shutdown waits for it, so the
  // record of the exit is written while this pi (the command's ancestor) still exists.
  const record = (event: string, ctx: Ctx, extra: string[] = []): Promise<void> => {
    const seq = nextSeq();
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
      setTimeout(resolve, TIMEOUT_MS).unref?.();
    });
    try {
      const sm = ctx.sessionManager;
      const id = sm.getSessionId();
      if (!id) return Promise.resolve();
      const args = ["register", "--event", event, "--seq", String(seq), "--pi-pid", String(process.pid),
        "--session-id", id, "--cwd", ctx.cwd];
      const file = sm.getSessionFile();
      if (file) args.push("--session-file", file);
      const dir = sm.getSessionDir?.();
      if (dir) args.push("--sessions-dir", dir);
      if (process.env.INTERCOM_PANE_CONFIG) args.push("--config", process.env.INTERCOM_PANE_CONFIG);
      args.push(...extra);
      const child = spawn(bin, args, { stdio: "ignore", timeout: TIMEOUT_MS });
      child.on("error", () => done());
      child.on("exit", () => done());
      child.unref();
    } catch {
      // Registration is best effort; pi must never notice it.
      done();
    }
    return finished;
  };

  // The coordinator's startup hook: place (or keep) the sidebar above it. ensure-monitor itself
  // skips workers, rosters without workers, and anything it cannot verify.
  const ensureMonitor = (ctx: Ctx) => {
    try {
      const id = ctx.sessionManager.getSessionId();
      if (!id) return;
      const args = ["ensure-monitor", "--session-id", id];
      if (process.env.INTERCOM_PANE_CONFIG) args.push("--config", process.env.INTERCOM_PANE_CONFIG);
      const child = spawn(bin, args, { stdio: "ignore", timeout: TIMEOUT_MS, cwd: ctx.cwd });
      child.on("error", () => {});
      child.unref();
    } catch {
      // Best effort, like registration.
    }
  };

  pi.on("session_start", (_e, ctx) => {
    void record("session_start", ctx);
    ensureMonitor(ctx);
  });
  pi.on("agent_start", (_e, ctx) => { void record("agent_start", ctx); });
  pi.on("agent_settled", (_e, ctx) => { void record("agent_settled", ctx); });
  // `/tree` moves pi's leaf and writes nothing until the next entry (unless summarized): tell
  // the board where the branch now ends.
  pi.on("session_tree", (e, ctx) => {
    const leaf = (e as { newLeafId?: string | null }).newLeafId;
    if (leaf) void record("session_tree", ctx, ["--leaf-id", leaf]);
  });
  pi.on("session_shutdown", (_e, ctx) => record("session_shutdown", ctx));
}
