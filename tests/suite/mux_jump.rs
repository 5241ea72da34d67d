//! Taking the person to a pane, on a real tmux with a real attached client (an outer private
//! server whose pane runs `tmux attach`): the client that shows the caller's pane is switched to
//! the target's session, window and pane; anything not a plain pane id is refused unsent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::Path;

use intercom_pane::mux::tmux::Tmux;
use intercom_pane::mux::{ErrorCode, Multiplexer};
use mux_support::{soon, TmuxServer};

#[test]
fn the_client_showing_the_callers_pane_moves_to_the_target_in_another_session() {
    let inner = TmuxServer::start("side", Path::new("/"), &[]);
    let from = inner.client_pane_or_active("side");
    // A target in another session, in its second window, not that window's active pane.
    inner.new_session("work", Path::new("/"), &[]);
    inner.tmux(&["new-window", "-t", "=work:"]);
    let target = inner
        .tmux(&[
            "split-window",
            "-d",
            "-t",
            "=work:1",
            "-P",
            "-F",
            "#{pane_id}",
        ])
        .trim()
        .to_string();
    let _client = inner.attach_client("side", 100, 30);
    assert_eq!(inner.client_pane(), from);
    let t = Tmux::at_socket(&inner.sock);
    t.jump_to(&target, Some(&from), soon(5000)).unwrap();
    assert_eq!(inner.client_pane(), target);
    assert_eq!(
        inner
            .tmux(&["list-clients", "-F", "#{session_name}"])
            .trim(),
        "work"
    );
    // The caller's pane is no longer what any client shows: nothing to switch.
    let e = t.jump_to(&from, Some(&from), soon(5000)).unwrap_err();
    assert_eq!(e.code, ErrorCode::Failed, "{e:?}");
    assert_eq!(inner.client_pane(), target);
    // Only plain pane ids reach tmux.
    for bad in ["#{pane_id}", "%1;", "=side:", "%1 ", ""] {
        let e = t.jump_to(bad, Some(&target), soon(5000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{bad:?}");
        let e = t.jump_to(&from, Some(bad), soon(5000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{bad:?}");
    }
    assert!(t.jump_to(&from, None, soon(5000)).is_err());
    assert_eq!(inner.client_pane(), target);
}

#[test]
fn grow_to_takes_rows_from_the_neighbour_and_never_shrinks() {
    let s = TmuxServer::start("g", Path::new("/"), &[]);
    let top = s
        .tmux(&[
            "split-window",
            "-b",
            "-d",
            "-l",
            "3",
            "-t",
            "=g:",
            "-P",
            "-F",
            "#{pane_id}",
        ])
        .trim()
        .to_string();
    let t = Tmux::at_socket(&s.sock);
    assert!(t.grow_to(&top, 7, soon(5000)).unwrap());
    let h = |p: &str| s.tmux(&["display-message", "-p", "-t", p, "#{pane_height}"]);
    assert_eq!(h(&top).trim(), "7");
    assert!(!t.grow_to(&top, 5, soon(5000)).unwrap());
    assert_eq!(h(&top).trim(), "7");
    assert_eq!(
        t.grow_to("#{pane_id}", 7, soon(5000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
}
