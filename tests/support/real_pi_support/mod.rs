//! What every real-pi test needs: where pi is, when its editor is ready, and a first prompt
//! that is not lost. The tests using it are compiled as ignored (with the reason) unless
//! `build.rs` found pi and Node 22 in `INTERCOM_PANE_REAL_PI`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use serde_json::{json, Value};

use crate::mux_support::{wait_for, TmuxServer};

/// Two real pis starting at once on two cores slow each other past the waits: every real-pi test
/// holds this for its whole run, one at a time across the tier's modules.
pub static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Wait until pi's editor is ready (its footer names the model), so typed input is not lost
/// while pi is still starting (it may try to fetch helper tools first).
pub fn wait_ready(server: &TmuxServer, target: &str) {
    wait_for(60_000, || {
        // The footer: context use, then the model at the line's end. The shell's echo of the
        // command line names the model too, so the model alone is not proof pi is drawing.
        let screen = server.tmux(&["capture-pane", "-p", "-t", target]);
        screen
            .lines()
            .any(|l| l.contains("/128k") && l.trim_end().ends_with("fake-model"))
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "pi never became ready:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", target])
        )
    });
    std::thread::sleep(Duration::from_millis(500));
}

/// Type a prompt into a pi that just started and submit it. pi may still be drawing its first
/// screen when it first looks ready, and keys sent then are lost: type, wait until the editor
/// shows the text (typing it again if it never appears), then Enter.
pub fn submit_first(server: &TmuxServer, target: &str, text: &str) {
    for _ in 0..5 {
        server.tmux(&["send-keys", "-t", target, "-l", text]);
        let shown = wait_for(5_000, || {
            server
                .tmux(&["capture-pane", "-p", "-t", target])
                .contains(text)
                .then_some(())
        });
        if shown.is_some() {
            server.tmux(&["send-keys", "-t", target, "Enter"]);
            return;
        }
    }
    panic!(
        "pi never showed the typed prompt:\n{}",
        server.tmux(&["capture-pane", "-p", "-t", target])
    );
}

/// The folder holding a real `pi` and `node` (22), from `INTERCOM_PANE_REAL_PI`. The tests that
/// call it are compiled as ignored (with the reason) unless `build.rs` found both there.
pub fn real_pi() -> std::path::PathBuf {
    let bin =
        std::path::PathBuf::from(std::env::var_os("INTERCOM_PANE_REAL_PI").unwrap_or_default());
    assert!(
        bin.join("pi").is_file() && bin.join("node").is_file(),
        "INTERCOM_PANE_REAL_PI={} holds no pi and node (it did when this test was built)",
        bin.display()
    );
    bin
}

/// Run an ES module script with the real Node 22 (TypeScript types stripped, so it can import the
/// extension's `.ts` files directly); it must succeed.
pub fn run_node_script(script: &str) {
    let o = std::process::Command::new(real_pi().join("node"))
        .args([
            "--experimental-strip-types",
            "--no-warnings",
            "--input-type=module",
            "-e",
            script,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The scripted model: an OpenAI chat-completions endpoint that streams one reply chosen by the
/// newest user message (`TOOLCALL <tool> <json>` calls that tool with those arguments,
/// `SCENARIO:tool` runs `sleep <tool_secs>` through the bash tool,
/// `SCENARIO:waiting` asks for input, `SCENARIO:fail` fails as an overloaded provider does,
/// `SCENARIO:flaky` fails so the first `FLAKY_FAILURES` times this model is asked it, then
/// answers, a close request saves a handoff, anything else is a plain question). Its port.
pub fn start_model(tool_secs: u32) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let flaky = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let flaky = flaky.clone();
            std::thread::spawn(move || {
                let _ = answer(s, tool_secs, &flaky);
            });
        }
    });
    port
}

/// How many times `SCENARIO:flaky` fails before it answers.
pub const FLAKY_FAILURES: usize = 2;

/// Every request the scripted model answered: the newest user text and the tools pi offered.
static REQUESTS: std::sync::Mutex<Vec<(String, Vec<String>)>> = std::sync::Mutex::new(Vec::new());

