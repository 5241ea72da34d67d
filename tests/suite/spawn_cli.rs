//! `intercom-pane init`, `spawn NAME` and `retire NAME` on a real tmux server: the roster made by
//! `init`, the coordinator registered from its pane, workers started by `spawn` as the pi
//! stand-in of `tests/support/spawn_support` (its own reply channel, registration from inside its
//! window). What lands on disk and in tmux is checked: the roster (bytes outside the new entry
//! unchanged), the launch spec, the window (its name, folder, focus), the argv, the first task.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;
use crate::spawn_support;

use std::path::PathBuf;

use scan_support::*;
use serde_json::Value;
use spawn_support::{agent, Team};

#[test]
fn a_worker_is_spawned_in_a_window_beside_the_coordinator_and_gets_its_first_task() {
    let t = Team::new();
    let before = t.config();
    let active = t
        .server
        .tmux(&["display-message", "-p", "-t", "=coord:", "#{window_id}"]);
    let (code, out, err) = t.spawn(&[
        "Docs",
        "--model",
        "fake/m",
        "--thinking",
        "low",
        "--description",
        "Writes the docs.",
        "--prompt",
        "Write the install notes.",
        "--",
        "--verbose",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["result"], "spawned", "{out}");
    let id = out["sessionId"].as_str().unwrap().to_string();
    // The roster: the old text untouched up to the new entry, which is in the file's style.
    let after = t.config();
    let cut = before.rfind("\n    }").unwrap() + "\n    }".len();
    assert_eq!(&after[..cut], &before[..cut], "{after}");
    assert!(
        after[cut..].starts_with(",\n    {\n      \"sessionId\": "),
        "{after}"
    );
    let docs = agent(&t.roster(), "Docs").unwrap().clone();
    assert_eq!(docs["sessionId"], id.as_str());
    assert_eq!(docs["projectDirectory"], ".");
    assert_eq!(docs["description"], "Writes the docs.");
    assert_eq!(docs["coordinator"], false);
    let port = docs["port"].as_u64().unwrap();
    assert!(port > 1024 && port != t.roster()["agents"][0]["port"].as_u64().unwrap());
    // The window: named after the worker, in the coordinator's session, focus unchanged.
    assert_eq!(t.windows(), ["Docs"]);
    let now_active = t
        .server
        .tmux(&["display-message", "-p", "-t", "=coord:", "#{window_id}"]);
    assert_eq!(now_active, active, "focus moved");
    // pi ran as an argv with the session, model, thinking and extra flags, in the root, with
    // the environment resume passes.
    let l = t.launches();
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(
        l[0]["argv"],
        serde_json::json!([
            "--session-id",
            id,
            "--model",
            "fake/m",
            "--thinking",
            "low",
            "--verbose"
        ])
    );
    assert_eq!(l[0]["cwd"], t.root.display().to_string());
    assert_eq!(l[0]["env"]["INTERCOM_PANE_CONFIG"], t.env.system_config());
    assert_eq!(
        l[0]["env"]["INTERCOM_PANE_BIN"],
        env!("CARGO_BIN_EXE_intercom-pane")
    );
    // The first task: once, through the channel, after the seat registered.
    let texts = t.texts();
    assert_eq!(texts.len(), 1, "{texts:?}");
    // Exactly the text: the reply path adds nothing.
    assert_eq!(texts[0]["text"], "Write the install notes.");
    assert_eq!(out["prompt"]["transport"], "channel", "{out}");
    assert_eq!(out["prompt"]["outcome"], "delivered", "{out}");
    // The launch spec: private, typed, at stage registered.
    let spec_path = PathBuf::from(out["launchSpec"].as_str().unwrap());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&spec_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let spec: Value = serde_json::from_slice(&std::fs::read(&spec_path).unwrap()).unwrap();
    assert_eq!(spec["stage"], "registered", "{spec}");
    assert_eq!(spec["args"], l[0]["argv"]);
    assert_eq!(spec["pane"], out["pane"]);
    assert_eq!(spec["placement"]["multiplexer"], "tmux");
    let env_names: Vec<&str> = spec["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap())
        .collect();
    assert!(
        env_names.contains(&"PATH") && env_names.contains(&"INTERCOM_PANE_CONFIG"),
        "{env_names:?}"
    );
    assert!(!env_names.contains(&"HOME"), "{env_names:?}");
    // The board sees it registered and alive.
    let idx = scan_json(
        &t.env,
        &["--tmux-socket", &t.server.sock.display().to_string()],
    );
    assert_eq!(record(&idx, "Docs")["registered"]["alive"], true, "{idx}");
    // And a second spawn of the name is refused: nothing written, nothing started.
    let cfg = t.config();
    let (code, out, _) = t.spawn(&["docs"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .contains("already in the roster"),
        "{out}"
    );
    assert_eq!(t.config(), cfg);
    assert_eq!(t.windows().len(), 1);
}

/// Every bad input is refused with its own exit code before anything is written or started.
#[test]
fn bad_input_is_refused_before_anything_is_written_or_started() {
    let t = Team::new();
    std::fs::create_dir_all(t.env.path("outside")).unwrap();
    std::fs::create_dir_all(t.root.join("sub")).unwrap();
    let long = "n".repeat(65);
    let outside = t.env.path("outside").display().to_string();
    let missing = t.root.join("nope").display().to_string();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["Coordinator"], 3, "reserved"),
        (vec!["COORDINATOR"], 3, "reserved"),
        (vec!["a\nb"], 3, "control"),
        (vec!["a\u{1b}[2Jb"], 3, "control"),
        (vec!["a/b"], 3, "separator"),
        (vec!["..\\x"], 3, "separator"),
        (vec!["a\u{200b}b"], 3, "invisible"),
        (vec![" x"], 3, "space"),
        (vec![&long], 3, "65 characters"),
        (vec!["W", "--dir", &missing], 5, "does not exist"),
        (vec!["W", "--dir", &outside], 5, "outside the root"),
        (vec!["W", "--thinking", "lots"], 2, "--thinking"),
        (vec!["W", "--prompt", "  "], 2, "blank"),
        (vec!["W", "--prompt", "a\u{1b}b"], 2, "control"),
        (vec!["W", "--", "--session", "/x"], 2, "--session"),
        (vec!["W", "--", "-c"], 2, "-c"),
    ];
    let cfg = t.config();
    for (args, want, why) in cases {
        let (code, out, err) = t.spawn(&args);
        assert_eq!(code, want, "{args:?}: {out} {err}");
        assert_eq!(out["result"], "refused", "{args:?}: {out}");
        let reason = out["reason"].as_str().unwrap().to_lowercase();
        assert!(reason.contains(why), "{args:?}: {reason}");
        assert_eq!(t.config(), cfg, "{args:?}");
        assert!(t.windows().is_empty(), "{args:?}");
        assert!(t.specs().is_empty(), "{args:?}");
    }
    assert!(t.launches().is_empty());
    // A folder under the root is fine (the control case).
    let (code, out, err) = t.spawn(&["Sub", "--dir", "root/sub"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(
        agent(&t.roster(), "Sub").unwrap()["projectDirectory"],
        "sub"
    );
    assert_eq!(
        t.launches()[0]["cwd"],
        t.root.join("sub").display().to_string()
    );
}

/// A roster at its limit refuses another worker; no coordinator pane refuses too.
#[test]
fn a_full_roster_or_no_coordinator_pane_is_refused() {
    let t = Team::new();
    let mut roster = t.roster();
    let agents = roster["agents"].as_array_mut().unwrap();
    for i in 1..256 {
        agents.push(
            serde_json::json!({"sessionId": format!("s-{i}"), "name": format!("W{i}"),
            "coordinator": false, "description": "W.", "port": 50000 + i, "projectDirectory": "."}),
        );
    }
    let full = serde_json::to_string_pretty(&roster).unwrap();
    std::fs::write(t.root.join(".pi-intercom/config.json"), &full).unwrap();
    let (code, out, _) = t.spawn(&["Extra"]);
    assert_eq!(code, 6, "{out}");
    assert_eq!(t.config(), full);
    assert!(t.windows().is_empty());

    // A roster whose coordinator has no live registration, run outside any pane.
    let env = Env::new().with_system_path();
    std::fs::create_dir_all(env.path("root")).unwrap();
    assert_eq!(env.run(&["init", "--root", "root"]).status.code(), Some(0));
    let cfg = std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap();
    let o = env.run(&layout_args(
        &env,
        &["spawn"],
        &["W", "--json", "--pi", "/bin/false"],
    ));
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("no coordinator pane"));
    assert_eq!(
        std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap(),
        cfg
    );
}

/// A folder this user cannot write (here a read-only bind mount in a private mount namespace:
/// as root, permissions alone would not stop it) is refused before anything is written.
#[test]
fn a_folder_that_cannot_be_written_is_refused() {
    let t = Team::new();
    let ro = t.root.join("readonly");
    std::fs::create_dir_all(&ro).unwrap();
    let cfg = t.config();
    let pi = t.pi.display().to_string();
    let mut args = vec![
        "-m".to_string(),
        "sh".into(),
        "-c".into(),
        "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\""
            .into(),
        "sh".into(),
        ro.display().to_string(),
        env!("CARGO_BIN_EXE_intercom-pane").into(),
    ];
    args.extend(layout_args(
        &t.env,
        &["spawn"],
        &["--pi", &pi, "--json", "W", "--dir", "root/readonly"],
    ));
    let o = std::process::Command::new("unshare")
        .args(&args)
        .current_dir(t.env.dir.path())
        .env("TMUX_TMPDIR", t.env.path("tmux-tmp"))
        .env_remove("TMUX")
        .output()
        .unwrap();
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(5),
        "{out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out["reason"].as_str().unwrap().contains("cannot write"),
        "{out}"
    );
    assert_eq!(t.config(), cfg);
    assert!(t.specs().is_empty() && t.windows().is_empty());
}

/// Names and folders a shell or tmux would act on reach tmux and pi as data: every worker starts
/// with exactly its name (the window's) and folder (pi's and the pane's), and no file is ever
/// created by them (no shell and no tmux format job ran).
#[test]
fn hostile_names_and_folders_are_data_everywhere() {
    let t = Team::new();
    let odd = t.root.join("we #(touch pw-dir) $(touch pw-dir2) 'q'");
    std::fs::create_dir_all(&odd).unwrap();
    let odd_arg = format!("root/{}", odd.file_name().unwrap().to_string_lossy());
    let plain = t.root.join("a b; $(touch pw-d3)");
    std::fs::create_dir_all(&plain).unwrap();
    let plain_arg = format!("root/{}", plain.file_name().unwrap().to_string_lossy());
    let cases: Vec<Vec<&str>> = vec![
        vec!["Doc's \"w\"; $(touch pw1)"],
        vec!["a`touch pw2`b"],
        vec!["#(touch pw3)"],
        vec!["#{session_name}#S"],
        vec!["W5", "--dir", &odd_arg],
        vec!["W6", "--dir", &plain_arg],
    ];
    for args in cases {
        let (code, out, err) = t.spawn(&args);
        let name = args[0];
        assert_eq!(code, 0, "{name}: {out} {err}");
        assert!(
            t.windows().iter().any(|w| w == name),
            "{name}: {:?}",
            t.windows()
        );
        let l = t.launches();
        let last = l.last().unwrap();
        assert_eq!(last["sid"], out["sessionId"]);
        assert_eq!(last["cwd"], out["cwd"], "{out}");
        let pane = out["pane"].as_str().unwrap();
        let path = t
            .server
            .tmux(&["display-message", "-p", "-t", pane, "#{pane_current_path}"]);
        assert_eq!(path.trim_end(), out["cwd"].as_str().unwrap(), "{name}");
    }
    assert_eq!(t.launches()[4]["cwd"], odd.display().to_string());
    assert_eq!(t.launches()[5]["cwd"], plain.display().to_string());
    std::thread::sleep(std::time::Duration::from_millis(500));
    for dir in [
        t.root.clone(),
        t.env.dir.path().to_path_buf(),
        odd,
        plain,
        PathBuf::from("/"),
    ] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            assert!(!n.starts_with("pw"), "{} in {}", n, dir.display());
        }
    }
}

