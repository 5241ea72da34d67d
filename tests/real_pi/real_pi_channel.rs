//! The pi extension's reply channel holds to the reply text rules and to its own limits:
//! - its `checkText`, run by Node 22 straight from `linux/pi-extension/intercom-pane.ts`, gives
//!   every case of the shared table (tests/fixtures/reply_text_cases.json) its verdict and agrees
//!   with `check_text` on every character up to U+2FFFF, alone, doubled and beside text;
//! - loaded in a real pi 1.6.0, its channel refuses what the rules refuse (the 60,014-character
//!   text, zero-width spaces only, a control) with nothing reaching pi's session; 4,000
//!   half-written connections are not held (pi's open descriptors stay bounded), a connection
//!   that trickles its request is closed by the request deadline, an oversized line at once, and
//!   afterwards a reply still arrives.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (a folder holding `pi` and `node` 22).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::real_pi_reply::{body, Seat};
use crate::real_pi_support::{real_pi, run_node_script, SERIAL};
use crate::text_cases::{cases, rust_verdict};

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const EXTENSION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/linux/pi-extension/intercom-pane.ts"
);

/// The extension's `checkText` verdict for each text, from Node 22 running the module itself.
fn node_verdicts(texts: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("texts.json");
    std::fs::write(&input, serde_json::to_vec(texts).unwrap()).unwrap();
    let script = format!(
        "const m = await import({ext});\n\
         const fs = await import('node:fs');\n\
         const texts = JSON.parse(fs.readFileSync({inp}, 'utf8'));\n\
         fs.writeFileSync({out}, JSON.stringify(texts.map((t) => m.checkText(t).verdict)));",
        ext = json!(format!("file://{EXTENSION}")),
        inp = json!(input),
        out = json!(dir.path().join("verdicts.json")),
    );
    run_node_script(&script);
    serde_json::from_slice(&std::fs::read(dir.path().join("verdicts.json")).unwrap()).unwrap()
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_extensions_text_rules_agree_with_check_text() {
    let table = cases();
    let texts: Vec<String> = table.iter().map(|c| c.text.clone()).collect();
    for (c, got) in table.iter().zip(node_verdicts(&texts)) {
        assert_eq!(got, c.verdict, "the extension on {}", c.what);
    }
    // Every character up to U+2FFFF (surrogates cannot be text), three ways.
    let mut texts = Vec::new();
    for c in (0u32..0x30000).filter_map(char::from_u32) {
        texts.push(format!("{c}"));
        texts.push(format!("{c}{c}"));
        texts.push(format!("x{c}y"));
    }
    let got = node_verdicts(&texts);
    let mut differ = Vec::new();
    for (t, v) in texts.iter().zip(&got) {
        if rust_verdict(t) != v {
            differ.push(format!("{t:?}: rust {} extension {v}", rust_verdict(t)));
        }
    }
    assert!(
        differ.is_empty(),
        "{} differ: {:?}",
        differ.len(),
        &differ[..differ.len().min(20)]
    );
}

/// The seat's channel socket and pi's pid, from its registration.
fn channel_of(seat: &Seat) -> (PathBuf, i32) {
    let w = seat.record();
    let path = w["registered"]["path"].as_str().unwrap().to_string();
    let reg: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    (
        PathBuf::from(reg["channel"].as_str().expect("a channel")),
        reg["pid"].as_i64().unwrap() as i32,
    )
}

/// One raw request; the extension's answer.
fn request(sock: &Path, text: &str) -> Value {
    let mut s = UnixStream::connect(sock).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let line = json!({"v": 1, "id": "t", "text": text}).to_string() + "\n";
    // The extension may close at once on a line over its cap: a failed write is an answer too.
    let _ = s.write_all(line.as_bytes());
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    serde_json::from_str(out.trim()).unwrap_or(Value::Null)
}

fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Wait until the server closed `s` (a read returns 0 or an error), or the deadline.
fn closed_within(s: &UnixStream, ms: u64) -> Option<Duration> {
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(ms))).unwrap();
    let mut b = [0u8; 64];
    let mut r = s;
    match r.read(&mut b) {
        Ok(0) => Some(start.elapsed()),
        Ok(_) => Some(start.elapsed()),
        Err(e)
            if e.kind() == std::io::ErrorKind::WouldBlock
                || e.kind() == std::io::ErrorKind::TimedOut =>
        {
            None
        }
        Err(_) => Some(start.elapsed()),
    }
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_channel_in_real_pi_refuses_what_the_rules_refuse_and_holds_no_flood() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let seat = Seat::start(&bin, true);
    seat.wait_idle();
    let (sock, pid) = channel_of(&seat);
    let before = seat.user_messages();

    // 1. Every refused case of the table, sent straight to the channel: failed, nothing in pi.
    for c in cases().iter().filter(|c| c.verdict != "ok") {
        let a = request(&sock, &c.text);
        if c.text.len() > 30_000 {
            // Over the line cap (the 60,014-character text): closed, or refused by the rules.
            assert!(a.is_null() || a["outcome"] == "failed", "{}: {a}", c.what);
        } else {
            assert_eq!(a["outcome"], "failed", "{}: {a}", c.what);
            assert!(
                a["detail"].as_str().unwrap().contains("refused"),
                "{}: {a}",
                c.what
            );
        }
    }
    // The 60,014-character text of the issue, under the line cap when sent without escaping
    // overhead would still be refused by length: a 20,000-character one shows it.
    let a = request(&sock, &"A".repeat(20_000));
    assert_eq!(a["outcome"], "failed", "{a}");
    assert!(
        a["detail"].as_str().unwrap().contains("20000 characters"),
        "{a}"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(seat.user_messages(), before, "nothing refused reached pi");

    // 2. 4,000 half-written connections: pi holds at most its cap of them.
    let base_fds = open_fds(pid);
    let mut flood = Vec::new();
    for _ in 0..4000 {
        match UnixStream::connect(&sock) {
            Ok(mut s) => {
                let _ = s.write_all(b"{\"v\":1,\"te");
                flood.push(s);
            }
            Err(_) => break,
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let held = open_fds(pid).saturating_sub(base_fds);
    eprintln!("4000 half-written connections: pi holds {held} more descriptors");
    assert!(
        held <= 24,
        "pi holds {held} more descriptors during the flood"
    );
    let still_open = flood
        .iter()
        .filter(|s| closed_within(s, 1).is_none())
        .count();
    eprintln!("{still_open} of 4000 half-written connections still open after 1.5 s");
    assert!(
        still_open <= 16,
        "{still_open} of 4000 half-written connections held"
    );
    // The held ones are closed by the request deadline (5 s), not kept.
    std::thread::sleep(Duration::from_secs(5));
    let still_open = flood
        .iter()
        .filter(|s| closed_within(s, 1).is_none())
        .count();
    assert_eq!(
        still_open, 0,
        "half-written connections outlive the request deadline"
    );
    drop(flood);

    // 3. A request trickled one byte every 400 ms is closed by the request deadline.
    let mut slow = UnixStream::connect(&sock).unwrap();
    let start = Instant::now();
    let mut closed = false;
    while start.elapsed() < Duration::from_secs(12) {
        if slow.write_all(b" ").is_err() || closed_within(&slow, 400).is_some() {
            closed = true;
            break;
        }
    }
    assert!(closed, "a trickling request is held past its deadline");
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );

    // 4. A line over the cap is closed at once, before any newline.
    let mut big = UnixStream::connect(&sock).unwrap();
    let _ = big.write_all(&vec![b'x'; 40 * 1024]);
    assert!(
        closed_within(&big, 3000).is_some(),
        "an oversized line is held"
    );

    // 5. The channel still works: a reply through intercom-pane arrives once, exactly as typed.
    assert!(seat.runs_pi());
    let (code, receipt, err) = seat.reply("After the flood");
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], "channel", "{receipt}");
    let mut expected = before.clone();
    expected.push(body("After the flood"));
    assert_eq!(seat.wait_messages(expected.len()), expected);
    seat.server
        .tmux(&["send-keys", "-t", crate::real_pi_reply::PANE, "C-d"]);
}

/// A pi whose tmux server is killed (SIGHUP: pi exits through its own handler, with no
/// session_shutdown for its extension) leaves no channel folder behind.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_killed_tmux_server_leaves_no_channel_folder() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let seat = Seat::start(&bin, true);
    seat.wait_idle();
    let (sock, pid) = channel_of(&seat);
    let folder = sock.parent().unwrap().to_path_buf();
    assert!(folder.is_dir(), "{folder:?}");
    seat.server.tmux(&["kill-server"]);
    let end = Instant::now() + Duration::from_secs(15);
    while (folder.exists() || Path::new(&format!("/proc/{pid}")).exists()) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pi {pid} still runs"
    );
    assert!(!folder.exists(), "{folder:?} left behind");
}
