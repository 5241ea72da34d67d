//! Contract tests: the fake Herdr server (tests/support/mux_herdr_fake) against the real Herdr
//! 0.8.2 captures in `fixtures/herdr-0.8.2/behaviour` (read its README). One test per capture group:
//! each replays the captured steps on the fake, as socket requests, and compares what the
//! capture shows (focus, pane ids, changed/reason, agents, errors, restart invariants, socket
//! paths) with what the fake answers. When the fake drifts from the real server, these fail.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;

use std::path::{Path, PathBuf};
use std::time::Duration;

use intercom_pane::seam::mux::herdr::Herdr;
use intercom_pane::seam::mux::MuxEnv;
use mux_herdr_fake::FakeHerdr;
use serde_json::{json, Value};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/herdr-0.8.2/behaviour")
}

fn capture(file: &str) -> Value {
    serde_json::from_slice(&std::fs::read(dir().join(file)).unwrap()).unwrap()
}

/// The index row of one step.
fn step(n: u64) -> Value {
    let index: Value = capture("index.json");
    index
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["step"] == n)
        .cloned()
        .unwrap_or_else(|| panic!("no step {n}"))
}

/// A fake with no workspace at all (the captures start from an empty session).
fn empty_fake() -> FakeHerdr {
    let f = FakeHerdr::start(mux_herdr_fake::NO_SHELL);
    f.with(|s| {
        s.panes.clear();
        s.workspaces.clear();
        s.focused.clear();
        s.focused_ws.clear();
    });
    f
}

/// The socket request a captured `herdr …` CLI call makes (the subset the captures use).
fn request(argv: &[&str]) -> (&'static str, Value) {
    let flag = |name: &str| argv.contains(&name);
    let after = |name: &str| {
        argv.iter()
            .position(|a| *a == name)
            .map(|i| argv[i + 1].to_string())
    };
    match argv {
        ["herdr", "workspace", "create", ..] => (
            "workspace.create",
            json!({"cwd": after("--cwd"), "label": after("--label"), "focus": !flag("--no-focus")}),
        ),
        ["herdr", "workspace", "list"] => ("workspace.list", json!({})),
        ["herdr", "workspace", "focus", w] => ("workspace.focus", json!({"workspace_id": w})),
        ["herdr", "api", "snapshot"] => ("session.snapshot", json!({})),
        ["herdr", "pane", "split", p, ..] => (
            "pane.split",
            json!({"target_pane_id": p, "direction": after("--direction"), "focus": flag("--focus")}),
        ),
        ["herdr", "pane", "swap", "--pane", p, "--direction", d] => {
            ("pane.swap", json!({"pane_id": p, "direction": d}))
        }
        ["herdr", "pane", "swap", ..] => (
            "pane.swap",
            json!({"source_pane_id": after("--source-pane"), "target_pane_id": after("--target-pane")}),
        ),
        ["herdr", "pane", "get", p] => ("pane.get", json!({"pane_id": p})),
        ["herdr", "pane", "close", p] => ("pane.close", json!({"pane_id": p})),
        ["herdr", "pane", "process-info", "--pane", p] => {
            ("pane.process_info", json!({"pane_id": p}))
        }
        _ => panic!("no socket request for {argv:?}"),
    }
}

