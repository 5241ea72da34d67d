//! Herdr behind the Multiplexer trait: against a protocol-faithful fake built from the Herdr
//! 0.8.2 captures, plus a tier against a real `herdr` when one is on PATH.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use intercom_pane::seam::liveness::{seat_liveness, LivenessMode, PaneCache, SeatHint};
use intercom_pane::seam::mux::herdr::{self, Herdr};
use intercom_pane::seam::mux::{
    CloseOutcome, ErrorCode, Liveness, Multiplexer, MuxEnv, MuxError, MuxKind, PaneIdentity,
    PaneInfo, PaneList, ServerIdentity, SplitAbove,
};
use mux_herdr_fake::{fixture, keys, shape, FakeHerdr, Mode};
use serde_json::{json, Value};

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn me() -> u32 {
    std::process::id()
}

fn raw(fake: &FakeHerdr, line: &str) -> Value {
    let mut c = UnixStream::connect(&fake.socket).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(line.as_bytes()).unwrap();
    c.write_all(b"\n").unwrap();
    let mut out = String::new();
    BufReader::new(c).read_line(&mut out).unwrap();
    serde_json::from_str(&out).unwrap()
}

fn rpc(fake: &FakeHerdr, method: &str, params: Value) -> Value {
    raw(
        fake,
        &json!({"id": "cli:test", "method": method, "params": params}).to_string(),
    )
}

fn pane_hint(id: &str) -> SeatHint {
    SeatHint::Pane {
        kind: MuxKind::Herdr,
        socket: None,
        pane_id: Some(id.into()),
        session: None,
    }
}

/// The scan's own liveness rule (`liveness::seat_liveness`) on one listing of one server.
fn verdict_from(list: &Result<PaneList, MuxError>, hint: &SeatHint) -> Liveness {
    let cache = PaneCache::from_listings(vec![((MuxKind::Herdr, None), list.clone())]);
    seat_liveness(&cache, Some(hint), LivenessMode::Tmux).liveness
}

fn verdict(panes: &[PaneInfo], hint: &SeatHint) -> Liveness {
    let list = PaneList {
        server: None,
        panes: panes.to_vec(),
    };
    verdict_from(&Ok(list), hint)
}

fn set_foreground(fake: &FakeHerdr, pane: &str, name: &str) {
    fake.with(|s| {
        let p = s.panes.iter_mut().find(|p| p.id == pane).unwrap();
        p.foreground = vec![(p.shell_pid, name.into(), vec![name.into()])];
    });
}

