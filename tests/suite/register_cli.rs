//! `intercom-pane register`: a seat records itself from the inside (its pi process is an
//! ancestor), on real files and in a real tmux pane; the scan then trusts what it can verify.
//! The pi is the stand-in of `pi_support` (a runtime named `node` running pi's entry script).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mux_support::{wait_for, TmuxServer};
use pi_support::{pi_pane_command, FakePi};
use scan_support::*;
use serde_json::{json, Value};

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn ticks(pid: i32) -> u64 {
    intercom_pane::seam::proc::identity(pid)
        .unwrap()
        .start_ticks
}

/// An Intercom root (`root`) configuring a coordinator and one worker, `Worker`, whose session
/// is `id`; and the `sessions` folder the scan searches.
fn worker_root(env: &Env, id: &str) -> PathBuf {
    let root = env.path("root");
    write_roster(&root, &[(id, "Worker")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    root
}

/// The `register` call a pane's `pi` (the shell `$$`) makes for `event`, as the extension does.
fn register_line(env: &Env, id: &str, event: &str, seq: u32, extra: &str) -> String {
    format!(
        "{} register --config {} --event {event} --seq {seq} --pi-pid $$ --session-id {id} --cwd {} {extra} >/dev/null",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.system_config(),
        env.path("root").display()
    )
}

/// The `Worker` record of one scan that lists the tmux server at `sock`.
fn scanned_worker(env: &Env, sock: &str) -> Value {
    record(&scan_json(env, &["--tmux-socket", sock]), "Worker").clone()
}

/// One pi's `register` calls as the extension makes them: the seat's pi, session and cwd once
/// (`seat`), then per call the event, `--seq` and any further flag; `send` runs the call as a
/// child of the pi stand-in.
#[derive(Clone, Debug)]
struct Register {
    seat: Vec<String>,
    event: String,
    more: Vec<String>,
}

impl Register {
    fn seat(pi_pid: i32, session_id: &str, cwd: &str) -> Register {
        let seat = [
            "--pi-pid",
            &pi_pid.to_string(),
            "--session-id",
            session_id,
            "--cwd",
            cwd,
        ];
        Register {
            seat: seat.map(str::to_string).to_vec(),
            event: String::new(),
            more: Vec::new(),
        }
    }

    /// A call for `event` from this seat.
    fn event(&self, event: &str) -> Register {
        Register {
            event: event.to_string(),
            ..self.clone()
        }
    }

    fn seq(self, seq: u32) -> Register {
        self.flag("--seq", &seq.to_string())
    }

    fn flag(mut self, name: &str, value: &str) -> Register {
        self.more.extend([name.to_string(), value.to_string()]);
        self
    }

    fn send(&self, pi: &mut FakePi, env: &Env) -> Output {
        let args: Vec<&str> = ["--event", self.event.as_str()]
            .into_iter()
            .chain(self.seat.iter().chain(&self.more).map(String::as_str))
            .collect();
        pi.register(env, &args)
    }
}

/// A tmux session `name` whose one pane runs the pi stand-in: `script`, then it stays.
fn pi_pane(env: &Env, name: &str, script: &str) -> TmuxServer {
    let inner = pi_pane_command(&env.path("pi-bin"), script);
    TmuxServer::start(name, &env.path("root"), &["bash", "-c", &inner])
}

#[test]
fn records_identity_and_keeps_the_newest_run_state() {
    let env = Env::new();
    let mut pi = FakePi::start(&env);
    let cwd = env.path("work");
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd_s = cwd.display().to_string();
    let seat = Register::seat(pi.pid(), "sess-1", &cwd_s);
    let o = seat
        .event("session_start")
        .seq(1)
        .flag("--session-file", "/x/s_sess-1.jsonl")
        .send(&mut pi, &env);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let path = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    assert!(
        path.starts_with(env.path("data/seats/pi")),
        "{}",
        path.display()
    );
    assert!(path.ends_with("registration.json"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let r = read(&path);
    assert_eq!(r["pid"], pi.pid());
    assert_eq!(r["startTicks"], ticks(pi.pid()));
    assert_eq!(
        r["bootId"],
        std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .unwrap()
            .trim()
    );
    assert_eq!(r["sessionId"], "sess-1");
    assert_eq!(r["sessionFile"], "/x/s_sess-1.jsonl");
    assert_eq!(r["cwd"], cwd_s);
    assert_eq!(r["runState"]["state"], "idle");
    assert_eq!(r["mux"], Value::Null, "no multiplexer owns this pi");
    assert!(r["startedAt"].as_str().unwrap().ends_with('Z'));

    // A turn starts: working, seq 3.
    let o = seat.event("agent_start").seq(3).send(&mut pi, &env);
    assert!(o.status.success());
    assert_eq!(read(&path)["runState"]["state"], "working");
    // A late, older event (seq 2) changes nothing.
    let o = seat.event("agent_settled").seq(2).send(&mut pi, &env);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert_eq!(read(&path)["runState"]["state"], "working");
    assert_eq!(read(&path)["runState"]["seq"], 3);
    let o = seat.event("session_shutdown").seq(4).send(&mut pi, &env);
    assert!(o.status.success());
    assert_eq!(read(&path)["runState"]["state"], "closed");
    // No lock or temp file is left behind.
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["registration.json"]);
}

#[test]
fn refuses_what_it_cannot_verify_and_writes_nothing() {
    let env = Env::new();
    let mut pi = FakePi::start(&env);
    let cwd = env.path("work").display().to_string();
    // A process that is not our ancestor (a sibling) cannot be registered from here.
    let mut sibling = Command::new("sleep").arg("30").spawn().unwrap();
    let o = Register::seat(sibling.id() as i32, "s", &cwd)
        .event("session_start")
        .send(&mut pi, &env);
    let _ = sibling.kill();
    let _ = sibling.wait();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an ancestor"));
    for bad in [
        Register::seat(pi.pid(), "s", &cwd).event("nap"),
        Register::seat(pi.pid(), " ", &cwd).event("session_start"),
        Register::seat(pi.pid(), "s", "rel").event("session_start"),
    ] {
        let o = bad.send(&mut pi, &env);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
    }
    assert!(!env.path("data/seats").exists());
}

#[test]
fn a_registered_pane_is_trusted_by_the_scan() {
    let env = Env::new().with_system_path();
    let id = "01a2f000-0000-7000-8000-00000000aa01";
    let root = worker_root(&env, id);
    // A pane whose process is named `pi` (bash started as `pi`) registers itself at startup and
    // then reports a turn starting, as the extension does; the pane is in a session named
    // otherwise, so only the registration can tell which pane is the seat's.
    let script = format!(
        "{}; sleep 1; {}",
        register_line(&env, id, "session_start", 1, ""),
        register_line(&env, id, "agent_start", 2, "")
    );
    let server = pi_pane(&env, "elsewhere", &script);
    let sock = server.sock.display().to_string();
    let index = wait_for(15_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        (record(&idx, "Worker")["registered"]["runState"] == "working").then_some(idx)
    })
    .expect("the registration reached the board");
    let w = record(&index, "Worker");
    assert_eq!(w["state"], "working", "{w}");
    assert_eq!(w["stateReason"], "turn_started");
    assert_eq!(w["stateSource"], "registration run state");
    assert_eq!(w["alive"], true);
    assert_eq!(w["registered"]["alive"], true);
    let path = std::fs::read_dir(root.join(".pi-intercom/seats"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .unwrap()
        .path();
    let r = read(&path);
    assert_eq!(r["mux"]["kind"], "tmux");
    assert_eq!(r["mux"]["session"], "elsewhere");
    assert_eq!(r["mux"]["socket"], sock);
    assert!(r["mux"]["paneId"].as_str().unwrap().starts_with('%'));
    assert_eq!(index["registered"], json!(["root/Worker"]));
}

#[test]
fn a_session_added_to_the_roster_mid_run_keeps_one_record() {
    let env = Env::new();
    let mut pi = FakePi::start(&env);
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let coord = json!({"sessionId": "c", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."});
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": [coord]}).to_string(),
    )
    .unwrap();
    let seat = Register::seat(pi.pid(), "late", &root.display().to_string());
    let o = seat.event("session_start").seq(1).send(&mut pi, &env);
    let first = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    assert!(
        first.starts_with(env.path("data")),
        "not configured yet: data root"
    );
    // The coordinator configures the session; the next event updates the same record.
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": [coord, {"sessionId": "late", "name": "Late",
            "coordinator": false, "description": "L.", "port": 2, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    let o = seat.event("agent_start").seq(2).send(&mut pi, &env);
    let second = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    assert_eq!(second, first);
    assert_eq!(read(&first)["runState"]["state"], "working");
    assert!(
        !root.join(".pi-intercom/seats").exists(),
        "no second record"
    );
}

/// Escape during pi's retry backoff leaves the failed attempt and its `context_edit` behind, then
/// pi fires `agent_settled` (no retry will run). Inside the backoff window the transcript alone
/// reads as retrying; the settle recorded after it makes the error stand.
#[test]
fn a_retry_abandoned_by_a_settle_reads_error_not_retrying() {
    let env = Env::new().with_system_path();
    let id = "01a2f000-0000-7000-8000-00000000ab01";
    let root = worker_root(&env, id);
    let marker = env.path("settle-now");
    let script = format!(
        "{}; sleep 0.2; {}; while [ ! -e {m} ]; do sleep 0.05; done; {}",
        register_line(&env, id, "session_start", 1, ""),
        register_line(&env, id, "agent_start", 2, ""),
        register_line(&env, id, "agent_settled", 3, ""),
        m = marker.display()
    );
    let server = pi_pane(&env, "w", &script);
    let sock = server.sock.display().to_string();
    let sessions = env.path("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    wait_for(15_000, || {
        (scanned_worker(&env, &sock)["registered"]["runState"] == "working").then_some(())
    })
    .expect("the turn's start reached the board");
    std::thread::sleep(std::time::Duration::from_millis(20));
    // The failed attempt, as pi 1.6.0 writes it, stamped now: after the run's start, as in a
    // real pi.
    let now = intercom_pane::seam::clock::format_iso(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64,
    );
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":now,"cwd":root.display().to_string()}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":now,"message":{"role":"user","content":"go"}}),
        json!({"type":"message","id":"e1","parentId":"u1","timestamp":now,"message":{"role":"assistant","content":[],
            "provider":"fake","model":"fake-model","stopReason":"error","errorMessage":"500: {\"message\":\"overloaded\"}"}}),
        json!({"type":"context_edit","id":"c1","parentId":"e1","timestamp":now,"targetId":"e1","replacement":null}),
    ];
    std::fs::write(
        sessions.join(format!("2026-11-30T00-00-00-000Z_{id}.jsonl")),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    // Scans pinned at a time after the failure: +1 s is inside pi's first backoff; +60 s is past
    // it (custom retry settings or a slow summary); +10 min is past the trust in a running turn.
    let at = |ms: i64| {
        intercom_pane::seam::clock::format_iso(
            intercom_pane::seam::clock::parse_iso(&now).unwrap() + ms,
        )
    };
    let scan_at = |ms: i64| {
        let t = at(ms);
        let idx = stdout_json(&env.run(&layout_args(
            &env,
            &["scan", "--json"],
            &["--tmux-socket", sock.as_str(), "--now", t.as_str()],
        )));
        record(&idx, "Worker").clone()
    };
    let brief = |w: &Value| {
        format!(
            "{}/{}/{}",
            w["state"].as_str().unwrap_or("?"),
            w["stateReason"].as_str().unwrap_or("?"),
            w["stateSource"].as_str().unwrap_or("?")
        )
    };
    assert_eq!(brief(&scan_at(1_000)), "working/retrying/session file");
    assert_eq!(
        brief(&scan_at(60_000)),
        "working/retrying/registration run state"
    );
    assert_eq!(brief(&scan_at(600_000)), "error/final_error/session file");

    std::fs::write(&marker, b"").unwrap();
    wait_for(15_000, || {
        (scan_at(1_000)["registered"]["runState"] == "idle").then_some(())
    })
    .expect("the settle reached the board");
    assert_eq!(
        brief(&scan_at(1_000)),
        "error/retry_abandoned/registration run state"
    );
    assert_eq!(brief(&scan_at(60_000)), "error/final_error/session file");
    drop(server);
}

/// After `/resume` pi appends to an older-named session file. A live registration naming that
/// file (in the seat's own sessions folder) decides which file the seat reads; without one, the
/// newest name does.
#[test]
fn a_live_registration_picks_the_resumed_session_file() {
    let env = Env::new();
    let dir = env.path("repo/.pi/state/darkwing/sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let (old_id, new_id) = (
        "01a2f000-0000-7000-8000-00000000ac01",
        "01a2f000-0000-7000-8000-00000000ac02",
    );
    let t = "2026-11-29T10:00:00.000Z";
    let file = |id: &str, name: &str, last: Value| {
        let lines = [
            json!({"type":"session","version":3,"id":id,"timestamp":t,"cwd":"/w"}),
            json!({"type":"message","id":"u1","parentId":null,"timestamp":t,"message":{"role":"user","content":"go"}}),
            last,
        ];
        let p = dir.join(format!("{name}_{id}.jsonl"));
        std::fs::write(
            &p,
            lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .unwrap();
        p
    };
    let reply = json!({"type":"message","id":"a1","parentId":"u1","timestamp":t,"message":{"role":"assistant",
        "content":[{"type":"text","text":"Done."}],"provider":"p","model":"m","stopReason":"stop"}});
    let steer = json!({"type":"message","id":"u2","parentId":"u1","timestamp":t,"message":{"role":"user","content":"and then?"}});
    let resumed = file(old_id, "2026-11-29T09-00-00-000Z", steer);
    let newest = file(new_id, "2026-11-29T10-00-00-000Z", reply);
    let cfg = env.system_config();
    let scan = || {
        let o = env.run(&[
            "scan",
            "--json",
            "--config",
            &cfg,
            "--repo",
            "repo",
            "--fleet",
            "none",
            "--liveness",
            "assume-alive",
            "--now",
            NOW,
        ]);
        record(&stdout_json(&o), "darkwing").clone()
    };
    let w = scan();
    assert_eq!(w["sessionFile"], newest.display().to_string());
    assert_eq!(w["state"], "idle");

    // The stand-in is the pi that resumed the older session.
    let mut pi = FakePi::start(&env);
    let (f, d) = (resumed.display().to_string(), dir.display().to_string());
    let o = Register::seat(pi.pid(), old_id, "/")
        .event("session_start")
        .seq(1)
        .flag("--session-file", &f)
        .flag("--sessions-dir", &d)
        .send(&mut pi, &env);
    assert!(o.status.success(), "{o:?}");
    let w = scan();
    assert_eq!(w["sessionFile"], f);
    assert_eq!(w["sessionId"], old_id);
    assert_eq!(w["state"], "working", "{w}");
    assert_eq!(w["stateReason"], "user_message");

    // `/new`: pi registers a session whose file it writes only at the first prompt. The seat is
    // in that fresh session (nothing in it yet), not in either old one.
    let fresh = dir.join("2026-11-29T11-00-00-000Z_01a2f000-0000-7000-8000-00000000ac03.jsonl");
    let f = fresh.display().to_string();
    let o = Register::seat(pi.pid(), "01a2f000-0000-7000-8000-00000000ac03", "/")
        .event("session_start")
        .seq(2)
        .flag("--session-file", &f)
        .flag("--sessions-dir", &d)
        .send(&mut pi, &env);
    assert!(o.status.success(), "{o:?}");
    let w = scan();
    assert_eq!(w["sessionFile"], Value::Null, "{w}");
    assert_eq!(w["state"], "idle", "{w}");
    assert_eq!(w["lastActivity"], Value::Null);
}

/// pi recorded the end of a worker's session (it moved to `/new`, `/resume`, `/fork`) and runs
/// on in the same pane: the seat is offline (not this session any more) and nothing is typed
/// into that pane for it.
#[test]
fn a_session_pi_closed_while_running_on_is_offline_and_not_replied_to() {
    let env = Env::new().with_system_path();
    let id = "01a2f000-0000-7000-8000-00000000ad01";
    worker_root(&env, id);
    let script = format!(
        "{}; {}",
        register_line(&env, id, "session_start", 1, ""),
        register_line(&env, id, "session_shutdown", 2, "")
    );
    let server = pi_pane(&env, "w", &script);
    let sock = server.sock.display().to_string();
    let w = wait_for(15_000, || {
        let w = scanned_worker(&env, &sock);
        (w["registered"]["runState"] == "closed").then_some(w)
    })
    .expect("the shutdown reached the board");
    assert_eq!(w["registered"]["alive"], true, "the process runs on: {w}");
    assert_eq!(w["state"], "offline", "{w}");
    assert_eq!(w["stateReason"], "session_closed");
    assert_eq!(w["stateSource"], "registration run state");
    assert_eq!(w["alive"], false);
    let o = env.run(&layout_args(
        &env,
        &["reply"],
        &["--tmux-socket", &sock, "Worker", "are you there?"],
    ));
    assert_eq!(o.status.code(), Some(6), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("session has ended"),
        "{o:?}"
    );
}

/// pi's `/tree` back to an earlier reply, without a summary, writes nothing; the extension
/// records the new leaf (`session_tree`), and until pi writes again the seat's branch ends there.
/// The session file is one a real pi 1.6.0 wrote in exactly that situation.
#[test]
fn a_tree_leaf_recorded_by_the_extension_is_the_seats_branch_until_pi_writes() {
    let env = Env::new().with_system_path();
    let id = "01a22a3f-f239-75dc-b7fa-aa942959c61c";
    worker_root(&env, id);
    let sessions = env.path("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join(format!("2026-11-30T02-19-23-578Z_{id}.jsonl"));
    std::fs::copy(
        Path::new(FIXTURES).join("pi-1.6.0-runs/tree_nav_to_waiting_nosummary.jsonl"),
        &file,
    )
    .unwrap();
    let script = format!(
        "{}; sleep 0.05; {}",
        register_line(&env, id, "session_start", 1, ""),
        register_line(&env, id, "session_tree", 2, "--leaf-id e16e1c40")
    );
    let server = pi_pane(&env, "w", &script);
    let sock = server.sock.display().to_string();
    let w = wait_for(15_000, || {
        let w = scanned_worker(&env, &sock);
        (w["state"] == "waiting").then_some(w)
    })
    .unwrap_or_else(|| scanned_worker(&env, &sock));
    assert_eq!(w["state"], "waiting", "{w}");
    assert_eq!(w["stateReason"], "input_needed");
    assert!(w["stateSource"].as_str().unwrap().contains("/tree"), "{w}");

    // pi writes the next entry (a child of that leaf): the file speaks for itself again.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let next = json!({"type":"message","id":"aa000001","parentId":"e16e1c40","timestamp":"2026-11-30T02:20:00.000Z",
        "message":{"role":"user","content":"staging"}});
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    std::io::Write::write_all(&mut f, format!("{next}\n").as_bytes()).unwrap();
    drop(f);
    let w = scanned_worker(&env, &sock);
    assert_eq!(
        (
            w["state"].as_str(),
            w["stateReason"].as_str(),
            w["stateSource"].as_str()
        ),
        (Some("working"), Some("user_message"), Some("session file")),
        "{w}"
    );
    // A leaf id that is not an entry id is refused, and changes nothing.
    let mut pi = FakePi::start(&env);
    let o = Register::seat(pi.pid(), id, "/")
        .event("session_tree")
        .flag("--leaf-id", "x\u{1b}]0;y")
        .send(&mut pi, &env);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}
