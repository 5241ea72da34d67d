//! `intercom-pane log NAME`: a worker's timeline from its pi session file, found through the
//! scan as `explain` finds it. Real pi 1.6.0 sessions (tests/fixtures/pi-sessions) give golden
//! lines; synthetic sessions in pi's shape add tools (one failing), an aborted turn, a retry, a
//! compaction and a question answered; `--since` reads backward only to its cutoff; torn, huge
//! and hostile lines are skipped and counted; `--follow` prints a new tool call as pi writes it.
//! (Not the opt-in diagnostic log of `log_cli`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support::*;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use intercom_pane::seam::cmd::exit::LogExit;
use serde_json::{json, Value};

const ID: &str = "01a2f000-0000-7000-8000-0000000038aa";

fn env_with_seat() -> (Env, PathBuf) {
    seat_in(Env::new())
}

/// In `env`: a roster whose worker `Worker` is session `ID`; where its session file goes.
fn seat_in(env: Env) -> (Env, PathBuf) {
    std::fs::create_dir_all(env.path("data")).unwrap();
    let root = env.path("root");
    write_roster(&root, &[(ID, "Worker")]);
    let dir = env.path("sessions/--work--");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("2026-12-01T10-00-00-000Z_{ID}.jsonl"));
    (env, file)
}

fn ts(ms: i64) -> String {
    intercom_pane::seam::clock::format_iso(ms)
}

/// 2026-12-01T10:00:00Z plus `s` seconds.
fn at(s: i64) -> String {
    ts(1_796_119_200_000 + s * 1000)
}

fn header() -> Value {
    json!({"type":"session","version":3,"id":ID,"timestamp":at(0),"cwd":"/w"})
}

fn user(s: i64, id: &str, text: &str) -> Value {
    json!({"type":"message","id":id,"timestamp":at(s),"message":{"role":"user","content":[{"type":"text","text":text}]}})
}

