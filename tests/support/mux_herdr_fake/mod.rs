//! A protocol-faithful fake Herdr 0.8.2 server on a Unix socket, for tests.
//!
//! Every reply shape is copied from `fixtures/herdr-0.8.2` (the captured CLI outputs, which are
//! the socket replies verbatim) and its API schema (`31-api-schema.json`, protocol 20):
//! newline-delimited JSON, one request per connection, errors as `{"error":{code,message},"id"}`,
//! and an empty id when the request cannot be parsed (including an unknown method, since the
//! method is part of the request type). Layout arithmetic follows the captures: a split keeps
//! `ratio` of the space for the existing pane (top or left), a swap exchanges rectangles and
//! focuses the source (see `focus.rs` for workspaces, focus, restart and agent detection).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{json, Value};

mod focus;
mod moves;
mod server;
mod tabs;
use focus::detected_agent;
use server::accept_loop;
#[allow(unused_imports)] // Not every test binary that includes this module types into tabs.
pub use tabs::{FakeTab, TabShell};
pub mod real;

/// How the fake misbehaves, when asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Accept, read the request, never answer.
    Stall,
    /// Answer with a line that is not JSON.
    Garbage,
    /// Answer a well-formed reply for another request id.
    WrongId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    fn json(&self) -> Value {
        json!({"height": self.height, "width": self.width, "x": self.x, "y": self.y})
    }
}

#[derive(Debug, Clone)]
pub struct FakePane {
    pub id: String,
    pub terminal_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub label: Option<String>,
    pub cwd: String,
    pub tokens: BTreeMap<String, String>,
    pub shell_pid: u32,
    /// Foreground processes: (pid, name, argv).
    pub foreground: Vec<(u32, String, Vec<String>)>,
    pub rect: Rect,
}

/// A workspace: its first tab (`<id>:t1`) is implicit, more come from `tab.create` and moves.
#[derive(Debug, Clone)]
pub struct FakeWorkspace {
    pub id: String,
    pub label: String,
    /// This workspace's own focused pane (what `workspace.focus` brings back): the focused pane
    /// of the tab it shows.
    pub focused_pane: String,
    /// Pane numbers are never reused, not even after a restart.
    pub next_pane: u32,
    /// The tab this workspace shows (`active_tab_id`); `None`: its first tab.
    pub active_tab: Option<String>,
}

#[derive(Debug)]
pub struct State {
    pub mode: Mode,
    pub version: String,
    pub protocol: u32,
    pub panes: Vec<FakePane>,
    /// The focused pane (of the focused workspace); kept in step by `focus::focus_pane`.
    pub focused: String,
    /// Workspaces in order; each remembers its own focused pane and next pane number.
    pub workspaces: Vec<FakeWorkspace>,
    /// The focused workspace.
    pub focused_ws: String,
    /// Terminal ids handed out so far (a restart hands out new ones).
    pub next_terminal: u32,
    /// Refuse `workspace.focus` and `pane.focus` (to test a focus that cannot be put back).
    pub refuse_focus: bool,
    /// Every request received, parsed (unparseable ones as a string).
    pub requests: Vec<Value>,
    /// Panes whose agent shows a dialog: `agent.prompt` refuses with `agent_blocked`.
    pub blocked: HashSet<String>,
    /// (target, text) of every accepted `agent.prompt`.
    pub prompts: Vec<(String, String)>,
    /// (pane, text, keys) of every `pane.send_input`.
    pub inputs: Vec<(String, String, Vec<String>)>,
    /// Tabs made by `tab.create` (each workspace's first tab, `<ws>:t1`, is implicit).
    pub tabs: Vec<FakeTab>,
    /// Called with each parsed request before it is answered (see `Hook`).
    pub hook: Option<Hook>,
    /// The shell pid of a created tab's pane (`NO_SHELL` unless a test that runs the typed
    /// command in a real shell sets that shell's pid).
    pub tab_shell: u32,
    /// Each tab's own focused pane, once something focused a pane in it (layouts are per tab).
    pub tab_focus: BTreeMap<String, String>,
    /// Old pane ids of panes moved to another workspace: `pane.get`, `pane.process_info`,
    /// `pane.read` and `pane.close` still answer them, with the pane as it is now (captured,
    /// `moves` 008, 009, 016, 030/031).
    pub aliases: BTreeMap<String, String>,
    /// What `pane.read` shows of a pane's screen (empty when unset).
    pub screens: BTreeMap<String, String>,
    /// Answer `TICK_METHODS` on the next tick of this period since the fake started, as Herdr
    /// 0.8.2 answers some requests on its loop's ~100 ms tick (`moves/timing.json`).
    pub tick: Option<std::time::Duration>,
    pub started: std::time::Instant,
    /// While `tick` is set: (method, how long the fake held its answer for the tick) of every
    /// request, zero for a method off the tick. The fake's own timing, which a loaded machine's
    /// scheduling does not change.
    pub tick_waits: Vec<(String, std::time::Duration)>,
}

