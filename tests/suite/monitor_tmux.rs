//! The real sidebar end to end: `intercom-pane demo` runs in a pane of a private tmux server,
//! starts its own private server with simulated pi workers, and the coordinator's startup hook
//! (`ensure-monitor`) opens `intercom-pane monitor` above the coordinator. The test drives that monitor with send-keys and reads it with
//! capture-pane, then closes the outer server and checks that the demo cleaned up.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};

fn inner(sock: &Path, args: &[&str]) -> String {
    let out = mux_support::tmux_cmd(sock).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn capture(sock: &Path, pane: &str) -> String {
    inner(sock, &["capture-pane", "-p", "-t", pane])
}

/// How long a step may take to show on screen: a bound against hanging, not a speed check (each
/// wait returns as soon as its screen appears; a loaded 2-core runner can take seconds).
const WAIT_MS: u64 = 20_000;

fn find_inner_socket(tmp: &Path) -> Option<PathBuf> {
    std::fs::read_dir(tmp)
        .ok()?
        .flatten()
        .map(|e| e.path().join("tmux.sock"))
        .find(|p| p.exists())
}

#[test]
fn monitor_on_the_demo_root_selects_details_resizes_and_quits() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let tmpdir = format!("TMPDIR={}", tmp.path().display());
    let mut outer = TmuxServer::start("outer", tmp.path(), &["env", &tmpdir, bin, "demo"]);
    outer.tmux(&["resize-window", "-t", "outer", "-x", "120", "-y", "64"]);

    let sock = wait_for(10_000, || find_inner_socket(tmp.path())).expect("inner tmux server");
    // The monitor is the top pane of the Coordinator session, running intercom-pane.
    let pane = wait_for(10_000, || {
        inner(
            &sock,
            &[
                "list-panes",
                "-t",
                "=Coordinator:",
                "-F",
                "#{pane_id} #{pane_top} #{pane_current_command}",
            ],
        )
        .lines()
        .find(|l| l.ends_with(" 0 intercom-pane"))
        .map(|l| l.split(' ').next().unwrap().to_string())
    })
    .expect("monitor pane above the coordinator");

    // Real states arrive: Reviewer asks for input, Docs runs a tool. Waited for whole, every
    // row at once: a capture can land while a frame is still being drawn.
    wait_for(15_000, || {
        let s = capture(&sock, &pane);
        [
            "Reviewer",
            "waiting",
            "connected",
            "Worker",
            "Builder",
            "Docs",
            "Release",
        ]
        .iter()
        .all(|w| s.contains(w))
        .then_some(s)
    })
    .unwrap_or_else(|| panic!("no live rows:\n{}", capture(&sock, &pane)));

    // Select the second row and open its details.
    inner(&sock, &["send-keys", "-t", &pane, "Down", "d"]);
    // Waited for whole: a capture can land while the panel is still being drawn.
    let details = wait_for(WAIT_MS, || {
        let s = capture(&sock, &pane);
        (s.contains("Details") && s.contains("Connection")).then_some(s)
    })
    .unwrap_or_else(|| panic!("no details:\n{}", capture(&sock, &pane)));
    assert!(details.contains("Responsibility"), "{details}");
    assert!(details.contains("Connection"), "{details}");

    // Esc closes the details, the list is back, the monitor still runs.
    inner(&sock, &["send-keys", "-t", &pane, "Escape"]);
    wait_for(WAIT_MS, || {
        let s = capture(&sock, &pane);
        (!s.contains("Details") && s.contains("Worker")).then_some(())
    })
    .unwrap_or_else(|| panic!("details did not close:\n{}", capture(&sock, &pane)));

    // Reply to the selected seat (Reviewer asked for input): the box sends through the real
    // reply path into the simulated agent's pane, which answers; the row then turns idle.
    inner(&sock, &["send-keys", "-t", &pane, "r"]);
    inner(&sock, &["send-keys", "-t", &pane, "-l", "staging"]);
    inner(&sock, &["send-keys", "-t", &pane, "Enter"]);
    // The box closes by itself after sending; the receipt shows under the row.
    wait_for(10_000, || {
        let s = capture(&sock, &pane);
        (s.contains("↳ delivered") && !s.contains("Reply to")).then_some(())
    })
    .unwrap_or_else(|| panic!("no delivery receipt:\n{}", capture(&sock, &pane)));
    wait_for(15_000, || {
        let s = capture(&sock, &pane);
        // The row, not the "since you looked" line under the title that may name it too.
        let row = s
            .lines()
            .find(|l| l.contains("Reviewer") && !l.starts_with("since you looked"))?
            .to_string();
        (row.contains("idle") && !row.contains("waiting")).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "Reviewer did not settle after the reply:\n{}",
            capture(&sock, &pane)
        )
    });

    // A key press is a look: the "since you looked" line under the title goes at once. The
    // monitor's pane does not have the keyboard (the outer terminal is not focused), so what
    // the cycling Builder does next (it asks, finishes or fails every 15 s) is counted again.
    let away_line = |s: &str| s.lines().any(|l| l.starts_with("since you looked: "));
    inner(&sock, &["send-keys", "-t", &pane, "Up"]);
    wait_for(WAIT_MS, || {
        (!away_line(&capture(&sock, &pane))).then_some(())
    })
    .unwrap_or_else(|| panic!("a key press did not clear:\n{}", capture(&sock, &pane)));
    wait_for(30_000, || away_line(&capture(&sock, &pane)).then_some(()))
        .unwrap_or_else(|| panic!("no since-you-looked line:\n{}", capture(&sock, &pane)));

    // A narrower terminal re-renders within its width.
    outer.tmux(&["resize-window", "-t", "outer", "-x", "44", "-y", "30"]);
    wait_for(WAIT_MS, || {
        let s = capture(&sock, &pane);
        let widest = s.lines().map(|l| l.trim_end().chars().count()).max()?;
        (widest <= 44 && s.contains("Reviewer")).then_some(())
    })
    .unwrap_or_else(|| panic!("not re-rendered narrow:\n{}", capture(&sock, &pane)));

    // q quits the monitor only: its pane closes, the coordinator's shell stays.
    inner(&sock, &["send-keys", "-t", &pane, "q"]);
    wait_for(WAIT_MS, || {
        let panes = inner(
            &sock,
            &["list-panes", "-t", "=Coordinator:", "-F", "#{pane_id}"],
        );
        (!panes.lines().any(|l| l == pane) && panes.lines().count() == 1).then_some(())
    })
    .expect("monitor pane closed, coordinator pane kept");

    // Closing the outer terminal ends the demo, which removes its server and folder.
    outer.kill();
    wait_for(10_000, || {
        let left = std::fs::read_dir(tmp.path()).ok()?.count();
        (left == 0).then_some(())
    })
    .expect("demo cleaned up after its terminal went away");
}

