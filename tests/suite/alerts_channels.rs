//! Alerts go out once per channel, whichever boards run (docs/behaviour.md §3b): a watcher's
//! `--on-alert` runs even when a sidebar (which has no program of its own) alerted first; two
//! watchers with the same program run it once; two different programs each run; and the
//! tmux status count stays while any board runs. Real tmux on a private socket, a real
//! sidebar in a pane of it, real `watch` processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, lines_of, stop, wait_lines, Fleet};
use crate::mux_support::wait_for;

/// The outcome and channels the memory recorded for worker `i`'s newest handled turn.
fn newest_turn(f: &Fleet, i: usize) -> Option<serde_json::Value> {
    let m = f.memory();
    m["seats"][&f.workers[i].id]["turns"]
        .as_array()?
        .last()
        .cloned()
}

/// How many `--on-alert` programs' channels a claim list names (`watch`'s output is one more).
fn programs(channels: &serde_json::Value) -> usize {
    channels
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_str().unwrap().starts_with("on_alert:"))
        .count()
}

/// Wait until the sidebar has seen worker `i` (its memory knows the seat).
fn sidebar_knows(f: &Fleet, i: usize) {
    wait_for(30_000, || {
        f.memory()["seats"]
            .get(&f.workers[i].id)
            .is_some()
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the sidebar never recorded its seat: {}\n{}",
            f.memory(),
            f.server.tmux(&["capture-pane", "-p", "-t", "=mon:"])
        )
    });
}

#[test]
fn a_watchers_program_runs_once_per_alert_while_a_sidebar_runs() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].user("start");
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    let sidebar = f.sidebar_pid();
    sidebar_knows(&f, 0);
    // The sidebar alerts first, alone: it has no program, so it sends on no channel.
    f.workers[0].ask("staging or production?");
    let turn = wait_for(30_000, || {
        newest_turn(&f, 0).filter(|t| t["outcome"] == "alerted")
    })
    .unwrap_or_else(|| panic!("the sidebar did not alert: {}", f.memory()));
    assert!(turn.get("channels").is_none(), "{turn}");
    // A watcher started now still runs its program for that alert, once.
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["seat"], "Builder");
    assert_eq!(l[0]["text"], "staging or production?\nDetails follow.");
    f.mark(1, "mark 1", &[w.id()]);
    assert_eq!(lines_of(&out, "Builder").len(), 1, "{:?}", lines(&out));
    let sent: Vec<_> = f
        .events("alert", Some(w.id()))
        .into_iter()
        .filter(|e| e["seat"] == "Builder")
        .collect();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["outcome"], "already_handled");
    assert_eq!(programs(&sent[0]["channels"]), 1, "{}", sent[0]);
    // Both running from before the next question: the program runs once for it too, whoever
    // decided first.
    f.workers[0].user("go");
    // Builder working (the marker still waits): the boards saw the turn end.
    wait_for(10_000, || (status(&f) == "⚑1").then_some(()))
        .unwrap_or_else(|| panic!("status {:?}", status(&f)));
    f.workers[0].ask("and the region?");
    let l = wait_for(60_000, || {
        let l = lines_of(&out, "Builder");
        (l.len() >= 2).then_some(l)
    })
    .unwrap_or_else(|| panic!("no second line: {:?}", lines(&out)));
    assert!(l[1]["text"]
        .as_str()
        .unwrap()
        .starts_with("and the region?"));
    f.mark(1, "mark 2", &[w.id()]);
    assert_eq!(lines_of(&out, "Builder").len(), 2, "{:?}", lines(&out));
    assert!(
        !f.events("alert", Some(sidebar)).is_empty(),
        "the sidebar ran its alerts"
    );
    assert_eq!(stop(&mut w).code(), Some(0));
    f.server.tmux(&["kill-session", "-t", "=mon"]);
}

