//! The socket wire: connect under a deadline, one newline-terminated reply line (capped), and
//! the mapping of Herdr's replies and error codes to `MuxError`.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::fsguard;
use crate::mux::{ErrorCode, MuxError};

use nix::errno::Errno;
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, UnixAddr};

/// One request on its own connection: connect, write the line, read and check one reply line,
/// all under `deadline`.
pub(super) fn exchange(
    socket: &Path,
    line: &[u8],
    id: &str,
    deadline: Instant,
) -> Result<Value, MuxError> {
    let mut stream = connect(socket, deadline)?;
    stream
        .set_write_timeout(Some(remaining(deadline)?))
        .map_err(|e| io_error(&e))?;
    stream.write_all(line).map_err(|e| io_error(&e))?;
    let reply = read_line(&mut stream, deadline)?;
    parse_reply(&reply, id)
}

/// Cap on one reply line (a snapshot of a large session stays far below).
const REPLY_CAP: usize = 8 << 20;

pub(super) fn err(code: ErrorCode, detail: impl AsRef<str>) -> MuxError {
    MuxError::new(code, detail)
}

pub(super) fn bad(detail: &str) -> MuxError {
    err(ErrorCode::BadReply, detail)
}

fn remaining(deadline: Instant) -> Result<Duration, MuxError> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(err(ErrorCode::Timeout, "herdr did not answer in time"))
    } else {
        Ok(left)
    }
}

fn io_error(e: &std::io::Error) -> MuxError {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => {
            err(ErrorCode::Timeout, "herdr did not answer in time")
        }
        _ => err(ErrorCode::Failed, e.kind().to_string()),
    }
}

/// Connect to a Unix socket without waiting past `deadline` (std's connect has no timeout).
/// Also the pi reply channel's connect (`mux::pi_channel`), which maps the codes to its own words.
pub(in crate::mux) fn connect(path: &Path, deadline: Instant) -> Result<UnixStream, MuxError> {
    match fsguard::kind(path) {
        Ok(fsguard::Kind::Socket) => {}
        Ok(_) => {
            return Err(err(
                ErrorCode::NoServer,
                "herdr socket path is not a socket",
            ))
        }
        Err(e) => return Err(err(ErrorCode::NoServer, e.code())),
    }
    let addr =
        UnixAddr::new(path).map_err(|_| err(ErrorCode::BadRequest, "socket path too long"))?;
    let fd = socket::socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| err(ErrorCode::Failed, format!("socket() failed: {}", e.desc())))?;
    // Non-blocking so a full listen backlog cannot hold us past the deadline: EAGAIN is retried
    // after a short sleep until the deadline (each attempt sleeps, so the count is bounded).
    loop {
        match socket::connect(fd.as_raw_fd(), &addr) {
            Ok(()) | Err(Errno::EISCONN) => break,
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN | Errno::EINPROGRESS | Errno::EALREADY) => {
                let left = remaining(deadline)?;
                std::thread::sleep(left.min(Duration::from_millis(5)));
            }
            Err(Errno::ENOENT | Errno::ECONNREFUSED) => {
                return Err(err(ErrorCode::NoServer, "no herdr server on socket"))
            }
            Err(e) => return Err(err(ErrorCode::NoServer, e.desc())),
        }
        remaining(deadline)?;
    }
    let stream = UnixStream::from(fd);
    stream.set_nonblocking(false).map_err(|e| io_error(&e))?;
    Ok(stream)
}

pub(in crate::mux) fn read_line(
    stream: &mut UnixStream,
    deadline: Instant,
) -> Result<Vec<u8>, MuxError> {
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    // Bounded by the reply cap and the deadline (each read waits at most the time left).
    loop {
        stream
            .set_read_timeout(Some(remaining(deadline)?))
            .map_err(|e| io_error(&e))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or(&[]);
                if let Some(pos) = chunk.iter().position(|&b| b == b'\n') {
                    out.extend_from_slice(chunk.get(..pos).unwrap_or(&[]));
                    return Ok(out);
                }
                out.extend_from_slice(chunk);
                if out.len() > REPLY_CAP {
                    return Err(bad("reply over cap"));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(&e)),
        }
    }
    if out.is_empty() {
        Err(bad("connection closed without a reply"))
    } else {
        Ok(out)
    }
}

/// Check a reply line against the request id; map error replies to fixed codes.
pub(super) fn parse_reply(line: &[u8], id: &str) -> Result<Value, MuxError> {
    let v: Value = serde_json::from_slice(line).map_err(|_| bad("reply is not JSON"))?;
    let reply_id = v.get("id").and_then(Value::as_str);
    if let Some(e) = v.get("error") {
        let code = e.get("code").and_then(Value::as_str).unwrap_or("");
        let message = e.get("message").and_then(Value::as_str).unwrap_or("");
        let detail = format!("herdr {code}: {message}");
        // An empty id means Herdr could not parse our request at all.
        if reply_id == Some("") {
            return Err(err(ErrorCode::BadRequest, detail));
        }
        if reply_id != Some(id) {
            return Err(bad("reply for another request"));
        }
        return Err(match code {
            "pane_not_found" => err(ErrorCode::PaneNotFound, detail),
            "agent_blocked" => err(ErrorCode::AgentBlocked, detail),
            _ => err(ErrorCode::Failed, detail),
        });
    }
    if reply_id != Some(id) {
        return Err(bad("reply for another request"));
    }
    match v.get("result") {
        Some(r) if r.is_object() => Ok(r.clone()),
        _ => Err(bad("reply without result")),
    }
}

pub(super) fn expect_type(r: &Value, want: &str) -> Result<(), MuxError> {
    if r.get("type").and_then(Value::as_str) == Some(want) {
        Ok(())
    } else {
        Err(bad(&format!("expected result type {want}")))
    }
}

pub(super) fn field<T: for<'de> Deserialize<'de>>(r: &Value, name: &str) -> Result<T, MuxError> {
    let v = r
        .get(name)
        .ok_or_else(|| bad(&format!("result without {name}")))?;
    T::deserialize(v).map_err(|_| bad(&format!("invalid {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_replies_map_to_codes() {
        let e = parse_reply(
            br#"{"error":{"code":"pane_not_found","message":"pane w1:p3 not found"},"id":"a"}"#,
            "a",
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::PaneNotFound);
        let e =
            parse_reply(br#"{"error":{"code":"parse","message":"x"},"id":""}"#, "a").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        let e = parse_reply(br#"{"result":{"type":"ok"},"id":"b"}"#, "a").unwrap_err();
        assert_eq!(e.code, ErrorCode::BadReply);
        assert_eq!(
            parse_reply(b"nope", "a").unwrap_err().code,
            ErrorCode::BadReply
        );
        assert!(parse_reply(br#"{"result":{"type":"ok"},"id":"a"}"#, "a").is_ok());
    }
}
