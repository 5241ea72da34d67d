// intercom-pane seat registration for pi.
//
// Install as a pi package (every pi: coordinator and workers): `pi install <checkout>/linux/pi-extension`
// (`pi remove` to uninstall). At session start, at the start and settlement of every agent run, after `/tree`
// moves its branch, and at shutdown, it runs `intercom-pane register` from inside this pi, so the
// board knows which pane the seat lives in and that a turn is running before pi writes anything
// to its session file. At session start it also runs `intercom-pane ensure-monitor`, which
// places the sidebar above the coordinator (and does nothing for workers).
//
// The coordinator's tools: in the roster's coordinator's pi only, once its seat is registered,
// `lib/coordinator-tools.ts` registers intercom_board, intercom_reply, intercom_close_worker,
// intercom_resume_worker, intercom_spawn_worker, intercom_wait and intercom_log for the model (the binary decides who the coordinator
// is and runs every call; see that file). INTERCOM_PANE_TOOLS=off turns them off.
//
// It never blocks pi: each call is spawned and forgotten, with a short timeout, one at a time
// (see makePicture), and any failure (no intercom-pane on PATH, a refusal) is ignored. It also
// reports what pi tells it — dialogs, retries, compaction, tools, how runs settle, the context
// fill — with the same command (`register --pi-state`), so the board can say what pi waits on.
// Set INTERCOM_PANE_BIN to use another binary and INTERCOM_PANE_CONFIG to pass `--config` (the
// same data root the board reads).
//
// The reply channel: at session start it opens a private Unix socket for this seat (in a fresh
// owner-only 0700 folder under $XDG_RUNTIME_DIR, else the temp folder) and advertises it in the
// registration (`register --channel`). `intercom-pane reply` (and the sidebar, and close-worker)
// hands a text to it and this extension gives it to pi with `pi.sendUserMessage` — no keystrokes,
// so a draft in the editor, copy mode, focus or pane size never matter; the text is the user
// message exactly (a first `!` or `/` is plain text here), and that it came from the board is
// shown to the person with `ctx.ui.notify`, outside the conversation. One JSON line each way
// (see src/mux/pi_channel.rs); the answer says what pi did:
// - `delivered`: pi was idle and a turn started with the text (seen in before_agent_start);
// - `queued`: pi was busy; the text waits in this extension's own queue and is handed to pi when
//   the running turn settles, one text per agent_settled (texts queued inside pi could be pulled
//   back into the editor by Escape, Alt+Up or /tree, in front of the person's draft);
// - `unconfirmed`: handed to pi but no turn started within 5 s (it is never sent again);
// - `failed`: refused (a text the reply text rules refuse, a full queue, pi threw).
// The text rules are src/reply_text.rs's, mirrored in `checkText` below; the channel also caps
// open connections, the request's size and each connection's time.
// INTERCOM_PANE_CHANNEL=off opens no channel (replies are then typed into the pane).
// Node cannot read a connecting peer's SO_PEERCRED; the 0700 folder lets only this user connect,
// and the intercom-pane side checks the listener's SO_PEERCRED (this pi, this user).

import { spawn } from "node:child_process";
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

type Entry = { type?: string; targetId?: string; message?: { role?: string; stopReason?: string } };

type Ctx = {
  cwd: string;
  compact?(options?: { onComplete?: (result: unknown) => void; onError?: (error: Error) => void }): void;
  ui?: {
    setStatus?(key: string, text: string | undefined): void;
    setWidget?(key: string, lines: string[] | undefined): void;
    notify?(message: string, kind?: "info" | "warning" | "error"): void;
  };
  isIdle?(): boolean;
  model?: { provider?: unknown; id?: unknown };
  getContextUsage?(): { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
  sessionManager: {
    getSessionId(): string | undefined;
    getSessionFile(): string | undefined;
    getSessionDir?(): string | undefined;
    getLeafEntry?(): Entry | undefined;
    getEntry?(id: string): Entry | undefined;
  };
};

type Pi = {
  on(event: string, handler: (event: unknown, ctx: Ctx) => unknown): void;
  sendUserMessage?(text: string, options?: { deliverAs?: "steer" | "followUp" }): void;
  registerCommand?(name: string, options: { description?: string; handler: (args: string, ctx: Ctx) => Promise<void> | void }): void;
};

const TIMEOUT_MS = 3000;
// How long a text handed to pi may take to start its turn before the answer is `unconfirmed`.
const CONFIRM_MS = 5000;
// Texts held while pi is busy; more are refused.
const QUEUE_CAP = 16;
// The channel's own limits, so a client (only this user can connect at all) cannot hold pi's
// process: open connections at once (more are closed at once), bytes of the one request line
// (a 2000-character text, JSON-escaped, fits well), time for that line to arrive,
// and time for the whole connection (the answer comes within CONFIRM_MS of the request).
const CONNECTION_CAP = 16;
const LINE_CAP = 32 * 1024;
const REQUEST_MS = 5000;
const CONNECTION_MS = 15_000;

// The reply text rules, mirrored from src/reply_text.rs (the one documented source; the
// real-pi tier checks both on one table of cases, tests/fixtures/reply_text_cases.json):
// controls first (C0 but LF and TAB, DEL, C1, bidi embedding/override/isolate), then blank (no
// character but whitespace and the invisible ones), then at most MAX_REPLY_CHARS characters.
export const MAX_REPLY_CHARS = 2000;
// reply_text::is_refused_control.
const isRefusedControl = (cp: number): boolean =>
  (cp < 0x20 && cp !== 0x0a && cp !== 0x09) ||
  (cp >= 0x7f && cp <= 0x9f) ||
  (cp >= 0x202a && cp <= 0x202e) ||
  (cp >= 0x2066 && cp <= 0x2069);
// Rust's char::is_whitespace (Unicode White_Space) and reply_text::INVISIBLE.
const INVISIBLE = new Set(
  [
    0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
    0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
    0x00ad, 0x034f, 0x061c, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x200b, 0x200c, 0x200d, 0x200e,
    0x200f, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f,
    0x2800, 0x3164, 0xfeff, 0xffa0,
  ],
);
export type TextVerdict = "ok" | "control" | "blank" | "too_long";

// The verdict of the text rules, with the detail a refusal names. A lone surrogate (JSON can
// carry one, UTF-8 cannot) is not text at all: refused like a control.
export const checkText = (text: string): { verdict: TextVerdict; detail: string } => {
  let count = 0;
  let visible = false;
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    count++;
    if ((cp >= 0xd800 && cp <= 0xdfff) || isRefusedControl(cp)) {
      const name = cp.toString(16).toUpperCase().padStart(4, "0");
      return { verdict: "control", detail: `refused: the text contains a control character (U+${name}) at character ${count}` };
    }
    if (!INVISIBLE.has(cp)) visible = true;
  }
  if (!visible) return { verdict: "blank", detail: "refused: blank text" };
  if (count > MAX_REPLY_CHARS) {
    return { verdict: "too_long", detail: `refused: the text is ${count} characters; at most ${MAX_REPLY_CHARS} are taken` };
  }
  return { verdict: "ok", detail: "" };
};