#[test]
fn the_same_program_runs_once_and_different_programs_each_once() {
    let mut f = Fleet::new(&["Builder", "Docs", "Marker"]);
    f.workers[0].user("start");
    f.workers[1].user("start");
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    sidebar_knows(&f, 0);
    let (one, two) = (f.path("one.jsonl"), f.path("two.jsonl"));
    // Two watchers with the same program (same argv: one channel), one with another.
    let mut ws = vec![
        f.watch(&["--settle-secs", "0"], &one),
        f.watch(&["--settle-secs", "0"], &one),
        f.watch(&["--settle-secs", "0"], &two),
    ];
    for w in &ws {
        f.watching(w.id());
    }
    f.workers[0].ask("first?");
    f.workers[1].fail("provider said no");
    for out in [&one, &two] {
        wait_lines(out, 2);
    }
    let pids: Vec<u32> = ws.iter().map(|w| w.id()).collect();
    f.mark(2, "mark", &pids);
    for out in [&one, &two] {
        let l: Vec<_> = lines(out)
            .into_iter()
            .filter(|v| v["seat"] != "Marker")
            .collect();
        assert_eq!(l.len(), 2, "{}: {l:?}", out.display());
        let mut seats: Vec<&str> = l.iter().map(|v| v["seat"].as_str().unwrap()).collect();
        seats.sort();
        assert_eq!(seats, ["Builder", "Docs"]);
    }
    // Each alerted turn names the two programs' channels, once each.
    for i in 0..2 {
        let t = newest_turn(&f, i).unwrap();
        assert_eq!(t["outcome"], "alerted", "{t}");
        assert_eq!(programs(&t["channels"]), 2, "{t}");
    }
    for w in &mut ws {
        assert_eq!(stop(w).code(), Some(0));
    }
    f.server.tmux(&["kill-session", "-t", "=mon"]);
}

fn status(f: &Fleet) -> String {
    f.server
        .tmux(&["show-options", "-gv", "@intercom_pane_status"])
        .trim()
        .to_string()
}

#[test]
fn the_status_count_stays_while_any_board_runs() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut a = f.watch(&["--settle-secs", "0"], &out);
    let mut b = f.watch(&["--settle-secs", "0"], &out);
    f.watching(a.id());
    f.watching(b.id());
    f.workers[0].ask("ready?");
    wait_lines(&out, 1);
    wait_for(10_000, || (status(&f) == "⚑1").then_some(()))
        .unwrap_or_else(|| panic!("status {:?}", status(&f)));
    // One of the two quits: the other still keeps the count, so it stays.
    assert_eq!(stop(&mut a).code(), Some(0));
    f.mark(1, "mark", &[b.id()]);
    wait_for(10_000, || (status(&f) == "⚑2").then_some(()))
        .unwrap_or_else(|| panic!("status {:?}", status(&f)));
    f.workers[1].user("answered");
    // A sidebar joins, then the watcher quits: the sidebar keeps it.
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    let sidebar = f.sidebar_pid();
    wait_for(30_000, || {
        (!f.events("alert_status_set", Some(sidebar)).is_empty()
            || f.path("data/alerts/boards")
                .join(format!("{sidebar}.lock"))
                .exists())
        .then_some(())
    })
    .expect("the sidebar keeps the count");
    wait_for(10_000, || (status(&f) == "⚑1").then_some(()))
        .unwrap_or_else(|| panic!("status {:?}", status(&f)));
    assert_eq!(stop(&mut b).code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(status(&f), "⚑1");
    // The last board leaves: nobody keeps the count current, so it is cleared.
    f.server.tmux(&["send-keys", "-t", "=mon:", "q"]);
    wait_for(15_000, || status(&f).is_empty().then_some(()))
        .unwrap_or_else(|| panic!("status left set: {:?}", status(&f)));
}

/// A recording stand-in for `notify-send` in `dir`: `--help` names `--action` and `--wait` (as
/// libnotify 0.7.10 and later do); each call's argv goes to `dir/call.N` (NUL between words);
/// a call with `--wait` then reports a click on Jump (prints `jump`) once `dir/go.N` exists,
/// as a person clicking would (bounded: 30 s, then it ends as a closed notification).
fn stand_in_notify_send(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let d = dir.display();
    let script = format!(
        r#"#!/bin/sh
case "$1" in --help) printf '  --action=[NAME=]Text\n  -w, --wait\n'; exit 0;; esac
n=$(ls "{d}" | grep -c '^call\.')
printf '%s\0' "$@" > "{d}/call.$n.tmp" && mv "{d}/call.$n.tmp" "{d}/call.$n"
case " $* " in *" --wait "*) ;; *) exit 0;; esac
i=0
while [ ! -e "{d}/go.$n" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
[ -e "{d}/go.$n" ] && echo jump
exit 0
"#
    );
    let p = dir.join("notify-send");
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The stand-in's call `n`, its words.
fn call(dir: &std::path::Path, n: usize) -> Vec<String> {
    let p = dir.join(format!("call.{n}"));
    wait_for(60_000, || std::fs::read(&p).ok())
        .unwrap_or_else(|| panic!("no notify-send call {n}"))
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8(w.to_vec()).unwrap())
        .collect()
}

