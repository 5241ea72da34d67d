//! The one pane listing: `list-panes -a -F` with every field that may hold any byte printed as
//! `<byte length>:<value>` (see the parent module for why), ids and numbers as they are; parsed
//! exactly; any mismatch is `bad_reply`.

use super::args::is_id;
use crate::mux::{ErrorCode, MuxError, PaneInfo, PaneList, ServerIdentity, MARKER_OPTION};
use crate::text::sanitize;

/// tmux expands `#{n:x}` and `#{x}` one after the other: a value that changes in between (the
/// pane's command while a program starts, its path, its title) prints a length that does not
/// fit. Nothing is guessed from such a listing; the caller may ask again.
pub(super) const TORN: &str = "field length mismatch (a value changed while tmux printed it)";

/// Cap on rows accepted from one listing.
const MAX_ROWS: usize = 100_000;

/// How a field is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Printed once, as is: ids and numbers tmux itself makes (`%3`, `$1`, `@2`, `1700000000`),
    /// which never hold a separator. Anything else in such a field is `bad_reply`.
    Plain,
    /// Any bytes (paths, names, titles, options): `<byte length>:<value>`.
    Prefixed,
}

use Shape::{Plain, Prefixed};

/// The fields of one listing row, in order.
const FIELDS: [(&str, Shape); 19] = [
    ("pane_id", Plain),
    ("pane_pid", Plain),
    ("pane_tty", Prefixed),
    ("pane_current_command", Prefixed),
    ("pane_current_path", Prefixed),
    ("session_id", Plain),
    ("session_name", Prefixed),
    ("window_id", Plain),
    ("window_name", Prefixed),
    ("pane_top", Plain),
    ("pane_left", Plain),
    ("pane_width", Plain),
    ("pane_height", Plain),
    ("pane_dead", Plain),
    ("pane_title", Prefixed),
    (MARKER_OPTION, Prefixed),
    ("pid", Plain),
    ("start_time", Plain),
    ("socket_path", Prefixed),
];

/// Longest plain value (an id or a 64-bit number).
const MAX_PLAIN: usize = 24;

/// The `-F` format of a listing: plain fields as is, the others `<len>:<value>`, `\x1f` between
/// fields. Only the fields that may hold any byte are expanded twice (length, then value).
pub fn list_format() -> String {
    FIELDS
        .iter()
        .map(|(f, shape)| match shape {
            Plain => format!("#{{{f}}}"),
            Prefixed => format!("#{{n:{f}}}:#{{{f}}}"),
        })
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

pub(super) fn bad(detail: &str) -> MuxError {
    MuxError::new(ErrorCode::BadReply, detail)
}

/// A plain field at `i`: its value and where its separator is. Only the characters of ids and
/// numbers, so a separator can never be part of one.
fn plain_at(out: &[u8], i: usize) -> Result<(&[u8], usize), MuxError> {
    let rest = out.get(i..).ok_or_else(|| bad("short field"))?;
    let len = rest
        .iter()
        .take(MAX_PLAIN + 1)
        .position(|&b| b == 0x1f || b == b'\n')
        .ok_or_else(|| bad("bad field"))?;
    let value = &rest[..len];
    if !value
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'%' | b'$' | b'@' | b'-'))
    {
        return Err(bad("bad field"));
    }
    Ok((value, i + len))
}

/// A prefixed field at `i`: its value and where its separator must be.
fn prefixed_at(out: &[u8], i: usize) -> Result<(&[u8], usize), MuxError> {
    let digits_end = out
        .get(i..)
        .and_then(|rest| rest.iter().take(10).position(|&b| b == b':'))
        .ok_or_else(|| bad("missing length"))?;
    let len_txt = std::str::from_utf8(out.get(i..i + digits_end).unwrap_or(&[]))
        .map_err(|_| bad("bad length"))?;
    if len_txt.is_empty() || !len_txt.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad("bad length"));
    }
    let len: usize = len_txt.parse().map_err(|_| bad("bad length"))?;
    let start = i + digits_end + 1;
    let end = start.checked_add(len).ok_or_else(|| bad("bad length"))?;
    let value = out.get(start..end).ok_or_else(|| bad("short field"))?;
    Ok((value, end))
}

