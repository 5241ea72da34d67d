//! The one HTTP/1.1 GET the probe needs, on a plain tokio TcpStream.
//!
//! Why hand-written: no HTTP crate is in the build, and the request is tiny. Every read is capped
//! (headers 4 KiB, body 1 KiB) and the whole exchange sits under one deadline, so a peer that
//! drips bytes slowly still ends at the deadline.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::reason;
use super::{valid_target, MAX_BODY_BYTES, MAX_HEADER_BYTES};
use crate::states::ConnState;

/// A classification: state plus its fixed reason.
pub(crate) type Verdict = (ConnState, &'static str);

const fn unknown(r: &'static str) -> Verdict {
    (ConnState::Unknown, r)
}

/// Probe `127.0.0.1:<port>` once, expecting `expected_session` to answer; never longer than `deadline`.
///
/// The API takes a port, never a host: only loopback is ever contacted. No retries, no redirects.
pub async fn probe_one(port: u16, expected_session: &str, deadline: Duration) -> Verdict {
    // A zero deadline could only ever report `timeout`: refuse it rather than claim a result.
    if !valid_target(expected_session, port) || deadline.is_zero() {
        return unknown(reason::INVALID_INPUT);
    }
    match tokio::time::timeout(deadline, exchange(port, expected_session)).await {
        Ok(verdict) => verdict,
        Err(_) => (ConnState::Disconnected, reason::TIMEOUT),
    }
}

async fn exchange(port: u16, expected: &str) -> Verdict {
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let mut stream = match TcpStream::connect(addr).await {
        Ok(s) => s,
        // Only a refused connect shows that nothing listens there.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return (ConnState::Disconnected, reason::REFUSED)
        }
        Err(_) => return unknown(reason::NETWORK_ERROR),
    };
    // Nagle would only delay our single small write.
    let _ = stream.set_nodelay(true);
    let request = format!(
        "GET /intercom/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nUser-Agent: intercom-pane/{}\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    );
    // A failed write is not final: a peer may answer before reading the request and close; the
    // read below then still sees its answer, or fails and yields network_error.
    let _ = stream.write_all(request.as_bytes()).await;
    read_response(&mut stream, expected).await
}

/// Classify a whole response already in memory, as `probe_one` classifies what a peer sends:
/// the same reader, polled until it ends (an in-memory reader never waits). The fuzz target's
/// entry (`fuzz/`); `None` only if it somehow would not finish.
pub fn classify_response(bytes: &[u8], expected: &str) -> Option<(ConnState, &'static str)> {
    let mut r: &[u8] = bytes;
    let mut fut = std::pin::pin!(read_response(&mut r, expected));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    // Each poll consumes input or ends; the count only backs that up.
    for _ in 0..=bytes.len() + 16 {
        if let std::task::Poll::Ready(v) = std::future::Future::poll(fut.as_mut(), &mut cx) {
            return Some(v);
        }
    }
    None
}

/// Read and classify one response from any async reader (also used by unit tests).
pub(crate) async fn read_response<R: AsyncReadExt + Unpin>(r: &mut R, expected: &str) -> Verdict {
    let mut buf: Vec<u8> = Vec::with_capacity(MAX_HEADER_BYTES);
    let mut chunk = [0u8; 1024];
    let mut scanned = 0usize;
    let head_end = loop {
        if let Some(pos) = find_head_end(&buf, scanned) {
            break pos;
        }
        // The terminator may straddle reads: rescan the last 3 bytes next time.
        scanned = buf.len().saturating_sub(3);
        if buf.len() >= MAX_HEADER_BYTES {
            return unknown(reason::OVERSIZE);
        }
        let room = (MAX_HEADER_BYTES - buf.len()).min(chunk.len());
        match r.read(&mut chunk[..room]).await {
            // EOF with nothing at all: the peer hung up without answering.
            Ok(0) if buf.is_empty() => return unknown(reason::NETWORK_ERROR),
            Ok(0) => return unknown(reason::MALFORMED),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => return unknown(reason::NETWORK_ERROR),
        }
    };
    let head = match parse_head(&buf[..head_end]) {
        Ok(h) => h,
        Err(v) => return v,
    };
    match head.status {
        200 => {}
        404 => return unknown(reason::LEGACY),
        // Redirects, 503 and the rest: never followed, never retried.
        _ => return unknown(reason::HTTP_ERROR),
    }
    let rest = buf.get(head_end + 4..).unwrap_or(&[]).to_vec();
    // Framing matters only for a 200: a 404 or 503 with odd framing is still legacy/http_error.
    let framing = match head.framing {
        Ok(f) => f,
        Err(v) => return v,
    };
    let body = match framing {
        Framing::Length(n) if n > MAX_BODY_BYTES as u64 => return unknown(reason::OVERSIZE),
        Framing::Length(n) => read_exact_body(r, rest, n as usize).await,
        Framing::Chunked => read_chunked_body(r, rest).await,
        Framing::ToEof => read_body_to_eof(r, rest).await,
    };
    match body {
        Ok(b) => classify_body(&b, expected),
        Err(v) => v,
    }
}

fn find_head_end(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + from)
}