#[test]
fn a_click_on_the_desktop_notification_jumps_to_the_seat_it_alerted_from() {
    let mut f = Fleet::new(&["Builder", "Docs"]);
    let notify = f.path("notify");
    std::fs::create_dir_all(&notify).unwrap();
    stand_in_notify_send(&notify);
    // The person's client shows another session.
    let mut outer = f.attach(1);
    f.workers[0].user("start");
    let mut args = vec!["watch".to_string()];
    args.extend(f.flags());
    args.extend([
        "--settle-secs".into(),
        "0".into(),
        "--desktop-jump-secs".into(),
        "60".into(),
    ]);
    let mut w = f
        .command(&args)
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", notify.display()),
        )
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    f.watching(w.id());
    let marker = f.path("ran");
    f.workers[0].ask(&format!("<b>bold</b> & $(touch {}) ok?", marker.display()));
    let words = call(&notify, 0);
    let at = words.iter().position(|w| w == "--").unwrap();
    assert_eq!(
        words[..at],
        [
            "--app-name=intercom-pane",
            "--action=jump=Jump",
            "--wait",
            "--expire-time=60000"
        ]
    );
    let (title, body) = (&words[at + 1], &words[at + 2]);
    assert!(
        title.starts_with("intercom-pane: Builder is waiting for you: <b>bold</b>"),
        "{title}"
    );
    assert!(
        body.starts_with("&lt;b&gt;bold&lt;/b&gt; &amp; $(touch"),
        "{body}"
    );
    assert_eq!(f.server.client_pane(), f.pane(1));
    // The person clicks Jump: the client now shows Builder's pane.
    std::fs::write(notify.join("go.0"), b"").unwrap();
    let builder = f.pane(0);
    wait_for(30_000, || (f.server.client_pane() == builder).then_some(())).unwrap_or_else(|| {
        panic!(
            "the client shows {}: {:?}",
            f.server.client_pane(),
            f.events("alert_desktop_jump", None)
        )
    });
    let jumped = wait_for(30_000, || {
        Some(f.events("alert_desktop_jump", Some(w.id()))).filter(|e| !e.is_empty())
    })
    .expect("the jump's end is logged");
    assert_eq!(jumped.len(), 1, "{jumped:?}");
    assert_eq!(jumped[0]["detail"], "moved");
    assert!(!marker.exists(), "the question's text ran");

    // A second question; before the click, Builder's pane is replaced (a new pane, the same
    // name): the click refuses and nobody moves.
    f.server
        .tmux(&["switch-client", "-t", &format!("={}", f.workers[1].name)]);
    f.workers[0].user("go on");
    // The watcher saw the turn end: its count is gone from the status line.
    wait_for(10_000, || {
        f.server
            .tmux(&["show-options", "-gv", "@intercom_pane_status"])
            .trim()
            .is_empty()
            .then_some(())
    })
    .expect("the status count clears");
    f.workers[0].ask("second?");
    call(&notify, 1);
    let pi = f.path("bin/pi").display().to_string();
    f.server.tmux(&["kill-session", "-t", "=Builder"]);
    f.server
        .new_session("Builder", &f.path("root"), &[&pi, "600"]);
    wait_for(10_000, || {
        (f.pane(0) != builder && !f.pane(0).is_empty()).then_some(())
    })
    .expect("a new pane");
    std::fs::write(notify.join("go.1"), b"").unwrap();
    let refused = wait_for(30_000, || {
        let e = f.events("alert_desktop_jump", Some(w.id()));
        (e.len() >= 2).then_some(e)
    })
    .expect("the second click ran nothing");
    let detail = refused[1]["detail"].as_str().unwrap();
    assert!(detail.starts_with("exit Some(4)"), "{detail}");
    assert_eq!(f.server.client_pane(), f.pane(1));
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
}

/// One request the loopback server received.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    path: String,
    /// Lower-case names.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A loopback HTTP server (127.0.0.1 only) that answers 200 to everything and records each
/// request; it stops when dropped.
struct Recorder {
    port: u16,
    got: std::sync::Arc<std::sync::Mutex<Vec<Request>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Recorder {
    fn start() -> Recorder {
        use std::sync::atomic::Ordering;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let port = l.local_addr().unwrap().port();
        let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (g, s) = (got.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((c, _)) => {
                        if let Some(r) = Recorder::serve(c) {
                            g.lock().unwrap().push(r);
                        }
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
        });
        Recorder { port, got, stop }
    }

    /// Read one request (bounded: 64 KiB, 5 s), answer 200.
    fn serve(mut c: std::net::TcpStream) -> Option<Request> {
        use std::io::{Read, Write};
        c.set_nonblocking(false).ok()?;
        c.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .ok()?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let n = c.read(&mut chunk).ok()?;
            if n == 0 || buf.len() > 64 * 1024 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0)
            .min(64 * 1024);
        if headers
            .iter()
            .any(|(n, v)| n == "expect" && v.eq_ignore_ascii_case("100-continue"))
        {
            c.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").ok()?;
        }
        let mut body = buf[head_end..].to_vec();
        while body.len() < len {
            let n = c.read(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .ok()?;
        Some(Request {
            method,
            path,
            headers,
            body,
        })
    }

    fn at(&self, path: &str) -> Vec<Request> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.path == path)
            .cloned()
            .collect()
    }

