//! The tmux plugin (`linux/tmux/intercom-pane.tmux`), loaded by hand with `run-shell` into a
//! private tmux server that a real client is attached to (a nested tmux on another private
//! server); its keys are pressed through that client: the pane key opens the sidebar above,
//! titled `Intercom monitor` and marked like ensure-monitor's, and goes there; pressed again it
//! goes back, and to an existing sidebar (never a second); the popup key opens it in a popup;
//! the options change the keys.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};

const PLUGIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/tmux/intercom-pane.tmux");

struct Plugged {
    inner: TmuxServer,
    outer: TmuxServer,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// A server with the plugin loaded (after `options`), and a client attached to it.
fn plugged(options: &[(&str, &str)]) -> Plugged {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // The program the keys run: records how it was called, then is the real sidebar.
    let log = dir.path().join("calls.log");
    let wrapper = dir.path().join("intercom-pane");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_intercom-pane")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inner = TmuxServer::start("keys", dir.path(), &[]);
    // Panes started by the keys see a private HOME and state folder.
    for (k, v) in [("HOME", &home), ("XDG_STATE_HOME", &home.join("state"))] {
        inner.tmux(&["set-environment", "-g", k, &v.display().to_string()]);
    }
    inner.tmux(&[
        "set-option",
        "-g",
        "@intercom-pane-bin",
        &wrapper.display().to_string(),
    ]);
    for (k, v) in options {
        inner.tmux(&["set-option", "-g", k, v]);
    }
    inner.tmux(&["run-shell", PLUGIN]);
    let sock = inner.sock.display().to_string();
    let outer = TmuxServer::start(
        "outer",
        dir.path(),
        &[
            "env", "-u", "TMUX", "tmux", "-S", &sock, "attach", "-t", "=keys",
        ],
    );
    wait_for(10_000, || {
        (!inner.tmux(&["list-clients"]).trim().is_empty()).then_some(())
    })
    .expect("a client is attached");
    Plugged {
        inner,
        outer,
        log,
        _dir: dir,
    }
}

impl Plugged {
    fn press(&self, key: &str) {
        self.outer.tmux(&["send-keys", "-t", "=outer:", "C-b", key]);
    }