fn assistant(s: i64, id: &str, stop: &str, text: &str, calls: &[(&str, &str, Value)]) -> Value {
    let mut content = vec![json!({"type":"text","text":text})];
    for (cid, name, args) in calls {
        content.push(json!({"type":"toolCall","id":cid,"name":name,"arguments":args}));
    }
    let mut m = json!({"role":"assistant","content":content,"api":"openai-completions","provider":"fake","model":"fake-model",
        "usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.01}},"stopReason":stop});
    if stop == "error" {
        m["errorMessage"] = json!("500: upstream \u{1b}[31mdown");
        m["content"] = json!([]);
    }
    if stop == "aborted" {
        m["errorMessage"] = json!("Operation aborted");
    }
    json!({"type":"message","id":id,"timestamp":at(s),"message":m})
}

fn result(s: i64, call: &str, name: &str, err: bool, ms: i64) -> Value {
    json!({"type":"message","id":format!("r-{call}"),"timestamp":at(s),"message":{"role":"toolResult","toolCallId":call,"toolName":name,
        "content":[{"type":"text","text":"out"}],"isError":err,"durationMs":ms}})
}

fn write_lines(file: &Path, lines: &[Value]) {
    std::fs::write(
        file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
}

/// A session with everything a timeline shows: a turn with two tools (one failing), a
/// question and its answer, an aborted turn, a retried call that then succeeded, a compaction.
fn full_session() -> Vec<Value> {
    vec![
        header(),
        json!({"type":"model_change","id":"mc","timestamp":at(0),"provider":"fake","modelId":"fake-model"}),
        user(10, "u1", "Fix the build"),
        assistant(
            12,
            "a1",
            "toolUse",
            "Looking.",
            &[
                ("c1", "bash", json!({"command":"cargo build\n--release"})),
                ("c2", "read", json!({"path":"src/lib.rs"})),
            ],
        ),
        result(15, "c1", "bash", true, 3000),
        result(16, "c2", "read", false, 40),
        assistant(
            20,
            "a2",
            "stop",
            "Input needed: Which target, x86 or arm?\nDetails follow.",
            &[],
        ),
        user(60, "u2", "arm please"),
        assistant(61, "a3", "aborted", "", &[]),
        user(70, "u3", "Try again"),
        assistant(71, "a4", "error", "", &[]),
        json!({"type":"context_edit","id":"ce1","timestamp":at(71),"targetId":"a4","replacement":null}),
        assistant(75, "a5", "stop", "Built for arm.", &[]),
        json!({"type":"compaction","id":"cp","timestamp":at(80),"summary":"s","firstKeptEntryId":"a5","tokensBefore":1000}),
    ]
}

fn log(env: &Env, name: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--now", "2026-12-01T11:00:00.000Z"];
    args.extend_from_slice(extra);
    env.run(&layout_args(env, &["log", name], &args))
}

fn log_json(env: &Env, extra: &[&str]) -> Value {
    let mut a = vec!["--json"];
    a.extend_from_slice(extra);
    stdout_json(&log(env, "Worker", &a))
}

fn kinds(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let k = e["kind"].as_str().unwrap();
            match k {
                "turn" => format!("turn:{}", e["outcome"].as_str().unwrap()),
                "tool" => format!(
                    "tool:{}:{}",
                    e["name"].as_str().unwrap(),
                    e["outcome"].as_str().unwrap()
                ),
                "event" => e["event"].as_str().unwrap().to_string(),
                k => k.to_string(),
            }
        })
        .collect()
}

#[test]
fn real_pi_sessions_give_their_turns_tools_and_questions() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("data")).unwrap();
    pi_root(&env, &["tool.completed", "waiting", "error"]);
    let o = log(&env, "W-tool.completed", &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "2026-11-29 23:14:04  turn     settled 2m00s · fake-model · 200 in · 6 out · cost unknown (no pricing) · 1 tool · “Run the long command. SCENARIO:tool SLEEP=120”\n\
         2026-11-29 23:14:04  tool     bash ok 2m00s · sleep 120\n"
    );
    let v = stdout_json(&log(&env, "W-tool.completed", &["--json"]));
    let tool = &v["entries"][1];
    assert_eq!(
        (&tool["durationMs"], &tool["ended"]),
        (&json!(120021), &json!("2026-11-29T23:16:04.519Z"))
    );
    assert_eq!(v["entries"][0]["usage"]["calls"], 2);
    let v = stdout_json(&log(&env, "W-waiting", &["--json"]));
    assert_eq!(kinds(&v), ["turn:settled", "question"]);
    assert_eq!(
        v["entries"][1]["text"],
        "Choose staging or production for the approved test."
    );
    let v = stdout_json(&log(&env, "W-error", &["--json"]));
    assert_eq!(kinds(&v), ["turn:error"]);
    assert!(
        v["entries"][0]["error"]
            .as_str()
            .unwrap()
            .starts_with("400"),
        "{v}"
    );
}

/// A roster whose one worker is the real pi run `name` (tests/fixtures/pi-1.6.0-runs).
fn env_with_run(name: &str) -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.path("data")).unwrap();
    let src = Path::new(FIXTURES).join(format!("pi-1.6.0-runs/{name}.jsonl"));
    let id = header_id(&src);
    write_roster(&env.path("root"), &[(&id, "Worker")]);
    let dir = env.path("sessions/--work--");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        &src,
        dir.join(format!("2026-11-30T02-00-00-000Z_{id}.jsonl")),
    )
    .unwrap();
    env
}

