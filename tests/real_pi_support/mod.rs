//! What every real-pi test needs: where pi is, when its editor is ready, and a first prompt
//! that is not lost. The tests using it are compiled as ignored (with the reason) unless
//! `build.rs` found pi and Node 22 in `INTERCOM_PANE_REAL_PI`.
#![allow(dead_code)]

use std::time::Duration;

use crate::mux_support::{wait_for, TmuxServer};

/// Wait until pi's editor is ready (its footer names the model), so typed input is not lost
/// while pi is still starting (it may try to fetch helper tools first).
pub fn wait_ready(server: &TmuxServer, target: &str) {
    wait_for(60_000, || {
        // The footer: context use, then the model at the line's end. The shell's echo of the
        // command line names the model too, so the model alone is not proof pi is drawing.
        let screen = server.tmux(&["capture-pane", "-p", "-t", target]);
        screen
            .lines()
            .any(|l| l.contains("/128k") && l.trim_end().ends_with("fake-model"))
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "pi never became ready:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", target])
        )
    });
    std::thread::sleep(Duration::from_millis(500));
}

/// Type a prompt into a pi that just started and submit it. pi may still be drawing its first
/// screen when it first looks ready, and keys sent then are lost: type, wait until the editor
/// shows the text (typing it again if it never appears), then Enter.
pub fn submit_first(server: &TmuxServer, target: &str, text: &str) {
    for _ in 0..5 {
        server.tmux(&["send-keys", "-t", target, "-l", text]);
        let shown = wait_for(5_000, || {
            server
                .tmux(&["capture-pane", "-p", "-t", target])
                .contains(text)
                .then_some(())
        });
        if shown.is_some() {
            server.tmux(&["send-keys", "-t", target, "Enter"]);
            return;
        }
    }
    panic!(
        "pi never showed the typed prompt:\n{}",
        server.tmux(&["capture-pane", "-p", "-t", target])
    );
}

/// The folder holding a real `pi` and `node` (22), from `INTERCOM_PANE_REAL_PI`. The tests that
/// call it are compiled as ignored (with the reason) unless `build.rs` found both there.
pub fn real_pi() -> std::path::PathBuf {
    let bin =
        std::path::PathBuf::from(std::env::var_os("INTERCOM_PANE_REAL_PI").unwrap_or_default());
    assert!(
        bin.join("pi").is_file() && bin.join("node").is_file(),
        "INTERCOM_PANE_REAL_PI={} holds no pi and node (it did when this test was built)",
        bin.display()
    );
    bin
}
