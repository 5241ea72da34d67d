//! A simulated pi agent: appends pi 1.6.0-shaped session entries, Intercom observation records
//! and reports over time, and answers `GET /intercom/health` on loopback. It stands in for a real
//! pi in the demo and in tests; it is an external program from the scan's point of view, so it
//! writes its own files directly (like pi and the Intercom extension do).

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::cli::DemoAgentArgs;
use crate::clock::{format_iso, Clock, SystemClock};

/// One step of a scenario: what the session file and the observation log get.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    UserPrompt,
    ToolCall,
    ToolResult,
    AskInput,
    Answer,
    Done,
    FinalError,
    RetryableError,
    Idle,
}

fn scenario(name: &str) -> &'static [Step] {
    use Step::*;
    match name {
        "tool" => &[UserPrompt, ToolCall, ToolResult, Done],
        "waiting" => &[UserPrompt, AskInput],
        // The provider rejects the follow-up request after a tool ran: the last activity was
        // writing the response, as the board then shows beside the idle runtime.
        "error" => &[UserPrompt, ToolCall, ToolResult, FinalError],
        "idle" | "coordinator" => &[UserPrompt, Done],
        "retry" => &[UserPrompt, RetryableError, RetryableError, Done],
        _ => &[
            UserPrompt, ToolCall, ToolResult, AskInput, Idle, Answer, ToolCall, ToolResult, Done,
            Idle, UserPrompt, ToolCall, ToolResult, FinalError, Idle,
        ],
    }
}

/// A piece of a message's content, as pi 1.6.0 writes it.
#[derive(Serialize)]
#[serde(tag = "type")]
enum Part<'a> {
    #[serde(rename = "text")]
    Text { text: &'a str },
    #[serde(rename = "toolCall")]
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: BashArgs<'a>,
    },
}

#[derive(Serialize)]
struct BashArgs<'a> {
    command: &'a str,
}

/// A user prompt: plain text (a reply typed into pi) or parts (the first prompt).
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<Part<'a>>),
}

/// A session entry's message, in pi's key order.
#[derive(Serialize)]
#[serde(tag = "role")]
enum Message<'a> {
    #[serde(rename = "user")]
    User { content: UserContent<'a> },
    #[serde(rename = "assistant", rename_all = "camelCase")]
    Assistant {
        content: Vec<Part<'a>>,
        api: &'static str,
        provider: &'static str,
        model: &'static str,
        stop_reason: &'a str,
        timestamp: i64,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<&'a str>,
    },
    #[serde(rename = "toolResult", rename_all = "camelCase")]
    ToolResult {
        tool_call_id: &'a str,
        tool_name: &'a str,
        content: Vec<Part<'a>>,
        is_error: bool,
    },
}

#[derive(Serialize)]
struct MessageEntry<'a> {
    message: &'a Message<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ContextEdit<'a> {
    target_id: &'a str,
    replacement: Option<()>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelChange {
    provider: &'static str,
    model_id: &'static str,
}

#[derive(Serialize)]
struct SessionHeader<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u32,
    id: &'a str,
    timestamp: String,
    cwd: String,
}

/// An Intercom observation record, as the extension writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Observation<'a> {
    version: u32,
    timestamp: String,
    writer_id: &'a str,
    session_id: &'a str,
    event: &'a str,
    busy: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    version: u32,
    session_id: &'a str,
    status: &'a str,
    summary: &'a str,
    updated_at: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Health<'a> {
    version: u32,
    session_id: &'a str,
}

fn said(text: &str) -> Part<'_> {
    Part::Text { text }
}

struct Writer {
    session_file: PathBuf,
    log_file: Option<PathBuf>,
    root: Option<PathBuf>,
    session_id: String,
    writer_id: String,
    last_id: Option<String>,
    n: u64,
    /// The newest observation timestamp written: each next one is later, so one writer never
    /// leaves two records of different status at the same millisecond (which the board rightly
    /// reads as `conflicting records`).
    last_observed: std::cell::Cell<i64>,
    /// The user prompt of each turn (the seat's task).
    prompt: &'static str,
}

impl Writer {
    fn append(&self, path: &Path, v: &impl Serialize) -> std::io::Result<()> {
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        let mut line = serde_json::to_vec(v)?;
        line.push(b'\n');
        f.write_all(&line)
    }

