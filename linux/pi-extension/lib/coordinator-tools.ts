// intercom-pane's tools for the coordinator's model: intercom_board, intercom_reply,
// intercom_close_worker, intercom_resume_worker, intercom_spawn_worker, intercom_wait,
// intercom_review, intercom_log.
//
// Loaded by ../intercom-pane.ts at session_start. Registered only when the intercom-pane binary
// says this pi is the roster's coordinator (`intercom-pane tool check --pi-pid <this pi>`: the
// binary proves this pi started it, reads the roster from the folder this pi really runs in, and
// requires the coordinator's live registration to be this very process). Workers never get
// them. Nothing here decides anything: names, descriptions, JSON Schemas and time bounds come
// from the binary, and every call runs `intercom-pane tool NAME --pi-pid <this pi> --args JSON`,
// which verifies the caller again and runs the commands' own code (board page, reply path,
// close-worker, resume-worker, spawn, wait, log). pi validates the arguments by the schema first; the binary
// checks them again.
//
// Every call is bounded (the binary's own deadlines, and a kill at the tool's `timeoutMs`), its
// output capped, and its text sanitized here too (no control character but newline and tab, no
// escape sequence). intercom_close_worker answers at once with the job id; the guarded close
// runs on in a process of its own session (it outlives the tool call, pi's tool timeout and a
// signal to pi's process group), and when it ends its outcome is given to the model as a message
// (pi.sendMessage, delivered after the running turn, starting a turn when idle).
//
// INTERCOM_PANE_TOOLS=off registers none of them.

import { spawn } from "node:child_process";

type Def = {
  name: string;
  label: string;
  description: string;
  promptSnippet?: string;
  parameters: Record<string, unknown>;
  timeoutMs: number;
  background: boolean;
};

type Result = {
  content: { type: "text"; text: string }[];
  details: unknown;
  isError?: boolean;
};

export type ToolsPi = {
  registerTool?(def: {
    name: string;
    label: string;
    description: string;
    promptSnippet?: string;
    parameters: Record<string, unknown>;
    execute(id: string, params: unknown, signal?: AbortSignal): Promise<Result>;
  }): void;
  sendMessage?(
    message: { customType: string; content: string; display: boolean; details?: unknown },
    options?: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" },
  ): void;
};

// Most bytes kept of a call's output (a page is at most 40 KiB; every answer is one line).
const OUTPUT_CAP = 256 * 1024;
// Most characters of a tool result or message the model sees.
const TEXT_CAP = 48 * 1024;
// `tool check`'s own bound, how often it is asked while this pi is not registered yet, and the
// pause between.
const CHECK_MS = 10_000;
const CHECK_ATTEMPTS = 5;
const CHECK_PAUSE_MS = 1000;

// No C0 control but newline and tab, no DEL or C1, no bidi control, no escape sequence: what a
// tool result may carry (the binary sanitizes too; this is the second line).
export const sanitize = (s: string): string =>
  s
    // ESC-led sequences (CSI, OSC, single-character) first, then any control left.
    .replace(/\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])?/g, "")
    .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "")
    .slice(0, TEXT_CAP);

type Run = { code: number | null; lines: string[] };

// Run intercom-pane; `onLine` sees each complete stdout line as it comes. Resolves when it
// exits (or is killed at `timeoutMs` when `kill` is set).
const run = (
  bin: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  opts: { kill: boolean; signal?: AbortSignal; onLine?: (line: string) => void },
): Promise<Run> =>
  new Promise((resolve) => {
    const lines: string[] = [];
    let size = 0;
    let partial = "";
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bin, args, { cwd, stdio: ["ignore", "pipe", "ignore"] });
    } catch (e) {
      resolve({ code: null, lines: [JSON.stringify({ error: `cannot run ${bin}: ${String(e)}` })] });
      return;
    }
    const stop = () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    };
    const timer = opts.kill ? setTimeout(stop, timeoutMs) : undefined;
    timer?.unref?.();
    if (opts.kill && opts.signal) opts.signal.addEventListener("abort", stop, { once: true });
    child.stdout?.on("data", (chunk: Buffer) => {
      if (size > OUTPUT_CAP) return;
      size += chunk.length;
      partial += chunk.toString("utf8");
      let nl: number;
      while ((nl = partial.indexOf("\n")) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        lines.push(line);
        try {
          opts.onLine?.(line);
        } catch {
          // A listener never stops the reading.
        }
      }
    });
    child.on("error", (e) => {
      if (timer) clearTimeout(timer);
      resolve({ code: null, lines: [JSON.stringify({ error: `cannot run ${bin}: ${String(e)}` })] });
    });
    child.on("close", (code) => {
      if (timer) clearTimeout(timer);
      if (partial) lines.push(partial);
      resolve({ code, lines });
    });
  });

