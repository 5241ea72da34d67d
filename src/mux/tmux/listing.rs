//! The one pane listing: `list-panes -a -F` with every field that may hold any byte quoted by
//! tmux itself (`#{q:...}`), ids and numbers as they are; each value expanded once; parsed
//! exactly; anything else is `bad_reply`.
//!
//! Why `#{q:...}`: tmux prints control characters, newlines and invalid UTF-8 inside values raw,
//! so no separator is safe on its own. `q:` (tmux ≥ 2.9; the same set in every release since) puts a `\`
//! before each of ``|&;<>()$`\"'*?[# =%`` and before nothing else, so an unescaped `|` only ever
//! separates fields, and a raw newline inside a value is just a byte of it: a row is exactly
//! `FIELDS.len()` fields and ends with a plain field and a newline. A quoted field holding one of
//! those characters unescaped was not quoted by tmux's `q:` and is refused.

use std::borrow::Cow;

use super::args::{parse_version_number, supported};
use super::literal::is_id;
use crate::mux::{ErrorCode, MuxError, PaneInfo, PaneList, ServerIdentity, MARKER_OPTION};
use crate::text::sanitize;

/// Cap on rows accepted from one listing.
const MAX_ROWS: usize = 100_000;

/// Between fields. `q:` escapes it inside values.
const SEP: u8 = b'|';

/// What tmux's `q:` escapes (format.c, `format_quote_shell`): never raw inside a quoted value.
const QUOTED_BY_TMUX: &[u8] = b"|&;<>()$`\\\"'*?[# =%";

/// How a field is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Printed as is: ids and numbers tmux itself makes (`%3`, `$1`, `@2`, `1700000000`),
    /// which never hold a separator. Anything else in such a field is `bad_reply`.
    Plain,
    /// Any bytes (paths, names, titles, options): `#{q:...}`, unescaped here.
    Quoted,
}

use Shape::{Plain, Quoted};

/// The fields of one listing row, in order. The server's version comes first so it is known
/// before anything else in the row is believed; the last field is plain, so the newline after
/// it ends the row.
const FIELDS: [(&str, Shape); 20] = [
    ("version", Quoted),
    ("pane_id", Plain),
    ("pane_pid", Plain),
    ("pane_tty", Quoted),
    ("pane_current_command", Quoted),
    ("pane_current_path", Quoted),
    ("session_id", Plain),
    ("session_name", Quoted),
    ("window_id", Plain),
    ("window_name", Quoted),
    ("pane_top", Plain),
    ("pane_left", Plain),
    ("pane_width", Plain),
    ("pane_height", Plain),
    ("pane_dead", Plain),
    ("pane_title", Quoted),
    (MARKER_OPTION, Quoted),
    ("socket_path", Quoted),
    ("pid", Plain),
    ("start_time", Plain),
];

/// Longest plain value (an id or a 64-bit number).
const MAX_PLAIN: usize = 24;