/// The sidebar's form (`+`), in the real monitor in a tmux window: typed name and first task,
/// Enter; the worker is spawned through the same guarded code (its window, its roster entry,
/// its first task), and its row appears in the sidebar with the spawn's outcome.
#[test]
fn the_sidebars_form_spawns_a_worker_whose_row_appears() {
    let t = Team::new();
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        t.pi.parent().unwrap().display()
    );
    let mut argv: Vec<String> = vec![
        "env".into(),
        format!("PATH={path}"),
        format!("HOME={}", t.env.path("home").display()),
        format!("TMUX_TMPDIR={}", t.env.path("tmux-tmp").display()),
        "TERM=xterm-256color".into(),
        env!("CARGO_BIN_EXE_intercom-pane").into(),
    ];
    argv.extend(layout_args(&t.env, &["monitor"], &["--no-probe"]));
    let mut args: Vec<&str> = vec!["new-window", "-d", "-n", "mon", "-c"];
    let cwd = t.env.dir.path().display().to_string();
    args.push(&cwd);
    args.push("--");
    args.extend(argv.iter().map(String::as_str));
    t.server.tmux(&args);
    let screen = || t.server.tmux(&["capture-pane", "-p", "-t", "=coord:mon"]);
    crate::mux_support::wait_for(20_000, || screen().contains("seats").then_some(()))
        .unwrap_or_else(|| panic!("the monitor never drew:\n{}", screen()));
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "+"]);
    crate::mux_support::wait_for(5_000, || screen().contains("Spawn a worker").then_some(()))
        .unwrap_or_else(|| panic!("no form:\n{}", screen()));
    t.server
        .tmux(&["send-keys", "-t", "=coord:mon", "-l", "Docs"]);
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "Down"]);
    t.server
        .tmux(&["send-keys", "-t", "=coord:mon", "-l", "Read the README"]);
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "Enter"]);
    // The row: the worker's line in the list (not the status line), showing the spawn's end (the
    // live sidebar shows the row as soon as the roster names it, while the spawn still runs).
    let row = crate::mux_support::wait_for(40_000, || {
        let s = screen();
        if !s.contains("1 seats") {
            return None;
        }
        s.lines()
            .find(|l| {
                l.contains("Docs")
                    && !l.contains("spawn Docs:")
                    && !l.contains("spawn: starting")
                    && !l.contains("spawn: waiting")
            })
            .map(str::to_string)
    })
    .unwrap_or_else(|| panic!("no row for Docs:\n{}", screen()));
    assert!(row.contains("spawn: spawned"), "{row}\n{}", screen());
    assert!(t.windows().iter().any(|w| w == "Docs"), "{:?}", t.windows());
    let docs = agent(&t.roster(), "Docs").unwrap().clone();
    let texts = t.texts();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0]["text"], "Read the README");
    assert_eq!(t.launches()[0]["sid"], docs["sessionId"]);
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "q"]);
}