    /// `id|title|marker|top|active` of every pane of the session.
    fn panes(&self) -> Vec<Vec<String>> {
        self.inner
            .tmux(&[
                "list-panes",
                "-t",
                "=keys:",
                "-F",
                "#{pane_id}|#{pane_title}|#{@intercom-pane-owner}|#{pane_top}|#{pane_active}",
            ])
            .lines()
            .map(|l| l.split('|').map(str::to_string).collect())
            .collect()
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Press `key` and check the sidebar opened in a pane above, titled and marked, at least the
    /// sidebar's minimum tall, and that the key went there; pressed again it goes back, and
    /// again to the same sidebar (never a second one).
    fn opens_pane_above(&self, key: &str) {
        let before = self.panes();
        assert_eq!(before.len(), 1);
        self.press(key);
        let panes = wait_for(10_000, || {
            let p = self.panes();
            (p.len() == 2 && p.iter().any(|p| p[1] == "Intercom monitor" && p[4] == "1"))
                .then_some(p)
        })
        .unwrap_or_else(|| panic!("no sidebar pane after prefix {key}: {:?}", self.panes()));
        let monitor = panes
            .iter()
            .find(|p| p[1] == "Intercom monitor")
            .unwrap()
            .clone();
        let original = panes.iter().find(|p| p[0] == before[0][0]).unwrap();
        assert!(monitor[2].starts_with("intercom-pane:"), "{monitor:?}");
        assert_eq!(monitor[3], "0", "the sidebar is on top: {panes:?}");
        assert_ne!(original[3], "0", "{panes:?}");
        let height =
            self.inner
                .tmux(&["display-message", "-p", "-t", &monitor[0], "#{pane_height}"]);
        assert!(height.trim().parse::<u32>().unwrap() >= 7, "{height}");
        assert_eq!(self.calls(), vec!["monitor".to_string()]);
        // Back to where the person came from, then to the same sidebar again.
        for want in [&before[0][0], &monitor[0], &before[0][0]] {
            self.press(key);
            wait_for(10_000, || {
                let p = self.panes();
                (p.len() == 2 && p.iter().any(|p| &p[0] == want && p[4] == "1")).then_some(())
            })
            .unwrap_or_else(|| panic!("{want} not active: {:?}", self.panes()));
        }
        assert_eq!(self.calls().len(), 1, "one sidebar started");
    }
}

fn bound(server: &TmuxServer, key: &str) -> Option<String> {
    server
        .tmux(&["list-keys", "-T", "prefix"])
        .lines()
        .find(|l| l.split_whitespace().nth(3) == Some(key))
        .map(str::to_string)
}

#[test]
fn the_default_keys_open_the_sidebar_above_and_in_a_popup() {
    let p = plugged(&[]);
    p.opens_pane_above("M");
    p.press("m");
    wait_for(10_000, || (p.calls().len() == 2).then_some(()))
        .unwrap_or_else(|| panic!("no popup after prefix m: {:?}", p.calls()));
    assert_eq!(p.calls()[1], "monitor");
    assert_eq!(p.panes().len(), 2, "a popup is not a pane");
    let popup = bound(&p.inner, "m").unwrap();
    assert!(popup.contains("display-popup"), "{popup}");
}

#[test]
fn the_options_change_the_keys() {
    let p = plugged(&[
        ("@intercom-pane-key", "S"),
        ("@intercom-pane-popup-key", "P"),
    ]);
    assert!(bound(&p.inner, "S").unwrap().contains("open-pane.sh"));
    assert!(bound(&p.inner, "P").unwrap().contains("display-popup"));
    // tmux's own `prefix M` / `prefix m` (clear and set the marked pane) are left alone.
    assert!(!bound(&p.inner, "M")
        .unwrap_or_default()
        .contains("intercom"));
    assert!(!bound(&p.inner, "m")
        .unwrap_or_default()
        .contains("intercom"));
    p.opens_pane_above("S");
}

#[test]
fn the_tpm_entry_point_at_the_top_loads_the_same_plugin() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR")).join("intercom-pane.tmux");
    let mode = std::fs::metadata(&top).unwrap().permissions().mode();
    assert!(
        mode & 0o111 != 0,
        "TPM runs *.tmux files: it must be executable"
    );
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("tpm", dir.path(), &[]);
    server.tmux(&["run-shell", &top.display().to_string()]);
    assert!(bound(&server, "M").unwrap().contains("open-pane.sh"));
}

#[test]
fn the_key_goes_to_an_existing_sidebar_in_another_window_of_the_session() {
    let p = plugged(&[]);
    // A sidebar marked as ensure-monitor marks it, in window 0; the person is in window 1.
    let side = p.panes()[0][0].clone();
    p.inner.tmux(&[
        "set-option",
        "-p",
        "-t",
        &side,
        "@intercom-pane-owner",
        "intercom-pane:x",
    ]);
    p.inner.tmux(&["new-window", "-t", "=keys:"]);
    let work = p.inner.client_pane();
    assert_ne!(work, side);
    p.press("M");
    wait_for(10_000, || (p.inner.client_pane() == side).then_some(()))
        .unwrap_or_else(|| panic!("not at the sidebar: {}", p.inner.client_pane()));
    p.press("M");
    wait_for(10_000, || (p.inner.client_pane() == work).then_some(()))
        .unwrap_or_else(|| panic!("not back: {}", p.inner.client_pane()));
    assert!(p.calls().is_empty(), "no second sidebar: {:?}", p.calls());
    // The plugin turned focus-events on, so the sidebar can show when it has the keys.
    assert_eq!(
        p.inner
            .tmux(&["show-options", "-sv", "focus-events"])
            .trim(),
        "on"
    );
}