const parse = (line: string | undefined): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(line ?? "");
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

const result = (line: string | undefined, isError: boolean): Result => ({
  content: [{ type: "text", text: sanitize(line ?? JSON.stringify({ error: "intercom-pane gave no answer" })) }],
  details: parse(line) ?? null,
  isError,
});

export type ToolsHandle = { close(): void };

// Register the tools when this pi is the roster's coordinator. Resolves to the tool names
// registered (none for a worker, with INTERCOM_PANE_TOOLS=off, or when anything fails).
export const registerCoordinatorTools = async (
  pi: ToolsPi,
  opts: { bin: string; cwd: string; config?: string },
): Promise<{ names: string[]; handle: ToolsHandle }> => {
  let live = true;
  const handle = { close: () => { live = false; } };
  const none = { names: [] as string[], handle };
  if (process.env.INTERCOM_PANE_TOOLS === "off" || !pi.registerTool) return none;
  const base = ["--pi-pid", String(process.pid)];
  if (opts.config) base.push("--config", opts.config);
  // This pi's own registration may still be on its way (a slow machine): ask again a few times
  // while the answer is `not_registered`; any other refusal is final.
  let check: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < CHECK_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, CHECK_PAUSE_MS).unref?.());
    if (!live) return none;
    const checked = await run(opts.bin, ["tool", "check", ...base], opts.cwd, CHECK_MS, { kill: true });
    check = parse(checked.lines[0]);
    if (checked.code === 0 || check?.code !== "not_registered") break;
  }
  if (check?.coordinator !== true || !Array.isArray(check.tools)) return none;

  // The close's ending, given to the model once the detached job ends.
  const tell = (line: string | undefined, code: number | null) => {
    if (!live) return;
    const end = parse(line);
    const worker = typeof end?.worker === "string" ? end.worker : "the worker";
    const verdict = end?.closed === true ? "closed" : "not closed";
    const text = end
      ? `intercom_close_worker finished for ${worker}: ${verdict}.\n${line}`
      : `intercom_close_worker ended without a report (exit ${code}); see intercom_board.`;
    try {
      pi.sendMessage?.(
        { customType: "intercom-pane", content: sanitize(text), display: true, details: end ?? null },
        { triggerTurn: true, deliverAs: "followUp" },
      );
    } catch {
      // The session ended meanwhile: the outcome stays on the board (closeJob).
    }
  };

  const names: string[] = [];
  for (const d of check.tools as Def[]) {
    if (typeof d?.name !== "string" || typeof d.timeoutMs !== "number") continue;
    const argv = (params: unknown) => ["tool", d.name, ...base, "--args", JSON.stringify(params ?? {})];
    const execute = async (_id: string, params: unknown, signal?: AbortSignal): Promise<Result> => {
      if (!d.background) {
        const r = await run(opts.bin, argv(params), opts.cwd, d.timeoutMs, { kill: true, signal });
        return result(r.lines[r.lines.length - 1], r.code !== 0);
      }
      // The first line is the answer (acceptance with the job id, or the refusal); the job then
      // runs on detached and its last line is the outcome. Never killed from here.
      return new Promise<Result>((resolve) => {
        let answered = false;
        const answer = (r: Result) => {
          if (!answered) {
            answered = true;
            resolve(r);
          }
        };
        const timer = setTimeout(
          () => answer(result(JSON.stringify({ error: `no answer within ${d.timeoutMs / 1000} s; the close may still run: see intercom_board` }), true)),
          d.timeoutMs,
        );
        timer.unref?.();
        void run(opts.bin, argv(params), opts.cwd, d.timeoutMs, {
          kill: false,
          onLine: (line) => {
            if (answered) return;
            clearTimeout(timer);
            answer(result(line, parse(line)?.accepted !== true));
          },
        }).then((r) => {
          clearTimeout(timer);
          const first = parse(r.lines[0]);
          if (!answered) answer(result(r.lines[r.lines.length - 1], true));
          else if (first?.accepted === true) tell(r.lines.length > 1 ? r.lines[r.lines.length - 1] : undefined, r.code);
        });
      });
    };
    try {
      pi.registerTool({
        name: d.name,
        label: d.label,
        description: d.description,
        promptSnippet: d.promptSnippet,
        parameters: d.parameters,
        execute,
      });
      names.push(d.name);
    } catch {
      // A tool pi refuses is simply not there.
    }
  }
  return { names, handle };
};