type Answer = (outcome: "delivered" | "queued" | "unconfirmed" | "failed", detail: string) => void;
type Item = { text: string; answer?: Answer };

// A private folder for the socket: a fresh one, ours, mode 0700, or none at all.
const privateFolder = (): string | undefined => {
  const uid = process.getuid?.();
  const runtime = process.env.XDG_RUNTIME_DIR;
  for (const base of [runtime, tmpdir()]) {
    if (!base) continue;
    try {
      const dir = mkdtempSync(join(base, "intercom-pane-"));
      const st = lstatSync(dir);
      if (st.isDirectory() && st.uid === uid && (st.mode & 0o777) === 0o700 && join(dir, "reply.sock").length < 100) {
        return dir;
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Try the next base.
    }
  }
  return undefined;
};

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

// Channel folders left by a pi that was killed before its session_shutdown: ours (uid, 0700),
// and either empty for over a minute or holding a socket nobody listens on (ECONNREFUSED is
// certain; anything else is left alone). Bounded; never waits.
const sweepStale = (base: string, mine: string) => {
  try {
    const uid = process.getuid?.();
    const names = readdirSync(base).filter((n) => n.startsWith("intercom-pane-")).slice(0, 64);
    for (const name of names) {
      const dir = join(base, name);
      if (dir === mine) continue;
      const st = lstatSync(dir);
      if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o777) !== 0o700) continue;
      const inside = readdirSync(dir);
      if (inside.length === 0) {
        if (Date.now() - st.mtimeMs > 60_000) rmSync(dir, { recursive: true, force: true });
        continue;
      }
      if (inside.length !== 1 || inside[0] !== "reply.sock") continue;
      const probe = connect(join(dir, "reply.sock"));
      probe.on("connect", () => probe.destroy());
      probe.on("error", (e: { code?: string }) => {
        if (e.code === "ECONNREFUSED") rmSync(dir, { recursive: true, force: true });
      });
      probe.setTimeout(1000, () => probe.destroy());
      probe.unref?.();
    }
  } catch {
    // Hygiene only.
  }
};

// What pi tells this extension beyond the run state, for the board (docs/interop.md §4, the
// registration's `pi` section): an open dialog (ui_prompt_start/end), a retry and its attempt,
// a compaction, the tool running (its name, never its arguments), how the last run settled
// (agent_settled, with `aborted`), and the context fill (ctx.getContextUsage()). pi tells
// extensions nothing of its retries directly: a failed provider call whose run ends
// (agent_end) and whose entry pi then marks with a `context_edit` is a scheduled retry; the
// next agent_start runs it; agent_settled ends the retries (exhausted, or cancelled when
// aborted); a successful call before that ends them too.
//
// Cheap and never blocking: each event only updates the picture below. Every register command
// of this runtime goes through one sender, one command at a time and in order: the run-state
// events (session_start, agent_start, agent_settled, session_tree) are each sent, carrying the
// newest picture; pi's other events are coalesced — at most one command per REPORT_GAP_MS,
// `register --event <newest event> --pi-state JSON` — so a burst (parallel tools, a dialog
// opened and closed at once) becomes one command carrying the newest picture. A turn's end
// only refreshes the context fill, sent with the next command. Nothing is awaited on pi's path
// but the shutdown record.
const REPORT_GAP_MS = 150;
// Most tool calls followed at once; calls beyond it are not counted.
const TOOLS_CAP = 256;
// How long after a failed run's agent_end to look for pi's retry mark, and how often.
const RETRY_LOOKS = 10;
const RETRY_LOOK_MS = 100;
const TITLE_CAP = 500;
const ERROR_CAP = 300;
const DIALOG_KINDS = new Set(["select", "confirm", "input", "editor", "custom"]);
const COMPACT_REASONS = new Set(["manual", "threshold", "overflow"]);

const iso = (ms: number) => new Date(ms).toISOString();
const clip = (s: unknown, cap: number): string | undefined =>
  typeof s === "string" && s.trim() !== "" ? Array.from(s).slice(0, cap).join("") : undefined;