/// One raw request on the fake's socket: `Ok(result)` or `Err(error object)`.
fn send(fake: &FakeHerdr, method: &str, params: Value) -> Result<Value, Value> {
    use std::io::{BufRead, BufReader, Write};
    let line = json!({"id": "contract", "method": method, "params": params}).to_string() + "\n";
    let mut s = std::os::unix::net::UnixStream::connect(&fake.socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(line.as_bytes()).unwrap();
    let mut reply = String::new();
    BufReader::new(s).read_line(&mut reply).unwrap();
    let v: Value = serde_json::from_str(&reply).unwrap();
    match v.get("result") {
        Some(r) => Ok(r.clone()),
        None => Err(v["error"].clone()),
    }
}

/// The facts a reply shows about focus, ids and outcome (what the captures are about; terminal
/// ids, revisions and scroll state are the server's own).
fn facts(r: &Value) -> Value {
    let ids = |ps: &Value| -> Vec<Value> {
        let mut v: Vec<Value> = ps
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| json!([p["pane_id"], p["focused"]]))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by_key(|x| x.to_string());
        v
    };
    let layout = |l: &Value| json!({"ws": l["workspace_id"], "focused": l["focused_pane_id"], "panes": ids(&l["panes"])});
    match r["type"].as_str().unwrap_or("") {
        "pane_info" => json!({"pane": r["pane"]["pane_id"], "focused": r["pane"]["focused"],
                              "ws": r["pane"]["workspace_id"], "agent": r["pane"]["agent"]}),
        "workspace_created" => json!({"ws": r["workspace"]["workspace_id"],
            "focused": r["workspace"]["focused"], "root": r["root_pane"]["pane_id"]}),
        "workspace_info" => {
            json!({"ws": r["workspace"]["workspace_id"], "focused": r["workspace"]["focused"]})
        }
        "workspace_list" => json!(r["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| json!([w["workspace_id"], w["focused"], w["label"]]))
            .collect::<Vec<_>>()),
        "pane_swap" => {
            let s = &r["swap"];
            json!({"changed": s["changed"], "reason": s["reason"],
                   "focused": s["focused_pane_id"], "layout": layout(&s["layout"])})
        }
        "session_snapshot" => {
            let s = &r["snapshot"];
            let mut layouts: Vec<Value> = s["layouts"]
                .as_array()
                .unwrap()
                .iter()
                .map(layout)
                .collect();
            layouts.sort_by_key(|x| x.to_string());
            json!({"ws": s["focused_workspace_id"], "pane": s["focused_pane_id"],
                   "layouts": layouts, "panes": ids(&s["panes"])})
        }
        other => json!({"type": other}),
    }
}

/// Replay steps `from..=to` (CLI steps with a stdout file) on `fake`, comparing facts.
fn replay(fake: &FakeHerdr, from: u64, to: u64) -> usize {
    let mut compared = 0;
    for n in from..=to {
        let Ok(row) = std::panic::catch_unwind(|| step(n)) else {
            continue;
        };
        if row["source"] != "herdr" {
            continue;
        }
        let argv: Vec<&str> = row["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let (method, params) = request(&argv);
        let got = send(fake, method, params).unwrap_or_else(|e| panic!("step {n}: {e}"));
        let Some(file) = row["stdout_file"].as_str() else {
            continue;
        };
        let want = capture(file)["result"].clone();
        assert_eq!(facts(&got), facts(&want), "step {n} ({file})");
        compared += 1;
    }
    compared
}

/// §1: swap, split and focus (002–031): a swap that changes the layout focuses the source's
/// workspace and the source, in a background workspace too; splits never take focus without
/// `focus`; `workspace.focus` brings back the workspace's own last focused pane.
#[test]
fn contract_focus_swap_and_split() {
    let fake = empty_fake();
    let compared = replay(&fake, 2, 31);
    assert!(compared >= 28, "{compared} steps compared");
}

/// §6: errors for closed and missing panes (121–134), on a tab shaped like the capture's w1.
#[test]
fn contract_closed_and_missing_panes() {
    let fake = empty_fake();
    replay(&fake, 2, 2);
    for _ in 0..2 {
        send(
            &fake,
            "pane.split",
            json!({"target_pane_id": "w1:p1", "direction": "right"}),
        )
        .unwrap();
    }
    assert_eq!(
        send(&fake, "pane.close", json!({"pane_id": "w1:p3"})).unwrap()["type"],
        "ok"
    );
    let stderr = |n: u64| -> Value {
        let row = step(n);
        serde_json::from_str::<Value>(row["stderr"].as_str().unwrap().trim()).unwrap()["error"]
            .clone()
    };
    for (n, method, pane) in [
        (122, "pane.close", "w1:p3"),
        (123, "pane.get", "w1:p3"),
        (124, "pane.get", "w9:p9"),
        (125, "pane.get", "bogus"),
        (126, "pane.close", "w9:p1"),
        (127, "pane.process_info", "w1:p3"),
    ] {
        let got = send(&fake, method, json!({"pane_id": pane})).unwrap_err();
        assert_eq!(got, stderr(n), "step {n}");
    }
    for (n, method) in [(133, "pane.close"), (134, "pane.get")] {
        let got = send(&fake, method, json!({"pane_id": "w1:p3"})).unwrap_err();
        let file = step(n)["stdout_file"].as_str().unwrap().to_string();
        assert_eq!(got, capture(&file)["error"], "step {n}");
    }
    let swap = send(
        &fake,
        "pane.swap",
        json!({"source_pane_id": "w1:p3", "target_pane_id": "w1:p1"}),
    )
    .unwrap();
    let want = capture("132-swap-closed-source.json")["result"].clone();
    assert_eq!(swap["swap"]["changed"], want["swap"]["changed"]);
    assert_eq!(swap["swap"]["reason"], want["swap"]["reason"]);
}

fn pane_of(list: &Value, id: &str) -> Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|p| p["pane_id"] == id)
        .cloned()
        .unwrap()
}

