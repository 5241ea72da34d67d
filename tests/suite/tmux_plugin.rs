//! The tmux plugin (`linux/tmux/intercom-pane.tmux`), loaded by hand with `run-shell` into a
//! private tmux server that a real client is attached to (a nested tmux on another private
//! server); its keys are pressed through that client: the pane key opens the sidebar above,
//! titled `Intercom monitor` and marked like ensure-monitor's, and goes there; pressed again it
//! goes back, and to an existing sidebar (never a second); the popup key opens it in a popup;
//! the options change the keys. In a pane whose folder holds `#(…)`, `#{…}`,
//! `#S`, styles, a newline or a TAB, the keys (and the minimal bindings of `intercom-pane.conf`)
//! start the sidebar in exactly that folder and tmux runs no format job (`hostile_support`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::hostile_support::{folders, reported, wait_cwd, Markers};
use crate::mux_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};

const PLUGIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/tmux/intercom-pane.tmux");

struct Plugged {
    inner: TmuxServer,
    outer: TmuxServer,
    log: PathBuf,
    /// The folder each run of the program started in, NUL-terminated.
    cwd_log: PathBuf,
    dir: tempfile::TempDir,
}

/// A server with the plugin loaded (after `options`), and a client attached to it.
fn plugged(options: &[(&str, &str)]) -> Plugged {
    plugged_by(&["run-shell", PLUGIN], options)
}

