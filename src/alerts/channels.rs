//! Where alerts go besides `--on-alert` (docs/behaviour.md §3b): the tmux status option, a
//! message on each attached tmux client, the terminal bell, a desktop notification; and which
//! panes people look at (no alert for those). Every multiplexer call goes through `mux/` under a
//! short deadline; a failure is logged once per server and kind until it changes, never fatal.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::alerts::memory::PaneRef;
use crate::alerts::message::Alert;
use crate::alerts::programs::Job;
use crate::mux::tmux::Tmux;
use crate::snapshot::Snapshot;

/// The tmux user option the status line shows (`#{@intercom_pane_status}`).
pub(crate) const STATUS_OPTION: &str = "@intercom_pane_status";
/// Deadline of one multiplexer call.
const CALL: Duration = Duration::from_secs(5);
/// Most tmux servers one pass updates.
const MAX_SERVERS: usize = 16;
/// The status option is set again this often even when unchanged (a plugin reload or another
/// watcher that ended may have cleared it). Rare: each time runs `tmux`, and an idle sidebar
/// should start next to no process.
pub(crate) const STATUS_REASSERT: Duration = Duration::from_secs(600);
/// How long a tmux message stays.
const MESSAGE_MS: u32 = 6_000;

/// Where a tmux seat's server listens (a `-L` name or path resolved as the scan resolves it).
pub(crate) fn tmux_socket(hint: Option<&str>, default_tmux: Option<&Path>) -> Option<PathBuf> {
    crate::mux::tmux::resolve_socket(hint, default_tmux)
}