    /// Append one entry with pi's key order: type, id, parentId, timestamp, then the rest.
    fn entry(&mut self, kind: &str, rest: &impl Serialize) -> std::io::Result<String> {
        self.n += 1;
        let id = format!("{:08x}", (self.n as u32).wrapping_mul(2_654_435_761));
        let mut out = serde_json::Map::new();
        out.insert("type".into(), Value::from(kind));
        out.insert("id".into(), Value::from(id.as_str()));
        out.insert(
            "parentId".into(),
            self.last_id.as_deref().map_or(Value::Null, Value::from),
        );
        out.insert(
            "timestamp".into(),
            Value::from(format_iso(SystemClock.now_ms())),
        );
        if let Value::Object(rest) = serde_json::to_value(rest)? {
            for (k, val) in rest {
                out.entry(k).or_insert(val);
            }
        }
        self.append(&self.session_file.clone(), &Value::Object(out))?;
        self.last_id = Some(id.clone());
        Ok(id)
    }

    fn message(&mut self, message: Message<'_>) -> std::io::Result<String> {
        show(&serde_json::to_value(&message)?);
        self.entry("message", &MessageEntry { message: &message })
    }

    fn user(&mut self, content: UserContent<'_>) -> std::io::Result<String> {
        self.message(Message::User { content })
    }

    fn tool_result(&mut self, call: &str, output: &str) -> std::io::Result<String> {
        self.message(Message::ToolResult {
            tool_call_id: call,
            tool_name: "bash",
            content: vec![said(output)],
            is_error: false,
        })
    }

    fn assistant(
        &mut self,
        content: Vec<Part<'_>>,
        stop: &str,
        error: Option<&str>,
    ) -> std::io::Result<String> {
        self.message(Message::Assistant {
            content,
            api: "openai-completions",
            provider: "demo",
            model: "demo-model",
            stop_reason: stop,
            timestamp: SystemClock.now_ms(),
            error_message: error,
        })
    }

    fn observe(&self, event: &str, busy: bool, phase: Option<&str>, detail: Option<&str>) {
        let Some(log) = &self.log_file else { return };
        let at = SystemClock.now_ms().max(self.last_observed.get() + 1);
        self.last_observed.set(at);
        let v = Observation {
            version: 1,
            timestamp: format_iso(at),
            writer_id: &self.writer_id,
            session_id: &self.session_id,
            event,
            busy,
            phase,
            detail,
            outcome: detail.map(|_| if busy { "started" } else { "settled" }),
        };
        let _ = self.append(log, &v);
    }

