//! The real sidebar (`intercom-pane monitor`) on a test root, in a private tmux server, replying
//! to two registered seats (panes whose process is named `pi`, copying what is typed into them
//! to a file) beside an offline worker. Driven with send-keys, read with capture-pane.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;

const ALPHA: &str = "01a2f000-0000-7000-8000-00000000aa01";
const BRAVO: &str = "01a2f000-0000-7000-8000-00000000bb02";

/// The roster in this order, replaced atomically (the monitor reads it every pass).
fn roster(env: &Env, order: &[(&str, &str)]) {
    let staging = env.path("staging");
    write_roster(&staging, order);
    std::fs::create_dir_all(env.path("root/.pi-intercom")).unwrap();
    std::fs::rename(
        staging.join(".pi-intercom/config.json"),
        env.path("root/.pi-intercom/config.json"),
    )
    .unwrap();
}

/// The command of a registered seat's pane: registers as `id`, then copies its input to `out`.
fn seat_argv(env: &Env, id: &str, out: &Path) -> Vec<String> {
    let sys = env.system_config();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {id} --cwd {} >/dev/null; cat > {}; true",
        env.path("root").display(),
        out.display()
    );
    // The pi stand-in: `register` accepts only a pi.
    pi_support::pi_pane_argv(&env.path("pi-bin"), &script)
}

struct Rig {
    env: Env,
    seats: TmuxServer,
    ui: TmuxServer,
    typed_alpha: PathBuf,
    typed_bravo: PathBuf,
}

impl Rig {
    /// Seats Gone (offline: its tmux session runs no pi), Alpha and Bravo (registered), in that
    /// roster order, and the monitor on them in a 100×30 pane.
    fn start() -> Rig {
        let env = Env::new().with_system_path();
        std::fs::create_dir_all(env.path("sessions")).unwrap();
        roster(
            &env,
            &[("gone-id", "Gone"), (ALPHA, "Alpha"), (BRAVO, "Bravo")],
        );
        let (typed_alpha, typed_bravo) = (env.path("typed-alpha.txt"), env.path("typed-bravo.txt"));
        let argv = |id, out| seat_argv(&env, id, out);
        let a = argv(ALPHA, &typed_alpha);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let root = env.path("root");
        let seats = TmuxServer::start("alpha", &root, &a);
        let b = argv(BRAVO, &typed_bravo);
        let b: Vec<&str> = b.iter().map(String::as_str).collect();
        seats.new_session("bravo", &root, &b);
        seats.new_session("Gone", &root, &["sleep", "600"]);
        // Set-up, not the assertion: under CI's load (the real-pi tier and fuzzing on 2 cores)
        // the two stand-ins once took longer than 10 s to register.
        wait_for(30_000, || {
            let n = std::fs::read_dir(root.join(".pi-intercom/seats"))
                .ok()?
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count();
            (n == 2).then_some(())
        })
        .expect("both seats registered");

        let sock = seats.sock.display().to_string();
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        assert_eq!(record(&idx, "Gone")["state"], "offline", "{idx}");
        assert_eq!(record(&idx, "Alpha")["registered"]["alive"], true);
        assert_eq!(record(&idx, "Bravo")["registered"]["alive"], true);

        let sys = env.system_config();
        let home = format!("HOME={}", env.path("home").display());
        let state = format!("XDG_STATE_HOME={}", env.path("state").display());
        let tmpdir = format!("TMUX_TMPDIR={}", env.path("tmux-tmp").display());
        let bin = env!("CARGO_BIN_EXE_intercom-pane");
        let ui_argv = [
            "env",
            "-i",
            &home,
            &state,
            &tmpdir,
            "PATH=/usr/local/bin:/usr/bin:/bin",
            "TERM=xterm-256color",
            bin,
            "monitor",
            "--config",
            &sys,
            "--root",
            "root",
            "--sessions-dir",
            "sessions",
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
            "--no-probe",
        ];
        let ui = TmuxServer::start("ui", env.dir.path(), &ui_argv);
        ui.tmux(&["set-option", "-g", "status", "off"]);
        ui.tmux(&["resize-window", "-t", "ui", "-x", "100", "-y", "30"]);
        let rig = Rig {
            env,
            seats,
            ui,
            typed_alpha,
            typed_bravo,
        };
        rig.wait("the three rows", |s| {
            s.contains("Gone") && s.contains("Alpha") && s.contains("Bravo")
        });
        rig
    }