/// §2: a server restart (141–170). The invariants the capture shows are checked on the capture
/// itself and on the fake: same pane ids in the same order, labels, cwd, workspaces and focus;
/// every terminal id new; tokens, title and agents gone; each pane a fresh shell; pane numbers
/// not reused by the next split.
#[test]
fn contract_server_restart() {
    // The capture.
    let before = capture("142-before-pane-list.json")["result"]["panes"].clone();
    let after = capture("161-after-pane-list.json")["result"]["panes"].clone();
    let fake = empty_fake();
    replay(&fake, 2, 4);
    send(
        &fake,
        "pane.rename",
        json!({"pane_id": "w2:p1", "label": "build logs"}),
    )
    .unwrap();
    send(
        &fake,
        "pane.report_metadata",
        json!({"pane_id": "w2:p1", "source": "capture", "tokens": {"owner": "cap-123"}}),
    )
    .unwrap();
    fake.with(|s| {
        let p = s.panes.iter_mut().find(|p| p.id == "w2:p2").unwrap();
        p.foreground = vec![(4242, "sleep".into(), vec!["pi".into(), "600".into()])];
    });
    let list = |f: &FakeHerdr| send(f, "pane.list", json!({})).unwrap()["panes"].clone();
    let focus = |f: &FakeHerdr| facts(&send(f, "session.snapshot", json!({})).unwrap());
    let fake_before = list(&fake);
    let focus_before = focus(&fake);
    assert_eq!(pane_of(&fake_before, "w2:p2")["agent"], "pi");
    fake.with(|s| s.restart(|_| 5151));
    let fake_after = list(&fake);
    for (b, a, who) in [
        (&before, &after, "capture"),
        (&fake_before, &fake_after, "fake"),
    ] {
        let ids = |l: &Value| -> Vec<Value> {
            l.as_array()
                .unwrap()
                .iter()
                .map(|p| p["pane_id"].clone())
                .collect()
        };
        assert_eq!(ids(b), ids(a), "{who}: same ids, same order");
        for p in b.as_array().unwrap() {
            let q = pane_of(a, p["pane_id"].as_str().unwrap());
            assert_eq!(p["label"], q["label"], "{who}");
            assert_eq!(p["cwd"], q["cwd"], "{who}");
            assert_ne!(p["terminal_id"], q["terminal_id"], "{who}: new terminal");
            assert!(
                q.get("tokens").is_none() && q.get("agent").is_none(),
                "{who}: {q}"
            );
            assert!(q.get("title").is_none(), "{who}");
        }
    }
    let cap_w2p1 = capture("144-before-get-w2p1.json")["result"]["pane"].clone();
    assert_eq!(cap_w2p1["tokens"]["owner"], "cap-123");
    assert!(capture("163-after-get-w2p1.json")["result"]["pane"]
        .get("tokens")
        .is_none());
    assert_eq!(pane_of(&fake_after, "w2:p1")["label"], "build logs");
    // Focus and workspaces kept.
    assert_eq!(
        facts(&capture("141-before-workspace-list.json")["result"]),
        facts(&capture("160-after-workspace-list.json")["result"])
    );
    assert_eq!(focus(&fake), focus_before);
    // Each pane a fresh shell: its foreground process is its shell.
    let cap = capture("165-after-process-info-w2p3.json")["result"]["process_info"].clone();
    assert_eq!(cap["foreground_process_group_id"], cap["shell_pid"]);
    let info = send(&fake, "pane.process_info", json!({"pane_id": "w2:p2"})).unwrap();
    assert_eq!(
        info["process_info"]["foreground_process_group_id"],
        info["process_info"]["shell_pid"]
    );
    // Pane numbers are not reused: the next split in w2 is w2:p3 (the capture: w1:p5 after p4).
    assert_eq!(
        capture("169-after-split-w1.json")["result"]["pane"]["pane_id"],
        "w1:p5"
    );
    let next = send(
        &fake,
        "pane.split",
        json!({"target_pane_id": "w2:p1", "direction": "down"}),
    )
    .unwrap();
    assert_eq!(next["pane"]["pane_id"], "w2:p3");
}