    fn wait(&self, path: &str, n: usize) -> Vec<Request> {
        wait_for(60_000, || Some(self.at(path)).filter(|r| r.len() >= n))
            .unwrap_or_else(|| panic!("no {n} requests to {path}: {:?}", self.got.lock().unwrap()))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The posts about the seat `@secret` (the webhook's JSON, or ntfy's title).
fn about_secret(got: &[Request]) -> usize {
    got.iter()
        .filter(|r| {
            r.header("title") == Some("@secret")
                || serde_json::from_slice::<serde_json::Value>(&r.body)
                    .is_ok_and(|v| v["seat"] == "@secret")
        })
        .count()
}

/// The recipes of docs/behaviour.md §3b "Webhooks and ntfy", word for word but the address:
/// the alert's JSON line posted as it is, and an ntfy-style message made from the alert's
/// variables (quoted, so a seat named `@secret` or a question with `$(…)` stays data: curl's
/// `--data-raw` never reads a file).
#[test]
#[cfg_attr(not(has_curl), ignore = "needs curl on PATH when the tests are built")]
fn the_webhook_and_ntfy_recipes_post_once_per_alert() {
    let mut f = Fleet::new(&["@secret", "Marker"]);
    std::fs::write(f.path("secret"), b"LEAKED").unwrap();
    let http = Recorder::start();
    let base = format!("http://127.0.0.1:{}", http.port);
    f.workers[0].user("start");
    let hook = format!("{base}/hook");
    let mut webhook = f.watch_with(
        &["--settle-secs", "0"],
        &[
            "curl",
            "-fsS",
            "--max-time",
            "8",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            "@-",
            &hook,
        ],
    );
    let topic = format!("{base}/topic");
    let mut ntfy = f.watch_with(
        &["--settle-secs", "0"],
        &[
            "sh",
            "-c",
            r#"exec curl -fsS --max-time 8 -H "Title: $INTERCOM_PANE_ALERT_SEAT" -H "Tags: warning" --data-raw "$INTERCOM_PANE_ALERT_HEADLINE" "$0""#,
            &topic,
        ],
    );
    f.watching(webhook.id());
    f.watching(ntfy.id());
    let marker = f.path("ran");
    let question = format!("deploy \"$(touch {})\" `id` now?", marker.display());
    f.workers[0].ask(&question);
    let posted = http.wait("/hook", 1);
    let told = http.wait("/topic", 1);
    // A later change both decided about: nothing more was posted for this one.
    f.mark(1, "mark 1", &[webhook.id(), ntfy.id()]);
    http.wait("/hook", 2);
    http.wait("/topic", 2);
    assert_eq!(about_secret(&http.at("/hook")), 1);
    assert_eq!(about_secret(&http.at("/topic")), 1);
    let r = &posted[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["event"], "alert");
    assert_eq!(v["seat"], "@secret");
    assert_eq!(v["state"], "waiting");
    assert_eq!(v["text"], format!("{question}\nDetails follow."));
    let r = &told[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.header("title"), Some("@secret"));
    assert_eq!(r.header("tags"), Some("warning"));
    assert_eq!(
        String::from_utf8_lossy(&r.body),
        format!("@secret is waiting for you: {question} Details follow.")
    );
    assert!(!marker.exists(), "the question ran as a command");
    // Another alert: one more of each.
    f.workers[0].user("go on");
    f.workers[0].fail("provider said no");
    http.wait("/hook", 3);
    let told = http.wait("/topic", 3);
    f.mark(1, "mark 2", &[webhook.id(), ntfy.id()]);
    http.wait("/hook", 4);
    http.wait("/topic", 4);
    assert_eq!(about_secret(&http.at("/hook")), 2);
    assert_eq!(about_secret(&http.at("/topic")), 2);
    assert_eq!(
        String::from_utf8_lossy(&told[2].body),
        "@secret stopped on an error: provider said no"
    );
    for r in http.got.lock().unwrap().iter() {
        assert!(
            !String::from_utf8_lossy(&r.body).contains("LEAKED"),
            "{r:?}"
        );
    }
    assert_eq!(stop(&mut webhook).code(), Some(0));
    assert_eq!(stop(&mut ntfy).code(), Some(0));
}
