//! `intercom-pane resume-worker` on Herdr, against the protocol-faithful fake Herdr server: the
//! coordinator (the pi stand-in) is registered from its Herdr pane; the resume opens a new tab
//! in the coordinator's workspace without focus and types the exact quoted command into it. The
//! new tab's shell is a real bash (the fake runs nothing): it gets the folder and environment
//! the `tab.create` asked for, as Herdr's shell would, then runs the typed line; the program it
//! runs records its argv and registers from inside that pane.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::pi_support;
use crate::scan_support;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mux_herdr_fake::{FakeHerdr, TabShell};
use scan_support::*;
use serde_json::{json, Value};

const ID: &str = "01a2f000-0000-7000-8000-00000000ef01";
const COORD: &str = "01a2f000-0000-7000-8000-00000000ef00";

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Root with a coordinator and one closed worker `name` in `project`; the saved session file.
fn setup(env: &Env, name: &str, project: &str) -> PathBuf {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::create_dir_all(root.join(project)).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = json!({"jobId": "j1", "state": "closed", "createdAt": "2026-11-29T23:00:00.000Z",
        "updatedAt": "2026-11-29T23:01:00.000Z", "deadlineAt": "2026-11-29T23:02:00.000Z"});
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "herdr", "agents": [
            {"sessionId": COORD, "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": ID, "name": name, "coordinator": false, "description": "Writes docs.",
             "port": port, "projectDirectory": project, "closeJob": closed}]})
        .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    let file = env.path(&format!("sessions/2026-11-29T23-00-00-000Z_{ID}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":ID,"timestamp":"2026-11-29T23:00:00.000Z","cwd":root.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Write the docs."}}),
    ];
    std::fs::write(&file, lines.map(|l| format!("{l}\n")).concat()).unwrap();
    file
}

