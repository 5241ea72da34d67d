//! End to end in a real tmux on a private socket: the demo sidebar driven by `send-keys` and read
//! with `capture-pane`. Each test owns its server (unique temp dir) and kills it on drop.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::sleep;
use std::time::{Duration, Instant};

const SESSION: &str = "e2e";
const PROMPT: &str = "e2e$";
const DEADLINE: Duration = Duration::from_secs(15);

struct Tmux {
    dir: tempfile::TempDir,
    sock: PathBuf,
}

impl Tmux {
    fn new(w: u16, h: u16) -> Tmux {
        let dir = tempfile::tempdir().expect("tempdir");
        let sock = dir.path().join("sock");
        let t = Tmux { dir, sock };
        let out = t.run(&[
            "new-session",
            "-d",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            "-s",
            SESSION,
            // An argv, not a shell command: the pane's process is this `sh` itself whatever
            // the runner's SHELL (dash, as `sh -c`, forks for its command where bash execs).
            "env",
            &format!("PS1={PROMPT} "),
            "HOME=/nonexistent",
            "RUST_BACKTRACE=0",
            "/bin/sh",
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t.run(&["set-option", "-g", "status", "off"]);
        t.run(&["select-pane", "-t", SESSION, "-T", "before-title"]);
        t.wait_for("the shell prompt", |s| s.contains(PROMPT));
        t
    }

    fn run(&self, args: &[&str]) -> Output {
        crate::mux_support::tmux_cmd(&self.sock)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    fn type_line(&self, text: &str) {
        assert!(self
            .run(&["send-keys", "-t", SESSION, "-l", text])
            .status
            .success());
        self.keys(&["Enter"]);
    }

    fn capture(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", SESSION]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn display(&self, fmt: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", SESSION, fmt]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Poll the pane until `pred` holds (bounded by DEADLINE); returns the matching capture.
    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {what}; pane shows:\n{s}");
            }
            sleep(Duration::from_millis(40));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn demo_bin() -> PathBuf {
    // target/debug/deps/ui_tmux-… → target/debug/examples/ui_demo (cargo test builds examples).
    let exe = std::env::current_exe().expect("current exe");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("examples").join("ui_demo"))
        .expect("target dir");
    assert!(
        bin.exists(),
        "{} missing: run `cargo build --example ui_demo`",
        bin.display()
    );
    bin
}

fn selected_line(s: &str) -> Option<&str> {
    s.lines().find(|l| l.starts_with('›'))
}

fn header_line(s: &str) -> Option<&str> {
    s.lines()
        .find(|l| l.contains("Worker") && l.contains("State"))
}

fn last_nonblank(s: &str) -> &str {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn back_at_prompt(s: &str) -> bool {
    last_nonblank(s) == PROMPT && header_line(s).is_none()
}

#[test]
fn select_details_escape_resize_and_quit() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    t.type_line(&format!("{} --workers 12 --pass-ms 50", bin.display()));

    // Until the whole first frame is on screen (its last row drawn): a capture can catch the
    // terminal halfway through drawing it.
    let s = t.wait_for("the first snapshot", |s| {
        selected_line(s).is_some_and(|l| l.contains("coordinator")) && s.contains("worker-011")
    });
    let header = header_line(&s).expect("header");
    assert!(
        header.contains("Connection") && header.contains("Detail"),
        "{s}"
    );

    // The hostile name is plain text: no title change, no cleared screen.
    assert!(s.contains("evilnameexe"), "{s}");
    assert!(!s.contains("pwned"), "{s}");
    assert_eq!(t.display("#{pane_title}"), "before-title");
    assert!(s.contains("builder") && s.contains("worker-011"), "{s}");

    t.keys(&["Down"]);
    t.wait_for("builder selected", |s| {
        selected_line(s).is_some_and(|l| l.contains("builder"))
    });
    t.keys(&["j"]);
    t.wait_for("reviewer selected", |s| {
        selected_line(s).is_some_and(|l| l.contains("reviewer"))
    });
    t.keys(&["k"]);
    t.wait_for("builder selected again", |s| {
        selected_line(s).is_some_and(|l| l.contains("builder"))
    });

    t.keys(&["d"]);
    let s = t.wait_for("details", |s| s.contains("Details · builder"));
    assert!(
        s.contains("Responsibility") && s.contains("Connection"),
        "{s}"
    );

    // Esc closes details only: the monitor keeps running.
    t.keys(&["Escape"]);
    let s = t.wait_for("details closed", |s| {
        !s.contains("Details ·") && header_line(s).is_some()
    });
    assert!(
        selected_line(&s).is_some_and(|l| l.contains("builder")),
        "{s}"
    );

    // Resize re-renders at the narrower breakpoint, then back.
    t.run(&["resize-window", "-t", SESSION, "-x", "50", "-y", "12"]);
    // Until the frame's last line (the overflow line) is drawn too.
    let s = t.wait_for("narrow layout", |s| {
        header_line(s).is_some_and(|h| h.contains("Detail") && !h.contains("Connection"))
            && s.contains("more (")
    });
    assert!(s.lines().all(|l| l.chars().count() <= 50), "{s}");
    assert!(s.contains("more ("), "overflow line at 12 rows:\n{s}");
    t.run(&["resize-window", "-t", SESSION, "-x", "120", "-y", "30"]);
    t.wait_for("full layout", |s| {
        header_line(s).is_some_and(|h| h.contains("Observed"))
    });

    t.keys(&["q"]);
    let s = t.wait_for("the shell prompt back", back_at_prompt);
    assert!(
        !s.contains("evilname"),
        "alternate screen left behind:\n{s}"
    );
    assert_eq!(t.display("#{pane_title}"), "before-title");
    assert_eq!(t.display("#{pane_current_command}"), "sh");
}

#[test]
fn esc_and_ctrl_c_quit_and_a_slow_pass_never_freezes_keys() {
    let t = Tmux::new(60, 15);
    let bin = demo_bin();

    t.type_line(&format!("{} --workers 3 --pass-ms 50", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    t.keys(&["Escape"]);
    t.wait_for("Esc quits with nothing open", back_at_prompt);

    t.type_line(&format!("{} --workers 3 --pass-ms 50", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    t.keys(&["C-c"]);
    t.wait_for("Ctrl+C quits", back_at_prompt);

    // A pass that takes 20 s: the UI still answers keys, and quitting does not wait for it.
    // Not a product deadline: the guard is half the pass, so a quit that joined the pass fails
    // it however slow the runner, and a quit that did not passes however loaded it is.
    const SLOW_PASS: Duration = Duration::from_secs(20);
    t.type_line(&format!(
        "{} --workers 3 --pass-ms {}",
        bin.display(),
        SLOW_PASS.as_millis()
    ));
    t.wait_for("scanning", |s| s.contains("Scanning…"));
    let start = Instant::now();
    t.keys(&["q"]);
    t.wait_for("quit during a slow pass", back_at_prompt);
    assert!(
        start.elapsed() < SLOW_PASS / 2,
        "quitting waited for the pass: {:?}",
        start.elapsed()
    );
}

#[test]
fn a_panic_on_the_ui_thread_restores_the_terminal() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    t.type_line(&format!(
        "{} --workers 3 --pass-ms 20 --panic-after-ms 600",
        bin.display()
    ));
    t.wait_for("the list", |s| header_line(s).is_some());
    sleep(Duration::from_millis(700));
    // The next redraw reads the clock, which now panics on the UI thread.
    t.keys(&["Down"]);
    let s = t.wait_for("the prompt after the panic", |s| {
        s.contains("deliberate panic") && last_nonblank(s) == PROMPT
    });
    assert!(
        header_line(&s).is_none(),
        "alternate screen left behind:\n{s}"
    );
    // Cooked mode is back: a typed command line runs (in raw mode Enter would not submit it).
    t.type_line("echo cooked-ok");
    t.wait_for("the shell to run a command", |s| {
        s.lines().any(|l| l.trim() == "cooked-ok")
    });
}

#[test]
fn seen_key_writes_seen_json_and_unsee_removes_it() {
    let t = Tmux::new(100, 24);
    let bin = demo_bin();
    let root = t.dir.path().join("data");
    std::fs::create_dir(&root).unwrap();
    let seen = root.join("board").join("seen.json");
    // A long interval: no new pass (with newer activity) arrives during the test.
    t.type_line(&format!(
        "{} --workers 4 --pass-ms 20 --interval-ms 60000 --data-root {}",
        bin.display(),
        root.display()
    ));
    t.wait_for("the list", |s| header_line(s).is_some());
    t.keys(&["Down", "s"]);
    let s = t.wait_for("the Seen group", |s| s.contains("Seen (1)"));
    assert!(
        !s.lines().any(|l| l.contains("builder")),
        "collapsed group:\n{s}"
    );
    let start = Instant::now();
    let text = loop {
        let text = std::fs::read_to_string(&seen).unwrap_or_default();
        if text.contains("demo/1") || start.elapsed() > DEADLINE {
            break text;
        }
        sleep(Duration::from_millis(40));
    };
    assert!(text.contains("\"demo/1\": \"20"), "seen.json: {text}");
    // Open the group, select builder, unmark it: the file loses the key.
    t.keys(&["End", "Enter"]);
    t.wait_for("the open group", |s| s.contains("▾ Seen (1)"));
    t.keys(&["End", "s"]);
    t.wait_for("builder back in the list", |s| !s.contains("Seen (1)"));
    let start = Instant::now();
    while std::fs::read_to_string(&seen)
        .unwrap_or_default()
        .contains("demo/1")
    {
        assert!(start.elapsed() < DEADLINE, "seen.json still marks demo/1");
        sleep(Duration::from_millis(40));
    }
    t.keys(&["q"]);
    t.wait_for("the shell prompt back", back_at_prompt);
}

#[test]
fn sigterm_quits_cleanly_and_restores_the_terminal() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    t.type_line(&format!("{} --workers 3 --pass-ms 20", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    let sh: i32 = t.display("#{pane_pid}").parse().expect("pane pid");
    let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
    let pids: Vec<i32> = children
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    assert_eq!(pids.len(), 1, "children of the pane shell: {children:?}");
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", pids[0])).unwrap();
    assert_eq!(comm.trim(), "ui_demo");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pids[0]),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    t.wait_for("the prompt after SIGTERM", back_at_prompt);
    t.type_line("echo cooked-ok");
    t.wait_for("the shell to run a command", |s| {
        s.lines().any(|l| l.trim() == "cooked-ok")
    });
}

#[test]
fn a_paste_keeps_its_lines_and_alt_enter_or_ctrl_j_add_lines() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    t.type_line(&format!("{} --workers 3 --pass-ms 20", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    // builder (row 1) has a reply path in the demo.
    t.keys(&["Down", "r"]);
    t.wait_for("the reply box", |s| s.contains("Reply to builder"));
    // tmux pastes with CR line ends inside a bracketed paste, as terminals do.
    t.run(&["set-buffer", "-b", "p", "line1\nline2"]);
    t.run(&["paste-buffer", "-p", "-b", "p", "-t", SESSION]);
    t.wait_for("the pasted lines", |s| {
        s.contains("│ > line1") && s.contains("│   line2")
    });
    t.keys(&["M-Enter"]);
    assert!(t
        .run(&["send-keys", "-t", SESSION, "-l", "line3"])
        .status
        .success());
    t.keys(&["C-j"]);
    assert!(t
        .run(&["send-keys", "-t", SESSION, "-l", "line4"])
        .status
        .success());
    let s = t.wait_for("four lines in the box", |s| {
        s.contains("│   line3") && s.contains("│   line4")
    });
    // The demo has no reply path: the box says so, and Enter sends nothing.
    assert!(
        s.contains("reply unavailable: reply path not available"),
        "{s}"
    );
    t.keys(&["Enter"]);
    t.wait_for("the refusal in the box", |s| {
        s.contains("not sent: reply unavailable") && s.contains("Reply to builder")
    });
    t.keys(&["Escape"]);
    t.wait_for("the box closed", |s| !s.contains("Reply to builder"));
    t.keys(&["q"]);
    t.wait_for("the shell prompt back", back_at_prompt);
}

#[test]
fn a_refused_r_swallows_the_keys_typed_after_it() {
    let t = Tmux::new(80, 12);
    let bin = demo_bin();
    t.type_line(&format!("{} --workers 6 --pass-ms 20", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    // The coordinator row (selected first) has no reply path.
    t.keys(&["r"]);
    t.wait_for("the refusal", |s| {
        s.contains("no reply to coordinator") && s.contains("dismiss")
    });
    // Would hide offline rows, open a box, move, mark seen and quit — none of it happens.
    t.keys(&["o", "r", "j", "s", "h", "q", "Down", "G"]);
    assert!(t
        .run(&["send-keys", "-t", SESSION, "-l", "hello"])
        .status
        .success());
    sleep(Duration::from_millis(400));
    let s = t.capture();
    assert!(s.contains("no reply to coordinator"), "{s}");
    assert!(!s.contains("hidden") && !s.contains("Reply to"), "{s}");
    assert!(
        selected_line(&s).is_some_and(|l| l.contains("coordinator")),
        "{s}"
    );
    // Enter dismisses it and does nothing else: no details.
    t.keys(&["Enter"]);
    let s = t.wait_for("the refusal gone", |s| !s.contains("no reply to"));
    assert!(!s.contains("Details ·"), "{s}");
    t.keys(&["q"]);
    t.wait_for("the shell prompt back", back_at_prompt);
}

#[test]
fn without_a_terminal_the_monitor_refuses_and_writes_nothing() {
    let out = Command::new(demo_bin())
        .args(["--workers", "2"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run ui_demo");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "escape codes written to a pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stdout is not a tty"), "{err}");
}

/// Any SGR colour in a `capture-pane -e` dump (defaults 39/49 are resets, not colours).
fn has_colour(dump: &str) -> bool {
    let mut rest = dump;
    while let Some(i) = rest.find("\u{1b}[") {
        rest = &rest[i + 2..];
        let end = rest.find('m').unwrap_or(rest.len());
        let params = &rest[..end];
        if params.len() < 24 && params.chars().all(|c| c.is_ascii_digit() || c == ';') {
            for p in params.split(';') {
                if let Ok(n) = p.parse::<u32>() {
                    if (30..=37).contains(&n) || (40..=47).contains(&n) || n == 38 || n == 48 {
                        return true;
                    }
                    if (90..=97).contains(&n) || (100..=107).contains(&n) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

#[test]
fn no_color_and_dumb_terminals_get_words_and_glyphs_only() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    let colour_dump = || {
        String::from_utf8_lossy(&t.run(&["capture-pane", "-e", "-p", "-t", SESSION]).stdout)
            .into_owned()
    };
    t.type_line(&format!("{} --workers 6 --pass-ms 20", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    assert!(has_colour(&colour_dump()), "colour expected by default");
    t.keys(&["q"]);
    t.wait_for("the prompt", back_at_prompt);
    for env in ["NO_COLOR=1", "NO_COLOR=", "TERM=dumb"] {
        t.type_line(&format!(
            "env {env} {} --workers 6 --pass-ms 20",
            bin.display()
        ));
        let s = t.wait_for("the list", |s| header_line(s).is_some());
        let dump = colour_dump();
        assert!(!has_colour(&dump), "{env}: colour in\n{dump}");
        // State is still carried by glyphs and words.
        assert!(
            s.contains("! builder") && s.contains("waiting"),
            "{env}:\n{s}"
        );
        assert!(
            s.contains("✗ reviewer") && s.contains("error"),
            "{env}:\n{s}"
        );
        t.keys(&["q"]);
        t.wait_for("the prompt", back_at_prompt);
    }
}

/// Ages on screen tick with the clock, without a pass: the demo runs one pass only (a
/// ten-minute interval), and its observation ages in seconds still move on.
#[test]
fn an_age_on_screen_ticks_without_a_pass() {
    let t = Tmux::new(100, 24);
    let bin = demo_bin();
    t.type_line(&format!(
        "{} --workers 3 --pass-ms 20 --interval-ms 600000",
        bin.display()
    ));
    let ages = |s: &str| -> Vec<String> {
        s.split_whitespace()
            .filter(|w| {
                w.len() > 1
                    && w.ends_with('s')
                    && w[..w.len() - 1].chars().all(|c| c.is_ascii_digit())
            })
            .map(str::to_string)
            .collect()
    };
    let first = t.wait_for("the list with ages in seconds", |s| {
        header_line(s).is_some() && !ages(s).is_empty()
    });
    let before = ages(&first);
    let later = t.wait_for("an age that ticked", |s| {
        let now = ages(s);
        now.len() == before.len() && now != before
    });
    assert_ne!(ages(&later), before, "{later}");
    t.keys(&["q"]);
    t.wait_for("the shell prompt back", back_at_prompt);
}

/// The terminal closes under a shell that ignores SIGHUP: the sidebar ends within a few seconds
/// and leaves nothing spinning. It watches its terminal's hangup itself (`signals::wait_for_stop`,
/// whose unit test shows a closed pty wakes it with no signal at all), so it does not depend on a
/// SIGHUP reaching it; crossterm's reader alone would spin a core on the dead terminal (crossterm
/// issue 793).
#[test]
fn a_closed_terminal_ends_the_sidebar() {
    let t = Tmux::new(80, 24);
    let bin = demo_bin();
    t.type_line("trap '' HUP");
    t.type_line(&format!("{} --workers 3 --pass-ms 20", bin.display()));
    t.wait_for("the list", |s| header_line(s).is_some());
    let sh: i32 = t.display("#{pane_pid}").parse().expect("pane pid");
    let children = std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
    let pid: i32 = children
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the sidebar under the shell");
    // Closing the server closes every pane's terminal; the kernel signals only the session
    // leader (the shell, which ignores it).
    let out = t.run(&["kill-server"]);
    assert!(out.status.success(), "kill-server: {out:?}");
    let start = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // A zombie has ended (its parent shell may be gone too).
        if stat
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the sidebar {pid} still runs 5 s after its terminal closed"
        );
        sleep(Duration::from_millis(50));
    }
}