#[test]
fn the_fake_answers_in_the_shapes_a_real_herdr_printed() {
    let fake = FakeHerdr::start(me());
    assert_eq!(
        shape(&rpc(&fake, "pane.list", json!({}))),
        shape(&fixture("05-pane-list-1.json"))
    );
    let split = rpc(
        &fake,
        "pane.split",
        json!({"target_pane_id": "w1:p1", "direction": "down", "ratio": 0.25, "focus": false}),
    );
    assert_eq!(
        shape(&split),
        shape(&fixture("06-pane-split-down-ratio-0.25.json"))
    );
    // The capture's geometry: the existing, upper pane keeps 25 % (10 of 39 rows).
    let layout = rpc(&fake, "pane.layout", json!({"pane_id": "w1:p1"}));
    let rects: Vec<(String, u64, u64)> = layout["result"]["layout"]["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["pane_id"].as_str().unwrap().to_string(),
                p["rect"]["y"].as_u64().unwrap(),
                p["rect"]["height"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rects,
        vec![("w1:p1".into(), 1, 10), ("w1:p2".into(), 11, 29)]
    );
    assert_eq!(
        keys(&layout["result"]["layout"]),
        keys(&fixture("09-pane-layout-before-swap.json")["result"]["layout"])
    );
    let swap = rpc(
        &fake,
        "pane.swap",
        json!({"source_pane_id": "w1:p1", "target_pane_id": "w1:p2"}),
    );
    let fx = fixture("10-pane-swap.json");
    assert_eq!(keys(&swap["result"]["swap"]), keys(&fx["result"]["swap"]));
    assert_eq!(swap["result"]["swap"]["changed"], json!(true));
    assert_eq!(swap["result"]["swap"]["focused_pane_id"], json!("w1:p1"));
    let renamed = rpc(
        &fake,
        "pane.rename",
        json!({"pane_id": "w1:p2", "label": "build logs"}),
    );
    assert_eq!(shape(&renamed), shape(&fixture("12-pane-rename.json")));
    let got = rpc(&fake, "pane.get", json!({"pane_id": "w1:p2"}));
    assert_eq!(shape(&got), shape(&fixture("13-pane-get-renamed.json")));
    let info = rpc(&fake, "pane.process_info", json!({"pane_id": "w1:p2"}));
    assert_eq!(
        shape(&info),
        shape(&fixture("24-pane-process-info-idle.json"))
    );
    let closed = rpc(&fake, "pane.close", json!({"pane_id": "w1:p2"}));
    assert_eq!(closed, {
        let mut f = fixture("25-pane-close.json");
        f["id"] = json!("cli:test");
        f
    });
    // Step 26: `pane get` of a closed pane, verbatim.
    let gone = rpc(&fake, "pane.get", json!({"pane_id": "w1:p2"}));
    assert_eq!(
        gone,
        json!({"error":{"code":"pane_not_found","message":"pane w1:p2 not found"},"id":"cli:test"})
    );
    let snap = rpc(&fake, "session.snapshot", json!({}));
    assert_eq!(
        keys(&snap["result"]["snapshot"]),
        keys(&fixture("30-api-snapshot.json")["result"]["snapshot"])
    );
    // A request that does not parse: an error with an empty id.
    let bad = raw(&fake, "{not json");
    assert_eq!(bad["id"], json!(""));
    assert!(bad["error"]["code"].is_string());
}

#[test]
fn lists_panes_with_process_info_and_judges_liveness() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    let list = h.list_panes(soon(5000)).unwrap();
    assert_eq!(
        list.server,
        Some(ServerIdentity::Herdr {
            socket_path: fake.socket.to_string_lossy().into_owned(),
            version: "0.8.2".into(),
            protocol: 20
        })
    );
    let p = &list.panes[0];
    assert_eq!(p.id, "w1:p1");
    assert_eq!(p.pid, Some(me() as i32));
    assert_eq!(p.current_command.as_deref(), Some("bash"));
    assert_eq!(p.session_id, "w1");
    assert_eq!(p.session_name.as_deref(), Some("acc-ws"));
    assert_eq!(
        (p.window_id.as_str(), p.window_name.as_deref()),
        ("w1:t1", Some("1"))
    );
    assert_eq!((p.top, p.height), (Some(1), Some(39)));
    assert!(p.terminal_id.as_deref().unwrap().starts_with("term_"));
    assert_eq!(verdict(&list.panes, &pane_hint("w1:p1")), Liveness::Offline);

    set_foreground(&fake, "w1:p1", "pi");
    let list = h.list_panes(soon(5000)).unwrap();
    assert_eq!(verdict(&list.panes, &pane_hint("w1:p1")), Liveness::Alive);
    assert_eq!(verdict(&list.panes, &pane_hint("w1:p9")), Liveness::Offline);
    // One snapshot per pass plus one process query per pane; ping only once per client.
    let methods = fake.methods();
    assert_eq!(
        methods,
        vec![
            "ping",
            "session.snapshot",
            "pane.process_info",
            "session.snapshot",
            "pane.process_info"
        ]
    );
}