/// The requests so far: (newest user text, names of the tools pi offered the model).
pub fn requests() -> Vec<(String, Vec<String>)> {
    REQUESTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Forget the requests so far (a test that reads `requests` starts with its own).
pub fn clear_requests() {
    REQUESTS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The text of a chat message (a string, or text blocks).
fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(b) => b.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn answer(
    s: TcpStream,
    tool_secs: u32,
    flaky: &std::sync::atomic::AtomicUsize,
) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut r = BufReader::new(s.try_clone()?);
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; len.min(8 << 20)];
    r.read_exact(&mut body)?;
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let last_role = msgs
        .last()
        .map(|m| m["role"].clone())
        .unwrap_or(Value::Null);
    let last_user = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| m.to_string())
        .unwrap_or_default();
    let user_text = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(text_of)
        .unwrap_or_default();
    let offered: Vec<String> = req["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    REQUESTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((user_text.clone(), offered));
    // pi's compaction summary request (its summarization system prompt): answered with a
    // summary, after 4 s when the person's focus says `COMPACTSLOW`, with a non-retryable
    // failure when it says `COMPACTFAIL`.
    let whole = String::from_utf8_lossy(&body);
    if whole.contains("context summarization assistant") {
        if whole.contains("COMPACTFAIL") {
            let mut w = s;
            let body = r#"{"error":{"message":"summary refused","type":"invalid_request_error"}}"#;
            write!(
                w,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )?;
            return w.flush();
        }
        if whole.contains("COMPACTSLOW") {
            std::thread::sleep(Duration::from_secs(4));
        }
        return stream_reply(
            s,
            json!({"role": "assistant", "content": "## Goal\nTalk.\n\n## Progress\n- Talked."}),
            "stop",
        );
    }
    let close_job = last_user
        .split("Intercom close requested (job ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .map(str::to_string);
    let flaky_fails = last_role == "user"
        && last_user.contains("SCENARIO:flaky")
        && flaky.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < FLAKY_FAILURES;
    if flaky_fails || (last_role == "user" && last_user.contains("SCENARIO:fail")) {
        // A retryable provider failure: pi writes it, marks it for retry, and waits 2 s.
        let mut w = s;
        let body = r#"{"error":{"message":"overloaded","type":"server_error"}}"#;
        write!(
            w,
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        return w.flush();
    }
    let tool_call = user_text
        .split_once("TOOLCALL ")
        .and_then(|(_, rest)| rest.split_once(' '))
        .map(|(name, args)| (name.to_string(), args.trim().to_string()));
    let (delta, finish) = if let (Some((name, args)), true) = (tool_call, last_role == "user") {
        // The scripted coordinator: call the named tool with the given JSON arguments.
        (
            json!({"role": "assistant", "content": "Calling it.", "tool_calls": [{"index": 0,
                "id": "call_t", "type": "function", "function": {"name": name, "arguments": args}}]}),
            "tool_calls",
        )
    } else if last_role == "tool" {
        (json!({"role": "assistant", "content": "done"}), "stop")
    } else if let Some(job) = close_job {
        // What a worker does when asked: save the public handoff with the named job.
        let cmd = format!("intercom-pane handoff --job {job} --summary 'All done; nothing left.'");
        (
            json!({"role": "assistant", "content": "Saving my handoff.", "tool_calls": [{"index": 0,
                "id": "call_h", "type": "function", "function": {"name": "bash",
                "arguments": json!({"command": cmd}).to_string()}}]}),
            "tool_calls",
        )
    } else if last_user.contains("SCENARIO:tool") {
        (
            json!({"role": "assistant", "content": "Running it.", "tool_calls": [{"index": 0,
                "id": "call_1", "type": "function", "function": {"name": "bash",
                "arguments": json!({"command": format!("sleep {tool_secs}")}).to_string()}}]}),
            "tool_calls",
        )
    } else if last_user.contains("SCENARIO:waiting") {
        (
            json!({"role": "assistant", "content": "Input needed: Choose staging or production."}),
            "stop",
        )
    } else {
        (
            json!({"role": "assistant", "content": "Done. Want anything else?"}),
            "stop",
        )
    };
    stream_reply(s, delta, finish)
}

/// One streamed chat-completions reply: `delta`, then the finish with usage.
fn stream_reply(s: TcpStream, delta: Value, finish: &str) -> std::io::Result<()> {
    let chunk = |delta: Value, finish: Value| {
        let mut c = json!({"id": "c1", "object": "chat.completion.chunk", "model": "fake-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if !finish.is_null() {
            c["usage"] = json!({"prompt_tokens": 100, "completion_tokens": 3, "total_tokens": 103});
        }
        format!("data: {c}\n\n")
    };
    let mut w = s;
    write!(
        w,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{}{}data: [DONE]\n\n",
        chunk(delta, Value::Null),
        chunk(json!({}), json!(finish))
    )?;
    w.flush()
}

/// The text of every user message in a pi session file, in order.
pub fn user_messages(file: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "message" && v["message"]["role"] == "user")
        .map(|v| match &v["message"]["content"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        })
        .collect()
}

/// A provider pi can start with but is never asked (no prompt is sent): `fake` / `fake-model` in
/// the agent folder's `models.json`.
pub fn never_asked_model(agent: &std::path::Path) {
    std::fs::write(
        agent.join("models.json"),
        serde_json::json!({"providers": {"fake": {"baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions", "apiKey": "fake",
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}]}}})
        .to_string(),
    )
    .unwrap();
}