/// A worker's transcript changes while the sidebar runs: the change is on screen within one
/// refresh (the next pass starts about 3 s after the last one ended), not later, even though
/// the passes before it found nothing new (and drew one frame each).
#[test]
fn a_transcript_change_shows_within_one_refresh() {
    use serde_json::json;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let sessions = tmp.path().join("sessions");
    let data = tmp.path().join("data");
    for d in [&root.join(".pi-intercom/logs"), &sessions, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    let id = "01a2f000-0000-7000-8000-000000000000";
    let agents = json!([
        {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.",
         "port": 1, "projectDirectory": "."},
        {"sessionId": id, "name": "w0", "coordinator": false, "description": "Works.",
         "port": 1, "projectDirectory": "."}
    ]);
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
    let transcript = sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
            "message":{"role":"user","content":"Do the thing."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"text","text":"Input needed: which?"}],
            "provider":"p","model":"m","stopReason":"stop"}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, body).unwrap();
    let sys = tmp.path().join("system.json");
    std::fs::write(&sys, json!({"dataRoot": data}).to_string()).unwrap();
    let pi = mux_support::fake_pi(tmp.path()).display().to_string();
    let mut server = TmuxServer::start("w0", tmp.path(), &[&pi, "3600"]);
    server.start_monitor(tmp.path(), &sys, &root, &sessions, 20);
    let row = |s: &str| s.lines().find(|l| l.contains("w0")).map(str::to_string);
    let before = wait_for(15_000, || {
        row(&server.tmux(&["capture-pane", "-p", "-t", "=mon:"]))
    })
    .expect("the worker's row");
    // Let a few passes find nothing new, so the next one starts from remembered reads.
    std::thread::sleep(Duration::from_millis(7_000));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    let next = json!({"type":"message","id":"a3","parentId":"a2","timestamp":"2026-11-29T23:00:03.000Z",
        "message":{"role":"user","content":"The first one."}});
    std::io::Write::write_all(&mut f, format!("{next}\n").as_bytes()).unwrap();
    drop(f);
    let changed = Instant::now();
    let after = wait_for(8_000, || {
        row(&server.tmux(&["capture-pane", "-p", "-t", "=mon:"])).filter(|r| *r != before)
    })
    .unwrap_or_else(|| panic!("the row never changed: {before}"));
    let took = changed.elapsed();
    println!("before: {before}\nafter:  {after}\nshown after {took:?}");
    // One refresh: the 3 s pause plus a pass, with room for a loaded machine.
    assert!(took < Duration::from_millis(5_000), "{took:?}");
    server.kill();
}