/// The program resumed as pi (in a folder whose name needs quoting): records its argv and
/// folder, then becomes the pi stand-in, which registers from the inside like the extension.
fn stand_in_pi(env: &Env) -> PathBuf {
    let (node, cli) = pi_support::fake_pi_program(&env.path("pi-bin"));
    let dir = env.path("fake pi's; bin");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("pi");
    let rec = env.path("launched");
    let inner = "\"$INTERCOM_PANE_BIN\" register --config \"$INTERCOM_PANE_CONFIG\" --event session_start --seq 1 --pi-pid $$ --session-id \"$RESUMED_ID\" --session-file \"$RESUMED_FILE\" --cwd \"$PWD\" >/dev/null 2>&1; sleep 600";
    std::fs::write(
        &p,
        format!(
            "#!/bin/bash\nprintf '%s\\n' \"$@\" >> {rec}.argv\npwd > {rec}.cwd\n\
             export RESUMED_FILE=\"$2\"; id=\"${{2##*_}}\"; export RESUMED_ID=\"${{id%.jsonl}}\"\n\
             exec -a pi {node} {cli} '{inner}'\n",
            rec = rec.display(),
            node = node.display(),
            cli = cli.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// (focused workspace, focused pane, each workspace's own focused pane).
fn focus_state(h: &FakeHerdr) -> (String, String, Vec<String>) {
    h.with(|s| {
        (
            s.focused_ws.clone(),
            s.focused.clone(),
            s.workspaces
                .iter()
                .map(|w| w.focused_pane.clone())
                .collect(),
        )
    })
}

#[test]
fn resume_on_herdr_opens_a_tab_in_the_coordinators_workspace_without_focus() {
    let env = Env::new().with_system_path();
    let name = "Doc's \"writer\"; rm";
    let file = setup(&env, name, "my project");
    let root = env.path("root");
    // The coordinator: the pi stand-in, the shell of the fake's pane w1:p1, registered from there.
    let mut coord = pi_support::FakePi::start(&env);
    let herdr = FakeHerdr::start(coord.pid() as u32);
    // The coordinator's pi runs in the root (`register` records pi's real folder).
    coord.cd(&root.display().to_string());
    let sock = herdr.socket.display().to_string();
    let o = coord.register_in_herdr(&env, &sock, "w1:p1", COORD, &root);
    assert!(o.status.success(), "{o:?}");
    wait_registered(&root.join(".pi-intercom/seats"));

    let mut shell = TabShell::start(
        &herdr,
        env.dir.path(),
        &[
            ("HOME", env.path("home").display().to_string()),
            ("XDG_STATE_HOME", env.path("state").display().to_string()),
            ("PATH", env.path_env.clone()),
        ],
    );

    let pi = stand_in_pi(&env);
    let before = focus_state(&herdr);
    let o = env.run(&layout_args(
        &env,
        &["resume-worker"],
        &[
            "--pi",
            &pi.display().to_string(),
            "--json",
            "--wait-secs",
            "15",
            name,
            "--confirm-closed",
        ],
    ));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert!(shell.typed(), "nothing was typed into the tab");
    drop(shell);
    assert_eq!(
        (o.status.code(), out["result"].as_str()),
        (Some(0), Some("resumed")),
        "{out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(out["multiplexer"], "herdr");
    assert_eq!(out["beside"], "w1:p1");

    // One tab, in the coordinator's workspace, named after the worker, in its folder, not focused.
    let create: Vec<Value> = herdr.with(|s| {
        s.requests
            .iter()
            .filter(|r| r["method"] == "tab.create")
            .map(|r| r["params"].clone())
            .collect()
    });
    assert_eq!(create.len(), 1, "{create:?}");
    assert_eq!(create[0]["workspace_id"], "w1");
    assert_eq!(create[0]["focus"], false);
    assert_eq!(create[0]["label"], name);
    let cwd = root.join("my project").display().to_string();
    assert_eq!(create[0]["cwd"], cwd.as_str());
    assert!(
        create[0]["env"]["INTERCOM_PANE_BIN"].is_string(),
        "{create:?}"
    );
    let (tab, pane) = herdr.with(|s| (s.tabs[0].id.clone(), s.tabs[0].pane.clone()));
    assert_eq!((tab.as_str(), pane.as_str()), ("w1:t2", "w1:p2"));
    assert_eq!(out["pane"], "w1:p2");
    // Exactly the quoted command, typed once, with Enter.
    let inputs = herdr.with(|s| s.inputs.clone());
    let expected = format!(
        "{} --session {}",
        quote(&pi.display().to_string()),
        file.display()
    );
    assert_eq!(
        inputs,
        [("w1:p2".to_string(), expected, vec!["Enter".to_string()])]
    );
    // The shell ran it as one argv, in the project folder.
    let argv = std::fs::read_to_string(env.path("launched.argv")).unwrap();
    assert_eq!(argv, format!("--session\n{}\n", file.display()));
    let ran_in = std::fs::read_to_string(env.path("launched.cwd")).unwrap();
    assert_eq!(ran_in.trim(), cwd);
    // The person's focus did not move.
    assert_eq!(focus_state(&herdr), before);
    let focused_tab = herdr.with(|s| s.tab_json(&s.tabs[0].clone())["focused"].clone());
    assert_eq!(focused_tab, false);
    drop(coord);
}

/// The fake's `tab.create` answers with what Herdr 0.8.2's schema requires of `tab_created`
/// (`tab` and `root_pane`, each with their required fields), its tab shaped like a captured
/// one; an unknown workspace is refused and creates nothing.
#[test]
fn the_fakes_tab_create_answers_as_the_schema_says() {
    use intercom_pane::seam::mux::herdr::Herdr;
    let schema = mux_herdr_fake::fixture("31-api-schema.json");
    let defs = &schema["schemas"]["success_response"]["$defs"];
    let required = |v: &Value| -> Vec<String> {
        let mut r: Vec<String> = v["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        r.sort();
        r
    };
    let text = schema["schemas"]["success_response"].to_string();
    assert!(
        text.contains("\"tab_created\""),
        "the schema has tab_created"
    );
    let herdr = FakeHerdr::start(std::process::id());
    let before = focus_state(&herdr);
    let client = Herdr::at_socket(&herdr.socket);
    let deadline = || Instant::now() + Duration::from_secs(3);
    let r = client
        .request(
            "tab.create",
            json!({"workspace_id": "w1", "cwd": "/tmp", "env": {"A": "b"}, "label": "L"}),
            deadline(),
        )
        .unwrap();
    assert_eq!(r["type"], "tab_created");
    for k in ["type", "tab", "root_pane"] {
        assert!(r.get(k).is_some(), "{k} missing: {r}");
    }
    let have = |v: &Value| mux_herdr_fake::keys(v);
    for k in required(&defs["TabInfo"]) {
        assert!(have(&r["tab"]).contains(&k), "tab lacks {k}: {r}");
    }
    for k in required(&defs["PaneInfo"]) {
        assert!(
            have(&r["root_pane"]).contains(&k),
            "root_pane lacks {k}: {r}"
        );
    }
    let captured = mux_herdr_fake::fixture("03-workspace-create.json");
    assert_eq!(
        mux_herdr_fake::shape(&r["tab"]),
        mux_herdr_fake::shape(&captured["result"]["tab"])
    );
    assert_eq!(r["tab"]["label"], "L");
    assert_eq!(r["tab"]["focused"], false);
    assert_eq!(r["root_pane"]["tab_id"], r["tab"]["tab_id"]);
    assert_eq!(
        focus_state(&herdr),
        before,
        "focus:false (the default) moves nothing"
    );
    let e = client
        .request("tab.create", json!({"workspace_id": "w9"}), deadline())
        .unwrap_err();
    assert!(e.to_string().contains("workspace"), "{e}");
    assert_eq!(herdr.with(|s| s.tabs.len()), 1);
}