#[test]
fn unreachable_or_misbehaving_servers_are_unknown_within_the_deadline() {
    let hint = pane_hint("w1:p1");
    // No socket at all.
    let dir = tempfile::tempdir().unwrap();
    let r = Herdr::at_socket(&dir.path().join("none.sock")).list_panes(soon(2000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::NoServer);
    assert_eq!(verdict_from(&r, &hint), Liveness::Unknown);
    // A socket file nobody listens on.
    let dead = dir.path().join("dead.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    let r = Herdr::at_socket(&dead).list_panes(soon(2000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::NoServer);
    // A regular file or a link where the socket should be is refused, not followed.
    let file = dir.path().join("file.sock");
    std::fs::write(&file, b"").unwrap();
    assert_eq!(
        Herdr::at_socket(&file)
            .list_panes(soon(2000))
            .unwrap_err()
            .code,
        ErrorCode::NoServer
    );

    let fake = FakeHerdr::start(me());
    let link = dir.path().join("link.sock");
    std::os::unix::fs::symlink(&fake.socket, &link).unwrap();
    assert_eq!(
        Herdr::at_socket(&link)
            .list_panes(soon(2000))
            .unwrap_err()
            .code,
        ErrorCode::NoServer
    );
    // Stalled server: the deadline holds.
    fake.with(|s| s.mode = Mode::Stall);
    let deadline = Instant::now() + Duration::from_millis(300);
    let r = Herdr::at_socket(&fake.socket).list_panes(deadline);
    let returned = Instant::now();
    // The deadline was hit (a timeout, not an answer) and kept to within the promised overrun.
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::Timeout);
    assert!(returned >= deadline, "a timeout before the deadline");
    assert!(
        returned < deadline + intercom_pane::seam::mux::DEADLINE_OVERRUN,
        "{:?} past the deadline",
        returned - deadline
    );
    assert_eq!(verdict_from(&r, &hint), Liveness::Unknown);
    // Garbage, or a reply for another request.
    fake.with(|s| s.mode = Mode::Garbage);
    let r = Herdr::at_socket(&fake.socket).list_panes(soon(2000));
    assert_eq!(r.unwrap_err().code, ErrorCode::BadReply);
    fake.with(|s| s.mode = Mode::WrongId);
    let r = Herdr::at_socket(&fake.socket).list_panes(soon(2000));
    assert_eq!(r.unwrap_err().code, ErrorCode::BadReply);
    // An older protocol.
    fake.with(|s| {
        s.mode = Mode::Normal;
        s.protocol = 19;
    });
    let r = Herdr::at_socket(&fake.socket).list_panes(soon(2000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::TooOld);
    assert_eq!(verdict_from(&r, &hint), Liveness::Unknown);
}

#[test]
fn an_unknown_method_gets_the_empty_id_error() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    let e = h
        .request("no.such.method", json!({}), soon(2000))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert!(e.detail.contains("invalid_request"), "{e}");
}

#[test]
fn split_above_is_split_down_swap_layout_check_then_run() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    let req = SplitAbove {
        target: "w1:p1".into(),
        percent: 25,
        cwd: Some(PathBuf::from("/tmp/root dir")),
        argv: vec![
            "/opt/bin/intercom-pane".into(),
            "monitor".into(),
            "--root".into(),
            "/tmp/root dir".into(),
        ],
        env: vec![("INTERCOM_PANE_MONITOR".into(), "1".into())],
    };
    let new = h.split_above(&req, soon(5000)).unwrap();
    assert_eq!(new.id, "w1:p2");
    assert_eq!(new.top, Some(1));
    assert_eq!(new.height, Some(10));
    assert_eq!(new.current_command.as_deref(), Some("intercom-pane"));
    assert_eq!(new.cwd.as_deref(), Some("/tmp/root dir"));
    let list = h.list_panes(soon(5000)).unwrap();
    let old = list.panes.iter().find(|p| p.id == "w1:p1").unwrap();
    assert!(new.top.unwrap() < old.top.unwrap());
    assert_eq!(fake.with(|s| s.focused.clone()), "w1:p1", "focus unchanged");
    let inputs = fake.with(|s| s.inputs.clone());
    assert_eq!(
        inputs,
        vec![(
            "w1:p2".to_string(),
            "/opt/bin/intercom-pane monitor --root '/tmp/root dir'".to_string(),
            vec!["Enter".to_string()]
        )]
    );
    let split_req = fake.with(|s| {
        s.requests
            .iter()
            .find(|r| r["method"] == "pane.split")
            .cloned()
            .unwrap()
    });
    assert_eq!(split_req["params"]["direction"], "down");
    assert_eq!(split_req["params"]["ratio"], 0.25);
    assert_eq!(split_req["params"]["focus"], false);
    assert_eq!(split_req["params"]["env"]["INTERCOM_PANE_MONITOR"], "1");
    let m = fake.methods();
    let order: Vec<&str> = m
        .iter()
        .map(String::as_str)
        .filter(|m| m.starts_with("pane.") && *m != "pane.process_info")
        .collect();
    // The layout is read before the swap (a pane already above is not swapped again) and
    // checked after it; then the command.
    assert_eq!(
        &order[..5],
        [
            "pane.split",
            "pane.layout",
            "pane.swap",
            "pane.layout",
            "pane.send_input"
        ]
    );

    // Marker and name.
    assert_eq!(h.read_marker("w1:p2", soon(2000)).unwrap(), None);
    h.set_marker("w1:p2", "owner-42", soon(2000)).unwrap();
    assert_eq!(
        h.read_marker("w1:p2", soon(2000)).unwrap().as_deref(),
        Some("owner-42")
    );
    h.rename("w1:p2", "Intercom monitor", soon(2000)).unwrap();
    let got = h.find_pane("w1:p2", soon(2000)).unwrap().unwrap();
    assert_eq!(got.title.as_deref(), Some("Intercom monitor"));
    assert_eq!(got.marker.as_deref(), Some("owner-42"));
    assert_eq!(
        h.read_marker("w1:p9", soon(2000)).unwrap_err().code,
        ErrorCode::PaneNotFound
    );
    assert_eq!(h.find_pane("w1:p9", soon(2000)).unwrap(), None);
}