/// The `-F` format of a listing: plain fields as is, the others `#{q:...}`, `|` between fields.
pub(crate) fn list_format() -> String {
    FIELDS
        .iter()
        .map(|(f, shape)| match shape {
            Plain => format!("#{{{f}}}"),
            Quoted => format!("#{{q:{f}}}"),
        })
        .collect::<Vec<_>>()
        .join("|")
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
        .position(|&b| b == SEP || b == b'\n')
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

/// A quoted field at `i`: its unescaped value and where its separator is (the first `|` not
/// escaped). Borrowed when nothing was escaped.
fn quoted_at(out: &[u8], i: usize) -> Result<(Cow<'_, [u8]>, usize), MuxError> {
    let rest = out.get(i..).ok_or_else(|| bad("short field"))?;
    let mut owned: Option<Vec<u8>> = None;
    let mut j = 0;
    while let Some(&b) = rest.get(j) {
        if b == SEP {
            let value = match owned {
                Some(v) => Cow::Owned(v),
                None => Cow::Borrowed(&rest[..j]),
            };
            return Ok((value, i + j));
        }
        if b == b'\\' {
            let next = *rest.get(j + 1).ok_or_else(|| bad("short field"))?;
            owned.get_or_insert_with(|| rest[..j].to_vec()).push(next);
            j += 2;
            continue;
        }
        if QUOTED_BY_TMUX.contains(&b) {
            return Err(bad("a value not quoted by tmux"));
        }
        if let Some(v) = owned.as_mut() {
            v.push(b);
        }
        j += 1;
    }
    Err(bad("short field"))
}

/// One row's fields, in `FIELDS` order.
pub(super) type Row<'a> = Vec<Cow<'a, [u8]>>;

/// Split a listing into rows of exactly `FIELDS.len()` fields.
pub fn parse_rows(out: &[u8]) -> Result<Vec<Row<'_>>, MuxError> {
    let mut rows = Vec::new();
    let mut i = 0usize;
    while i < out.len() {
        if rows.len() >= MAX_ROWS {
            return Err(bad("too many rows"));
        }
        let mut row = Vec::with_capacity(FIELDS.len());
        for (f, (_, shape)) in FIELDS.iter().enumerate() {
            let (value, end) = match shape {
                Plain => {
                    let (v, end) = plain_at(out, i)?;
                    (Cow::Borrowed(v), end)
                }
                Quoted => quoted_at(out, i)?,
            };
            let want = if f + 1 == FIELDS.len() { b'\n' } else { SEP };
            if out.get(end) != Some(&want) {
                return Err(bad("bad field"));
            }
            row.push(value);
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
fn pane_from_row(r: &[Cow<'_, [u8]>]) -> Result<(PaneInfo, ServerIdentity), MuxError> {
    let f = |i: usize| r.get(i).map(|v| &**v).unwrap_or(&[]);
    let server_pid: i32 = num(f(18))
        .filter(|&p| p > 0)
        .ok_or_else(|| bad("server pid"))?;
    let start_time: i64 = num(f(19))
        .filter(|&t| t > 0)
        .ok_or_else(|| bad("start time"))?;
    let socket_path = opt_exact(f(17)).ok_or_else(|| bad("socket path"))?;
    let pane = PaneInfo {
        id: id_field(f(1), '%', "pane id")?,
        pid: num::<i32>(f(2)).filter(|&p| p > 0),
        tty: opt_exact(f(3)).filter(|t| t.starts_with("/dev/") && !t.contains(char::is_control)),
        current_command: opt_text(f(4)),
        cwd: opt_exact(f(5)).filter(|c| c.starts_with('/')),
        session_id: id_field(f(6), '$', "session id")?,
        session_name: opt_exact(f(7)),
        window_id: id_field(f(8), '@', "window id")?,
        window_name: opt_text(f(9)),
        top: num(f(10)),
        left: num(f(11)),
        width: num(f(12)),
        height: num(f(13)),
        dead: f(14) == b"1",
        title: opt_text(f(15)),
        marker: opt_text(f(16)),
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

/// The version the server printed in every row (`#{version}`, tmux ≥ 2.4): `Ok(None)` when it
/// printed none that parses, or there are no rows. Rows that disagree are `bad_reply`.
fn server_version(rows: &[Row<'_>]) -> Result<Option<(u32, u32)>, MuxError> {
    let Some(first) = rows.first().and_then(|r| r.first()) else {
        return Ok(None);
    };
    if rows.iter().any(|r| r.first() != Some(first)) {
        return Err(bad("rows from two servers"));
    }
    Ok(std::str::from_utf8(first)
        .ok()
        .and_then(parse_version_number))
}

/// Parse a whole listing; every row must name the same server. The server's own version is
/// checked before any row is believed; when it printed none (a server too old to know
/// `#{version}`, or one whose version does not parse) and there are rows, `unsaid` decides.
pub fn parse_listing(
    out: &[u8],
    unsaid: impl FnOnce() -> Result<(), MuxError>,
) -> Result<PaneList, MuxError> {
    let rows = parse_rows(out)?;
    match server_version(&rows)? {
        Some(v) => supported(v)?,
        None if rows.is_empty() => {}
        None => unsaid()?,
    }
    let mut server: Option<ServerIdentity> = None;
    let mut panes = Vec::with_capacity(rows.len());
    for row in &rows {
        let (pane, s) = pane_from_row(row)?;
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

    /// A value as tmux's `q:` prints it.
    fn quote(v: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in v {
            if QUOTED_BY_TMUX.contains(&b) {
                out.push(b'\\');
            }
            out.push(b);
        }
        out
    }

    fn row(fields: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if FIELDS[i].1 == Quoted {
                out.extend(quote(f));
            } else {
                out.extend_from_slice(f);
            }
            out.push(if i + 1 == fields.len() { b'\n' } else { SEP });
        }
        out
    }

    fn sample(pane: &str, cwd: &[u8], session: &[u8]) -> Vec<u8> {
        sample_running(pane, b"pi", cwd, session)
    }

    /// One listing row as tmux 3.3a prints it, for a pane running `command`.
    pub(in crate::mux::tmux) fn sample_running(
        pane: &str,
        command: &[u8],
        cwd: &[u8],
        session: &[u8],
    ) -> Vec<u8> {
        sample_of(b"3.3a", pane, command, cwd, session)
    }

    /// One listing row from a server that says it is `version`.
    pub(in crate::mux::tmux) fn sample_of(
        version: &[u8],
        pane: &str,
        command: &[u8],
        cwd: &[u8],
        session: &[u8],
    ) -> Vec<u8> {
        row(&[
            version,
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
            b"/tmp/s",
            b"999",
            b"1700000000",
        ])
    }

    fn parse(out: &[u8]) -> Result<PaneList, MuxError> {
        parse_listing(out, || panic!("the version was printed"))
    }

    #[test]
    fn fields_are_where_the_row_reader_looks() {
        let names: Vec<&str> = FIELDS.iter().map(|f| f.0).collect();
        assert_eq!(names[0], "version");
        assert_eq!(names[1], "pane_id");
        assert_eq!(names[5], "pane_current_path");
        assert_eq!(names[15], "pane_title");
        assert_eq!(names[16], MARKER_OPTION);
        assert_eq!(&names[17..], ["socket_path", "pid", "start_time"]);
        assert!(
            FIELDS[FIELDS.len() - 1].1 == Plain,
            "a newline ends the row"
        );
        assert!(list_format().starts_with("#{q:version}|#{pane_id}|#{pane_pid}|#{q:pane_tty}|"));
        // Each value is expanded once.
        assert_eq!(list_format().matches("#{").count(), FIELDS.len());
        assert_eq!(list_format().matches("#{q:").count(), 9);
    }

    #[test]
    fn parses_hostile_values_exactly() {
        let hostile_cwd = b"/tmp/a\nb\x1fc|d\\|e\\\\;\x01#{pane_id}##";
        let mut out = sample("%1", hostile_cwd, b"s;'\"\xc3\xa9 |x\n");
        out.extend(sample("%2", b"/x", b"n"));
        let l = parse(&out).unwrap();
        assert_eq!(l.panes.len(), 2);
        assert_eq!(
            l.panes[0].cwd.as_deref(),
            Some("/tmp/a\nb\u{1f}c|d\\|e\\\\;\u{1}#{pane_id}##")
        );
        assert_eq!(l.panes[0].session_name.as_deref(), Some("s;'\"é |x\n"));
        assert_eq!(l.panes[0].title.as_deref(), Some("t"));
        assert_eq!(l.panes[0].marker, None);
        assert_eq!(l.panes[1].cwd.as_deref(), Some("/x"));
        assert_eq!(
            l.server,
            Some(ServerIdentity::Tmux {
                socket_path: "/tmp/s".into(),
                server_pid: 999,
                start_time: 1_700_000_000
            })
        );
        // Invalid UTF-8 and a value that is nothing but separators.
        let odd = sample_running("%3", b"\xff\xfe", b"/\xff", b"|||");
        let l = parse(&odd).unwrap();
        assert_eq!(l.panes[0].session_name.as_deref(), Some("|||"));
        assert_eq!(l.panes[0].cwd.as_deref(), Some("/\u{fffd}"));
    }

    #[test]
    fn rejects_mismatched_or_invalid_rows() {
        let good = sample("%1", b"/x", b"n");
        for cut in [1, 5, good.len() - 1] {
            assert!(parse(&good[..cut]).is_err(), "cut {cut}");
        }
        let text = String::from_utf8(good.clone()).unwrap();
        // A plain field holds only what tmux makes for ids and numbers.
        for (from, to) in [
            ("%1", "%1 "),
            ("%1", "%1\n"),
            ("@2", "@2;"),
            ("999", "1234567890123456789012345"),
        ] {
            let hostile = text.replacen(from, to, 1);
            assert_ne!(hostile, text);
            assert!(parse(hostile.as_bytes()).is_err(), "{to:?}");
        }
        // A quoted field with a character `q:` escapes left raw was not quoted by tmux; one
        // separator too many or too few shifts every field after it.
        for (from, to) in [("|/x|", "|/x;|"), ("|/x|", "|/x|y|"), ("|/x|", "|/x\\")] {
            let hostile = text.replacen(from, to, 1);
            assert_ne!(hostile, text);
            assert!(parse(hostile.as_bytes()).is_err(), "{to:?}");
        }
        assert!(parse(&sample("1", b"/x", b"n")).is_err());
        assert!(parse(&sample("%x", b"/x", b"n")).is_err());
        assert!(parse(b"99999999999999999999:x\n").is_err());
        assert_eq!(parse(b"").unwrap().panes.len(), 0);
    }

    #[test]
    fn the_servers_own_version_decides_before_any_row_is_believed() {
        let old = sample_of(b"3.1c", "%1", b"pi", b"/x", b"n");
        assert_eq!(parse(&old).unwrap_err().code, ErrorCode::TooOld);
        for v in [&b"3.2"[..], b"3.3a", b"next-3.4", b"3.2-rc2"] {
            assert!(parse(&sample_of(v, "%1", b"pi", b"/x", b"n")).is_ok());
        }
        // Two versions in one listing: two servers.
        let mut two = sample("%1", b"/x", b"n");
        two.extend(sample_of(b"3.4", "%2", b"pi", b"/x", b"n"));
        assert_eq!(parse(&two).unwrap_err().code, ErrorCode::BadReply);
        // Not said (a server older than `#{version}`) or not understood: `unsaid` decides.
        for v in [&b""[..], b"master"] {
            let row = sample_of(v, "%1", b"pi", b"/x", b"n");
            let refused = parse_listing(&row, || Err(MuxError::new(ErrorCode::TooOld, "-V")));
            assert_eq!(refused.unwrap_err().code, ErrorCode::TooOld);
            assert!(parse_listing(&row, || Ok(())).is_ok());
        }
    }
}