// A tool's name as the board takes it ([A-Za-z0-9_.:/-], ≤ 64 bytes).
const toolName = (s: unknown): string =>
  (typeof s === "string" ? s : "tool").replace(/[^A-Za-z0-9_.:/-]/g, "_").slice(0, 64) || "tool";

type Send = (event: string, ctx: Ctx, picture: string, extra: string[]) => Promise<void>;
// Run-state events waiting to be sent (a bound: pi never has this many in flight).
const RUN_QUEUE_CAP = 64;

// One runtime's picture of its pi and the coalescing sender.
const makePicture = (send: Send, extra: () => Record<string, unknown> = () => ({})) => {
  let dialog: { kind: string; title?: string; since: string } | undefined;
  let retry: { attempt: number; phase: string; since: string; error?: string } | undefined;
  let compaction: { reason: string; phase: string; since: string; willRetry: boolean; error?: string } | undefined;
  let settled: { at: string; aborted: boolean; error: boolean } | undefined;
  let context: { tokens: number | null; window: number; percent: number | null; at: string } | undefined;
  const tools = new Map<string, { name: string; since: number }>();
  // The current run's last provider call failed (its error), and how many retries pi made.
  let failed: string | undefined;
  let attempt = 0;
  // Changes with every run boundary, so a late look for a retry mark belongs to its run only.
  let generation = 0;
  let lastCtx: Ctx | undefined;
  let pending: string | undefined;
  let sending = false;
  let gap: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const json = (): string => {
    const p: Record<string, unknown> = {};
    if (dialog) p.dialog = dialog;
    if (retry) p.retry = retry;
    if (compaction) p.compaction = compaction;
    const running = [...tools.values()];
    const newest = running[running.length - 1];
    if (newest) p.tool = { name: newest.name, since: iso(newest.since), running: running.length };
    if (settled) p.settled = settled;
    if (context) p.context = context;
    Object.assign(p, extra());
    return JSON.stringify(p);
  };

  const runQueue: { event: string; ctx: Ctx; extra: string[]; done: () => void }[] = [];
  // Send the next command: a queued run-state event first (it carries the newest picture, so a
  // pending pi event goes with it), else the pending pi event once the gap has passed.
  const pump = () => {
    if (stopped || sending) return;
    const run = runQueue.shift();
    if (!run && (gap || pending === undefined || !lastCtx)) return;
    const [event, ctx, extra] = run ? [run.event, run.ctx, run.extra] : [pending as string, lastCtx as Ctx, []];
    pending = undefined;
    sending = true;
    const started = Date.now();
    send(event, ctx, json(), extra).then(() => {
      sending = false;
      run?.done();
      if (gap) clearTimeout(gap);
      gap = setTimeout(() => {
        gap = undefined;
        pump();
      }, Math.max(0, REPORT_GAP_MS - (Date.now() - started)));
      gap.unref?.();
      if (runQueue.length > 0) pump();
    });
  };
  const report = (event: string, ctx: Ctx) => {
    lastCtx = ctx;
    pending = event;
    pump();
  };
  // Queue a run-state event; resolves once its command has ended (or at once when it is not
  // sent: stopped, or the queue is full).
  // How this pi was started, for a launch record in the data root when no command launched it
  // (`restore` starts it again the same way): pi's own arguments — pi hides them from /proc once
  // it names its process, process.argv keeps them — and the model it runs.
  const launchArgs = (ctx: Ctx): string[] => {
    const out: string[] = [];
    try {
      const args = process.argv.slice(2).filter((a) => typeof a === "string");
      const json = JSON.stringify(args);
      if (json.length <= 60000) out.push("--pi-args", json);
      const m = ctx.model;
      if (m && typeof m.provider === "string" && typeof m.id === "string") {
        const name = `${m.provider}/${m.id}`;
        if (name.length <= 200) out.push(`--model=${name}`);
      }
    } catch {
      // Best effort.
    }
    return out;
  };

  const sendRun = (event: string, ctx: Ctx, extra: string[] = []): Promise<void> =>
    new Promise<void>((done) => {
      lastCtx = ctx;
      if (stopped || runQueue.length >= RUN_QUEUE_CAP) return done();
      runQueue.push({ event, ctx, extra, done });
      pump();
    });

  const readContext = (ctx: Ctx) => {
    try {
      const u = ctx.getContextUsage?.();
      if (u && Number.isFinite(u.contextWindow) && u.contextWindow > 0) {
        const tokens = typeof u.tokens === "number" && Number.isFinite(u.tokens) ? Math.max(0, Math.round(u.tokens)) : null;
        const percent = typeof u.percent === "number" && Number.isFinite(u.percent) ? Math.max(0, u.percent) : null;
        context = { tokens, window: Math.round(u.contextWindow), percent, at: iso(Date.now()) };
      }
    } catch {
      // No context figure this time.
    }
  };

  // pi marks a failed entry (a context_edit pointing at it) when it schedules a retry, right
  // before its backoff: is the session's leaf such a mark (and no compaction recovers it)?
  const retryMarked = (ctx: Ctx): boolean => {
    const leaf = ctx.sessionManager.getLeafEntry?.();
    const target = leaf?.type === "context_edit" && leaf.targetId ? ctx.sessionManager.getEntry?.(leaf.targetId) : undefined;
    return target?.message?.role === "assistant" && target.message.stopReason === "error" && compaction?.phase !== "running";
  };
  const scheduleRetry = () => {
    attempt++;
    retry = { attempt, phase: "waiting", since: iso(Date.now()), error: failed };
  };
  // After a failed run's agent_end: look for the mark a few times; stop at the next run
  // boundary (agent_settled looks once more itself).
  const lookForRetry = (ctx: Ctx) => {
    const mine = generation;
    let looks = 0;
    const look = () => {
      if (stopped || mine !== generation || failed === undefined) return;
      try {
        if (retryMarked(ctx)) {
          scheduleRetry();
          return report("auto_retry_start", ctx);
        }
      } catch {
        return;
      }
      if (++looks < RETRY_LOOKS) setTimeout(look, RETRY_LOOK_MS).unref?.();
    };
    setTimeout(look, RETRY_LOOK_MS).unref?.();
  };

  const active = () => retry !== undefined && (retry.phase === "waiting" || retry.phase === "running");

  return {
    json,
    sendRun,
    // An event of this extension's own (the budget's hold and release), coalesced like pi's.
    poke(event: string, ctx: Ctx) {
      report(event, ctx);
    },
    agentStart(ctx: Ctx) {
      generation++;
      if (retry?.phase === "waiting") retry = { ...retry, phase: "running", since: iso(Date.now()) };
      sendRun("agent_start", ctx);
    },
    agentSettled(ctx: Ctx, aborted: boolean) {
      generation++;
      const now = iso(Date.now());
      // A retry scheduled and stopped before the looks saw it (Escape at once).
      try {
        if (failed !== undefined && !active() && retryMarked(ctx)) scheduleRetry();
      } catch {
        // Nothing more to learn.
      }
      if (active() && retry) {
        // Settled while waiting out a backoff: the person stopped the retries (pi reports
        // `aborted: false` then). Settled after a failed attempt: pi gave up.
        const phase =
          retry.phase === "waiting" || aborted ? "cancelled" : failed !== undefined ? "exhausted" : "succeeded";
        retry = { ...retry, phase, since: now };
      }
      settled = { at: now, aborted, error: failed !== undefined };
      failed = undefined;
      attempt = 0;
      tools.clear();
      readContext(ctx);
      sendRun("agent_settled", ctx);
    },
    sessionStart(ctx: Ctx): Promise<void> {
      readContext(ctx);
      return sendRun("session_start", ctx, launchArgs(ctx));
    },
    // Stop sending: what is queued is dropped (the caller records the shutdown itself).
    stop() {
      stopped = true;
      pending = undefined;
      for (const r of runQueue.splice(0)) r.done();
      if (gap) clearTimeout(gap);
      dialog = undefined;
      retry = undefined;
      compaction = undefined;
      tools.clear();
    },
    dialogStart(e: { kind?: unknown; title?: unknown }, ctx: Ctx) {
      const kind = typeof e.kind === "string" && DIALOG_KINDS.has(e.kind) ? e.kind : "custom";
      dialog = { kind, title: clip(e.title, TITLE_CAP), since: iso(Date.now()) };
      report("ui_prompt_start", ctx);
    },
    dialogEnd(ctx: Ctx) {
      dialog = undefined;
      report("ui_prompt_end", ctx);
    },
    toolStart(e: { toolCallId?: unknown; toolName?: unknown }, ctx: Ctx) {
      const id = String(e.toolCallId ?? "");
      if (tools.size < TOOLS_CAP) tools.set(id, { name: toolName(e.toolName), since: Date.now() });
      report("tool_execution_start", ctx);
    },
    toolEnd(e: { toolCallId?: unknown }, ctx: Ctx) {
      tools.delete(String(e.toolCallId ?? ""));
      report("tool_execution_end", ctx);
    },
    compactStart(e: { reason?: unknown; willRetry?: unknown }, ctx: Ctx) {
      const reason = typeof e.reason === "string" && COMPACT_REASONS.has(e.reason) ? e.reason : "manual";
      // An overflow's recovery marks the failed entry too: that mark was no retry.
      if (retry?.phase === "waiting" && reason === "overflow") {
        attempt = Math.max(0, attempt - 1);
        retry = undefined;
      }
      compaction = { reason, phase: "running", since: iso(Date.now()), willRetry: e.willRetry === true };
      report("session_before_compact", ctx);
    },
    compactEnd(e: { reason?: unknown; willRetry?: unknown; aborted?: unknown; errorMessage?: unknown }, ctx: Ctx, ok: boolean) {
      // pi refuses a compaction before it starts (nothing to compact, already compacted, no
      // model) with the same failure event, without session_before_compact: nothing ran.
      if (!ok && compaction?.phase !== "running") return;
      const reason = typeof e.reason === "string" && COMPACT_REASONS.has(e.reason) ? e.reason : compaction?.reason ?? "manual";
      const phase = ok ? "done" : e.aborted === true ? "aborted" : "failed";
      compaction = { reason, phase, since: iso(Date.now()), willRetry: e.willRetry === true, error: ok ? undefined : clip(e.errorMessage, ERROR_CAP) };
      readContext(ctx);
      report(ok ? "session_compact" : "session_compact_failed", ctx);
    },
    messageEnd(e: { message?: { role?: string; stopReason?: string; errorMessage?: unknown } }, ctx: Ctx) {
      const m = e.message;
      if (m?.role !== "assistant") return;
      if (m.stopReason === "error") {
        failed = clip(m.errorMessage, ERROR_CAP) ?? "error";
        return;
      }
      failed = undefined;
      if (active() && retry) {
        retry = { ...retry, phase: "succeeded", since: iso(Date.now()) };
        attempt = 0;
        report("auto_retry_end", ctx);
      }
    },
    agentEnd(ctx: Ctx) {
      if (failed !== undefined) lookForRetry(ctx);
    },
    turnEnd(ctx: Ctx) {
      readContext(ctx);
    },
  };
};