#[test]
fn send_text_uses_agent_prompt_and_respects_a_dialog() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    // A shell is no agent: Herdr refuses the prompt (agent_not_found) and nothing is typed.
    assert_eq!(
        h.send_text("w1:p1", "Use staging.", soon(2000))
            .unwrap_err()
            .code,
        ErrorCode::Failed
    );
    assert!(fake.with(|s| s.prompts.is_empty()));
    set_foreground(&fake, "w1:p1", "pi");
    h.send_text("w1:p1", "Use staging.", soon(2000)).unwrap();
    assert_eq!(
        fake.with(|s| s.prompts.clone()),
        vec![("w1:p1".to_string(), "Use staging.".to_string())]
    );
    fake.with(|s| s.blocked.insert("w1:p1".into()));
    assert_eq!(
        h.send_text("w1:p1", "again", soon(2000)).unwrap_err().code,
        ErrorCode::AgentBlocked
    );
    fake.with(|s| s.blocked.remove("w1:p1"));
    // 20 KB travel whole (Herdr 0.8.2 carries them intact); past the bound nothing is sent.
    let big = "y".repeat(20_000);
    h.send_text("w1:p1", &big, soon(2000)).unwrap();
    assert_eq!(fake.with(|s| s.prompts.last().cloned()).unwrap().1, big);
    let before = fake.methods().len();
    let long = "x".repeat(herdr::MAX_PROMPT + 1);
    assert_eq!(
        h.send_text("w1:p1", &long, soon(2000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert_eq!(fake.methods().len(), before, "nothing sent");
}

#[test]
fn close_checks_fresh_identity_then_closes_once() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    let new = h
        .split_above(
            &SplitAbove {
                target: "w1:p1".into(),
                percent: 25,
                cwd: None,
                argv: vec!["pi".into()],
                env: vec![],
            },
            soon(5000),
        )
        .unwrap();
    let server = h.server_identity(soon(2000)).unwrap();
    let exact = PaneIdentity::of(&server, &new);
    assert!(exact.terminal_id.is_some() && exact.pane_pid.is_some());

    let mut other_term = exact.clone();
    other_term.terminal_id = Some("term_recreated".into());
    let mut other_pid = exact.clone();
    other_pid.pane_pid = Some(1);
    let mut other_ws = exact.clone();
    other_ws.session_id = "w2".into();
    for (ident, reason) in [
        (other_term, "terminal_id_differs"),
        (other_pid, "pane_pid_differs"),
        (other_ws, "session_id_differs"),
    ] {
        assert_eq!(
            h.close_if_matches(&ident, soon(2000)).unwrap(),
            CloseOutcome::Refused(reason.into())
        );
    }
    assert!(!fake.methods().contains(&"pane.close".to_string()));

    let start = fake.methods().len();
    assert_eq!(
        h.close_if_matches(&exact, soon(2000)).unwrap(),
        CloseOutcome::Closed
    );
    assert_eq!(
        &fake.methods()[start..],
        ["pane.get", "pane.process_info", "pane.close", "pane.get"]
    );
    assert_eq!(fake.with(|s| s.panes.len()), 1);
    assert_eq!(
        h.close_if_matches(&exact, soon(2000)).unwrap(),
        CloseOutcome::AlreadyGone
    );
    // `pane.close` on a missing pane is "already gone", not a failure.
    assert!(!h.close("w1:p2", soon(2000)).unwrap());
}

#[test]
fn current_pane_and_workspace_listing() {
    let fake = FakeHerdr::start(me());
    let h = Herdr::at_socket(&fake.socket);
    assert_eq!(h.pane_current(None, soon(2000)).unwrap().pane_id, "w1:p1");
    assert_eq!(
        h.pane_current(Some("w1:p7"), soon(2000)).unwrap_err().code,
        ErrorCode::PaneNotFound
    );
    let listed = h.pane_list(Some("w1"), soon(2000)).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].terminal_id,
        fake.with(|s| s.panes[0].terminal_id.clone())
    );
    assert!(h.pane_list(Some("w9"), soon(2000)).unwrap().is_empty());
    let info = h.process_info("w1:p1", soon(2000)).unwrap().unwrap();
    assert_eq!(info.shell_pid, Some(me()));
    assert_eq!(h.process_info("w1:p7", soon(2000)).unwrap(), None);
}