    fn capture(&self) -> String {
        self.ui.tmux(&["capture-pane", "-p", "-t", "ui"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ui"];
        args.extend_from_slice(keys);
        self.ui.tmux(&args);
    }

    fn text(&self, text: &str) {
        self.ui.tmux(&["send-keys", "-t", "ui", "-l", text]);
    }

    fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        wait_for(15_000, || {
            let s = self.capture();
            pred(&s).then_some(s)
        })
        .unwrap_or_else(|| {
            panic!(
                "timed out waiting for {what}; pane shows:\n{}",
                self.capture()
            )
        })
    }

    fn typed(&self) -> (String, String) {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        (read(&self.typed_alpha), read(&self.typed_bravo))
    }
}

fn selected(s: &str) -> &str {
    s.lines().find(|l| l.starts_with('›')).unwrap_or("")
}

/// The line index of the first line mentioning `name` in the list.
fn line_of(s: &str, name: &str) -> Option<usize> {
    s.lines().position(|l| l.contains(&format!(" {name} ")))
}

#[test]
fn r_on_an_offline_row_then_o_r_text_enter_sends_nothing_to_anyone() {
    let rig = Rig::start();
    let s = rig.wait("Gone selected", |s| selected(s).contains("Gone"));
    assert!(selected(&s).contains("offline"), "{s}");
    rig.keys(&["r"]);
    rig.wait("the refusal", |s| {
        s.contains("no reply to Gone: no pi has registered this seat")
    });
    rig.keys(&["o", "r"]);
    rig.text("hello there");
    rig.keys(&["Enter"]);
    let s = rig.wait("the refusal dismissed", |s| !s.contains("no reply to"));
    // `o` hid nothing, the second `r` opened no box, Enter opened no details.
    assert!(s.contains("Gone") && !s.contains("offline hidden"), "{s}");
    assert!(selected(&s).contains("Gone"), "{s}");
    assert!(!s.contains("Reply to") && !s.contains("Details ·"), "{s}");
    // Nothing reached either seat (a pass or two later, and after any send would have ended).
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(rig.typed(), (String::new(), String::new()));
    let s = rig.capture();
    assert!(!s.contains("sending") && !s.contains("delivered"), "{s}");
    rig.keys(&["q"]);
    drop(rig.seats);
}

#[test]
fn the_box_keeps_its_seat_while_rows_reorder_closes_after_sending_and_shows_the_receipt() {
    let rig = Rig::start();
    rig.keys(&["Down"]);
    rig.wait("Alpha selected", |s| selected(s).contains("Alpha"));
    rig.keys(&["r"]);
    let s = rig.wait("the box", |s| s.contains("Reply to Alpha → tmux %"));
    assert!(line_of(&s, "Alpha") < line_of(&s, "Bravo"), "{s}");
    rig.text("first line");
    // The roster changes order under the open box: Bravo moves above Alpha.
    roster(
        &rig.env,
        &[(BRAVO, "Bravo"), (ALPHA, "Alpha"), ("gone-id", "Gone")],
    );
    let s = rig.wait("the new order", |s| {
        line_of(s, "Bravo").is_some() && line_of(s, "Bravo") < line_of(s, "Alpha")
    });
    assert!(s.contains("Reply to Alpha → tmux %"), "{s}");
    assert!(selected(&s).contains("Alpha"), "{s}");
    rig.keys(&["M-Enter"]);
    rig.text("second line");
    rig.wait("two lines", |s| s.contains("│   second line"));
    rig.keys(&["Enter"]);
    let s = rig.wait("the receipt on the row", |s| s.contains("↳ delivered"));
    assert!(
        !s.contains("Reply to"),
        "the box closed after sending:\n{s}"
    );
    let (alpha, bravo) = wait_for(5_000, || {
        let (a, b) = rig.typed();
        a.contains("second line").then_some((a, b))
    })
    .unwrap_or_else(|| panic!("nothing reached Alpha: {:?}", rig.typed()));
    assert!(alpha.starts_with("first line\nsecond line\n"), "{alpha:?}");
    assert_eq!(alpha.matches("first line").count(), 1, "{alpha:?}");
    assert_eq!(bravo, "", "nothing for Bravo");

    // The next `r` opens a fresh box instead of typing an `r` into the old one.
    rig.keys(&["r"]);
    rig.wait("a fresh box", |s| {
        s.contains("Reply to Alpha") && s.contains("0/2000 characters")
    });
    rig.keys(&["Escape"]);
    rig.wait("the box closed", |s| !s.contains("Reply to"));

    // A 3-row pane still shows the receipt on the row, and in the details.
    rig.ui
        .tmux(&["resize-window", "-t", "ui", "-x", "40", "-y", "3"]);
    rig.wait("the receipt at 3 rows", |s| {
        s.lines().count() <= 3 && s.contains("↳ delivered")
    });
    rig.keys(&["d"]);
    rig.wait("the details at 3 rows", |s| {
        s.contains("Details · Alpha") && s.contains("Last reply")
    });
    rig.keys(&["q"]);
}