    fn report(&self, status: &str, summary: &str) {
        let Some(root) = &self.root else { return };
        let dir = crate::paths::reports_dir(root);
        let _ = std::fs::create_dir_all(&dir);
        let name: String = Sha256::digest(self.session_id.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let v = Report {
            version: 1,
            session_id: &self.session_id,
            status,
            summary,
            updated_at: format_iso(SystemClock.now_ms()),
        };
        let Ok(v) = serde_json::to_string(&v) else {
            return;
        };
        let tmp = dir.join(format!("{name}.json.tmp"));
        if std::fs::write(&tmp, format!("{v}\n")).is_ok() {
            let _ = std::fs::rename(&tmp, dir.join(format!("{name}.json")));
        }
    }

    /// A close request arrived (`close-worker`, or `C` in the sidebar): save the handoff with
    /// this same binary's `handoff`, as a pi would with its bash tool, then finish the turn. The
    /// real close then sees the turn settle and ends this process.
    fn hand_off(&mut self, text: &str, job: &str, root: Option<&Path>) -> std::io::Result<()> {
        self.observe("host.activity", true, Some("working"), Some("processing"));
        self.user(UserContent::Text(text))?;
        let summary = "Simulated handoff: the demo checklist item is done; nothing is left.";
        let command = format!("intercom-pane handoff --job {job} --summary \"{summary}\"");
        self.assistant(
            vec![Part::ToolCall {
                id: "call_handoff",
                name: "bash",
                arguments: BashArgs { command: &command },
            }],
            "toolUse",
            None,
        )?;
        self.observe("host.activity", true, Some("tool"), Some("running_command"));
        let saved = run_handoff(job, summary, root);
        self.tool_result("call_handoff", &saved)?;
        // The turn ends after the handoff was saved (the close waits for a reply newer than it).
        std::thread::sleep(Duration::from_millis(50));
        self.assistant(vec![said("Handoff saved; stopping here.")], "stop", None)?;
        self.observe("host.activity", false, Some("idle"), Some("settled"));
        // Its question is moot once it hands off: the row shows the close, not a stale ask.
        self.report("clear", "");
        Ok(())
    }

    /// A reply arrived in the pane: a user turn, then an acknowledging reply.
    fn answer(&mut self, text: &str) -> std::io::Result<()> {
        self.observe("host.activity", true, Some("working"), Some("processing"));
        self.user(UserContent::Text(text))?;
        std::thread::sleep(Duration::from_millis(800));
        self.observe(
            "host.activity",
            true,
            Some("responding"),
            Some("responding"),
        );
        let ack = format!("Thanks, going with: {text}");
        self.assistant(vec![said(&ack)], "stop", None)?;
        self.observe("host.activity", false, Some("idle"), Some("settled"));
        self.report("clear", "");
        Ok(())
    }

    fn step(&mut self, s: Step) -> std::io::Result<()> {
        match s {
            Step::UserPrompt => {
                self.observe("host.activity", true, Some("working"), Some("processing"));
                let prompt = self.prompt;
                self.user(UserContent::Parts(vec![said(prompt)]))?;
                self.observe("host.activity", true, Some("thinking"), Some("thinking"));
            }
            Step::ToolCall => {
                self.assistant(
                    vec![
                        said("Running the tests."),
                        Part::ToolCall {
                            id: "call_demo",
                            name: "bash",
                            arguments: BashArgs {
                                command: "cargo test",
                            },
                        },
                    ],
                    "toolUse",
                    None,
                )?;
                self.observe("host.activity", true, Some("tool"), Some("running_command"));
            }
            Step::ToolResult => {
                self.tool_result("call_demo", "ok")?;
                self.observe(
                    "host.activity",
                    true,
                    Some("responding"),
                    Some("responding"),
                );
            }
            Step::AskInput => {
                self.observe(
                    "host.activity",
                    true,
                    Some("responding"),
                    Some("responding"),
                );
                self.assistant(
                    vec![said(
                        "Input needed: Choose staging or production for the rollout.",
                    )],
                    "stop",
                    None,
                )?;
                self.observe("host.activity", false, Some("idle"), Some("settled"));
                self.report(
                    "needs_decision",
                    "Choose staging or production for the rollout.",
                );
            }
            Step::Answer => {
                self.user(UserContent::Text("staging"))?;
                self.observe("host.activity", true, Some("working"), Some("processing"));
                self.report("clear", "");
            }
            Step::Done => {
                self.observe(
                    "host.activity",
                    true,
                    Some("responding"),
                    Some("responding"),
                );
                self.assistant(vec![said("Done: tests pass.")], "stop", None)?;
                self.observe("host.activity", false, Some("idle"), Some("settled"));
                self.report("ready_for_review", "Tests pass; ready for review.");
            }
            Step::FinalError => {
                self.assistant(
                    Vec::new(),
                    "error",
                    Some("400: {\"message\":\"demo rejection\"}"),
                )?;
                self.observe("host.activity", false, Some("idle"), Some("settled"));
                self.report("blocked", "The provider rejected the request.");
            }
            Step::RetryableError => {
                let id = self.assistant(Vec::new(), "error", Some("503: overloaded"))?;
                self.entry(
                    "context_edit",
                    &ContextEdit {
                        target_id: &id,
                        replacement: None,
                    },
                )?;
            }
            Step::Idle => {}
        }
        Ok(())
    }
}

/// Print a message in the pane as pi shows its conversation: the prompt, the reply's text, the
/// tool it runs and the tool's output, an error. Bounded; the demo writes every text itself.
fn show(message: &Value) {
    let role = message["role"].as_str().unwrap_or("");
    let mut lines: Vec<String> = Vec::new();
    let parts: Vec<&Value> = match &message["content"] {
        Value::String(_) => vec![&message["content"]],
        Value::Array(a) => a.iter().collect(),
        _ => Vec::new(),
    };
    for p in parts {
        let text = p.as_str().or_else(|| p["text"].as_str());
        match (role, p["type"].as_str(), text) {
            ("user", _, Some(t)) => lines.push(format!("> {t}")),
            ("toolResult", _, Some(t)) => lines.push(format!("  {t}")),
            (_, Some("toolCall"), _) => lines.push(format!(
                "$ {}",
                p["arguments"]["command"].as_str().unwrap_or("")
            )),
            (_, _, Some(t)) => lines.push(t.to_string()),
            _ => {}
        }
    }
    if let Some(e) = message["errorMessage"].as_str() {
        lines.push(format!("Error: {e}"));
    }
    let mut out = std::io::stdout().lock();
    for l in lines.iter().take(20) {
        let l: String = crate::text::sanitize(l).chars().take(500).collect();
        let _ = writeln!(out, "{l}");
    }
    let _ = out.flush();
}

/// The job id of a close request (`Intercom close requested (job ID): …`), when it is one and
/// the id is a plain word (it becomes an argument of `handoff`).
fn close_job(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("Intercom close requested (job ")?;
    let job = &rest[..rest.find(')')?];
    let plain = !job.is_empty()
        && job.len() <= 128
        && !job.starts_with('-')
        && job
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    plain.then_some(job)
}

/// Run this binary's `handoff` for `job`, bounded; what it said, for the transcript.
fn run_handoff(job: &str, summary: &str, root: Option<&Path>) -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "handoff not run: this program's path is unknown".into();
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["handoff", "--job", job, "--summary", summary])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(r) = root {
        cmd.arg("--root").arg(r);
    }
    let Ok(mut child) = cmd.spawn() else {
        return "handoff not run: cannot start it".into();
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return "handoff timed out".into();
            }
        }
    }
    let mut said = String::new();
    for out in [
        child.stdout.take().map(|o| Box::new(o) as Box<dyn Read>),
        child.stderr.take().map(|o| Box::new(o) as Box<dyn Read>),
    ]
    .into_iter()
    .flatten()
    {
        let _ = out.take(2000).read_to_string(&mut said);
    }
    said.trim().to_string()
}