/// §3/§4: agent detection (040–047, 109–117): the fake, given each captured pane's foreground
/// processes, detects the agent exactly when the real server did.
#[test]
fn contract_agent_detection() {
    let pairs = [
        ("041-process-info-A-cat.json", "040-pane-get-A-cat.json"),
        (
            "043-process-info-B-copy-pi.json",
            "042-pane-get-B-copy-pi.json",
        ),
        (
            "045-process-info-C-script-pi.json",
            "044-pane-get-C-script-pi.json",
        ),
        (
            "047-process-info-D-exec-a-pi.json",
            "046-pane-get-D-exec-a-pi.json",
        ),
        (
            "109-process-info-P-exec-a-pi-sleep.json",
            "110-pane-get-P-exec-a-pi-sleep.json",
        ),
        (
            "112-process-info-Q-real-pi.json",
            "113-pane-get-Q-real-pi.json",
        ),
        ("115-process-info-R-sleep.json", "116-pane-get-R-sleep.json"),
    ];
    let fake = FakeHerdr::start(mux_herdr_fake::NO_SHELL);
    let mut detected = 0;
    for (info, get) in pairs {
        let fg: Vec<(u32, String, Vec<String>)> = capture(info)["result"]["process_info"]
            ["foreground_processes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let argv = p["argv"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                (
                    p["pid"].as_u64().unwrap() as u32,
                    p["name"].as_str().unwrap().to_string(),
                    argv,
                )
            })
            .collect();
        fake.with(|s| s.panes[0].foreground = fg);
        let got = send(&fake, "pane.get", json!({"pane_id": "w1:p1"})).unwrap();
        let want = capture(get)["result"]["pane"]["agent"].clone();
        assert_eq!(got["pane"]["agent"], want, "{info}");
        detected += usize::from(!want.is_null());
    }
    assert_eq!(detected, 5, "B, C, D, P and Q are pi; A and R are not");
}

/// §5: server selection (171–184): our socket for each captured environment is the socket the
/// real CLI reported (`server.socket`); an empty `HERDR_SESSION`, which the CLI refuses (rc 2),
/// gives no socket.
#[test]
fn contract_socket_selection() {
    let base = [
        ("XDG_CONFIG_HOME", "/home/dev/.config-acc"),
        ("HERDR_SESSION", "acc"),
        ("HOME", "/home/dev"),
    ];
    let mut checked = 0;
    for n in 171..=184 {
        let Ok(row) = std::panic::catch_unwind(|| step(n)) else {
            continue;
        };
        let argv: Vec<&str> = row["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        if argv != ["herdr", "status", "--json"] {
            continue;
        }
        let mut vars: Vec<(String, Option<String>)> = base
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect();
        if let Some(env) = row["env"].as_object() {
            for (k, v) in env {
                vars.retain(|(n, _)| n != k);
                vars.push((k.clone(), v.as_str().map(str::to_string)));
            }
        }
        let env = MuxEnv::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| v.clone())
        });
        let ours = Herdr::socket_from_env(&env).map(|p| p.display().to_string());
        match row["stdout_file"].as_str() {
            Some(f) if row["rc"] == 0 => {
                let want = capture(f)["server"]["socket"].as_str().unwrap().to_string();
                assert_eq!(ours.as_deref(), Some(want.as_str()), "step {n}");
            }
            _ => assert_eq!(ours, None, "step {n}: the CLI refused ({})", row["stderr"]),
        }
        checked += 1;
    }
    assert!(checked >= 9, "{checked} environments checked");
}