/// The tmux servers this machine's seats live on, and the run's own server; each once,
/// existing. Another host's rows never name a server here (`Row::local_pane`).
pub(crate) fn tmux_servers(snap: &Snapshot, default_tmux: Option<&Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    // Most seats share a server: each hint is resolved (and looked up on disk) once.
    let mut hints: Vec<Option<&str>> = vec![None];
    for p in snap.rows.iter().filter_map(|r| r.local_pane()) {
        let hint = p.socket.as_deref();
        if p.kind.caps().status_alerts && !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    for hint in hints {
        let Some(s) = tmux_socket(hint, default_tmux) else {
            continue;
        };
        if out.len() >= MAX_SERVERS || out.iter().any(|o| same_file(o, &s)) {
            continue;
        }
        if crate::fsguard::kind(&s).is_ok() {
            out.push(s);
        }
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    a == b
        || matches!((std::fs::metadata(a), std::fs::metadata(b)),
            (Ok(x), Ok(y)) if x.dev() == y.dev() && x.ino() == y.ino())
}

/// Failures said once per (server, what) until they change.
#[derive(Default)]
pub(crate) struct Failures(HashMap<(PathBuf, &'static str), String>);

impl Failures {
    pub(crate) fn note(
        &mut self,
        server: &Path,
        what: &'static str,
        r: Result<(), crate::mux::MuxError>,
    ) {
        let key = (server.to_path_buf(), what);
        match r {
            Ok(()) => {
                self.0.remove(&key);
            }
            Err(e) => {
                let e = e.to_string();
                if self.0.get(&key) != Some(&e) {
                    crate::log::write(&crate::log::AlertChannelFailed {
                        server: Some(server.display().to_string()),
                        ..crate::log::AlertChannelFailed::of(what, &e)
                    });
                    self.0.insert(key, e);
                }
            }
        }
    }
}

/// The status option on each server, set only when its value changed (or to reassert it).
#[derive(Default)]
pub(crate) struct StatusLine {
    set: HashMap<PathBuf, (String, Instant)>,
}

impl StatusLine {
    /// Make `value` what `STATUS_OPTION` holds on `servers`.
    pub(crate) fn update(&mut self, servers: &[PathBuf], value: &str, failures: &mut Failures) {
        let now = Instant::now();
        let mut changed = Vec::new();
        for s in servers {
            let fresh = self
                .set
                .get(s)
                .is_some_and(|(v, at)| v == value && now.duration_since(*at) < STATUS_REASSERT);
            if fresh {
                continue;
            }
            let r = Tmux::at_socket(s).set_user_option(STATUS_OPTION, value, Instant::now() + CALL);
            if r.is_ok() {
                self.set.insert(s.clone(), (value.to_string(), now));
                changed.push(s.display().to_string());
            } else {
                self.set.remove(s);
            }
            failures.note(s, "status_line", r);
        }
        if !changed.is_empty() {
            crate::log::write(&crate::log::AlertStatusSet {
                value,
                servers: &changed,
            });
        }
    }

    /// Clear what this process set (it ends): a count nobody keeps up to date must not stay.
    pub(crate) fn clear(&mut self) {
        for (s, (v, _)) in self.set.drain() {
            if !v.is_empty() {
                let _ =
                    Tmux::at_socket(&s).set_user_option(STATUS_OPTION, "", Instant::now() + CALL);
            }
        }
    }
}

/// Whether someone looks at `pane` now: it is the active pane of an attached tmux client (a
/// control client is a program, not a person), or Herdr's focused pane. `None` when the
/// multiplexer could not say (the alert then goes out: better twice seen than missed).
pub fn visible(pane: &PaneRef, default_tmux: Option<&Path>) -> Option<bool> {
    let deadline = Instant::now() + CALL;
    let s = pane
        .kind
        .server_socket(pane.socket.as_deref(), default_tmux)?;
    crate::mux::open(pane.kind, &s)
        .looked_at(&pane.pane_id, deadline)
        .ok()
}

/// `display-message` with the alert on every attached client (control clients left out).
pub(crate) fn display(servers: &[PathBuf], alert: &Alert, failures: &mut Failures) {
    let text = alert.message();
    for s in servers {
        let t = Tmux::at_socket(s);
        let r = t.clients(Instant::now() + CALL).and_then(|cs| {
            for c in cs.iter().filter(|c| !c.control) {
                t.display_message(&c.name, &text, MESSAGE_MS, Instant::now() + CALL)?;
            }
            Ok(())
        });
        failures.note(s, "display_message", r);
    }
}

/// The terminal bell on the terminal this process runs in (tmux passes a pane's bell on to its
/// clients as its `bell-action` says). Nothing when that is not a terminal.
pub(crate) fn bell() {
    let mut err = std::io::stderr();
    if err.is_terminal() {
        // One byte, one write: it cannot split another writer's escape sequence.
        let _ = err.write_all(b"\x07");
    }
}

/// Whether a desktop session is there to notify.
pub(crate) fn desktop_session(env: impl Fn(&str) -> Option<String>) -> bool {
    ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|k| env(k).is_some_and(|v| !v.is_empty()))
}

/// `notify-send` on PATH, if there.
pub(crate) fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether this `notify-send` offers actions and waits for them (libnotify 0.7.10 and later:
/// `--action` and `--wait` in its help). Asked once per process, bounded.
pub(crate) fn notify_send_has_actions(program: &Path) -> bool {
    let job = Job {
        channel: "desktop",
        argv: vec![program.display().to_string(), "--help".into()],
        stdin: None,
        env: Vec::new(),
        then: None,
        waits: false,
    };
    crate::alerts::programs::output(&job, Duration::from_secs(3)).is_some_and(|out| {
        let help = String::from_utf8_lossy(&out);
        help.contains("--action") && help.contains("--wait")
    })
}

/// A Jump button on the notification: how long it is offered, and the jump a click runs.
pub(crate) struct Click {
    pub wait: Duration,
    pub jump: Vec<String>,
}

/// The desktop notification: title and body as plain argv words after `--`; the body's markup
/// characters escaped (notification servers may read it as markup). With `click`, a Jump
/// action that `notify-send --wait` reports by printing `jump`, then runs the jump; the
/// notification expires when the wait ends, and the program is killed shortly after.
pub(crate) fn desktop_job(program: &Path, alert: &Alert, click: Option<Click>) -> Job {
    let title = format!("intercom-pane: {}", alert.headline(80));
    let mut body = alert
        .text
        .as_deref()
        .map(|t| crate::text::one_line(t, 300))
        .unwrap_or_default();
    if !body.is_empty() {
        body.push('\n');
    }
    body.push_str(&alert.how_to_jump());
    let body = body
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let mut argv = vec![
        program.display().to_string(),
        "--app-name=intercom-pane".into(),
    ];
    let then = click.map(|c| {
        argv.extend([
            "--action=jump=Jump".to_string(),
            "--wait".into(),
            format!("--expire-time={}", c.wait.as_millis()),
        ]);
        ("jump", c.jump)
    });
    let waits = then.is_some();
    argv.extend(["--".to_string(), title, body]);
    Job {
        channel: "desktop",
        argv,
        stdin: None,
        env: Vec::new(),
        then,
        waits,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_desktop_needs_a_session() {
        assert!(!desktop_session(|_| None));
        assert!(!desktop_session(|_| Some(String::new())));
        assert!(desktop_session(
            |k| (k == "WAYLAND_DISPLAY").then(|| "wayland-0".into())
        ));
    }

    #[test]
    fn actions_only_where_notify_send_says_it_has_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let prog = |name: &str, help: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\nprintf '{help}'\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let new = prog("new", "  -A, --action=[NAME=]Text\\n  -w, --wait\\n");
        let old = prog("old", "  -u, --urgency=LEVEL\\n  -t, --expire-time=TIME\\n");
        assert!(notify_send_has_actions(&new));
        assert!(!notify_send_has_actions(&old));
        assert!(!notify_send_has_actions(&dir.path().join("missing")));
    }

    #[test]
    fn the_desktop_body_is_not_markup() {
        let mut row = crate::ui::demo::demo_row(1, 0, 0);
        row.state = crate::states::BoardState::Error;
        row.name = "<b>x</b>".into();
        row.last_error = Some("a <i>&</i> b".into());
        let a = Alert::of(&row, "error:e", 0, &[]);
        let j = desktop_job(Path::new("/usr/bin/notify-send"), &a, None);
        assert_eq!(j.argv[2], "--");
        assert!(j.argv[4].starts_with("a &lt;i&gt;&amp;&lt;/i&gt; b\n"));
        assert!(j.argv[3].contains("<b>x</b>"), "the title is plain text");
        assert!(j.then.is_none());
        let click = Click {
            wait: Duration::from_secs(60),
            jump: vec!["/bin/ip".into(), "jump".into()],
        };
        let j = desktop_job(Path::new("/usr/bin/notify-send"), &a, Some(click));
        assert_eq!(
            j.argv[2..6],
            ["--action=jump=Jump", "--wait", "--expire-time=60000", "--"]
        );
        assert!(j.waits && j.then.as_ref().is_some_and(|(w, _)| *w == "jump"));
    }
}