fn serve_health(listener: TcpListener, session_id: String) {
    listener.set_nonblocking(false).ok();
    for stream in listener.incoming().flatten() {
        let _ = answer(stream, &session_id);
    }
}

fn answer(mut s: TcpStream, session_id: &str) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut buf = [0u8; 2048];
    let n = s.read(&mut buf)?;
    let req = String::from_utf8_lossy(&buf[..n]);
    let (status, body) = if req.starts_with("GET /intercom/health ") {
        (
            "200 OK",
            serde_json::to_string(&Health {
                version: 1,
                session_id,
            })
            .unwrap_or_default(),
        )
    } else {
        ("404 Not Found", "{}".to_string())
    };
    write!(
        s,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Register this simulated pi as a seat, as the pi extension does, with the real command.
fn register_self(args: &DemoAgentArgs, config: &Path, event: &str, seq: u64) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["register", "--event", event, "--seq", &seq.to_string()])
        .arg("--pi-pid")
        .arg(std::process::id().to_string())
        .arg("--session-id")
        .arg(&args.session_id)
        .arg("--session-file")
        .arg(&args.session_file)
        .arg("--cwd")
        .arg(&args.cwd)
        .arg("--config")
        .arg(config)
        .stdout(std::process::Stdio::null());
    if let Some(root) = &args.root {
        cmd.arg("--root").arg(root);
    }
    let _ = cmd.status();
}

/// Lines typed into this agent's pane (a reply); bounded.
fn read_replies() -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let stdin = std::io::stdin();
        for line in stdin.lock().lines().take(10_000) {
            let Ok(line) = line else { return };
            let line: String = line.chars().take(2000).collect();
            if line.trim().is_empty() {
                continue;
            }
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Set this process's name to `pi`, as the real pi does, so multiplexers report it as `pi`.
fn name_self_pi() {
    let name = c"pi";
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0);
    }
}

/// Re-exec this same program with `argv[0] = "pi"`: tmux reads a pane's command name from
/// `argv[0]`, and pi itself shows up as `pi`. Same pid; returns only if exec failed.
fn reexec_as_pi() {
    use std::os::unix::process::CommandExt;
    let mut argv = std::env::args_os();
    let argv0 = argv.next().unwrap_or_default();
    if Path::new(&argv0).file_name() == Some(std::ffi::OsStr::new("pi")) {
        return;
    }
    if let Ok(exe) = std::env::current_exe() {
        let err = std::process::Command::new(exe).arg0("pi").args(argv).exec();
        eprintln!("demo-agent: cannot re-exec as pi ({err}); continuing under its own name");
    }
}

