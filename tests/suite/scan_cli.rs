//! `intercom-pane scan` and `status --json` end to end: the real binary on real files copied from
//! the shared fixtures into a temporary folder.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use std::path::Path;

use scan_support::*;
use serde_json::{json, Value};

#[test]
fn real_pi_sessions_classify_with_assumed_liveness() {
    let env = Env::new();
    pi_root(&env, &["idle", "waiting", "error", "tool"]);
    let o = env.run(&scan_args(&env, "--json", &["--liveness", "assume-alive"]));
    let index = stdout_json(&o);
    assert_eq!(record(&index, "W-idle")["state"], "idle");
    assert_eq!(record(&index, "W-waiting")["state"], "waiting");
    assert_eq!(record(&index, "W-waiting")["waitingOnYou"], true);
    assert_eq!(record(&index, "W-error")["state"], "error");
    assert_eq!(record(&index, "W-tool")["state"], "working");
    let idle = record(&index, "W-idle");
    assert_eq!(idle["task"], "Status board harness check. SCENARIO:idle");
    assert_eq!(idle["taskSource"], "first-user-message");
    assert_eq!(idle["model"], "fake-model");
    assert_eq!(idle["provider"], "fake");
    assert_eq!(idle["lastAssistantText"], "BOARD_REPLY_OK");
    assert_eq!(idle["workspace"], "/home/dev/run/work/idle");
    assert_eq!(idle["workspaceSource"], "session-cwd");
    assert_eq!(idle["lastActivity"], "2026-11-29T23:13:57.681Z");
    assert_eq!(idle["scannedAt"], NOW);
    assert!(record(&index, "W-error")["lastError"]
        .as_str()
        .unwrap()
        .starts_with("400: "));
    // The coordinator has no session file: live (assumed) and idle, with the reason saying so.
    assert_eq!(record(&index, "Coordinator")["state"], "idle");
    assert_eq!(
        record(&index, "Coordinator")["stateReason"],
        "no_session_file"
    );
    assert_eq!(index["counts"]["working"], 1);
    assert_eq!(index["waitingOnYou"], json!(["root/W-waiting"]));
    // Board files landed, one per seat, and the index equals what was printed.
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(env.path("data/board/index.json")).unwrap()).unwrap();
    assert_eq!(on_disk, index);
    let rec: Value = serde_json::from_slice(
        &std::fs::read(env.path("data/board/sessions/root/W-tool.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["state"], "working");
    assert!(
        !env.path("data/board/seen.json").exists(),
        "a scan never writes seen.json"
    );
}

#[test]
fn print_marks_waiting_and_seen_rows() {
    let env = Env::new();
    pi_root(&env, &["waiting", "idle"]);
    let args = scan_args(&env, "--print", &["--liveness", "assume-alive"]);
    let o = env.run(&args);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let waiting = text.lines().find(|l| l.contains("root/W-waiting")).unwrap();
    assert!(waiting.starts_with("* "), "{waiting:?}");
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "board: {} (3 sessions, 1 waiting on you, 0 seen)",
            env.path("data/board").display()
        )
    );
    // Mark it seen at its current lastActivity: it leaves the attention list.
    std::fs::write(
        env.path("data/board/seen.json"),
        json!({"root/W-waiting": "2026-11-29T23:13:58.065Z"}).to_string(),
    )
    .unwrap();
    let text = String::from_utf8(env.run(&args).stdout).unwrap();
    let waiting = text.lines().find(|l| l.contains("root/W-waiting")).unwrap();
    assert!(waiting.starts_with("s "), "{waiting:?}");
    assert!(text.ends_with("(3 sessions, 0 waiting on you, 1 seen)\n"));
    // A mark for an older lastActivity no longer applies.
    std::fs::write(
        env.path("data/board/seen.json"),
        json!({"root/W-waiting": "2026-11-29T23:00:00.000Z"}).to_string(),
    )
    .unwrap();
    let text = String::from_utf8(env.run(&args).stdout).unwrap();
    assert!(text.ends_with("(3 sessions, 1 waiting on you, 0 seen)\n"));
}