/// A sidebar started shorter than its usable minimum asks tmux for it (7 lines) at once, and
/// again when its pane is made shorter, taking the rows from the pane below in a window with
/// room for both.
#[test]
fn the_sidebar_keeps_its_minimum_height_in_tmux() {
    use crate::scan_support::{pi_root, Env};
    let env = Env::new();
    pi_root(&env, &["idle", "waiting"]);
    let root = env.path("root");
    let server = mux_support::TmuxServer::start("w", &root, &[]);
    server.tmux(&["resize-window", "-t", "=w:", "-x", "100", "-y", "30"]);
    let sys = env.system_config();
    let (root_s, sessions) = (
        root.display().to_string(),
        env.path("sessions").display().to_string(),
    );
    let sock = server.sock.display().to_string();
    let pane = server
        .tmux(&[
            "split-window",
            "-b",
            "-d",
            "-l",
            "4",
            "-t",
            "=w:",
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "env",
            "TERM=xterm-256color",
            env!("CARGO_BIN_EXE_intercom-pane"),
            "monitor",
            "--config",
            &sys,
            "--root",
            &root_s,
            "--sessions-dir",
            &sessions,
            "--fleet",
            "none",
            "--no-probe",
            "--tmux-socket",
            &sock,
        ])
        .trim()
        .to_string();
    let height = || {
        server
            .tmux(&["display-message", "-p", "-t", &pane, "#{pane_height}"])
            .trim()
            .to_string()
    };
    mux_support::wait_for(10_000, || (height() == "7").then_some(()))
        .unwrap_or_else(|| panic!("the sidebar stayed {} lines", height()));
    server.tmux(&["resize-pane", "-t", &pane, "-y", "3"]);
    mux_support::wait_for(10_000, || (height() == "7").then_some(()))
        .unwrap_or_else(|| panic!("the sidebar stayed {} lines after shrinking", height()));
    // Redrawn at its new height: title, header, both rows, the key line.
    mux_support::wait_for(10_000, || {
        let s = server.tmux(&["capture-pane", "-p", "-t", &pane]);
        (s.contains("2 seats")
            && s.contains("Worker")
            && s.contains("W-waiting")
            && s.contains("q quit"))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("{}", server.tmux(&["capture-pane", "-p", "-t", &pane])));
}

/// `?` in a real 10-row sidebar: PgDn pages by the rows it has (the last line shown stays),
/// the key line keeps its hints; made 50×20 (a phone over ssh), nothing is wider than the pane.
#[test]
fn help_in_a_ten_row_sidebar_pages_by_its_rows() {
    use crate::scan_support::{pi_root, Env};
    let env = Env::new();
    pi_root(&env, &["idle", "waiting"]);
    let root = env.path("root");
    let server = mux_support::TmuxServer::start("w", &root, &[]);
    let sys = std::path::PathBuf::from(env.system_config());
    server.start_monitor(&root, &sys, &root, &env.path("sessions"), 10);
    let capture = || server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
    wait_for(15_000, || capture().contains("q quit").then_some(()))
        .unwrap_or_else(|| panic!("no sidebar:\n{}", capture()));
    // (first, last, all) of the overlay's title `Keys F–L of N (…)`.
    let title = |s: &str| -> Option<(usize, usize, usize)> {
        let t = s.lines().find(|l| l.starts_with("Keys "))?;
        let n: Vec<usize> = t
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .filter_map(|n| n.parse().ok())
            .collect();
        (n.len() == 3).then(|| (n[0], n[1], n[2]))
    };
    server.tmux(&["send-keys", "-t", "=mon:", "?"]);
    let (s, (f, l, all)) = wait_for(5_000, || {
        let s = capture();
        title(&s).map(|t| (s, t))
    })
    .unwrap_or_else(|| panic!("no help:\n{}", capture()));
    assert_eq!(f, 1, "{s}");
    let bottom = s.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(bottom.contains("PgDn/PgUp page"), "{s}");
    server.tmux(&["send-keys", "-t", "=mon:", "NPage"]);
    wait_for(5_000, || (title(&capture())?.0 == l).then_some(()))
        .unwrap_or_else(|| panic!("PgDn did not page by {} rows:\n{}", l - 1, capture()));
    assert!(l >= 5 && all > l, "{s}");

    server.tmux(&["resize-window", "-t", "=mon:", "-x", "50", "-y", "20"]);
    let s = wait_for(5_000, || {
        let s = capture();
        let (f, l, _) = title(&s)?;
        (l - f + 1 >= 15).then_some(s)
    })
    .unwrap_or_else(|| panic!("not redrawn at 50×20:\n{}", capture()));
    assert!(
        s.lines()
            .all(|line| intercom_pane::seam::text::width(line.trim_end()) <= 50),
        "{s}"
    );
    let bottom = s.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(
        bottom.contains("PgDn/PgUp page") && bottom.contains("Esc/? close help"),
        "{s}"
    );
}