pub(crate) fn run(args: &DemoAgentArgs) -> i32 {
    reexec_as_pi();
    name_self_pi();
    let writer_id = uuid::Uuid::new_v4().to_string();
    let log_file = args.root.as_ref().map(|r| {
        let dir = crate::paths::logs_dir(r);
        let _ = std::fs::create_dir_all(&dir);
        dir.join(format!("writer-{writer_id}.jsonl"))
    });
    if let Some(parent) = args.session_file.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let mut w = Writer {
        session_file: args.session_file.clone(),
        log_file,
        root: args.root.clone(),
        session_id: args.session_id.clone(),
        writer_id,
        last_id: None,
        n: 0,
        last_observed: std::cell::Cell::new(0),
        prompt: if args.scenario == "coordinator" {
            "Coordinate the demo workers: answer their questions and review their reports."
        } else {
            "Work through the next item on the demo checklist."
        },
    };
    if let Some(b) = &args.banner {
        println!("{b}");
    }
    // Started without a port (the demo's stand-in for a spawn or a resume): the one the roster
    // gives this session, as the pi extension takes it.
    let port = args.port.or_else(|| {
        let cfg = crate::evidence::config::load(args.root.as_deref()?).ok()?;
        Some(cfg.find_by_session(&args.session_id)?.port).filter(|p| *p != 0)
    });
    if let Some(port) = port {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => {
                let id = args.session_id.clone();
                std::thread::spawn(move || serve_health(l, id));
            }
            Err(e) => eprintln!("demo-agent: cannot listen on 127.0.0.1:{port}: {e}"),
        }
    }
    // A resumed session continues its file, as pi does: the header is written once.
    let resumed = std::fs::metadata(&args.session_file).is_ok_and(|m| m.len() > 0);
    let header = SessionHeader {
        kind: "session",
        version: 3,
        id: &args.session_id,
        timestamp: format_iso(SystemClock.now_ms()),
        cwd: args.cwd.display().to_string(),
    };
    if !resumed && w.append(&w.session_file.clone(), &header).is_err() {
        eprintln!("demo-agent: cannot write {}", args.session_file.display());
        return 1;
    }
    let _ = w.entry(
        "model_change",
        &ModelChange {
            provider: "demo",
            model_id: "demo-model",
        },
    );
    w.observe("runtime.ready", false, None, None);
    if let Some(cfg) = &args.register_config {
        register_self(args, cfg, "session_start", 1);
    }
    let replies = read_replies();
    let steps = scenario(&args.scenario);
    let start = Instant::now();
    let lifetime = Duration::from_secs(args.lifetime);
    let step = Duration::from_secs(args.step.max(1));
    let parent = std::os::unix::process::parent_id();
    let mut i = 0usize;
    let mut finished = false;
    // Bounded by `lifetime`; also stops when the parent that started it is gone.
    while start.elapsed() < lifetime {
        if !finished {
            if let Err(e) = w.step(steps[i % steps.len()]) {
                eprintln!("demo-agent: write failed: {e}");
                return 1;
            }
            i += 1;
            // One-shot scenarios stay in their final state (until someone replies).
            finished = args.scenario != "cycle" && i >= steps.len();
        }
        let until = Instant::now() + step;
        while Instant::now() < until {
            if std::os::unix::process::parent_id() != parent {
                return 0;
            }
            if let Ok(text) = replies.try_recv() {
                let done = match close_job(&text) {
                    Some(job) => {
                        // Handed off: no new turn starts before the close ends this process.
                        finished = true;
                        w.hand_off(&text, job, args.root.as_deref())
                    }
                    None => w.answer(&text),
                };
                if done.is_err() {
                    return 1;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // The end, said where a person looks: the report (Report column, details) and the pane;
    // then what pi and its extension record when pi exits.
    let why = args.end_reason.clone().unwrap_or_else(|| {
        format!(
            "This simulated pi ended after its {} s lifetime.",
            args.lifetime
        )
    });
    w.report("blocked", &why);
    println!("{why}");
    w.observe("runtime.closed", false, None, None);
    if let Some(cfg) = &args.register_config {
        register_self(args, cfg, "session_shutdown", 2);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_close_request_with_a_plain_job_id_is_handed_off() {
        let ask = "Intercom close requested (job 7f3a-b_2): save your public handoff now by running `intercom-pane handoff --job 7f3a-b_2 --summary \"…\"`, then finish your turn.";
        assert_eq!(close_job(ask), Some("7f3a-b_2"));
        for bad in [
            "Intercom close requested (job -rf): x",
            "Intercom close requested (job $(touch x)): x",
            "Intercom close requested (job a b): x",
            "Intercom close requested (job ): x",
            "Intercom close requested (job abc",
            "please close: Intercom close requested (job abc): x",
            "staging",
        ] {
            assert_eq!(close_job(bad), None, "{bad}");
        }
    }
}