/// The methods the tick applies to (the captures show ~100 ms answers for these).
pub const TICK_METHODS: &[&str] = &["ping", "session.snapshot", "pane.get", "pane.process_info"];

/// What a hook runs: the parsed request and the state, under the fake's lock.
pub type HookFn = dyn FnMut(&Value, &mut State) + Send;

/// A test's hook on the fake's requests.
pub struct Hook(pub Box<HookFn>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hook")
    }
}

/// A running fake server; stopped and its socket removed on drop.
pub struct FakeHerdr {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The shell pid given to panes of workspaces created over the socket (a label: no such
/// process; tests that need ancestry set real pids).
pub const NO_SHELL: u32 = 1_999_900;

/// Pids of programs typed into a fake pane's shell (labels only: no such process exists).
pub const CHILD_PID_BASE: u32 = 3_000_000;

pub const AREA: Rect = Rect {
    x: 26,
    y: 1,
    width: 94,
    height: 39,
};

fn terminal_id(n: u32) -> String {
    format!("term_66172{:09x}", 0x87e4f87 + u64::from(n) * 0x1b3f)
}

impl FakeHerdr {
    /// Start with one workspace `w1` ("acc-ws"), one tab `w1:t1`, one pane `w1:p1` in `/tmp`
    /// whose shell is `shell_pid` (a real process, so ancestry checks work) running `bash`.
    pub fn start(shell_pid: u32) -> FakeHerdr {
        FakeHerdr::start_at(shell_pid, Path::new("herdr.sock"))
    }

    /// As `start`, listening at `socket` relative to the fake's own temp dir (e.g.
    /// `herdr/sessions/acc/herdr.sock`, where Herdr keeps a named session's socket).
    pub fn start_at(shell_pid: u32, socket: &Path) -> FakeHerdr {
        let dir = tempfile::Builder::new()
            .prefix("herdr-fake-")
            .tempdir()
            .unwrap();
        let socket = dir.path().join(socket);
        std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
        let listener = UnixListener::bind(&socket).unwrap();
        let state = Arc::new(Mutex::new(State {
            mode: Mode::Normal,
            version: "0.8.2".into(),
            protocol: 20,
            panes: vec![FakePane {
                id: "w1:p1".into(),
                terminal_id: terminal_id(1),
                workspace_id: "w1".into(),
                tab_id: "w1:t1".into(),
                label: None,
                cwd: "/tmp".into(),
                tokens: BTreeMap::new(),
                shell_pid,
                foreground: vec![(shell_pid, "bash".into(), vec!["/bin/bash".into()])],
                rect: AREA,
            }],
            focused: "w1:p1".into(),
            workspaces: vec![FakeWorkspace {
                id: "w1".into(),
                label: "acc-ws".into(),
                focused_pane: "w1:p1".into(),
                next_pane: 2,
                active_tab: None,
            }],
            focused_ws: "w1".into(),
            next_terminal: 2,
            refuse_focus: false,
            requests: Vec::new(),
            blocked: HashSet::new(),
            prompts: Vec::new(),
            inputs: Vec::new(),
            tabs: Vec::new(),
            tab_shell: NO_SHELL,
            hook: None,
            tab_focus: BTreeMap::new(),
            aliases: BTreeMap::new(),
            screens: BTreeMap::new(),
            tick: None,
            started: std::time::Instant::now(),
            tick_waits: Vec::new(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (st, sp) = (state.clone(), stop.clone());
        let thread = std::thread::spawn(move || accept_loop(listener, st, sp));
        FakeHerdr {
            dir,
            socket,
            state,
            stop,
            thread: Some(thread),
        }
    }

    /// Change the fake's state under its lock.
    pub fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap())
    }

    /// The methods received so far, in order.
    pub fn methods(&self) -> Vec<String> {
        self.with(|s| {
            s.requests
                .iter()
                .map(|r| r["method"].as_str().unwrap_or("<unparsed>").to_string())
                .collect()
        })
    }
}

impl Drop for FakeHerdr {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the loop sees the stop flag.
        let _ = UnixStream::connect(&self.socket);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn error(id: &str, code: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message}, "id": id})
}

fn ok(id: &str, result: Value) -> Value {
    json!({"id": id, "result": result})
}

fn pane_json(p: &FakePane, focused: &str) -> Value {
    let mut v = json!({
        "agent_status": "unknown",
        "cwd": p.cwd,
        "focused": p.id == focused,
        "foreground_cwd": p.cwd,
        "pane_id": p.id,
        "revision": 0,
        "scroll": {"max_offset_from_bottom": 0, "offset_from_bottom": 0, "viewport_rows": p.rect.height},
        "tab_id": p.tab_id,
        "terminal_id": p.terminal_id,
        "workspace_id": p.workspace_id,
    });
    if let Some(l) = &p.label {
        v["label"] = json!(l);
    }
    if let Some(a) = detected_agent(p) {
        v["agent"] = json!(a);
    }
    if !p.tokens.is_empty() {
        v["tokens"] = json!(p.tokens);
    }
    v
}

fn process_info_json(p: &FakePane) -> Value {
    let leader = p.foreground.first().map(|f| f.0).unwrap_or(p.shell_pid);
    json!({
        "foreground_process_group_id": leader,
        "foreground_processes": p.foreground.iter().map(|(pid, name, argv)| json!({
            "argv": argv, "cmdline": argv.join(" "), "cwd": p.cwd, "name": name, "pid": pid
        })).collect::<Vec<_>>(),
        "pane_id": p.id,
        "shell_pid": p.shell_pid,
    })
}

fn str_param<'a>(params: &'a Value, name: &str) -> Option<&'a str> {
    params.get(name).and_then(Value::as_str)
}