#[test]
fn refusals_exit_2_and_write_nothing() {
    let env = Env::new();
    pi_root(&env, &["idle"]);
    // Invalid seen.json: refused, and no board file is written.
    std::fs::create_dir_all(env.path("data/board")).unwrap();
    std::fs::write(env.path("data/board/seen.json"), b"not json").unwrap();
    let cfg = env.system_config();
    let o = env.run(&[
        "scan", "--config", &cfg, "--root", "root", "--fleet", "none",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("seen_invalid"));
    assert!(!env.path("data/board/index.json").exists());

    // --config problems.
    let missing = env.path("nope.json").display().to_string();
    let o = env.run(&["scan", "--config", &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.json"));
    let rel = env.path("rel.json");
    std::fs::write(&rel, br#"{"dataRoot":"relative/dir"}"#).unwrap();
    let o = env.run(&["scan", "--config", &rel.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not an absolute path"));
    let gone = env.path("gone.json");
    std::fs::write(&gone, json!({"dataRoot": env.path("absent")}).to_string()).unwrap();
    let o = env.run(&["scan", "--config", &gone.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!env.path("absent").exists());
    std::os::unix::fs::symlink(env.path("data"), env.path("linked")).unwrap();
    let linked = env.path("linked.json");
    std::fs::write(&linked, json!({"dataRoot": env.path("linked")}).to_string()).unwrap();
    let o = env.run(&["scan", "--config", &linked.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("link"));

    // Bad arguments.
    let o = env.run(&["status", "--json", "--limit", "21", "--root", "root"]);
    assert_eq!(o.status.code(), Some(2));
    let o = env.run(&["status", "--json", "--limit", "0", "--root", "root"]);
    assert_eq!(o.status.code(), Some(2));
    let o = env.run(&["scan", "--liveness", "maybe"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn without_config_the_xdg_state_root_is_used() {
    let env = Env::new();
    let o = env.run(&[
        "scan",
        "--print",
        "--fleet",
        "none",
        "--liveness",
        "assume-alive",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(env.path("state/intercom-pane/board/index.json").exists());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("(0 sessions, 0 waiting on you, 0 seen)"));
}

#[test]
fn status_json_projects_the_intercom_fixture_root() {
    let env = Env::new();
    copy_dir(
        &Path::new(FIXTURES).join("intercom-root"),
        &env.path("root"),
    );
    let now = "2026-11-29T10:00:30.000Z";
    let cfg = env.system_config();
    let base = [
        "status", "--json", "--config", &cfg, "--root", "root", "--fleet", "none", "--now", now,
    ];
    let page = stdout_json(&env.run(&base));
    assert_eq!(page["version"], 1);
    assert_eq!(page["source"], "local-observations");
    assert_eq!(page["generatedAt"], now);
    assert_eq!(page["totalInSnapshot"], 3);
    assert_eq!(page["nextOffset"], Value::Null);
    let workers = page["workers"].as_array().unwrap();
    let names: Vec<&str> = workers
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Builder", "Reviewer", "Docs"]);
    // Without --json: the same page as a list, one line per worker in the same order.
    let plain: Vec<&str> = base.iter().copied().filter(|a| *a != "--json").collect();
    let o = env.run(&plain);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    let firsts: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(firsts[..3], ["Builder", "Reviewer", "Docs"], "{text}");
    for (w, line) in workers
        .iter()
        .zip(text.lines().filter(|l| !l.starts_with(' ')))
    {
        let state = w["boardState"].as_str().unwrap();
        let activity = w["observedStatus"].as_str().unwrap();
        assert!(
            line.contains(&format!(" {state} ("))
                && line.contains(&format!("activity {activity} ")),
            "{line}"
        );
        // A connection nobody checked is said once, in the footer, not on every line.
        assert!(!line.contains("connection"), "{line}");
    }
    assert!(
        text.contains("connections not checked (--probe checks them)"),
        "{text}"
    );
    assert!(text.contains("report: needs decision"), "{text}");
    assert!(
        text.contains("3 of 3 configured workers (1–3), scanned 2026-11-29T10:00:30.000Z"),
        "{text}"
    );
    assert!(
        !text.contains('{') && !text.contains("not_checked"),
        "{text}"
    );
    assert_eq!(workers[0]["observedStatus"], "thinking");
    assert_eq!(workers[0]["lastActivity"], "Thinking");
    assert_eq!(workers[0]["evidence"], "recent");
    assert_eq!(workers[0]["observationAgeSeconds"], 20);
    assert_eq!(workers[0]["connection"]["state"], "unknown");
    assert_eq!(workers[0]["connection"]["reason"], "not_checked");
    assert_eq!(workers[1]["observedStatus"], "idle");
    assert_eq!(workers[1]["report"]["status"], "needs_decision");
    assert_eq!(workers[1]["report"]["selfReported"], true);
    assert_eq!(workers[1]["evidence"], "stale");
    assert_eq!(workers[2]["observedStatus"], "closed");
    assert_eq!(
        workers[2]["report"],
        Value::Null,
        "a clear tombstone is no report"
    );
    assert_eq!(workers[2]["handoff"]["selfReported"], true);
    assert_eq!(workers[2]["handoff"]["ageSeconds"], 150);
    assert_eq!(workers[2]["closeJob"]["state"], "closed");
    // No tmux on PATH: liveness cannot be asked, so the board state is unknown, not offline.
    assert_eq!(workers[0]["boardState"], "unknown");
    let text = String::from_utf8(env.run(&base).stdout).unwrap();
    assert!(!text.contains("secretField") && !text.contains("must never be shown"));
    assert!(!text.contains("dashboardPort") && !text.contains("extraAgentKey"));

    // Paging and selection.
    let mut paged = base.to_vec();
    paged.extend(["--limit", "2"]);
    let p1 = stdout_json(&env.run(&paged));
    assert_eq!(p1["workers"].as_array().unwrap().len(), 2);
    assert_eq!(p1["nextOffset"], 2);
    paged.extend(["--offset", "2"]);
    let p2 = stdout_json(&env.run(&paged));
    assert_eq!(p2["workers"][0]["name"], "Docs");
    assert_eq!(p2["nextOffset"], Value::Null);
    let mut named = base.to_vec();
    named.extend(["--name", "bUILDER"]);
    let one = stdout_json(&env.run(&named));
    assert_eq!(one["workers"].as_array().unwrap().len(), 1);
    assert_eq!(one["totalInSnapshot"], 1);
    let mut unknown = base.to_vec();
    unknown.extend(["--name", "Nobody"]);
    assert_eq!(env.run(&unknown).status.code(), Some(2));
    // The scan of the same root never shows the field outside the allowlist either.
    let o = env.run(&[
        "scan", "--json", "--config", &cfg, "--root", "root", "--fleet", "none", "--now", now,
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains("secretField"));
    let board = std::fs::read_to_string(env.path("data/board/index.json")).unwrap();
    assert!(!board.contains("secretField"));
}

fn own_start_ticks() -> u64 {
    intercom_pane::seam::proc::identity(std::process::id() as i32)
        .unwrap()
        .start_ticks
}

fn register(env: &Env, seat: &str, v: Value) {
    let dir = env.path(&format!("data/seats/main/{seat}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("registration.json"), v.to_string()).unwrap();
}

#[test]
fn registrations_relaunch_notice_and_stale_records() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle", "waiting", "error"]);
    let me = std::process::id() as i32;
    // W-idle: relaunched (live registration started after the last message) with a task.
    register(
        &env,
        "idle",
        json!({"version": 1, "sessionId": ids[0].1, "pid": me, "startTicks": own_start_ticks(),
            "startedAt": "2026-11-29T23:15:00.000Z", "task": "Carry on with the audit",
            "taskSetBy": "coordinator"}),
    );
    // W-waiting: live registration that started exactly at the last message: no relaunch.
    register(
        &env,
        "waiting",
        json!({"version": 1, "sessionId": ids[1].1, "pid": me, "startTicks": own_start_ticks(),
            "startedAt": "2026-11-29T23:13:58.065Z"}),
    );
    // W-error: the recorded process is another incarnation (start ticks differ): stale.
    register(
        &env,
        "error",
        json!({"version": 1, "sessionId": ids[2].1, "pid": me, "startTicks": own_start_ticks() + 1,
            "startedAt": "2026-11-29T23:15:00.000Z", "task": "Must not be shown"}),
    );
    register(&env, "broken", json!({"version": 2}));
    let o = env.run(&scan_args(&env, "--json", &["--liveness", "assume-alive"]));
    let index = stdout_json(&o);
    let idle = record(&index, "W-idle");
    assert_eq!(idle["relaunchedAt"], "2026-11-29T23:15:00.000Z");
    assert_eq!(idle["task"], "Carry on with the audit");
    assert_eq!(idle["taskSource"], "registration");
    assert_eq!(idle["taskSetBy"], "coordinator");
    assert_eq!(idle["registered"]["alive"], true);
    let waiting = record(&index, "W-waiting");
    assert_eq!(
        waiting["relaunchedAt"],
        Value::Null,
        "equality is not a relaunch"
    );
    assert_eq!(waiting["taskSource"], "first-user-message");
    assert_eq!(waiting["taskSetBy"], Value::Null);
    let error = record(&index, "W-error");
    assert_eq!(error["registered"]["alive"], false);
    assert_eq!(error["relaunchedAt"], Value::Null);
    assert_eq!(error["taskSource"], "first-user-message");
    assert_eq!(index["registrationStale"], json!(["root/W-error"]));
    let regs = index["registered"].as_array().unwrap();
    assert_eq!(regs.len(), 2);
    let errs = index["registrationErrors"].as_array().unwrap();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].as_str().unwrap().ends_with("registration_invalid"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("registration skipped"));
    // --print shows the relaunch notice in place of the old preview.
    let o = env.run(&scan_args(&env, "--print", &["--liveness", "assume-alive"]));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = text.lines().find(|l| l.contains("root/W-idle")).unwrap();
    assert!(
        line.contains("relaunched at 2026-11-29T23:15:00.000Z, no messages since"),
        "{line}"
    );
}

#[test]
fn repo_and_fleet_seats_and_connectors() {
    let env = Env::new();
    // A repo seat and a fleet seat, each with a real pi session in its state folder.
    let repo_sessions = env.path("repo/.pi/state/darkwing/sessions");
    std::fs::create_dir_all(&repo_sessions).unwrap();
    std::fs::create_dir_all(env.path("repo/.git")).unwrap();
    let src = Path::new(FIXTURES).join("pi-sessions");
    std::fs::copy(
        src.join("waiting.jsonl"),
        repo_sessions.join("2026-11-29.jsonl"),
    )
    .unwrap();
    let fleet_sessions = env.path("fleet/rocko/.pi/agent/sessions");
    std::fs::create_dir_all(&fleet_sessions).unwrap();
    std::fs::copy(
        src.join("idle.jsonl"),
        fleet_sessions.join("2026-11-29.jsonl"),
    )
    .unwrap();
    // A connector binding (mode 0600) owned by this live process, and one with a bad mode.
    use std::os::unix::fs::PermissionsExt;
    let discord = env.path("data/discord");
    std::fs::create_dir_all(&discord).unwrap();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let binding = discord.join("ops.json");
    std::fs::write(
        &binding,
        json!({"seat": "rocko", "token": "/secret/path", "owner": {"pid": std::process::id(),
            "bootId": boot.trim(), "startTick": own_start_ticks()}})
        .to_string(),
    )
    .unwrap();
    std::fs::set_permissions(&binding, std::fs::Permissions::from_mode(0o600)).unwrap();
    let wide = discord.join("wide.json");
    std::fs::write(&wide, json!({"seat": "rocko"}).to_string()).unwrap();
    std::fs::set_permissions(&wide, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = env.system_config();
    let fleet = env.path("fleet").display().to_string();
    let o = env.run(&[
        "scan", "--json", "--config", &cfg, "--repo", "repo", "--fleet", &fleet, "--now", NOW,
    ]);
    let index = stdout_json(&o);
    let dw = record(&index, "darkwing");
    assert_eq!(dw["project"], "repo");
    assert_eq!(dw["tmux"]["session"], "darkwing");
    // No tmux on PATH: unknown, never waiting on a guess.
    assert_eq!(dw["state"], "unknown");
    assert_eq!(
        dw["activeProject"],
        Value::Null,
        "the session cwd has no git checkout here"
    );
    let rocko = record(&index, "rocko");
    assert_eq!(rocko["project"], "fleet");
    assert_eq!(rocko["tmux"]["socket"], "mosaic-fleet");
    let conn = record(&index, "rocko (discord: ops)");
    assert_eq!(conn["task"], "Discord connector");
    assert_eq!(conn["taskSource"], "connector");
    assert_eq!(conn["alive"], true);
    assert_eq!(conn["connector"]["binding"], "ops");
    let text = serde_json::to_string(&index).unwrap();
    assert!(
        !text.contains("/secret/path"),
        "binding policy is never projected"
    );
    assert_eq!(
        index["discoveryErrors"],
        json!(["discord/wide: binding_bad_mode"])
    );
}

#[test]
fn hostile_roots_are_refused_with_codes_and_never_block() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle", "waiting"]);
    let cfg = env.system_config();
    // A FIFO named like a log, and a FIFO named like a worker's session file.
    let logs = env.path("root/.pi-intercom/logs");
    std::fs::create_dir_all(&logs).unwrap();
    let fifo_log = logs.join("writer-0190aaaa-0000-7000-8000-000000000009.jsonl");
    nix::unistd::mkfifo(&fifo_log, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let sessions = env.path("sessions/--work--");
    for e in std::fs::read_dir(&sessions).unwrap() {
        let p = e.unwrap().path();
        if p.display().to_string().contains(&ids[1].1) {
            std::fs::remove_file(&p).unwrap();
            nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        }
    }
    let args = scan_args(&env, "--json", &["--liveness", "assume-alive"]);
    // Hang guard, not a product deadline: a FIFO opened for reading would block the scan until a
    // writer came, which here never happens.
    const HANG_GUARD: std::time::Duration = std::time::Duration::from_secs(30);
    let out = env.run_guarded(&args, HANG_GUARD);
    let index = stdout_json(&out);
    assert_eq!(record(&index, "W-idle")["state"], "idle");
    // The FIFO session is refused with a code, and the seat is not classified from a guess.
    let errors: Vec<String> = index["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("fifo_refused")),
        "{errors:?}"
    );
    assert_eq!(record(&index, "W-waiting")["sessionFile"], Value::Null);
    assert_eq!(record(&index, "W-waiting")["state"], "unknown");
    assert_eq!(
        record(&index, "W-waiting")["stateReason"],
        "session_fifo_refused"
    );
    assert_eq!(record(&index, "W-waiting")["waitingOnYou"], false);

    // A link as .pi-intercom: the roster is unavailable with a fixed code, nothing is guessed.
    let real = env.path("real-pi-intercom");
    std::fs::rename(env.path("root/.pi-intercom"), &real).unwrap();
    std::os::unix::fs::symlink(&real, env.path("root/.pi-intercom")).unwrap();
    let index = stdout_json(&env.run(&args));
    assert_eq!(index["roster"]["available"], false);
    assert_eq!(index["roster"]["code"], "config_link_refused");
    assert_eq!(index["records"], json!([]));
    let o = env.run(&[
        "status", "--json", "--config", &cfg, "--root", "root", "--fleet", "none",
    ]);
    let page = stdout_json(&o);
    assert_eq!(page["roster"]["code"], "config_link_refused");
    assert_eq!(page["workers"], json!([]));
}

#[test]
fn control_and_escape_characters_never_reach_the_terminal() {
    let env = Env::new();
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let sessions = env.path("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let id = "01a2f000-0000-7000-8000-0000000000e1";
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}Task";
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
            "message":{"role":"user","content":evil}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(
        sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl")),
        body,
    )
    .unwrap();
    let cfg = json!({"version":1,"agents":[
        {"sessionId":"c","name":"Coordinator","coordinator":true,"description":"C.","port":1,"projectDirectory":"."},
        {"sessionId":id,"name":"Plain","coordinator":false,"description":"d","port":2,"projectDirectory":"."}]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    let o = env.run(&scan_args(&env, "--print", &["--liveness", "assume-alive"]));
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'));
    assert!(text.contains("Task"), "{text}");
}

/// A loopback health endpoint answering as `session_id`, for `count` requests.
fn health_server(session_id: &str, count: usize) -> u16 {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let id = session_id.to_string();
    std::thread::spawn(move || {
        for s in l.incoming().take(count) {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let body = json!({"version": 1, "sessionId": id}).to_string();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

#[test]
fn status_probe_checks_the_page_and_sorts_disconnected_last() {
    let env = Env::new();
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let live = health_server("sid-b", 4);
    let other = health_server("someone-else", 4);
    let cfg = json!({"version": 1, "agents": [
        {"sessionId": "sid-c", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
        {"sessionId": "sid-a", "name": "Gone", "coordinator": false, "description": "a", "port": closed, "projectDirectory": "."},
        {"sessionId": "sid-b", "name": "Live", "coordinator": false, "description": "b", "port": live, "projectDirectory": "."},
        {"sessionId": "sid-x", "name": "Imposter", "coordinator": false, "description": "x", "port": other, "projectDirectory": "."},
        {"sessionId": "sid-d", "name": "NextPage", "coordinator": false, "description": "d", "port": live, "projectDirectory": "."}
    ]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    let sys = env.system_config();
    let o = env.run(&[
        "status", "--json", "--probe", "--limit", "3", "--config", &sys, "--root", "root",
        "--fleet", "none",
    ]);
    let page = stdout_json(&o);
    let workers = page["workers"].as_array().unwrap();
    let got: Vec<(&str, &str, &str)> = workers
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap(),
                w["connection"]["state"].as_str().unwrap(),
                w["connection"]["reason"].as_str().unwrap(),
            )
        })
        .collect();
    // The page keeps saved order (Gone, Live, Imposter), disconnected sorted last inside it.
    assert_eq!(
        got,
        [
            ("Live", "connected", "verified"),
            ("Gone", "disconnected", "refused"),
            ("Imposter", "disconnected", "identity_mismatch"),
        ]
    );
    assert!(workers[0]["connection"]["checkedAt"].is_string());
    assert_eq!(page["nextOffset"], 3);
    // The next page is probed on its own; without --probe nothing is checked.
    let o = env.run(&[
        "status", "--json", "--limit", "3", "--offset", "3", "--config", &sys, "--root", "root",
        "--fleet", "none",
    ]);
    let page = stdout_json(&o);
    assert_eq!(page["workers"][0]["name"], "NextPage");
    assert_eq!(page["workers"][0]["connection"]["reason"], "not_checked");
}

/// A reader that goes away (`intercom-pane … | head`) ends the output, not the process with a
/// panic: the pipe is closed before the command writes anything.
#[test]
fn a_closed_stdout_pipe_is_not_a_panic() {
    for args in [&["completions", "bash"][..], &["man"][..]] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    }
}

#[test]
fn a_waiting_seat_carries_its_question_in_scan_and_status_json() {
    let env = Env::new();
    pi_root(&env, &["waiting", "idle"]);
    let index = scan_json(&env, &["--liveness", "assume-alive"]);
    let w = record(&index, "W-waiting");
    assert_eq!(w["state"], "waiting");
    let q = w["question"].as_str().expect("a question");
    assert_eq!(q, "Choose staging or production for the approved test.");
    assert!(record(&index, "W-idle")["question"].is_null());
    let args = layout_args(
        &env,
        &["status", "--json"],
        &["--now", NOW, "--liveness", "assume-alive"],
    );
    let page = stdout_json(&env.run(&args));
    let worker = page["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "W-waiting")
        .unwrap();
    assert_eq!(worker["question"].as_str(), Some(q));
}
