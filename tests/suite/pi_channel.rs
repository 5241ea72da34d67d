//! The client side of pi's reply channel (`mux::pi_channel`) against real Unix sockets held by
//! this test process (standing in for the registered pi): what the listener answers is reported
//! as it is; silence or garbage is `unconfirmed`, never a resend; nothing is written to a socket
//! in a folder others can enter, or held by another process than the registered pi.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use intercom_pane::seam::mux::pi_channel::{send, Outcome};
use serde_json::{json, Value};

/// A listener that reads one request per connection, reports it, and answers with `reply(id)`
/// (or nothing when it returns `None`).
fn listener(
    reply: impl Fn(&str) -> Option<String> + Send + 'static,
) -> (tempfile::TempDir, PathBuf, mpsc::Receiver<Value>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = dir.path().join("reply.sock");
    let l = UnixListener::bind(&path).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut line = String::new();
            let mut r = BufReader::new(s.try_clone().unwrap());
            if r.read_line(&mut line).is_err() || line.is_empty() {
                continue;
            }
            let req: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            let id = req["id"].as_str().unwrap_or("").to_string();
            let _ = tx.send(req);
            match reply(&id) {
                Some(a) => {
                    let mut w = s;
                    let _ = w.write_all(format!("{a}\n").as_bytes());
                }
                // Hold the connection open, silent, until the client gives up.
                None => std::thread::sleep(Duration::from_secs(3)),
            }
        }
    });
    (dir, path, rx)
}

fn me() -> i32 {
    std::process::id() as i32
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

#[test]
fn the_listeners_answer_is_the_outcome() {
    for (said, want) in [
        ("delivered", Outcome::Delivered),
        ("queued", Outcome::Queued),
        ("failed", Outcome::Failed),
        ("unconfirmed", Outcome::Unconfirmed),
    ] {
        let (_d, path, rx) = listener(move |id| {
            Some(json!({"v": 1, "id": id, "outcome": said, "detail": "pi said so"}).to_string())
        });
        let text = "multi\nline 'q' $(x) é";
        let a = send(&path, me(), text, soon(3000)).unwrap();
        assert_eq!(a.outcome, want);
        assert_eq!(a.detail, "pi said so");
        let req = rx.recv_timeout(Duration::from_secs(1)).unwrap();
        assert_eq!(req["text"], text, "the text travels as it is");
        assert!(req.get("trailer").is_none(), "nothing beside it");
        assert_eq!(req["v"], 1);
        assert!(
            rx.try_recv().is_err(),
            "{said}: sent exactly once, never again"
        );
    }
}

#[test]
fn silence_or_garbage_is_unconfirmed_and_never_resent() {
    let (_d, path, rx) = listener(|_| None);
    let deadline = soon(800);
    let a = send(&path, me(), "hello", deadline).unwrap();
    let returned = Instant::now();
    // Silence until the deadline: unconfirmed, returned within the promised overrun.
    assert_eq!(a.outcome, Outcome::Unconfirmed);
    assert!(returned >= deadline, "gave up before the deadline");
    assert!(
        returned < deadline + intercom_pane::seam::mux::DEADLINE_OVERRUN,
        "{:?} past the deadline",
        returned - deadline
    );
    assert!(rx.recv_timeout(Duration::from_secs(1)).is_ok());
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "not resent"
    );

    let (_d, path, _rx) = listener(|_| Some("not json".into()));
    assert_eq!(
        send(&path, me(), "hello", soon(2000)).unwrap().outcome,
        Outcome::Unconfirmed
    );
    let (_d, path, _rx) =
        listener(|_| Some(json!({"v": 1, "id": "other", "outcome": "delivered"}).to_string()));
    assert_eq!(
        send(&path, me(), "hello", soon(2000)).unwrap().outcome,
        Outcome::Unconfirmed
    );
}

#[test]
fn nothing_is_written_to_a_socket_that_is_not_the_registered_pis_own() {
    // Held by this process, but the registration names another pid.
    let (_d, path, rx) =
        listener(|id| Some(json!({"v": 1, "id": id, "outcome": "delivered"}).to_string()));
    let e = send(&path, 1, "hello", soon(2000)).unwrap_err();
    assert!(e.0.contains("not the registered pi"), "{e:?}");
    // A folder others can enter.
    std::fs::set_permissions(
        path.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let e = send(&path, me(), "hello", soon(2000)).unwrap_err();
    assert!(e.0.contains("private"), "{e:?}");
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "nothing was written"
    );
    // Gone: nothing listens.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let e = send(&dir.path().join("reply.sock"), me(), "hello", soon(2000)).unwrap_err();
    assert!(e.0.contains("not listening"), "{e:?}");
}