#[derive(Debug, PartialEq)]
enum Framing {
    Length(u64),
    Chunked,
    ToEof,
}

#[derive(Debug)]
struct Head {
    status: u16,
    framing: Result<Framing, Verdict>,
}

/// Parse the status line and the two framing headers; everything else is ignored but must be
/// shaped like a header.
fn parse_head(head: &[u8]) -> Result<Head, Verdict> {
    let bad = || unknown(reason::MALFORMED);
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next().ok_or_else(bad)?;
    let status = parse_status_line(status_line).ok_or_else(bad)?;
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut other_coding = false;
    let mut bad_length = false;
    for line in lines {
        // Folded continuation lines are obsolete; a peer sending them is not the extension.
        if line.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
            return Err(bad());
        }
        let colon = line.iter().position(|&b| b == b':').ok_or_else(bad)?;
        let name = &line[..colon];
        let value = trim(&line[colon + 1..]);
        if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
            return Err(bad());
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            match parse_decimal(value) {
                // Two different lengths: no way to know which one frames the body.
                Some(n) if length.is_some_and(|l| l != n) => bad_length = true,
                Some(n) => length = Some(n),
                None => bad_length = true,
            }
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            for coding in value.split(|&b| b == b',').map(trim) {
                if coding.eq_ignore_ascii_case(b"chunked") {
                    chunked = true;
                } else if !coding.is_empty() {
                    other_coding = true;
                }
            }
        }
    }
    let framing = match (chunked, other_coding, length, bad_length) {
        (false, false, Some(n), false) => Ok(Framing::Length(n)),
        (false, false, None, false) => Ok(Framing::ToEof),
        (true, false, None, false) => Ok(Framing::Chunked),
        // Both framings at once, conflicting lengths, or a coding we cannot decode.
        _ => Err(bad()),
    };
    Ok(Head { status, framing })
}

fn parse_status_line(line: &[u8]) -> Option<u16> {
    let rest = line
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| line.strip_prefix(b"HTTP/1.0 "))?;
    let code = rest.get(..3)?;
    if !code.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // After the code: nothing, or a space and a reason phrase.
    if rest.len() > 3 && rest[3] != b' ' {
        return None;
    }
    let status = code
        .iter()
        .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'));
    (100..=599).contains(&status).then_some(status)
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |p| p + 1);
    b.get(start..end).unwrap_or(&[])
}

/// Plain decimal, at most 18 digits so it cannot overflow.
fn parse_decimal(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 18 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0')))
}