#[test]
fn real_pi_runs_give_retries_aborts_failed_tools_and_compactions() {
    let text = |name: &str| {
        let env = env_with_run(name);
        let o = log(&env, "Worker", &[]);
        assert_eq!(o.status.code(), Some(0), "{name}: {o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    // Three HTTP 500s, pi inside its backoff; then the fourth, final.
    assert_eq!(
        text("retry500k9_fail3"),
        "2026-11-30 02:08:02  turn     retried 6.1s · fake-model · 0 in · 0 out · cost unknown (no pricing) · 3 retries · error: 500: {\"message\":\"fake 500 #3\",\"type\":\"server_error\"} · “SCENARIO:err500k9 go”\n"
    );
    assert_eq!(
        text("retry500k9_fail4"),
        "2026-11-30 02:08:02  turn     error 14.1s · fake-model · 0 in · 0 out · cost unknown (no pricing) · 3 retries · error: 500: {\"message\":\"fake 500 #4\",\"type\":\"server_error\"} · “SCENARIO:err500k9 go”\n"
    );
    // Escape while streaming, then while the bash tool ran.
    assert_eq!(
        text("abort_tool"),
        "2026-11-30 02:09:27  turn     aborted 2.3s · fake-model · 0 in · 0 out · cost unknown (no pricing) · error: Operation aborted · “SCENARIO:slow go”\n\
         2026-11-30 02:09:30  turn     aborted 2.1s · fake-model · 100 in · 3 out · cost unknown (no pricing) · 1 tool · error: Operation aborted · “SCENARIO:slowtool go”\n\
         2026-11-30 02:09:30  tool     bash FAILED 2.1s · sleep 30\n"
    );
    assert_eq!(
        text("fail_tool_then_text"),
        "2026-11-30 02:07:12  turn     settled 161ms · fake-model · 200 in · 6 out · cost unknown (no pricing) · 1 tool · “SCENARIO:fail go”\n\
         2026-11-30 02:07:12  tool     bash FAILED 18ms · echo oops; exit 1\n"
    );
    // A context overflow: the failed call is compacted and retried; a question, then a manual
    // compaction.
    for (name, want) in [
        (
            "overflow_compacted_retrying",
            &[
                "turn:settled",
                "turn:settled",
                "turn:compacted",
                "compaction",
            ][..],
        ),
        (
            "compact_after_waiting",
            &[
                "turn:settled",
                "turn:settled",
                "compaction",
                "turn:settled",
                "question",
                "compaction",
            ][..],
        ),
    ] {
        let v = stdout_json(&log(&env_with_run(name), "Worker", &["--json"]));
        assert_eq!(kinds(&v), want, "{name}");
        if name.starts_with("overflow") {
            assert_eq!(v["entries"][2]["retries"], 1);
        }
    }
}

#[test]
fn every_kind_of_entry_in_order_with_durations_costs_and_the_answer() {
    let (env, file) = env_with_seat();
    write_lines(&file, &full_session());
    let v = log_json(&env, &[]);
    assert_eq!(
        kinds(&v),
        [
            "turn:settled",
            "tool:bash:error",
            "tool:read:ok",
            "question",
            "answer",
            "turn:aborted",
            "turn:settled",
            "compaction"
        ],
        "{v:#}"
    );
    let e = &v["entries"];
    assert_eq!(e[0]["durationMs"], 10_000);
    assert_eq!(e[0]["tools"], 2);
    assert_eq!(e[0]["usage"]["cost"], 0.02);
    assert_eq!(e[0]["usage"]["input"], 200);
    assert_eq!(e[1]["args"], "cargo build…");
    assert_eq!(e[1]["durationMs"], 3000);
    assert_eq!(e[2]["args"], "src/lib.rs");
    assert_eq!(e[3]["text"], "Which target, x86 or arm?");
    assert_eq!(e[4]["text"], "arm please");
    assert_eq!(e[4]["sender"], "unknown");
    assert_eq!(e[5]["error"], "Operation aborted");
    // The retried turn: the failed attempt, then the answer; settled with one retry.
    assert_eq!(
        (&e[6]["retries"], &e[6]["durationMs"]),
        (&json!(1), &json!(5000))
    );
    assert_eq!(e[6]["usage"]["calls"], 2);
    let text = String::from_utf8(log(&env, "Worker", &[]).stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines[1].contains("tool     bash FAILED 3.0s · cargo build…"),
        "{text}"
    );
    assert!(
        lines[4].ends_with("answer   arm please · unknown sender"),
        "{text}"
    );
    assert!(
        lines[6].contains("settled 5.0s") && lines[6].contains("1 retry"),
        "{text}"
    );
}

#[test]
fn the_handoff_and_close_job_in_the_roster_are_among_the_entries() {
    let (env, file) = env_with_seat();
    write_lines(&file, &full_session());
    let root = env.path("root");
    let cfg = json!({"version": 1, "agents": [
        {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
        {"sessionId": ID, "name": "Worker", "coordinator": false, "description": "W.", "port": 2, "projectDirectory": ".",
         "handoff": {"version": 1, "jobId": "job-1", "summary": "Built for arm.\n\u{1b}[2JAll green.", "updatedAt": at(77)},
         "closeJob": {"jobId": "job-1", "state": "timed_out", "reason": "timeout", "createdAt": at(76), "updatedAt": at(90), "deadlineAt": at(196)}}]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    let v = log_json(&env, &[]);
    let k = kinds(&v);
    assert_eq!(
        k[k.len() - 4..],
        ["turn:settled", "handoff", "compaction", "close"],
        "{v:#}"
    );
    let text = String::from_utf8(log(&env, "Worker", &[]).stdout).unwrap();
    assert!(
        text.contains("handoff  job job-1: Built for arm. All green."),
        "{text}"
    );
    assert!(
        text.contains("close    job job-1: timed_out (timeout)"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'));
    // Older than --since: left out with the rest.
    let v = log_json(&env, &["--since", &at(85)]);
    assert_eq!(kinds(&v), ["close"]);
}

/// An answer sent with `reply` is named as such: the reply path records who sent which text
/// (`<dataRoot>/replies/<sessionId>.jsonl`, a digest, not the text), and `log` matches the
/// message pi wrote to it. A message nobody recorded stays `unknown`.
#[test]
fn an_answer_sent_with_reply_names_its_sender() {
    let (env, file) = seat_in(Env::new().with_system_path());
    let root = env.path("root");
    let now = intercom_pane::seam::clock::SystemClock;
    let now_ms = intercom_pane::seam::clock::Clock::now_ms(&now);
    let t = |d: i64| ts(now_ms + d);
    let mut lines = vec![
        header(),
        json!({"type":"message","id":"u1","timestamp":t(-60_000),"message":{"role":"user","content":"Deploy it"}}),
        json!({"type":"message","id":"a1","timestamp":t(-50_000),"message":{"role":"assistant","content":[{"type":"text","text":"Input needed: staging or production?"}],"stopReason":"stop"}}),
    ];
    write_lines(&file, &lines);
    // A registered seat in a private tmux server: what it is typed goes to typed.txt.
    let sys = env.system_config();
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {} >/dev/null; cat > {}; true",
        root.display(),
        env.path("typed.txt").display(),
        bin = env!("CARGO_BIN_EXE_intercom-pane"),
    );
    let argv = crate::pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = crate::mux_support::TmuxServer::start("seat", &root, &argv);
    let sock = server.sock.display().to_string();
    wait_registered(&root.join(".pi-intercom/seats"));
    let text = "staging, $(touch x)";
    let o = env.run(&layout_args(
        &env,
        &["reply", "worker", text],
        &["--tmux-socket", &sock, "--json"],
    ));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rec = std::fs::read_to_string(env.path(&format!("data/replies/{ID}.jsonl"))).unwrap();
    assert!(
        rec.contains("\"from\":\"reply\"") && !rec.contains("staging"),
        "{rec}"
    );
    // pi writes the message it received; and one typed by hand that nobody recorded.
    lines.push(json!({"type":"message","id":"u2","timestamp":t(1_000),"message":{"role":"user","content":[{"type":"text","text":text}]}}));
    lines.push(json!({"type":"message","id":"a2","timestamp":t(2_000),"message":{"role":"assistant","content":[{"type":"text","text":"Input needed: sure?"}],"stopReason":"stop"}}));
    lines.push(json!({"type":"message","id":"u3","timestamp":t(3_000),"message":{"role":"user","content":"yes"}}));
    write_lines(&file, &lines);
    let o = env.run(&layout_args(
        &env,
        &["log", "Worker", "--json"],
        &["--tmux-socket", &sock],
    ));
    let v = stdout_json(&o);
    let answers: Vec<&Value> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "answer")
        .collect();
    assert_eq!(answers.len(), 2, "{v:#}");
    assert_eq!(answers[0]["sender"], "reply", "{v:#}");
    assert!(answers[0]["sentAt"].is_string());
    assert_eq!(answers[1]["sender"], "unknown");
    let o = env.run(&layout_args(
        &env,
        &["log", "Worker"],
        &["--tmux-socket", &sock],
    ));
    let text_out = String::from_utf8(o.stdout).unwrap();
    assert!(
        text_out.contains("answer   staging, $(touch x) · from `reply`"),
        "{text_out}"
    );
    assert!(!env.path("x").exists() && !root.join("x").exists());
}

#[test]
fn a_retry_still_pending_and_a_compaction_that_recovers_say_so() {
    let (env, file) = env_with_seat();
    let mut lines = vec![
        header(),
        user(10, "u1", "go"),
        assistant(11, "a1", "error", "", &[]),
    ];
    lines.push(json!({"type":"context_edit","id":"ce","timestamp":at(11),"targetId":"a1","replacement":null}));
    write_lines(&file, &lines);
    let v = log_json(&env, &[]);
    assert_eq!(kinds(&v), ["turn:retried"]);
    // The error text reaches the terminal without its escape sequence.
    let text = String::from_utf8(log(&env, "Worker", &[]).stdout).unwrap();
    assert!(
        text.contains("retried") && text.contains("error: 500: upstream down"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text:?}");
    lines.push(json!({"type":"compaction","id":"cp","timestamp":at(12)}));
    write_lines(&file, &lines);
    assert_eq!(
        kinds(&log_json(&env, &[])),
        ["turn:compacted", "compaction"]
    );
}

#[test]
fn since_reads_only_back_to_its_cutoff() {
    let (env, file) = env_with_seat();
    // An hour of old turns, then the last ten minutes before --now (11:00).
    let mut lines = vec![header()];
    for i in 0..200 {
        let s = 60 + i * 10;
        lines.push(user(s, &format!("u{i}"), "old"));
        lines.push(assistant(s + 1, &format!("a{i}"), "stop", "done", &[]));
    }
    lines.push(user(3100, "n1", "recent"));
    lines.push(assistant(
        3101,
        "n2",
        "toolUse",
        "",
        &[("k1", "bash", json!({"command":"ls"}))],
    ));
    lines.push(result(3102, "k1", "bash", false, 5));
    lines.push(assistant(3103, "n3", "stop", "ok", &[]));
    write_lines(&file, &lines);
    let all = log_json(&env, &[]);
    assert_eq!(all["entries"].as_array().unwrap().len(), 202);
    // 11:00 - 10m = 10:50; the recent turn started at 10:51:40.
    let v = log_json(&env, &["--since", "10m"]);
    assert_eq!(kinds(&v), ["turn:settled", "tool:bash:ok"]);
    assert_eq!(v["entries"][0]["prompt"], "recent");
    assert_eq!(v["since"], "2026-12-01T10:50:00.000Z");
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(
        v["bytesRead"].as_u64().unwrap() < size / 4,
        "read {} of {size}",
        v["bytesRead"]
    );
    let v = log_json(&env, &["--since", "2026-12-01T10:33:20Z"]);
    // Turns at 10:33:20 and later: six old ones, then the recent turn and its tool.
    assert_eq!(v["entries"].as_array().unwrap().len(), 6 + 2);
    // Nothing in the window.
    let text = String::from_utf8(log(&env, "Worker", &["--since", "1s"]).stdout).unwrap();
    assert_eq!(text, "nothing since 2026-12-01 10:59:59\n");
}

#[test]
fn torn_huge_and_hostile_lines_are_skipped_and_counted() {
    let (env, file) = env_with_seat();
    let mut bytes = String::new();
    for l in full_session().iter().take(6) {
        bytes.push_str(&format!("{l}\n"));
    }
    bytes.push_str("{\"type\":\"message\",\"message\":{\"role\":\n"); // cut JSON
    bytes.push_str("\u{0}\u{0}\u{0}garbage\n");
    bytes.push_str("[1,2,3]\n");
    // A line longer than the 8 MiB line cap, then a hostile question after it.
    let huge = "x".repeat(9 * 1024 * 1024);
    bytes.push_str(&format!(
        "{}\n",
        json!({"type":"message","id":"h","timestamp":at(17),"message":{"role":"toolResult","toolCallId":"zz","content":[{"type":"text","text":huge}]}})
    ));
    bytes.push_str(&format!(
        "{}\n",
        assistant(
            20,
            "q",
            "stop",
            "Input needed: pick \u{1b}]0;owned\u{7}one\u{202e} $(touch x) #(touch y)",
            &[]
        )
    ));
    bytes.push_str("{\"type\":\"message\",\"timestamp\":\"2026"); // torn: no newline
    std::fs::write(&file, &bytes).unwrap();
    let v = log_json(&env, &[]);
    assert_eq!(
        v["skipped"],
        json!({"unreadable": 3, "huge": 1, "torn": 1, "dropped": 0}),
        "{v:#}"
    );
    assert_eq!(
        kinds(&v),
        [
            "turn:settled",
            "tool:bash:error",
            "tool:read:ok",
            "question"
        ]
    );
    let o = log(&env, "Worker", &[]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'));
    assert!(
        text.contains("question pick one $(touch x) #(touch y)"),
        "{text}"
    );
    assert!(
        text.contains("(3 unreadable and 1 oversized lines skipped)"),
        "{text}"
    );
}

#[test]
fn refusals_have_their_exit_codes() {
    let (env, file) = env_with_seat();
    let o = log(&env, "Nobody", &[]);
    assert_eq!(o.status.code(), Some(LogExit::UnknownSeat.code()));
    // No session file yet.
    let o = log(&env, "Worker", &[]);
    assert_eq!(o.status.code(), Some(LogExit::NoSession.code()), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no session file yet"));
    write_lines(&file, &full_session());
    for bad in ["soon", "5y", "-3m", "$(touch x)"] {
        let o = log(&env, "Worker", &[&format!("--since={bad}")]);
        assert_eq!(o.status.code(), Some(LogExit::Refused.code()), "{bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--since"));
    }
    assert!(!env.path("x").exists());
    // Another machine's timeline is one bounded call: --follow is this machine's only.
    let o = env.run(&["log", "Worker", "--host", "far=127.0.0.1", "--follow"]);
    assert_eq!(o.status.code(), Some(LogExit::Refused.code()));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--follow follows a session file on this machine only"));
}

#[test]
fn follow_prints_a_new_tool_call_as_pi_writes_it_and_waits_for_a_torn_line() {
    let (env, file) = env_with_seat();
    write_lines(&file, &full_session()[..3]);
    let mut child = env
        .command(&layout_args(
            &env,
            &["log", "Worker"],
            &["--follow", "--json"],
        ))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Value)>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines() {
            let Ok(l) = l else { break };
            let v: Value = serde_json::from_str(&l).unwrap();
            if tx.send((Instant::now(), v)).is_err() {
                break;
            }
        }
    });
    let next = |what: &str| {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("no line for {what}"))
    };
    // The first read: the open turn.
    let (_, first) = next("the first read");
    assert_eq!(first["kind"], "turn");
    assert_eq!(first["outcome"], "running");
    // Lines appended before its watch exists are not missed: each wake reads first.
    let append = |bytes: &str| {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(bytes.as_bytes()).unwrap();
        f.flush().unwrap();
        Instant::now()
    };
    let mut best = Duration::MAX;
    for i in 0..3 {
        let call = format!("f{i}");
        let line = assistant(
            30 + i,
            &format!("fa{i}"),
            "toolUse",
            "",
            &[(&call, "bash", json!({"command": format!("step {i}")}))],
        );
        let wrote = append(&format!("{line}\n"));
        // The turn changed (more usage), then the tool call.
        let mut seen = None;
        while seen.is_none() {
            let (when, v) = next("the tool call");
            if v["kind"] == "tool" && v["args"] == format!("step {i}") {
                assert_eq!(v["outcome"], "running");
                seen = Some(when.saturating_duration_since(wrote));
            }
        }
        best = best.min(seen.unwrap());
        assert!(seen.unwrap() < Duration::from_secs(2), "{seen:?}");
    }
    assert!(best <= Duration::from_millis(200), "best {best:?}");
    // A torn line waits for its newline.
    let done = result(40, "f0", "bash", false, 9).to_string();
    let (a, b) = done.split_at(done.len() / 2);
    append(a);
    assert!(
        rx.recv_timeout(Duration::from_millis(400)).is_err(),
        "half a line was read"
    );
    append(&format!("{b}\n"));
    let (_, v) = next("the finished tool");
    assert_eq!(
        (&v["kind"], &v["outcome"], &v["durationMs"]),
        (&json!("tool"), &json!("ok"), &json!(9))
    );
    // A quit signal ends it cleanly.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < until, "still following after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}