/// A server that ran the tmux command `load` (after `options`), and a client attached to it.
fn plugged_by(load: &[&str], options: &[(&str, &str)]) -> Plugged {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // The program the keys run: records how it was called and where, then is the real sidebar.
    let log = dir.path().join("calls.log");
    let cwd_log = dir.path().join("cwd.log");
    let wrapper = dir.path().join("intercom-pane");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nprintf '%s\\0' \"$(pwd -P)\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            cwd_log.display(),
            env!("CARGO_BIN_EXE_intercom-pane")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let inner = TmuxServer::start_logged("keys", dir.path(), &[]);
    // Panes started by the keys see a private HOME and state folder, and the wrapper first on
    // PATH (the minimal bindings run `intercom-pane` from PATH).
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (k, v) in [
        ("HOME", home.display().to_string()),
        ("XDG_STATE_HOME", home.join("state").display().to_string()),
        ("PATH", path),
    ] {
        inner.tmux(&["set-environment", "-g", k, &v]);
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
    inner.tmux(load);
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
        cwd_log,
        dir,
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

    /// A new window in `dir` (passed to tmux literally), made current so the keys act on its
    /// pane; its pane id.
    fn window_in(&self, dir: &Path) -> String {
        let lit = intercom_pane::seam::mux::tmux::format_literal(dir.to_str().unwrap());
        let pane = self.inner.tmux(&[
            "new-window",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "=keys:",
            "-c",
            &lit,
            "sleep",
            "600",
        ]);
        let pane = pane.trim().to_string();
        wait_cwd(&self.inner, &pane, dir);
        pane
    }

    /// The folders the program started in, in order.
    fn cwds(&self) -> Vec<String> {
        std::fs::read(&self.cwd_log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
            .split_terminator('\0')
            .map(str::to_string)
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

/// pi warns in every pane while tmux's extended keys are off (it reads `tmux show -gv
/// extended-keys`, and wants `on` or `always`): the plugin turns them on, unless told not to.
#[test]
fn the_plugin_turns_extended_keys_on_as_pi_asks_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("ek", dir.path(), &[]);
    assert_eq!(server.tmux(&["show", "-gv", "extended-keys"]).trim(), "off");
    server.tmux(&["run-shell", PLUGIN]);
    assert_eq!(server.tmux(&["show", "-gv", "extended-keys"]).trim(), "on");
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("ek", dir.path(), &[]);
    server.tmux(&["set-option", "-g", "@intercom-pane-extended-keys", "off"]);
    server.tmux(&["run-shell", PLUGIN]);
    assert_eq!(server.tmux(&["show", "-gv", "extended-keys"]).trim(), "off");
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

#[test]
fn the_keys_in_a_pane_whose_folder_is_hostile_run_nothing_and_keep_the_folder() {
    let p = plugged(&[]);
    let m = Markers::on(&p.inner);
    let dirs = folders(p.dir.path(), &m.values("k"));
    for (i, dir) in dirs.iter().enumerate() {
        let pane = p.window_in(dir);
        p.press("M");
        let monitor = wait_for(10_000, || {
            let out = p
                .inner
                .tmux(&["list-panes", "-t", &pane, "-F", "#{pane_id}"]);
            out.lines()
                .find(|id| {
                    *id != pane && reported(&p.inner, id, "pane_title") == "Intercom monitor"
                })
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no sidebar above the pane in {dir:?}"));
        let marker = p.inner.tmux(&[
            "show-options",
            "-p",
            "-v",
            "-t",
            &monitor,
            "@intercom-pane-owner",
        ]);
        assert!(marker.starts_with("intercom-pane:"), "{marker}");
        wait_for(10_000, || (p.cwds().len() == i + 1).then_some(())).expect("the sidebar started");
        assert_eq!(p.cwds()[i], dir.to_str().unwrap(), "the sidebar's folder");
        p.inner.tmux(&["kill-pane", "-t", &monitor]);
    }
    // The popup key, in the last folder (a newline and a TAB in it).
    p.press("m");
    wait_for(10_000, || (p.cwds().len() == dirs.len() + 1).then_some(()))
        .expect("the popup started");
    assert_eq!(
        p.cwds().last().unwrap(),
        dirs.last().unwrap().to_str().unwrap()
    );
    m.assert_none_ran(&p.inner);
}

#[test]
fn the_minimal_bindings_in_a_hostile_folder_run_nothing_and_keep_the_folder() {
    let conf = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/tmux/intercom-pane.conf");
    let p = plugged_by(&["source-file", conf], &[]);
    let m = Markers::on(&p.inner);
    let dirs = folders(p.dir.path(), &m.values("c"));
    let dir = dirs
        .iter()
        .find(|d| d.to_str().unwrap().contains("#("))
        .unwrap();
    let pane = p.window_in(dir);
    p.press("M");
    wait_for(10_000, || (p.cwds().len() == 1).then_some(())).expect("the sidebar started");
    assert_eq!(p.cwds()[0], dir.to_str().unwrap());
    let panes = p
        .inner
        .tmux(&["list-panes", "-t", &pane, "-F", "#{pane_id}"]);
    assert_eq!(panes.lines().count(), 2, "a pane above: {panes}");
    m.assert_none_ran(&p.inner);
}

/// After the sidebar's Enter took the person to a worker, the pane key there brings them back
/// to that sidebar, in each tmux layout the README shows: a worker in a session of its own and
/// one in a window of the coordinator's session. Another roster's sidebar elsewhere on the
/// server is not where they came from and is never chosen; pressed in the sidebar, the key goes
/// to the worker again; no second sidebar is opened.
#[test]
fn the_key_after_enter_goes_back_to_the_sidebar_in_every_tmux_layout() {
    use intercom_pane::seam::mux::tmux::Tmux;
    use intercom_pane::seam::mux::Multiplexer;
    let p = plugged(&[]);
    let mark = |pane: &str, m: &str| {
        p.inner
            .tmux(&["set-option", "-p", "-t", pane, "@intercom-pane-owner", m]);
    };
    let side = p.panes()[0][0].clone();
    mark(&side, "intercom-pane:mine");
    let new_pane = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-P", "-F", "#{pane_id}", "sleep", "600"]);
        p.inner.tmux(&all).trim().to_string()
    };
    // Another roster's sidebar, in a session of its own.
    let theirs = new_pane(&["new-session", "-d", "-s", "other"]);
    mark(&theirs, "intercom-pane:theirs");
    let own_session = new_pane(&["new-session", "-d", "-s", "Builder"]);
    let own_window = new_pane(&["new-window", "-d", "-t", "=keys:", "-n", "Reviewer"]);
    let t = Tmux::at_socket(&p.inner.sock);
    let at = |want: &str| {
        wait_for(10_000, || (p.inner.client_pane() == want).then_some(()))
            .unwrap_or_else(|| panic!("not at {want}: at {}", p.inner.client_pane()));
    };
    for worker in [&own_session, &own_window] {
        at(&side);
        // The sidebar's Enter.
        t.jump_to(worker, Some(&side), mux_support::soon(5000))
            .unwrap();
        at(worker);
        // The key is named where the person lands.
        wait_for(10_000, || {
            p.outer
                .tmux(&["capture-pane", "-p", "-t", "=outer:"])
                .contains("intercom-pane: prefix M comes back to the sidebar")
                .then_some(())
        })
        .unwrap_or_else(|| {
            panic!(
                "the way back is not named:\n{}",
                p.outer.tmux(&["capture-pane", "-p", "-t", "=outer:"])
            )
        });
        p.press("M");
        at(&side);
        p.press("M");
        at(worker);
        p.press("M");
        at(&side);
    }
    assert!(p.calls().is_empty(), "no second sidebar: {:?}", p.calls());
    let marked = p
        .inner
        .tmux(&["list-panes", "-a", "-F", "#{@intercom-pane-owner}"]);
    assert_eq!(
        marked.lines().filter(|l| !l.is_empty()).count(),
        2,
        "{marked}"
    );
}