async fn read_exact_body<R: AsyncReadExt + Unpin>(
    r: &mut R,
    mut body: Vec<u8>,
    len: usize,
) -> Result<Vec<u8>, Verdict> {
    let mut chunk = [0u8; 512];
    while body.len() < len {
        let room = (len - body.len()).min(chunk.len());
        match r.read(&mut chunk[..room]).await {
            // Shorter than announced: a cut-off answer.
            Ok(0) => return Err(unknown(reason::MALFORMED)),
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(_) => return Err(unknown(reason::NETWORK_ERROR)),
        }
    }
    body.truncate(len);
    Ok(body)
}

async fn read_body_to_eof<R: AsyncReadExt + Unpin>(
    r: &mut R,
    mut body: Vec<u8>,
) -> Result<Vec<u8>, Verdict> {
    let mut chunk = [0u8; 512];
    loop {
        if body.len() > MAX_BODY_BYTES {
            return Err(unknown(reason::OVERSIZE));
        }
        match r.read(&mut chunk).await {
            Ok(0) => return Ok(body),
            Ok(n) => body.extend_from_slice(&chunk[..n]),
            Err(_) => return Err(unknown(reason::NETWORK_ERROR)),
        }
    }
}

/// Bounded chunked decoding: the decoded body stays ≤ 1 KiB, size lines ≤ 64 bytes, and the raw
/// bytes buffered never exceed what those caps allow. Trailers are not read.
async fn read_chunked_body<R: AsyncReadExt + Unpin>(
    r: &mut R,
    mut raw: Vec<u8>,
) -> Result<Vec<u8>, Verdict> {
    const MAX_SIZE_LINE: usize = 64;
    // Raw framing overhead allowed on top of the body: size lines and CRLFs of many tiny chunks.
    const MAX_RAW: usize = MAX_BODY_BYTES * 8 + MAX_SIZE_LINE;
    let mut body = Vec::new();
    let mut pos = 0usize;
    let mut consumed_total = 0usize;
    loop {
        // Size line.
        let line_end = loop {
            if let Some(p) = raw
                .get(pos..)
                .and_then(|s| s.windows(2).position(|w| w == b"\r\n"))
            {
                break pos + p;
            }
            if raw.len() - pos > MAX_SIZE_LINE {
                return Err(unknown(reason::MALFORMED));
            }
            fill(r, &mut raw, consumed_total, MAX_RAW).await?;
        };
        let line = raw.get(pos..line_end).unwrap_or(&[]);
        // Chunk extensions after ';' are allowed and ignored.
        let size_hex = trim(line.split(|&b| b == b';').next().unwrap_or(&[]));
        let size = parse_hex(size_hex).ok_or(unknown(reason::MALFORMED))?;
        pos = line_end + 2;
        if size == 0 {
            return Ok(body);
        }
        if body.len() as u64 + size > MAX_BODY_BYTES as u64 {
            return Err(unknown(reason::OVERSIZE));
        }
        let size = size as usize;
        while raw.len() < pos + size + 2 {
            fill(r, &mut raw, consumed_total, MAX_RAW).await?;
        }
        body.extend_from_slice(raw.get(pos..pos + size).unwrap_or(&[]));
        if raw.get(pos + size..pos + size + 2) != Some(b"\r\n") {
            return Err(unknown(reason::MALFORMED));
        }
        pos += size + 2;
        // Drop consumed bytes so the buffer stays small.
        raw.drain(..pos);
        consumed_total += pos;
        pos = 0;
    }
}

/// Read more raw bytes for the chunked decoder, refusing to go past `max_raw` in all.
async fn fill<R: AsyncReadExt + Unpin>(
    r: &mut R,
    raw: &mut Vec<u8>,
    consumed: usize,
    max_raw: usize,
) -> Result<(), Verdict> {
    if consumed + raw.len() >= max_raw {
        return Err(unknown(reason::OVERSIZE));
    }
    let mut chunk = [0u8; 512];
    let room = (max_raw - consumed - raw.len()).min(chunk.len());
    match r.read(&mut chunk[..room]).await {
        Ok(0) => Err(unknown(reason::MALFORMED)),
        Ok(n) => {
            raw.extend_from_slice(&chunk[..n]);
            Ok(())
        }
        Err(_) => Err(unknown(reason::NETWORK_ERROR)),
    }
}