export default function (pi: Pi) {
  const bin = process.env.INTERCOM_PANE_BIN || "intercom-pane";

  // The channel of this runtime (pi builds a new runtime per session; each opens its own).
  let server: Server | undefined;
  let folder: string | undefined;
  let channel: string | undefined;
  let sessionCtx: Ctx | undefined;
  const queue: Item[] = [];
  // The text handed to pi whose turn has not been seen starting yet.
  let inFlight: { text: string; answer?: Answer; timer: ReturnType<typeof setTimeout> } | undefined;

  const handToPi = (item: Item) => {
    try {
      // followUp is ignored when idle (a turn starts) and avoids a rejection if pi just got busy.
      pi.sendUserMessage?.(item.text, { deliverAs: "followUp" });
    } catch (e) {
      item.answer?.("failed", `pi refused the message: ${String((e as Error)?.message ?? e).slice(0, 200)}`);
      return;
    }
    const timer = setTimeout(() => {
      const was = inFlight;
      inFlight = undefined;
      was?.answer?.("unconfirmed", `no turn started within ${CONFIRM_MS / 1000} s`);
      drain();
    }, CONFIRM_MS);
    timer.unref?.();
    inFlight = { text: item.text, answer: item.answer, timer };
  };

  // Hand the next held text to pi when nothing is in flight and pi is idle.
  const drain = () => {
    if (inFlight || queue.length === 0 || !(sessionCtx?.isIdle?.() ?? false)) return;
    const next = queue.shift();
    if (next) handToPi(next);
  };
  // A busy spell that ends without agent_settled (a manual /compact) must not strand held texts:
  // while any wait, look again every 2 s.
  let poll: ReturnType<typeof setInterval> | undefined;
  const watchQueue = () => {
    if (poll) return;
    poll = setInterval(() => {
      try {
        drain();
      } catch {
        // Never disturb pi.
      }
      if (queue.length === 0 && poll) {
        clearInterval(poll);
        poll = undefined;
      }
    }, 2000);
    poll.unref?.();
  };

  // `text` follows the text rules and reaches pi exactly as it is: nothing is added to it (a
  // `trailer` field that earlier intercom-pane versions sent is ignored).
  const receive = (text: string, answer: Answer) => {
    const rules = checkText(text);
    if (rules.verdict !== "ok") return answer("failed", rules.detail);
    if (!pi.sendUserMessage || !sessionCtx) return answer("failed", "this pi cannot take messages from extensions");
    // Prompts are held for the budget: this one waits behind them (see "Budgets" below).
    if (held.length > 0 && !budgetOff()) {
      if (held.length >= BUDGET_HELD_CAP) return answer("failed", `refused: ${BUDGET_HELD_CAP} prompts are held for the budget`);
      hold(text, sessionCtx);
      return answer("queued", `held by the budget: ${oneLine(lastVerdict?.line) || "reached"}; ${oneLine(lastVerdict?.lift)}`);
    }
    const idle = sessionCtx.isIdle?.() ?? false;
    if (!idle || inFlight || queue.length > 0) {
      if (queue.length >= QUEUE_CAP) return answer("failed", `refused: ${QUEUE_CAP} texts already wait`);
      queue.push({ text });
      watchQueue();
      return answer("queued", `pi is busy; held until its turn settles (${queue.length} waiting)`);
    }
    handToPi({ text, answer });
  };

  let connections = 0;
  const onConnection = (sock: Socket) => {
    if (connections >= CONNECTION_CAP) {
      sock.destroy();
      return;
    }
    connections++;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    // Absolute deadlines (an idle timeout would let a byte every few seconds hold it forever).
    const requestTimer = setTimeout(() => {
      if (!done) sock.destroy();
    }, REQUEST_MS);
    const lifeTimer = setTimeout(() => sock.destroy(), CONNECTION_MS);
    requestTimer.unref?.();
    lifeTimer.unref?.();
    sock.on("close", () => {
      connections--;
      clearTimeout(requestTimer);
      clearTimeout(lifeTimer);
    });
    sock.on("error", () => {});
    sock.on("data", (chunk: Buffer) => {
      if (done) return;
      const nl = chunk.indexOf(0x0a);
      size += nl < 0 ? chunk.length : nl;
      if (size > LINE_CAP) {
        done = true;
        sock.destroy();
        return;
      }
      if (nl < 0) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, nl));
      done = true;
      let req: { v?: unknown; id?: unknown; text?: unknown } | undefined;
      try {
        req = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        sock.destroy();
        return;
      }
      const id = typeof req?.id === "string" ? req.id.slice(0, 64) : "";
      const answer: Answer = (outcome, detail) => {
        if (!sock.destroyed) sock.end(JSON.stringify({ v: 1, id, outcome, detail }) + "\n");
      };
      if (req?.v !== 1 || typeof req.text !== "string") {
        return answer("failed", "not a reply request");
      }
      try {
        receive(req.text, answer);
      } catch {
        answer("failed", "the extension failed");
      }
    });
  };

  // Open the channel; resolves (within a second) to its socket path, or undefined.
  const openChannel = (): Promise<string | undefined> =>
    new Promise((resolve) => {
      try {
        // INTERCOM_PANE_CHANNEL=off: no channel; replies to this seat are typed into its pane.
        if (process.env.INTERCOM_PANE_CHANNEL === "off") return resolve(undefined);
        const dir = privateFolder();
        if (!dir) return resolve(undefined);
        const path = join(dir, "reply.sock");
        const srv = createServer(onConnection);
        const give = (p: string | undefined) => {
          clearTimeout(timer);
          resolve(p);
        };
        const timer = setTimeout(() => give(undefined), 1000);
        srv.on("error", () => {
          closeChannel();
          give(undefined);
        });
        srv.listen(path, () => {
          try {
            chmodSync(path, 0o600);
          } catch {
            // The folder alone keeps others out.
          }
          give(path);
          sweepStale(dirname(dir), dir);
        });
        srv.unref?.();
        server = srv;
        folder = dir;
        channel = path;
        // pi ends on SIGHUP or SIGTERM (its tmux server killed) through process.exit, without
        // waiting for session_shutdown: the folder goes with the process all the same. Only
        // synchronous work runs in an exit listener; the folder is this runtime's own.
        process.once("exit", () => {
          if (folder === dir) {
            try {
              rmSync(dir, { recursive: true, force: true });
            } catch {
              // Best effort: the next pi's sweep removes what is left.
            }
          }
        });
      } catch {
        resolve(undefined);
      }
    });

  const closeChannel = () => {
    try {
      server?.close();
    } catch {
      // Already closed.
    }
    if (folder) {
      try {
        rmSync(folder, { recursive: true, force: true });
      } catch {
        // Best effort: the folder is private and in a temp place.
      }
    }
    server = undefined;
    folder = undefined;
    channel = undefined;
    if (inFlight) clearTimeout(inFlight.timer);
    if (poll) clearInterval(poll);
    poll = undefined;
    inFlight = undefined;
    queue.length = 0;
  };

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
      if (channel) args.push("--channel", channel);
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

  // The coordinator's tools: loaded on demand, so this file alone (copied without `lib/`) still
  // registers seats; a load failure only means no tools.
  let tools: { close(): void } | undefined;
  const startTools = async (ctx: Ctx) => {
    try {
      const m = await import("./lib/coordinator-tools.ts");
      const got = await m.registerCoordinatorTools(pi as never, {
        bin,
        cwd: ctx.cwd,
        config: process.env.INTERCOM_PANE_CONFIG || undefined,
      });
      // The person sees that this pi's model has the tools (pi's footer).
      if (got.names.length > 0) ctx.ui?.setStatus?.("intercom-pane-tools", "intercom tools");
      tools = got.handle;
    } catch {
      // No tools; everything else works.
    }
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

  // Budgets (docs/behaviour.md, "Budgets"). Before pi takes a prompt — typed, replied through
  // the channel, or a held channel text handed on — the `input` handler asks the binary
  // (`intercom-pane budget --session-id ID --check`, the same evaluation the board shows, so
  // `budget NAME --raise` is seen at once, without a restart) and, when the worker's budget or
  // the fleet's is reached, holds the prompt here (pi's `input` event, handled): the running
  // turn is never touched, nothing is killed, nothing is typed. The person sees it above pi's
  // editor with how to lift it (`/budget raise USD`, or `intercom-pane budget NAME --raise 2`).
  // While any is held, the check runs again every BUDGET_POLL_MS with pi idle; once it is
  // lifted, one held prompt goes (exactly once: it is taken off the list before it is sent),
  // and the next only after pi is idle again and the check still lets it. With
  // `onContext: "compact"`, a prompt at the context limit waits while pi compacts, once.
  // The registration's `pi.budget` section says this extension enforces budgets, and what it
  // holds: the board shows the row as `waiting · budget reached` only from that record.
  // INTERCOM_PANE_BUDGET=off turns it off (no check at all).
  const BUDGET_HELD_CAP = 16;
  const BUDGET_POLL_MS = 2000;
  const CHECK_MS = 5000;
  const OUT_CAP = 64 * 1024;
  type Verdict = { level?: string; hold?: boolean; compact?: boolean; line?: string; lift?: string };
  const held: string[] = [];
  let heldSince: number | undefined;
  let releasing: string | undefined;
  let lastVerdict: Verdict | undefined;
  let compactTried = false;
  let compacting = false;
  let budgetPoll: ReturnType<typeof setInterval> | undefined;
  let polling = false;
  const budgetOff = () => process.env.INTERCOM_PANE_BUDGET === "off";

  // Run the binary with argv words (never a shell); its output, capped, within CHECK_MS.
  const runBin = (args: string[], ctx: Ctx): Promise<{ code: number | null; out: string; err: string }> =>
    new Promise((resolve) => {
      try {
        const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], timeout: CHECK_MS, cwd: ctx.cwd });
        let out = "";
        let err = "";
        child.stdout?.on("data", (c: Buffer) => {
          if (out.length < OUT_CAP) out += c.toString("utf8");
        });
        child.stderr?.on("data", (c: Buffer) => {
          if (err.length < OUT_CAP) err += c.toString("utf8");
        });
        child.on("error", () => resolve({ code: null, out: "", err: "" }));
        child.on("close", (code: number | null) => resolve({ code, out, err }));
      } catch {
        resolve({ code: null, out: "", err: "" });
      }
    });
  const budgetArgs = (ctx: Ctx, more: string[]): string[] | undefined => {
    const id = ctx.sessionManager.getSessionId();
    if (!id) return undefined;
    const args = ["budget", "--session-id", id, ...more];
    if (process.env.INTERCOM_PANE_CONFIG) args.push("--config", process.env.INTERCOM_PANE_CONFIG);
    return args;
  };
  // The binary's verdict; undefined when it cannot say (no roster, not a worker, no binary):
  // then nothing is held — a budget nobody can check is not enforced, and the board says so.
  const check = async (ctx: Ctx): Promise<Verdict | undefined> => {
    const args = budgetArgs(ctx, ["--check"]);
    if (!args) return undefined;
    const r = await runBin(args, ctx);
    if (r.code !== 0) return undefined;
    try {
      const v = JSON.parse(r.out);
      return v && typeof v === "object" ? (v as Verdict) : undefined;
    } catch {
      return undefined;
    }
  };
  const oneLine = (s: unknown): string =>
    typeof s === "string" ? Array.from(s.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")).slice(0, 300).join("") : "";
  const showHold = (ctx: Ctx) => {
    try {
      if (held.length === 0) {
        ctx.ui?.setWidget?.("intercom-pane-budget", undefined);
        ctx.ui?.setStatus?.("intercom-pane-budget", undefined);
        return;
      }
      const line = oneLine(lastVerdict?.line);
      const lift = oneLine(lastVerdict?.lift) || "/budget raise USD";
      const n = held.length === 1 ? "1 prompt is held" : `${held.length} prompts are held`;
      const what = compacting ? "pi is compacting (context limit)" : `budget reached${line ? ` (${line})` : ""}`;
      ctx.ui?.setWidget?.("intercom-pane-budget", [`intercom-pane: ${what}: ${n}, not sent.`, `Lift it: ${lift}`]);
      ctx.ui?.setStatus?.("intercom-pane-budget", "budget reached: prompt held");
    } catch {
      // Never disturb pi.
    }
  };
  const budgetSection = (): Record<string, unknown> =>
    budgetOff() ? {} : { budget: heldSince !== undefined ? { held: held.length, since: iso(heldSince) } : { held: 0 } };

  // What pi tells this extension, sent to the board coalesced (see makePicture).
  const picture = makePicture((event, ctx, p, extra) => record(event, ctx, [...extra, "--pi-state", p]), budgetSection);

  const releaseOne = (ctx: Ctx) => {
    const text = held.shift();
    if (text === undefined) return;
    if (held.length === 0) heldSince = undefined;
    releasing = text;
    compactTried = false;
    showHold(ctx);
    picture.poke("budget_release", ctx);
    try {
      pi.sendUserMessage?.(text, { deliverAs: "followUp" });
    } catch {
      releasing = undefined;
    }
  };
  // One look: with pi idle and nothing on its way, ask again; let one prompt go when lifted.
  const budgetTick = async () => {
    const ctx = sessionCtx;
    if (polling || !ctx || held.length === 0 || compacting || releasing !== undefined) return;
    if (!(ctx.isIdle?.() ?? false)) return;
    polling = true;
    try {
      const v = await check(ctx);
      if (v) lastVerdict = v;
      if (v && !v.hold && !(v.compact && compactTried)) releaseOne(ctx);
      else showHold(ctx);
    } finally {
      polling = false;
    }
  };
  const watchBudget = () => {
    if (budgetPoll) return;
    budgetPoll = setInterval(() => {
      if (held.length === 0 && budgetPoll) {
        clearInterval(budgetPoll);
        budgetPoll = undefined;
        return;
      }
      void budgetTick().catch(() => {});
    }, BUDGET_POLL_MS);
    budgetPoll.unref?.();
  };
  const hold = (text: string, ctx: Ctx) => {
    if (held.length >= BUDGET_HELD_CAP) {
      ctx.ui?.notify?.(`intercom-pane: not held and not sent: ${BUDGET_HELD_CAP} prompts are held already`, "error");
      return;
    }
    held.push(text);
    heldSince ??= Date.now();
    showHold(ctx);
    ctx.ui?.notify?.("intercom-pane: the budget is reached; this prompt is held, not sent", "warning");
    picture.poke("budget_hold", ctx);
    watchBudget();
  };
  const startCompaction = (ctx: Ctx) => {
    if (!ctx.compact) return false;
    compacting = true;
    compactTried = true;
    const done = () => {
      compacting = false;
      showHold(ctx);
    };
    try {
      ctx.compact({ onComplete: done, onError: done });
    } catch {
      compacting = false;
      return false;
    }
    return true;
  };

  pi.on("input", async (e, ctx) => {
    try {
      const ev = e as { text?: unknown; source?: unknown };
      if (budgetOff() || typeof ev.text !== "string") return { action: "continue" };
      const text = ev.text;
      // The held prompt let go: it passes once.
      if (ev.source === "extension" && releasing !== undefined && text === releasing) {
        releasing = undefined;
        return { action: "continue" };
      }
      // Behind prompts already held, in order.
      const v = held.length > 0 ? lastVerdict : await check(ctx);
      if (held.length === 0) lastVerdict = v;
      const compact = held.length === 0 && v?.compact === true && !v.hold && !compactTried && startCompaction(ctx);
      if (held.length === 0 && !compact && !v?.hold) return { action: "continue" };
      // A text from the board's channel: its sender hears it is held.
      if (inFlight && inFlight.text === text) {
        clearTimeout(inFlight.timer);
        const was = inFlight;
        inFlight = undefined;
        was.answer?.("queued", `held by the budget: ${oneLine(v?.line) || "reached"}; ${oneLine(v?.lift)}`);
      }
      hold(text, ctx);
      return { action: "handled" };
    } catch {
      return { action: "continue" };
    }
  });

  pi.registerCommand?.("budget", {
    description: "This worker's budget: /budget, /budget raise USD, /budget usd USD, /budget off",
    handler: async (args, ctx) => {
      try {
        const words = String(args ?? "").trim().split(/\s+/).filter((w) => w !== "");
        const verb: Record<string, string> = { raise: "--raise", usd: "--usd", tokens: "--tokens" };
        let more: string[] = [];
        if (words.length === 2 && verb[words[0]]) more = [verb[words[0]], words[1], "--by", "pi"];
        else if (words.length === 1 && words[0] === "off") more = ["--off", "--by", "pi"];
        else if (words.length > 0) {
          ctx.ui?.notify?.("usage: /budget, /budget raise USD, /budget usd USD, /budget tokens N, /budget off", "error");
          return;
        }
        const a = budgetArgs(ctx, [...more, "--json"]);
        if (!a) return;
        const r = await runBin(a, ctx);
        if (r.code !== 0) {
          ctx.ui?.notify?.(`intercom-pane budget: ${oneLine(r.err.trim()) || "failed"}`, "error");
          return;
        }
        const rep = JSON.parse(r.out) as { standing?: { line?: string }; changed?: unknown };
        const line = oneLine(rep.standing?.line) || "no budget";
        ctx.ui?.notify?.(`intercom-pane budget: ${rep.changed ? "changed; " : ""}${line}`, "info");
        void budgetTick().catch(() => {});
      } catch {
        ctx.ui?.notify?.("intercom-pane budget: failed", "error");
      }
    },
  });
  const withPicture = (extra: string[] = []) => [...extra, "--pi-state", picture.json()];
  // Never disturb pi: a handler that throws is ignored, and none returns a value (several of
  // these events let a handler's result change what pi does).
  const on = <E>(event: string, handler: (e: E, ctx: Ctx) => void) =>
    pi.on(event, (e, ctx) => {
      try {
        handler(e as E, ctx);
      } catch {
        // Reporting is best effort.
      }
    });

  pi.on("session_start", async (_e, ctx) => {
    sessionCtx = ctx;
    await openChannel();
    let registered: Promise<void> = Promise.resolve();
    try {
      registered = picture.sessionStart(ctx);
    } catch {
      // Registration is best effort; pi must never notice it.
    }
    ensureMonitor(ctx);
    // The coordinator's tools (lib/coordinator-tools.ts), once this seat is registered: the
    // binary checks that the roster's coordinator's live registration is this very pi.
    void registered.then(() => startTools(ctx));
  });
  pi.on("before_agent_start", (e, ctx) => {
    const prompt = (e as { prompt?: unknown }).prompt;
    if (inFlight && prompt === inFlight.text) {
      clearTimeout(inFlight.timer);
      const was = inFlight;
      inFlight = undefined;
      was.answer?.("delivered", "pi started a turn with it");
      // Where the text came from, for the person at this pi: shown in pi's window, never part
      // of the conversation (the model gets exactly the text that was sent, nothing added).
      try {
        ctx.ui?.notify?.("intercom-pane: this message was sent from the board (intercom-pane reply)", "info");
      } catch {
        // Never disturb pi.
      }
    }
  });
  on("agent_start", (_e, ctx) => picture.agentStart(ctx));
  pi.on("agent_settled", (e, ctx) => {
    try {
      picture.agentSettled(ctx, (e as { aborted?: unknown }).aborted === true);
    } catch {
      // Registration is best effort.
    }
    // One held text per settled run; pi starts it after every settled handler has finished.
    try {
      drain();
    } catch {
      // Never disturb pi.
    }
  });
  // `/tree` moves pi's leaf and writes nothing until the next entry (unless summarized): tell
  // the board where the branch now ends.
  on<{ newLeafId?: string | null }>("session_tree", (e, ctx) => {
    if (e.newLeafId) picture.sendRun("session_tree", ctx, ["--leaf-id", e.newLeafId]);
  });
  on<{ kind?: unknown; title?: unknown }>("ui_prompt_start", (e, ctx) => picture.dialogStart(e, ctx));
  on("ui_prompt_end", (_e, ctx) => picture.dialogEnd(ctx));
  on<{ toolCallId?: unknown; toolName?: unknown }>("tool_execution_start", (e, ctx) => picture.toolStart(e, ctx));
  on<{ toolCallId?: unknown }>("tool_execution_end", (e, ctx) => picture.toolEnd(e, ctx));
  on<{ reason?: unknown; willRetry?: unknown }>("session_before_compact", (e, ctx) => picture.compactStart(e, ctx));
  on<{ reason?: unknown; willRetry?: unknown }>("session_compact", (e, ctx) => picture.compactEnd(e, ctx, true));
  on<{ reason?: unknown; willRetry?: unknown; aborted?: unknown; errorMessage?: unknown }>(
    "session_compact_failed",
    (e, ctx) => picture.compactEnd(e, ctx, false),
  );
  on<{ message?: { role?: string; stopReason?: string; errorMessage?: unknown } }>("message_end", (e, ctx) =>
    picture.messageEnd(e, ctx),
  );
  on("agent_end", (_e, ctx) => picture.agentEnd(ctx));
  on("turn_end", (_e, ctx) => picture.turnEnd(ctx));
  pi.on("session_shutdown", (_e, ctx) => {
    tools?.close();
    tools = undefined;
    closeChannel();
    sessionCtx = undefined;
    if (budgetPoll) clearInterval(budgetPoll);
    budgetPoll = undefined;
    picture.stop();
    return record("session_shutdown", ctx, withPicture());
  });
}