fn moves_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/herdr-0.8.2/moves")
}

fn moves_capture(file: &str) -> Value {
    serde_json::from_slice(&std::fs::read(moves_dir().join(file)).unwrap()).unwrap()
}

/// What the `moves` captures are about, from one reply: ids, workspaces, tabs, the tab each
/// workspace shows, each tab's focused pane, aliases, moves and closes (terminal ids, pids,
/// revisions and screens are the server's own).
fn move_facts(v: &Value) -> Value {
    if let Some(e) = v.get("error") {
        return json!({"error": e["code"]});
    }
    let r = &v["result"];
    let pane = |p: &Value| {
        json!([
            p["pane_id"],
            p["workspace_id"],
            p["tab_id"],
            p["label"],
            p["tokens"]
        ])
    };
    let layouts = |ls: &Value| -> Vec<Value> {
        let mut v: Vec<Value> = ls
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|l| {
                        let mut ids: Vec<String> = l["panes"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|p| p["pane_id"].as_str().unwrap().to_string())
                            .collect();
                        ids.sort();
                        json!([l["tab_id"], l["focused_pane_id"], ids])
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by_key(|x| x.to_string());
        v
    };
    let shown = |ws: &Value| -> Vec<Value> {
        ws.as_array()
            .map(|a| {
                a.iter()
                    .map(|w| json!([w["workspace_id"], w["active_tab_id"], w["focused"]]))
                    .collect()
            })
            .unwrap_or_default()
    };
    match r["type"].as_str().unwrap_or("") {
        "pane_info" | "pane_current" => pane(&r["pane"]),
        "pane_process_info" => json!({"pane": r["process_info"]["pane_id"]}),
        "pane_list" => {
            let mut v: Vec<Value> = r["panes"].as_array().unwrap().iter().map(pane).collect();
            v.sort_by_key(|x| x.to_string());
            json!(v)
        }
        "pane_move" => {
            let m = &r["move_result"];
            json!({"changed": m["changed"], "pane": pane(&m["pane"]),
                   "previous": [m["previous_pane_id"], m["previous_workspace_id"], m["previous_tab_id"]],
                   "focused": m["focused_pane_id"], "created_tab": m["created_tab"]["tab_id"],
                   "created_workspace": m["created_workspace"]["workspace_id"],
                   "closed_tab": m["closed_tab_id"],
                   "target": layouts(&json!([m["target_layout"]])),
                   "source": m.get("source_layout").map(|l| layouts(&json!([l])))})
        }
        "pane_swap" => {
            let s = &r["swap"];
            json!({"changed": s["changed"], "focused": s["focused_pane_id"],
                   "layout": layouts(&json!([s["layout"]]))})
        }
        "session_snapshot" => {
            let s = &r["snapshot"];
            json!({"focus": [s["focused_workspace_id"], s["focused_tab_id"], s["focused_pane_id"]],
                   "shown": shown(&s["workspaces"]), "layouts": layouts(&s["layouts"])})
        }
        "workspace_list" => json!(shown(&r["workspaces"])),
        "workspace_info" => json!(shown(&json!([r["workspace"]]))),
        "workspace_created" => {
            json!({"ws": shown(&json!([r["workspace"]])), "root": pane(&r["root_pane"])})
        }
        "tab_created" => {
            json!({"tab": r["tab"]["tab_id"], "focused": r["tab"]["focused"], "root": pane(&r["root_pane"])})
        }
        "tab_info" => json!([r["tab"]["tab_id"], r["tab"]["focused"]]),
        "pane_read" => json!([
            r["read"]["pane_id"],
            r["read"]["tab_id"],
            r["read"]["source"],
            r["read"]["format"]
        ]),
        other => json!({"type": other}),
    }
}

/// `moves` 001–032: a pane moved to another workspace gets a new id and keeps its terminal,
/// label and tokens, its old id stays an alias (`pane.get`, `pane.process_info`, `pane.close`); a
/// move to a new tab keeps the id; layouts are per tab and each workspace shows one tab, which a
/// swap in a background tab changes and `tab.focus` puts back. Every step is replayed on the
/// fake and its facts compared with the real server's reply.
#[test]
fn contract_moves_tabs_and_aliases() {
    let index = moves_capture("index.json");
    let fake = empty_fake();
    let mut compared = 0;
    let mut terminals: Vec<(String, String)> = Vec::new();
    for row in index.as_array().unwrap() {
        let req = &row["request"];
        let want = moves_capture(row["reply_file"].as_str().unwrap());
        let got = match send(
            &fake,
            req["method"].as_str().unwrap(),
            req["params"].clone(),
        ) {
            Ok(r) => json!({"id": "contract", "result": r}),
            Err(e) => json!({"id": "contract", "error": e}),
        };
        assert_eq!(
            move_facts(&got),
            move_facts(&want),
            "step {} ({})",
            row["step"],
            row["name"]
        );
        // The moved pane keeps its terminal, in the capture and in the fake alike.
        for (who, v) in [("real", &want), ("fake", &got)] {
            let t = v["result"]["pane"]["terminal_id"]
                .as_str()
                .or(v["result"]["move_result"]["pane"]["terminal_id"].as_str());
            if let (Some(t), "split-w2" | "move-w2p2-to-w1" | "get-old-id" | "move-to-new-ws") =
                (t, row["name"].as_str().unwrap())
            {
                terminals.push((who.to_string(), t.to_string()));
            }
        }
        compared += 1;
    }
    assert!(compared >= 32, "{compared} steps compared");
    for who in ["real", "fake"] {
        let ts: Vec<&String> = terminals
            .iter()
            .filter(|(w, _)| w == who)
            .map(|(_, t)| t)
            .collect();
        assert_eq!(ts.len(), 4, "{who}: {ts:?}");
        assert!(
            ts.iter().all(|t| *t == ts[0]),
            "{who}: one terminal: {ts:?}"
        );
    }
}

/// `moves/timing.json`: Herdr 0.8.2 answers most requests at once and some on the next tick
/// of its loop, never later than about one tick; the fake with its tick set answers the same
/// methods within one tick, and some of them late.
#[test]
fn contract_answer_tick() {
    let t = moves_capture("timing.json");
    let mut real: Vec<u64> = Vec::new();
    for (k, v) in t.as_object().unwrap() {
        if k == "after_workspace_create" {
            for seq in v.as_array().unwrap() {
                real.extend(
                    seq.as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x[1].as_u64().unwrap()),
                );
            }
        } else {
            for key in ["after_quiet_ms", "back_to_back_ms"] {
                real.extend(
                    v[key]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap()),
                );
            }
        }
    }
    assert!(real.len() >= 200);
    assert!(real.iter().all(|&ms| ms <= 150), "{real:?}");
    assert!(
        real.iter().any(|&ms| ms >= 50),
        "the capture shows the tick"
    );
    // The fake's own hold of each answer (what it adds; a loaded machine's scheduling adds to
    // a wall-clock measure on both sides alike and is no part of the contract).
    let fake = FakeHerdr::start(mux_herdr_fake::NO_SHELL);
    fake.with(|s| s.tick = Some(Duration::from_millis(100)));
    for m in mux_herdr_fake::TICK_METHODS {
        for _ in 0..5 {
            let _ = send(&fake, m, json!({"pane_id": "w1:p1"}));
        }
    }
    // Methods off the tick answer at once.
    let _ = send(&fake, "workspace.list", json!({}));
    let waits = fake.with(|s| s.tick_waits.clone());
    let ms = |m: &str| -> Vec<u64> {
        waits
            .iter()
            .filter(|(w, _)| w == m)
            .map(|(_, d)| d.as_millis() as u64)
            .collect()
    };
    let times: Vec<u64> = mux_herdr_fake::TICK_METHODS
        .iter()
        .flat_map(|m| ms(m))
        .collect();
    assert_eq!(
        times.len(),
        5 * mux_herdr_fake::TICK_METHODS.len(),
        "{waits:?}"
    );
    assert!(times.iter().all(|&ms| ms <= 150), "{times:?}");
    assert!(times.iter().any(|&ms| ms >= 50), "{times:?}");
    assert_eq!(ms("workspace.list"), [0], "{waits:?}");
}