/// Answer one request line exactly as Herdr 0.8.2 would (for the methods intercom-pane uses).
fn handle(line: &str, s: &mut State) -> Value {
    let Ok(req) = serde_json::from_str::<Value>(line.trim_end()) else {
        s.requests.push(json!(line));
        return error("", "invalid_request", "failed to parse request");
    };
    s.requests.push(req.clone());
    // A test's hook sees each request first and may change the state (a restart at an exact
    // point of a run); it stays in place for the next request.
    if let Some(mut hook) = s.hook.take() {
        hook.0(&req, s);
        s.hook = Some(hook);
    }
    let (Some(id), Some(method)) = (
        req.get("id").and_then(Value::as_str),
        req.get("method").and_then(Value::as_str),
    ) else {
        return error("", "invalid_request", "failed to parse request");
    };
    let params = req.get("params").cloned().unwrap_or(json!({}));
    let focused = s.focused.clone();
    let find = |s: &State, pid: Option<&str>| -> Option<usize> {
        let pid = s.resolve(pid?);
        s.panes.iter().position(|p| p.id == pid)
    };
    let not_found = |pid: Option<&str>| {
        error(
            id,
            "pane_not_found",
            &format!("pane {} not found", pid.unwrap_or("")),
        )
    };
    match method {
        "ping" => ok(
            id,
            json!({"type": "pong", "version": s.version, "protocol": s.protocol,
                   "capabilities": {"live_handoff": true, "detached_server_daemon": true}}),
        ),
        "session.snapshot" => ok(
            id,
            json!({"type": "session_snapshot", "snapshot": s.snapshot_json()}),
        ),
        "pane.list" => {
            let ws = str_param(&params, "workspace_id");
            let panes: Vec<Value> = s
                .panes
                .iter()
                .filter(|p| match ws {
                    None => true,
                    Some(w) => w == p.workspace_id,
                })
                .map(|p| pane_json(p, &focused))
                .collect();
            ok(id, json!({"panes": panes, "type": "pane_list"}))
        }
        "pane.get" => {
            let pid = str_param(&params, "pane_id");
            match find(s, pid) {
                Some(i) => ok(
                    id,
                    json!({"pane": pane_json(&s.panes[i], &focused), "type": "pane_info"}),
                ),
                None => not_found(pid),
            }
        }
        "pane.current" => {
            let pid = str_param(&params, "caller_pane_id").unwrap_or(&focused);
            match find(s, Some(pid)) {
                Some(i) => ok(
                    id,
                    json!({"pane": pane_json(&s.panes[i], &focused), "type": "pane_current"}),
                ),
                None => not_found(Some(pid)),
            }
        }
        "pane.read" => {
            let pid = str_param(&params, "pane_id").unwrap_or(&focused);
            let Some(i) = find(s, Some(pid)) else {
                return not_found(Some(pid));
            };
            let p = &s.panes[i];
            let text = s.screens.get(&p.id).cloned().unwrap_or_default();
            ok(
                id,
                json!({"read": {"format": "text", "pane_id": p.id, "revision": 0,
                        "source": str_param(&params, "source").unwrap_or("recent"),
                        "tab_id": p.tab_id, "text": text, "truncated": false,
                        "workspace_id": p.workspace_id}, "type": "pane_read"}),
            )
        }
        "pane.process_info" => {
            let pid = str_param(&params, "pane_id").unwrap_or(&focused);
            match find(s, Some(pid)) {
                Some(i) => ok(
                    id,
                    json!({"process_info": process_info_json(&s.panes[i]), "type": "pane_process_info"}),
                ),
                // Captured (127): this method's message names no pane.
                None => error(id, "pane_not_found", "pane not found"),
            }
        }
        "pane.split" => {
            let target = str_param(&params, "target_pane_id")
                .unwrap_or(&focused)
                .to_string();
            let Some(i) = find(s, Some(&target)) else {
                return not_found(Some(&target));
            };
            let down = match str_param(&params, "direction") {
                Some("down") => true,
                Some("right") => false,
                _ => return error("", "invalid_request", "failed to parse request"),
            };
            let ratio = params.get("ratio").and_then(Value::as_f64).unwrap_or(0.5);
            let (keep, new_rect) = focus::split_rects(s.panes[i].rect, down, ratio);
            s.panes[i].rect = keep;
            let ws = s.panes[i].workspace_id.clone();
            let tab = s.panes[i].tab_id.clone();
            let pane_id = s.next_pane_id(&ws);
            let terminal_id = s.next_terminal_id();
            let shell = s.panes[i].shell_pid;
            let new = FakePane {
                id: pane_id,
                terminal_id,
                workspace_id: ws.clone(),
                tab_id: tab,
                label: None,
                cwd: str_param(&params, "cwd").unwrap_or("/tmp").to_string(),
                tokens: BTreeMap::new(),
                shell_pid: shell,
                foreground: vec![(shell, "bash".into(), vec!["/bin/bash".into()])],
                rect: new_rect,
            };
            let focus = params.get("focus").and_then(Value::as_bool) == Some(true);
            let new_id = new.id.clone();
            s.panes.push(new);
            if focus {
                s.focus_pane(&new_id);
            }
            let reply = json!({"pane": pane_json(&s.panes[s.panes.len() - 1], &s.focused),
                               "type": "pane_info"});
            ok(id, reply)
        }
        "pane.swap" => {
            if let (Some(p), Some(d)) = (
                str_param(&params, "pane_id"),
                str_param(&params, "direction"),
            ) {
                return s.swap_direction_json(id, p, d);
            }
            let (src, dst) = (
                str_param(&params, "source_pane_id"),
                str_param(&params, "target_pane_id"),
            );
            s.swap_json(id, src, dst)
        }
        "pane.rename" => {
            let pid = str_param(&params, "pane_id");
            let Some(i) = find(s, pid) else {
                return not_found(pid);
            };
            s.panes[i].label = str_param(&params, "label").map(str::to_string);
            ok(
                id,
                json!({"pane": pane_json(&s.panes[i], &focused), "type": "pane_info"}),
            )
        }
        "pane.send_input" | "pane.send_text" => {
            let pid = str_param(&params, "pane_id");
            let Some(i) = find(s, pid) else {
                return not_found(pid);
            };
            let text = str_param(&params, "text").unwrap_or("").to_string();
            let keys: Vec<String> = params
                .get("keys")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|k| k.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            if keys.iter().any(|k| k == "Enter") {
                // A shell runs the typed line: its first word becomes the foreground process.
                // `exec -a NAME prog …` replaces the shell (same pid, argv[0] NAME, name prog);
                // any other line runs a child of the shell (a pid of its own).
                let words: Vec<&str> = text.split_whitespace().collect();
                let shell = s.panes[i].shell_pid;
                let (pid, name, argv0) = match words.as_slice() {
                    ["exec", "-a", a0, prog, ..] => (shell, *prog, *a0),
                    ["exec", prog, ..] => (shell, *prog, *prog),
                    [first, ..] => (CHILD_PID_BASE + s.requests.len() as u32, *first, *first),
                    [] => (shell, "", ""),
                };
                if !name.is_empty() {
                    let base = name.trim_matches('\'').rsplit('/').next().unwrap_or(name);
                    s.panes[i].foreground = vec![(pid, base.to_string(), vec![argv0.into()])];
                }
            }
            s.inputs.push((pid.unwrap_or("").to_string(), text, keys));
            ok(id, json!({"type": "ok"}))
        }
        "pane.layout" => {
            let pid = str_param(&params, "pane_id").unwrap_or(&focused);
            let Some(i) = find(s, Some(pid)) else {
                return not_found(Some(pid));
            };
            let tab = s.panes[i].tab_id.clone();
            ok(
                id,
                json!({"layout": s.tab_layout(&tab), "type": "pane_layout"}),
            )
        }
        "pane.close" => {
            let pid = str_param(&params, "pane_id");
            let Some(i) = find(s, pid) else {
                return not_found(pid);
            };
            let gone = s.panes.remove(i);
            s.aliases.retain(|_, now| *now != gone.id);
            // The closed pane's space goes back to a neighbour (simplified: the first pane of
            // its tab), which also takes its focus.
            let heir = s.panes.iter().position(|p| p.tab_id == gone.tab_id);
            if let Some(h) = heir {
                let first = &mut s.panes[h];
                first.rect.height += gone.rect.height;
                first.rect.y = first.rect.y.min(gone.rect.y);
                let heir_id = first.id.clone();
                if s.layout_focus(&gone.workspace_id) == gone.id {
                    if s.focused == gone.id {
                        s.focus_pane(&heir_id);
                    } else if let Some(w) =
                        s.workspaces.iter_mut().find(|w| w.id == gone.workspace_id)
                    {
                        w.focused_pane = heir_id;
                    }
                }
            } else if s.focused == gone.id {
                s.focused = String::new();
            }
            ok(id, json!({"type": "ok"}))
        }
        "pane.report_metadata" => {
            let pid = str_param(&params, "pane_id");
            let Some(i) = find(s, pid) else {
                return not_found(pid);
            };
            if let Some(t) = params.get("tokens").and_then(Value::as_object) {
                for (k, v) in t {
                    match v.as_str() {
                        Some(v) => s.panes[i].tokens.insert(k.clone(), v.to_string()),
                        None => s.panes[i].tokens.remove(k),
                    };
                }
            }
            ok(id, json!({"type": "ok"}))
        }
        "agent.prompt" => {
            let target = str_param(&params, "target").unwrap_or("");
            // Like Herdr 0.8.2 (behaviour 051, 052-054, 101): only a pane with a detected agent
            // takes a prompt; plain `cat` or a shell is `agent_not_found`.
            let Some(i) = find(s, Some(target)).filter(|&i| detected_agent(&s.panes[i]).is_some())
            else {
                return error(
                    id,
                    "agent_not_found",
                    &format!("agent target {target} not found"),
                );
            };
            if s.blocked.contains(target) {
                return error(
                    id,
                    "agent_blocked",
                    &format!("agent {target} is blocked and requires interactive input"),
                );
            }
            let text = str_param(&params, "text").unwrap_or("").to_string();
            s.prompts.push((target.to_string(), text));
            let p = &s.panes[i];
            ok(
                id,
                json!({"agent": {"agent_status": "working", "focused": p.id == focused,
                        "interactive_ready": true, "launch_pending": false, "pane_id": p.id,
                        "revision": 0, "screen_detection_skipped": false, "tab_id": p.tab_id,
                        "terminal_id": p.terminal_id, "workspace_id": p.workspace_id},
                       "type": "agent_prompted"}),
            )
        }
        _ => focus::handle_more(method, id, &params, s)
            .unwrap_or_else(|| error("", "invalid_request", "failed to parse request")),
    }
}

/// Fixture replies, to check the fake against what a real Herdr printed.
pub fn fixture(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/herdr-0.8.2")
        .join(name);
    serde_json::from_slice(&std::fs::read(p).expect("fixture")).expect("fixture json")
}

/// The set of keys of a JSON object, recursively for nested objects (arrays: first element).
pub fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(a) => Value::Array(a.first().map(shape).into_iter().collect()),
        Value::String(_) => json!("s"),
        Value::Number(_) => json!(0),
        Value::Bool(_) => json!(true),
        Value::Null => Value::Null,
    }
}

/// The sorted keys of a JSON object.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    k.sort();
    k
}
