//! `scripts/agent-send.sh`'s pane checks in real tmux, with a stand-in screen drawn like pi's
//! editor (two full-width `─` rulers with the editor lines between; the real pi is in
//! tests/real_pi/real_pi_reply.rs): an empty editor is typed into once; a draft, a selector or a scrolled
//! editor is refused and nothing is typed; copy mode is left before typing; the `-p` pi must be
//! the pane's process or its descendant.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::Path;
use std::process::{Command, Output};

use mux_support::{wait_for, TmuxServer};

fn send(server: &TmuxServer, pane: &str, extra: &[&str], text: &str) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/agent-send.sh");
    Command::new("bash")
        .arg(script)
        .args(["-s", pane, "-S", "test:intercom-pane", "-L"])
        .arg(&server.sock)
        .args(extra)
        .args(["-m", text])
        .env_remove("TMUX")
        .output()
        .unwrap()
}

/// A pane that draws `editor` (lines between two rulers) at the bottom like pi, then copies what
/// it reads to `typed.txt`. Returns the server, the pane id and the file.
fn pane_with_editor(
    editor: &[&str],
) -> (TmuxServer, String, std::path::PathBuf, tempfile::TempDir) {
    pane_with_top(None, editor)
}

/// As `pane_with_editor`, with `top` as the top border when given (pi draws its status loader
/// there).
fn pane_with_top(
    top: Option<&str>,
    editor: &[&str],
) -> (TmuxServer, String, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("typed.txt");
    let lines: String = editor
        .iter()
        .map(|l| format!("printf '%s\\n' '{l}'; "))
        .collect();
    // The rulers span the pane's width, as pi's do; `stty -echo` keeps the screen as drawn.
    let script = format!(
        "stty -echo; w=$(stty size | cut -d' ' -f2); r=$(printf '%*s' \"$w\" '' | sed 's/ /─/g'); \
         printf 'transcript above\\n%s\\n' \"{top}\"; {lines} printf '%s\\nfooter\\n' \"$r\"; \
         exec cat > {}",
        out.display(),
        top = top.unwrap_or("$r")
    );
    let server = TmuxServer::start("t", dir.path(), &["bash", "-c", &script]);
    let pane = server
        .tmux(&["list-panes", "-t", "=t:", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    wait_for(5_000, || {
        server
            .tmux(&["capture-pane", "-p", "-t", &pane])
            .contains("footer")
            .then_some(())
    })
    .expect("the screen is drawn");
    (server, pane, out, dir)
}

fn typed(out: &Path) -> String {
    std::fs::read_to_string(out).unwrap_or_default()
}

#[test]
fn an_empty_editor_is_typed_into_once_and_a_draft_or_dialog_never() {
    let (server, pane, out, _d) = pane_with_editor(&[""]);
    let o = send(&server, &pane, &[], "hello\nthere");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let got = wait_for(5_000, || {
        let t = typed(&out);
        t.contains("there").then_some(t)
    })
    .expect("typed");
    assert_eq!(got, "hello\nthere\n", "one paste, one Enter");

    // pi's status loader in the top border, the editor empty.
    let (server, pane, out, _d) = pane_with_top(Some("── ⠙ Working... ─────────"), &[""]);
    assert_eq!(send(&server, &pane, &[], "busy").status.code(), Some(0));
    wait_for(5_000, || typed(&out).contains("busy").then_some(())).expect("typed");

    for (what, editor) in [
        ("draft", &["my unsent draft"][..]),
        ("multi-line draft", &["first", "second"][..]),
        (
            "selector",
            &["", "> ", "→ fake-model", "Enter to select"][..],
        ),
    ] {
        let (server, pane, out, _d) = pane_with_editor(editor);
        let o = send(&server, &pane, &[], "hello");
        assert_eq!(o.status.code(), Some(6), "{what}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("draft"),
            "{what}: {o:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(typed(&out), "", "{what}: nothing typed");
    }
}

#[test]
fn copy_mode_is_left_before_typing() {
    let (server, pane, out, _d) = pane_with_editor(&[""]);
    server.tmux(&["copy-mode", "-t", &pane]);
    let in_mode = || {
        server
            .tmux(&["display-message", "-p", "-t", &pane, "#{pane_in_mode}"])
            .trim()
            .to_string()
    };
    assert_eq!(in_mode(), "1");
    let o = send(&server, &pane, &[], "after copy mode\n/session");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(in_mode(), "0");
    let got = wait_for(5_000, || {
        let t = typed(&out);
        t.contains("/session").then_some(t)
    })
    .expect("typed");
    assert_eq!(got, "after copy mode\n/session\n");
}

#[test]
fn the_given_pi_must_run_in_that_pane() {
    let (server, pane, out, _d) = pane_with_editor(&[""]);
    let pane_pid = server
        .tmux(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .trim()
        .to_string();
    // Not that pane's process (this test is no descendant of it).
    let me = std::process::id().to_string();
    let o = send(&server, &pane, &["-p", &me], "hello");
    assert_eq!(o.status.code(), Some(7), "{o:?}");
    // The pane's process, but another start time: a reused pid.
    let o = send(&server, &pane, &["-p", &format!("{pane_pid}:1")], "hello");
    assert_eq!(o.status.code(), Some(7), "{o:?}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(typed(&out), "");
    let ticks = intercom_pane::seam::proc::identity(pane_pid.parse().unwrap())
        .unwrap()
        .start_ticks;
    let o = send(
        &server,
        &pane,
        &["-p", &format!("{pane_pid}:{ticks}")],
        "hello",
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}
