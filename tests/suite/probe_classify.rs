//! probe_one against real loopback servers, one behaviour each (docs/interop.md §5 classification).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::probe_common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use intercom_pane::seam::probe::probe_one;
use intercom_pane::seam::states::ConnState;
use probe_common::{closed_ports, healthy, http, Behaviour, Servers};

const SID: &str = "0b1d5c2e-6f7a-4b8c-9d0e-1f2a3b4c5d6e";
const DEADLINE: Duration = Duration::from_millis(750);

fn probe(port: u16, sid: &str) -> ((ConnState, &'static str), Duration) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = Instant::now();
    let v = rt.block_on(probe_one(port, sid, DEADLINE));
    (v, t.elapsed())
}

/// `probe_one` against servers on a paused clock (`Servers::paused`): the time taken is exact.
fn probe_paused(servers: &Servers, port: u16) -> ((ConnState, &'static str), Duration) {
    servers.block_on(async {
        let t = tokio::time::Instant::now();
        let v = probe_one(port, SID, DEADLINE).await;
        (v, t.elapsed())
    })
}

fn verdict(b: Behaviour) -> (ConnState, &'static str) {
    let servers = Servers::new();
    let s = servers.start(b, None);
    probe(s.port, SID).0
}

const UNKNOWN: ConnState = ConnState::Unknown;
const DISCONNECTED: ConnState = ConnState::Disconnected;

#[test]
fn correct_agent_is_verified_and_request_is_minimal() {
    let servers = Servers::new();
    let s = servers.start(healthy(SID), None);
    let (v, took) = probe(s.port, SID);
    assert_eq!(v, (ConnState::Connected, "verified"));
    // Well inside the 750 ms deadline (the margin is for a loaded CI machine).
    assert!(took < Duration::from_millis(600), "{took:?}");
    let req = s.last_request.lock().unwrap().clone();
    assert!(
        req.starts_with("GET /intercom/health HTTP/1.1\r\n"),
        "{req}"
    );
    assert!(
        req.contains(&format!("\r\nHost: 127.0.0.1:{}\r\n", s.port)),
        "{req}"
    );
    assert!(req.contains("\r\nConnection: close\r\n"), "{req}");
    assert_eq!(s.requests.load(Ordering::SeqCst), 1, "no retries");
}

#[test]
fn other_session_is_identity_mismatch() {
    assert_eq!(
        verdict(healthy("someone-else")),
        (DISCONNECTED, "identity_mismatch")
    );
}

#[test]
fn status_404_is_legacy() {
    let b = Behaviour::Respond(http("404 Not Found", "", "not found"));
    assert_eq!(verdict(b), (UNKNOWN, "legacy"));
}

#[test]
fn status_503_is_http_error() {
    let b = Behaviour::Respond(http(
        "503 Service Unavailable",
        "",
        r#"{"error":"health unavailable"}"#,
    ));
    assert_eq!(verdict(b), (UNKNOWN, "http_error"));
}

#[test]
fn redirect_is_http_error_and_never_followed() {
    let servers = Servers::new();
    let target = servers.start(healthy(SID), None);
    let location = format!(
        "Location: http://127.0.0.1:{}/intercom/health\r\n",
        target.port
    );
    let redirect = servers.start(Behaviour::Respond(http("302 Found", &location, "")), None);
    assert_eq!(probe(redirect.port, SID).0, (UNKNOWN, "http_error"));
    assert_eq!(redirect.requests.load(Ordering::SeqCst), 1);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        target.accepted.load(Ordering::SeqCst),
        0,
        "redirect was followed"
    );
}

#[test]
fn five_kib_header_is_oversize() {
    let header = format!("X-Padding: {}\r\n", "h".repeat(5 * 1024));
    let b = Behaviour::Respond(http("200 OK", &header, r#"{"version":1,"sessionId":"x"}"#));
    assert_eq!(verdict(b), (UNKNOWN, "oversize"));
}

#[test]
fn two_kib_body_is_oversize_with_or_without_length() {
    let body = format!(
        r#"{{"version":1,"sessionId":"{SID}","pad":"{}"}}"#,
        "b".repeat(2048)
    );
    assert_eq!(
        verdict(Behaviour::Respond(http("200 OK", "", &body))),
        (UNKNOWN, "oversize")
    );
    let to_eof = format!("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{body}");
    assert_eq!(
        verdict(Behaviour::Respond(to_eof.into_bytes())),
        (UNKNOWN, "oversize")
    );
}

#[test]
fn dripping_body_times_out_at_the_deadline() {
    let servers = Servers::paused();
    let body = format!(r#"{{"version":1,"sessionId":"{SID}"}}"#).into_bytes();
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
    let s = servers.start(
        Behaviour::Drip {
            head,
            body,
            every: Duration::from_millis(200),
        },
        None,
    );
    let (v, took) = probe_paused(&servers, s.port);
    assert_eq!(v, (DISCONNECTED, "timeout"));
    // At the whole-request deadline, although a byte arrives every 200 ms (the drip would take
    // over 6 s): on the paused clock, exactly then.
    assert!(
        took >= DEADLINE && took < DEADLINE + Duration::from_millis(10),
        "{took:?}"
    );
}

#[test]
fn silent_server_times_out() {
    let servers = Servers::paused();
    let s = servers.start(Behaviour::Silent, None);
    let (v, took) = probe_paused(&servers, s.port);
    assert_eq!(v, (DISCONNECTED, "timeout"));
    assert!(
        took >= DEADLINE && took < DEADLINE + Duration::from_millis(10),
        "{took:?}"
    );
}

/// A reset after accept is `network_error` (unknown), not `refused`: something did listen on the
/// port, so we cannot say the worker is gone. Only a refused connect is `refused`.
#[test]
fn reset_is_network_error() {
    assert_eq!(verdict(Behaviour::Reset), (UNKNOWN, "network_error"));
}

#[test]
fn close_without_answer_is_network_error() {
    assert_eq!(verdict(Behaviour::CloseAtOnce), (UNKNOWN, "network_error"));
}

#[test]
fn closed_port_is_refused_quickly() {
    let port = closed_ports(1)[0];
    let (v, took) = probe(port, SID);
    assert_eq!(v, (DISCONNECTED, "refused"));
    assert!(took < Duration::from_millis(400), "{took:?}");
}

#[test]
fn non_json_body_is_malformed() {
    let b = Behaviour::Respond(http("200 OK", "", "<html>hello</html>"));
    assert_eq!(verdict(b), (UNKNOWN, "malformed"));
}

#[test]
fn empty_object_is_malformed() {
    assert_eq!(
        verdict(Behaviour::Respond(http("200 OK", "", "{}"))),
        (UNKNOWN, "malformed")
    );
}

#[test]
fn version_2_is_unsupported() {
    let body = format!(r#"{{"version":2,"sessionId":"{SID}"}}"#);
    assert_eq!(
        verdict(Behaviour::Respond(http("200 OK", "", &body))),
        (UNKNOWN, "unsupported_version")
    );
}

#[test]
fn chunked_answer_is_decoded() {
    let body = format!(r#"{{"version":1,"sessionId":"{SID}"}}"#);
    let resp = format!(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    assert_eq!(
        verdict(Behaviour::Respond(resp.into_bytes())),
        (ConnState::Connected, "verified")
    );
}

#[test]
fn invalid_input_never_touches_the_network() {
    let servers = Servers::new();
    let s = servers.start(healthy(SID), None);
    assert_eq!(probe(0, SID).0, (UNKNOWN, "invalid_input"));
    assert_eq!(probe(s.port, "  ").0, (UNKNOWN, "invalid_input"));
    assert_eq!(probe(s.port, "a\u{1b}b").0, (UNKNOWN, "invalid_input"));
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(s.accepted.load(Ordering::SeqCst), 0);
}