#[test]
fn socket_from_environment() {
    let fake = FakeHerdr::start(me());
    let env = MuxEnv {
        herdr_env: true,
        herdr_socket_path: Some(fake.socket.to_string_lossy().into_owned()),
        ..Default::default()
    };
    let h = Herdr::from_env(&env).unwrap();
    assert_eq!(h.ping(soon(2000)).unwrap(), ("0.8.2".to_string(), 20));
}

/// Outside a Herdr pane (no `HERDR_ENV`, no `HERDR_SOCKET_PATH`), `HERDR_SESSION` names the
/// server as it does for Herdr's CLI (captures 171–184): the owner is found on that session's
/// socket under `XDG_CONFIG_HOME`; the default session's socket is not it.
#[test]
fn herdr_session_names_the_server_outside_a_herdr_pane() {
    let fake = FakeHerdr::start_at(me(), Path::new("herdr/sessions/acc/herdr.sock"));
    let xdg = fake.dir.path().display().to_string();
    let vars = |session: Option<&str>| {
        let session = session.map(str::to_string);
        let xdg = xdg.clone();
        MuxEnv::from_vars(move |k| match k {
            "XDG_CONFIG_HOME" => Some(xdg.clone()),
            "HERDR_SESSION" => session.clone(),
            _ => None,
        })
    };
    let owner =
        intercom_pane::seam::mux::owning_multiplexer(me() as i32, &vars(Some("acc")), soon(3000))
            .expect("owner on the acc session");
    assert_eq!(owner.kind, MuxKind::Herdr);
    assert_eq!(owner.pane.id, "w1:p1");
    assert_eq!(owner.socket_path, fake.socket);
    assert!(
        intercom_pane::seam::mux::owning_multiplexer(me() as i32, &vars(None), soon(3000))
            .is_none()
    );
    assert!(
        intercom_pane::seam::mux::owning_multiplexer(me() as i32, &vars(Some("")), soon(3000))
            .is_none()
    );
}

/// Real-Herdr tier: a private headless server of its own (own `XDG_CONFIG_HOME` and
/// `HERDR_SESSION`, stopped at the end; nothing else of the machine's Herdr is touched). The
/// client's every read against it: `ping`, the listing and each pane found again by id; then a
/// pane split above another (split down, swap, layout, command), found, compared and closed by
/// its identity, and a refused close of a pane whose identity changed (a pane moved to another
/// workspace answers its old id with its new one: never closed by the old identity).
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_when_installed() {
    let real = mux_herdr_fake::real::RealHerdr::start();
    let h = real.client();
    let (version, protocol) = h.ping(soon(3000)).unwrap();
    assert_eq!((version.as_str(), protocol), ("0.8.2", 20));
    let target = real.background_pane("/tmp", "tier");
    real.shell_pid(&target);
    let list = h.list_panes(soon(10_000)).unwrap();
    assert!(list.panes.iter().any(|p| p.id == target));
    for p in &list.panes {
        assert_eq!(h.find_pane(&p.id, soon(3000)).unwrap().unwrap().id, p.id);
    }
    let new = h
        .split_above(
            &SplitAbove {
                target: target.clone(),
                percent: 25,
                cwd: None,
                argv: vec!["sleep".into(), "60".into()],
                env: vec![],
            },
            soon(10_000),
        )
        .unwrap();
    let server = h.server_identity(soon(3000)).unwrap();
    let fresh = h.find_pane(&new.id, soon(3000)).unwrap().unwrap();
    let list = h.list_panes(soon(10_000)).unwrap();
    let top = |id: &str| list.panes.iter().find(|p| p.id == id).unwrap().top.unwrap();
    assert!(top(&new.id) < top(&target), "the new pane is above");
    let ident = PaneIdentity::of(&server, &fresh);
    assert_eq!(
        h.close_if_matches(&ident, soon(5000)).unwrap(),
        CloseOutcome::Closed
    );
    // Moved to another workspace: a new id; the old identity is refused, the pane stays.
    let ident = PaneIdentity::of(&server, &h.find_pane(&target, soon(3000)).unwrap().unwrap());
    let other = real.background_pane("/tmp", "other");
    let now = real.move_beside(&target, &other, "down");
    let moved = h.find_pane(&target, soon(3000)).unwrap().unwrap();
    assert_eq!(moved.id, now, "the old id answers with the new one");
    assert_ne!(moved.id, target, "a new id in the other workspace");
    assert_eq!(moved.terminal_id, ident.terminal_id, "the same terminal");
    assert_eq!(
        h.close_if_matches(&ident, soon(5000)).unwrap(),
        CloseOutcome::Refused("pane_id_differs".into())
    );
    assert!(h.find_pane(&moved.id, soon(3000)).unwrap().is_some());
}