/// The marked sidebar panes of the coordinator's session: (pane id, command line).
fn sidebars(t: &Team) -> Vec<(String, String)> {
    t.server
        .tmux(&[
            "list-panes",
            "-s",
            "-t",
            "=coord:",
            "-F",
            "#{pane_id}\t#{@intercom-pane-owner}\t#{pane_start_command}",
        ])
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (id, owner, cmd) = (f.next()?, f.next()?, f.next()?);
            owner
                .starts_with("intercom-pane:")
                .then(|| (id.to_string(), cmd.to_string()))
        })
        .collect()
}

/// A roster `init` made has no worker, so the coordinator's start placed no sidebar: the first
/// spawn places it above the coordinator (no restart), the next keeps it; never two.
#[test]
fn the_first_spawn_places_the_coordinators_sidebar_and_the_next_keeps_it() {
    let t = Team::new();
    assert!(sidebars(&t).is_empty(), "{:?}", sidebars(&t));
    let (code, out, err) = t.spawn(&["Docs"]);
    assert_eq!(code, 0, "{out} {err}");
    let said = out["sidebar"].as_str().unwrap_or_default().to_string();
    assert!(
        said.starts_with("placed above the coordinator in %"),
        "{out}"
    );
    let placed = sidebars(&t);
    assert_eq!(placed.len(), 1, "{placed:?}");
    assert!(said.ends_with(&placed[0].0), "{said} {placed:?}");
    assert!(placed[0].1.contains("monitor"), "{placed:?}");
    // Above the coordinator's pane, in its window, the coordinator's pane keeping the focus.
    let window = t.server.tmux(&[
        "list-panes",
        "-t",
        "=coord:0",
        "-F",
        "#{pane_id} #{pane_top} #{pane_active}",
    ]);
    let sidebar_line = window
        .lines()
        .find(|l| l.starts_with(&format!("{} ", placed[0].0)))
        .unwrap_or_else(|| panic!("not in the coordinator's window: {window}"));
    assert!(sidebar_line.ends_with(" 0 0"), "{window}");
    let (code, out, err) = t.spawn(&["Tests"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(
        out["sidebar"].as_str().unwrap_or_default(),
        format!("kept in {}", placed[0].0),
        "{out}"
    );
    assert_eq!(sidebars(&t), placed);
}