/// Split a listing into rows of exactly `FIELDS.len()` fields.
pub fn parse_rows(out: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, MuxError> {
    let mut rows = Vec::new();
    let mut i = 0usize;
    while i < out.len() {
        if rows.len() >= MAX_ROWS {
            return Err(bad("too many rows"));
        }
        let mut row = Vec::with_capacity(FIELDS.len());
        for (f, (_, shape)) in FIELDS.iter().enumerate() {
            let (value, end) = match shape {
                Plain => plain_at(out, i)?,
                Prefixed => prefixed_at(out, i)?,
            };
            let want = if f + 1 == FIELDS.len() { b'\n' } else { 0x1f };
            if out.get(end) != Some(&want) {
                // A plain field ends at the first separator, so only a length can misfit.
                return Err(bad(if *shape == Prefixed {
                    TORN
                } else {
                    "bad field"
                }));
            }
            row.push(value.to_vec());
            i = end + 1;
        }
        rows.push(row);
    }
    Ok(rows)
}

fn opt_text(v: &[u8]) -> Option<String> {
    let s = sanitize(&String::from_utf8_lossy(v));
    (!s.trim().is_empty()).then_some(s)
}

fn opt_exact(v: &[u8]) -> Option<String> {
    (!v.is_empty()).then(|| String::from_utf8_lossy(v).into_owned())
}

fn num<T: std::str::FromStr>(v: &[u8]) -> Option<T> {
    std::str::from_utf8(v).ok()?.parse().ok()
}

fn id_field(v: &[u8], sigil: char, what: &str) -> Result<String, MuxError> {
    let s = std::str::from_utf8(v).map_err(|_| bad(what))?;
    if is_id(s, sigil) {
        Ok(s.to_string())
    } else {
        Err(bad(what))
    }
}

/// Turn one row into a pane and its server's identity, validating every field.
fn pane_from_row(r: &[Vec<u8>]) -> Result<(PaneInfo, ServerIdentity), MuxError> {
    let f = |i: usize| r.get(i).map(Vec::as_slice).unwrap_or(&[]);
    let server_pid: i32 = num(f(16))
        .filter(|&p| p > 0)
        .ok_or_else(|| bad("server pid"))?;
    let start_time: i64 = num(f(17))
        .filter(|&t| t > 0)
        .ok_or_else(|| bad("start time"))?;
    let socket_path = opt_exact(f(18)).ok_or_else(|| bad("socket path"))?;
    let pane = PaneInfo {
        id: id_field(f(0), '%', "pane id")?,
        pid: num::<i32>(f(1)).filter(|&p| p > 0),
        tty: opt_exact(f(2)).filter(|t| t.starts_with("/dev/") && !t.contains(char::is_control)),
        current_command: opt_text(f(3)),
        cwd: opt_exact(f(4)).filter(|c| c.starts_with('/')),
        session_id: id_field(f(5), '$', "session id")?,
        session_name: opt_exact(f(6)),
        window_id: id_field(f(7), '@', "window id")?,
        window_name: opt_text(f(8)),
        top: num(f(9)),
        left: num(f(10)),
        width: num(f(11)),
        height: num(f(12)),
        dead: f(13) == b"1",
        title: opt_text(f(14)),
        marker: opt_text(f(15)),
        terminal_id: None,
    };
    Ok((
        pane,
        ServerIdentity::Tmux {
            socket_path,
            server_pid,
            start_time,
        },
    ))
}

/// Parse a whole listing; every row must name the same server.
pub fn parse_listing(out: &[u8]) -> Result<PaneList, MuxError> {
    let mut server: Option<ServerIdentity> = None;
    let mut panes = Vec::new();
    for row in parse_rows(out)? {
        let (pane, s) = pane_from_row(&row)?;
        match &server {
            None => server = Some(s),
            Some(prev) if *prev != s => return Err(bad("rows from two servers")),
            Some(_) => {}
        }
        panes.push(pane);
    }
    Ok(PaneList { server, panes })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn row(fields: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if FIELDS[i].1 == Prefixed {
                out.extend_from_slice(format!("{}:", f.len()).as_bytes());
            }
            out.extend_from_slice(f);
            out.push(if i + 1 == fields.len() { b'\n' } else { 0x1f });
        }
        out
    }

    fn sample(pane: &str, cwd: &[u8], session: &[u8]) -> Vec<u8> {
        sample_running(pane, b"pi", cwd, session)
    }

    /// One listing row as tmux prints it, for a pane running `command`.
    pub(in crate::mux::tmux) fn sample_running(
        pane: &str,
        command: &[u8],
        cwd: &[u8],
        session: &[u8],
    ) -> Vec<u8> {
        row(&[
            pane.as_bytes(),
            b"123",
            b"/dev/pts/3",
            command,
            cwd,
            b"$1",
            session,
            b"@2",
            b"win",
            b"0",
            b"0",
            b"80",
            b"24",
            b"0",
            b"t\x1b]0;x\x07",
            b"",
            b"999",
            b"1700000000",
            b"/tmp/s",
        ])
    }

    #[test]
    fn parses_hostile_values_exactly() {
        let mut out = sample("%1", b"/tmp/a\nb\x1fc", b"s;'\"\xc3\xa9");
        out.extend(sample("%2", b"/x", b"n"));
        let l = parse_listing(&out).unwrap();
        assert_eq!(l.panes.len(), 2);
        assert_eq!(l.panes[0].cwd.as_deref(), Some("/tmp/a\nb\u{1f}c"));
        assert_eq!(l.panes[0].session_name.as_deref(), Some("s;'\"é"));
        assert_eq!(l.panes[0].title.as_deref(), Some("t"));
        assert_eq!(l.panes[0].marker, None);
        assert_eq!(
            l.server,
            Some(ServerIdentity::Tmux {
                socket_path: "/tmp/s".into(),
                server_pid: 999,
                start_time: 1_700_000_000
            })
        );
    }

    #[test]
    fn rejects_mismatched_or_invalid_rows() {
        let good = sample("%1", b"/x", b"n");
        for cut in [1, 5, good.len() - 1] {
            assert!(parse_listing(&good[..cut]).is_err(), "cut {cut}");
        }
        let text = String::from_utf8(good.clone()).unwrap();
        let bad_len = text.replacen("2:/x", "3:/x", 1); // the path claims 3 bytes
        assert!(parse_listing(bad_len.as_bytes()).is_err());
        // A plain field holds only what tmux makes for ids and numbers.
        for (from, to) in [
            ("%1", "%1 "),
            ("%1", "%1\n"),
            ("@2", "@2;"),
            ("999", "1234567890123456789012345"),
        ] {
            let hostile = text.replacen(from, to, 1);
            assert_ne!(hostile, text);
            assert!(parse_listing(hostile.as_bytes()).is_err(), "{to:?}");
        }
        assert!(
            list_format().starts_with("#{pane_id}\u{1f}#{pane_pid}\u{1f}#{n:pane_tty}:#{pane_tty}")
        );
        assert_eq!(list_format().matches("#{n:").count(), 8);
        assert!(parse_listing(&sample("1", b"/x", b"n")).is_err());
        assert!(parse_listing(&sample("%x", b"/x", b"n")).is_err());
        assert!(parse_listing(b"99999999999999999999:x\n").is_err());
        assert_eq!(parse_listing(b"").unwrap().panes.len(), 0);
    }
}