fn parse_hex(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 8 {
        return None;
    }
    let s = std::str::from_utf8(b).ok()?;
    u64::from_str_radix(s, 16).ok()
}

/// `{"version":1,"sessionId":"<expected>"}` → verified; other ids → identity_mismatch.
pub(crate) fn classify_body(body: &[u8], expected: &str) -> Verdict {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return unknown(reason::MALFORMED);
    };
    let Some(obj) = value.as_object() else {
        return unknown(reason::MALFORMED);
    };
    match obj.get("version").and_then(serde_json::Value::as_u64) {
        Some(1) => {}
        Some(_) => return unknown(reason::UNSUPPORTED_VERSION),
        // Missing, negative, fractional or non-numeric: not a version we can reason about.
        None => return unknown(reason::MALFORMED),
    }
    match obj.get("sessionId").and_then(serde_json::Value::as_str) {
        Some("") => unknown(reason::MALFORMED),
        Some(id) if id == expected => (ConnState::Connected, reason::VERIFIED),
        Some(_) => (ConnState::Disconnected, reason::IDENTITY_MISMATCH),
        None => unknown(reason::MALFORMED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(bytes: &[u8]) -> Verdict {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let mut r: &[u8] = bytes;
        let v = rt.block_on(read_response(&mut r, "sid-1"));
        assert_eq!(classify_response(bytes, "sid-1"), Some(v), "{bytes:?}");
        v
    }

    const OK: &str = r#"{"version":1,"sessionId":"sid-1"}"#;

    /// Byte-at-a-time delivery: the header terminator and chunk lines straddle reads.
    #[test]
    fn one_byte_per_read() {
        use tokio::io::AsyncWriteExt;
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let plain = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{OK}",
            OK.len()
        );
        let chunked = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{OK}\r\n0\r\n\r\n",
            OK.len()
        );
        for resp in [plain, chunked] {
            let v = rt.block_on(async {
                let (mut client, mut server) = tokio::io::duplex(1);
                let writer = tokio::spawn(async move {
                    for b in resp.bytes() {
                        if server.write_all(&[b]).await.is_err() {
                            break;
                        }
                    }
                });
                let v = read_response(&mut client, "sid-1").await;
                // The reader may stop before the last bytes (chunked trailers): hang up so
                // the writer ends instead of waiting for room forever.
                drop(client);
                let _ = writer.await;
                v
            });
            assert_eq!(v, (ConnState::Connected, "verified"));
        }
    }

    #[test]
    fn zero_deadline_is_invalid_input() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let v = rt.block_on(probe_one(9, "sid", Duration::ZERO));
        assert_eq!(v, unknown("invalid_input"));
    }

    #[test]
    fn content_length_body() {
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{OK}",
            OK.len()
        );
        assert_eq!(run(resp.as_bytes()), (ConnState::Connected, "verified"));
    }

    #[test]
    fn body_to_eof_and_http10() {
        let resp = format!("HTTP/1.0 200 OK\r\n\r\n{OK}");
        assert_eq!(run(resp.as_bytes()), (ConnState::Connected, "verified"));
    }

    #[test]
    fn chunked_body() {
        let resp = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}\r\n{:x};ext=1\r\n{}\r\n0\r\n\r\n",
            &OK[..5],
            OK.len() - 5,
            &OK[5..]
        );
        assert_eq!(run(resp.as_bytes()), (ConnState::Connected, "verified"));
    }

    #[test]
    fn chunked_oversize_and_bad() {
        let big = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n401\r\n";
        assert_eq!(run(big.as_bytes()), unknown("oversize"));
        let bad = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(run(bad.as_bytes()), unknown("malformed"));
        let gz = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n";
        assert_eq!(run(gz.as_bytes()), unknown("malformed"));
        let many = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{}",
            "1\r\n \r\n".repeat(2000)
        );
        assert_eq!(run(many.as_bytes()), unknown("oversize"));
    }

    #[test]
    fn statuses() {
        assert_eq!(run(b"HTTP/1.1 404 Not Found\r\n\r\n"), unknown("legacy"));
        assert_eq!(run(b"HTTP/1.1 503 x\r\n\r\n"), unknown("http_error"));
        assert_eq!(
            run(b"HTTP/1.1 302\r\nLocation: /\r\n\r\n"),
            unknown("http_error")
        );
        assert_eq!(run(b"HTTP/2 200 OK\r\n\r\n"), unknown("malformed"));
        assert_eq!(run(b"HTTP/1.1 20x OK\r\n\r\n"), unknown("malformed"));
        assert_eq!(run(b"HTTP/1.1 2000 OK\r\n\r\n"), unknown("malformed"));
        assert_eq!(run(b"SSH-2.0-OpenSSH\r\n\r\n"), unknown("malformed"));
        // Odd framing does not hide what the status already says.
        assert_eq!(
            run(b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: gzip\r\n\r\n"),
            unknown("legacy")
        );
        assert_eq!(
            run(b"HTTP/1.1 503 x\r\nContent-Length: x\r\n\r\n"),
            unknown("http_error")
        );
    }

    #[test]
    fn header_problems() {
        assert_eq!(run(b""), unknown("network_error"));
        assert_eq!(run(b"HTTP/1.1 200 OK\r\nX: y"), unknown("malformed"));
        assert_eq!(
            run(b"HTTP/1.1 200 OK\r\nnocolon\r\n\r\n{}"),
            unknown("malformed")
        );
        assert_eq!(
            run(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}"),
            unknown("malformed")
        );
        assert_eq!(
            run(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}"),
            unknown("malformed")
        );
        assert_eq!(
            run(b"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n"),
            unknown("oversize")
        );
        assert_eq!(
            run(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}"),
            unknown("malformed")
        );
        let long = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(5000));
        assert_eq!(run(long.as_bytes()), unknown("oversize"));
        // Exactly at the cap (terminator included) is still accepted.
        let pad = MAX_HEADER_BYTES - "HTTP/1.1 200 OK\r\nX: \r\n\r\n".len();
        let edge = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n{OK}", "a".repeat(pad));
        assert_eq!(edge.find("\r\n\r\n").map(|p| p + 4), Some(MAX_HEADER_BYTES));
        assert_eq!(run(edge.as_bytes()), (ConnState::Connected, "verified"));
    }

    #[test]
    fn bodies() {
        assert_eq!(classify_body(b"not json", "a"), unknown("malformed"));
        assert_eq!(classify_body(b"{}", "a"), unknown("malformed"));
        assert_eq!(classify_body(b"[1]", "a"), unknown("malformed"));
        assert_eq!(
            classify_body(br#"{"version":"1","sessionId":"a"}"#, "a"),
            unknown("malformed")
        );
        assert_eq!(
            classify_body(br#"{"version":1.5,"sessionId":"a"}"#, "a"),
            unknown("malformed")
        );
        assert_eq!(
            classify_body(br#"{"version":2,"sessionId":"a"}"#, "a"),
            unknown("unsupported_version")
        );
        assert_eq!(
            classify_body(br#"{"version":1}"#, "a"),
            unknown("malformed")
        );
        assert_eq!(
            classify_body(br#"{"version":1,"sessionId":""}"#, "a"),
            unknown("malformed")
        );
        assert_eq!(
            classify_body(br#"{"version":1,"sessionId":"b"}"#, "a"),
            (ConnState::Disconnected, "identity_mismatch")
        );
        assert_eq!(
            classify_body(br#"{"version":1,"sessionId":"a","extra":true}"#, "a"),
            (ConnState::Connected, "verified")
        );
        let big = format!("HTTP/1.1 200 OK\r\n\r\n{}", " ".repeat(2048));
        assert_eq!(run(big.as_bytes()), unknown("oversize"));
    }
}
