//! The fuzz targets' bodies: one function per parser of outside bytes (and the config splice),
//! each feeding the bytes to the crate's own entry point and checking what must hold whatever
//! the bytes: no panic, and the invariants the rest of the program relies on. Run under libFuzzer
//! by `fuzz/fuzz_targets/<name>.rs` (`fuzz/run`), and replayed without libFuzzer by the top-level
//! `cargo test --test suite fuzz_regressions` on every file in `fuzz/seeds/<name>/` and
//! `fuzz/regressions/<name>/`, which includes this file as a module.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use intercom_pane::seam::actions::config_write::{splice_agent, NoRefusal};
use intercom_pane::seam::evidence;
use intercom_pane::seam::reply_text;

/// A target's body.
pub type Target = fn(&[u8]);

/// An edit of one agent entry, as the program makes them.
type Edit<'a> = &'a dyn Fn(&mut Map<String, Value>);

/// Every target, by name (the name of its binary, seeds and regressions folders).
pub const TARGETS: &[(&str, Target)] = &[
    ("config", config),
    ("splice", splice),
    ("session_file", session_file),
    ("session_timeline", session_timeline),
    ("observation_log", observation_log),
    ("report", report),
    ("registration", registration),
    ("seen", seen),
    ("tmux_listing", tmux_listing),
    ("herdr_listing", herdr_listing),
    ("reply_text", reply_text),
    ("peer_answers", peer_answers),
    ("proc_and_names", proc_and_names),
    ("records", records),
    ("hosts", hosts),
    ("git_outputs", git_outputs),
];

const SID: &str = "0190aaaa-0000-7000-8000-000000000001";

/// A private folder for the targets that read files (one per process).
pub fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("intercom-pane-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(d.join(".pi-intercom/jobs")).unwrap();
        d
    })
}

fn no_controls(s: &str, what: &str) {
    assert!(
        !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
            && !s.chars().any(|c| ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)),
        "{what} shows a control character: {s:?}"
    );
}

// -------------------------------------------------------------------------------------------
// The roster and the splice.

/// `config.json`: whatever the bytes, a clear answer; an accepted config is a JSON object, and
/// every edit the program makes to one of its workers (close job, handoff, removal) splices into
/// valid JSON equal to the expected edit, byte-identical outside that entry.
pub fn config(data: &[u8]) {
    let Ok(cfg) = evidence::config::parse(Path::new("/fuzz-root"), data) else {
        return;
    };
    let v: Value = serde_json::from_slice(data).expect("an accepted config is JSON");
    assert!(v.is_object());
    let text = std::str::from_utf8(data).expect("an accepted config is UTF-8");
    for a in &cfg.agents {
        assert!(!a.name.trim().is_empty() && a.port > 0);
        no_controls(&a.name, "an agent name");
        if a.coordinator {
            continue;
        }
        let edits: [(&str, Edit); 3] = [
            ("close job", &|o| {
                o.insert(
                    "closeJob".into(),
                    json!({"jobId": "j-1", "state": "requested",
                        "createdAt": "2026-11-30T00:00:00.000Z",
                        "updatedAt": "2026-11-30T00:00:00.000Z",
                        "deadlineAt": "2026-11-30T00:00:00.000Z"}),
                );
            }),
            ("handoff", &|o| {
                o.insert(
                    "handoff".into(),
                    json!({"version": 1, "jobId": "j-1", "summary": "line one\nline two é",
                        "updatedAt": "2026-11-30T00:00:00.000Z"}),
                );
            }),
            ("removal", &|o| {
                o.remove("closeJob");
                o.remove("handoff");
                o.remove("role");
            }),
        ];
        for (what, edit) in edits {
            let _ = check_splice(text, &v, &a.session_id, what, edit);
        }
        let _ = intercom_pane::seam::actions::config_write::splice_agent::<NoRefusal>(
            text,
            &a.session_id,
            &|o| {
                o.insert("port".into(), json!(0));
                Ok(())
            },
        );
    }
}

/// The splice on `text` (whose value is `v`) with `edit` on agent `sid`: valid JSON, equal to
/// `v` edited, every byte outside the entry kept, no line break or TAB the file did not have.
fn check_splice(text: &str, v: &Value, sid: &str, what: &str, edit: Edit) -> Option<String> {
    let out = match splice_agent::<NoRefusal>(text, sid, &|o| {
        edit(o);
        Ok(())
    }) {
        Ok(out) => out,
        // Two entries with that id, or a key twice in it: refused, never guessed.
        Err(_) => return None,
    };
    let out = String::from_utf8(out).expect("the splice wrote UTF-8");
    let got: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{what}: the splice wrote invalid JSON ({e}):\n{out}"));
    let mut want = v.clone();
    let agents = want["agents"].as_array_mut().expect("agents");
    let target = agents
        .iter_mut()
        .find(|a| a["sessionId"] == sid)
        .expect("the agent");
    edit(target.as_object_mut().expect("an object"));
    assert_eq!(
        got, want,
        "{what}: the splice changed more or less than the edit:\n{out}"
    );
    if !text.contains('\r') {
        assert!(!out.contains('\r'), "{what}: a CR the file did not have");
    }
    if !text.contains('\t') {
        assert!(!out.contains('\t'), "{what}: a TAB the file did not have");
    }
    if !text.contains('\n') {
        assert!(
            !out.contains('\n'),
            "{what}: a line break the file did not have"
        );
    }
    Some(out)
}

/// The bytes `text` and `out` differ in lie inside `span` of `text`: everything before and after
/// it is kept byte for byte.
fn changed_only_inside(text: &str, out: &str, span: (usize, usize)) {
    let prefix = text
        .bytes()
        .zip(out.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    if prefix == text.len() && prefix == out.len() {
        return;
    }
    let suffix = text
        .bytes()
        .rev()
        .zip(out.bytes().rev())
        .take_while(|(a, b)| a == b)
        .count()
        .min(text.len() - prefix.min(text.len()));
    assert!(
        prefix >= span.0 && text.len() - suffix <= span.1,
        "bytes outside the entry {span:?} changed (kept {prefix} before, {suffix} after):\n{text}\n---\n{out}"
    );
}

/// Reads fuzz bytes as choices; past the end every choice is 0.
struct Choices<'a> {
    d: &'a [u8],
    i: usize,
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.d.get(self.i).copied().unwrap_or(0);
        self.i += 1;
        b
    }
    fn pick<'s>(&mut self, of: &[&'s str]) -> &'s str {
        of[self.byte() as usize % of.len()]
    }
    fn value(&mut self, depth: usize) -> Value {
        match self.byte() % if depth > 2 { 5 } else { 7 } {
            0 => json!(self.byte() as u64 * 1_000_003),
            1 => json!(self.pick(&[
                "",
                "x",
                "é ü",
                "a\"b\\c",
                "line\nbreak",
                "}{][,:",
                "\u{2028}"
            ])),
            2 => json!(self.byte() % 2 == 0),
            3 => Value::Null,
            4 => json!(-(self.byte() as i64)),
            5 => Value::Array(
                (0..self.byte() % 3)
                    .map(|_| self.value(depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for i in 0..self.byte() % 3 {
                    m.insert(format!("k{i}"), self.value(depth + 1));
                }
                Value::Object(m)
            }
        }
    }
}

/// JSON white space as people and tools leave it.
const WS: &[&str] = &[
    "", " ", "\n", "\r\n", "\t", "\n  ", "\n    ", "\n\t", "\n\t\t", "\r\n  ", "  ", "\n \t",
];

/// `v` printed with white space and comma placement chosen by `c` (comma-first or comma-last per
/// container, any JSON white space between tokens); numbers too large for a float appear as
/// they would in a file.
/// The byte span of each object printed as an element of the top object's arrays (the agents)
/// is pushed to `spans`.
fn print(
    v: &Value,
    c: &mut Choices,
    out: &mut String,
    depth: usize,
    spans: &mut Vec<(usize, usize)>,
) {
    let start = out.len();
    let (open, close, items): (char, char, Vec<(Option<&String>, &Value)>) = match v {
        Value::Object(m) => ('{', '}', m.iter().map(|(k, x)| (Some(k), x)).collect()),
        Value::Array(a) => ('[', ']', a.iter().map(|x| (None, x)).collect()),
        Value::Number(n) if n.as_u64().is_some_and(|n| n % 7 == 3) => {
            out.push_str(&format!("{n}123456789012345678901234567890"));
            return;
        }
        x => {
            out.push_str(&x.to_string());
            return;
        }
    };
    let comma_first = c.byte() % 3 == 0;
    out.push(open);
    for (i, (k, x)) in items.iter().enumerate() {
        if i > 0 {
            if comma_first {
                out.push_str(c.pick(WS));
                out.push(',');
                out.push_str(c.pick(&[" ", "", "  "]));
            } else {
                out.push(',');
                out.push_str(c.pick(WS));
            }
        } else {
            out.push_str(c.pick(WS));
        }
        if let Some(k) = k {
            out.push_str(&serde_json::to_string(k).unwrap());
            out.push_str(c.pick(&["", " "]));
            out.push(':');
            out.push_str(c.pick(&[" ", "", "\n  "]));
        }
        print(x, c, out, depth + 1, spans);
    }
    out.push_str(c.pick(WS));
    out.push(close);
    if depth == 2 && open == '{' {
        spans.push((start, out.len()));
    }
}

/// The splice, differentially: a roster laid out as the bytes choose (comma-first, TABs, CRLF,
/// mixed, huge numbers, odd strings), an edit the bytes choose (members set, replaced,
/// removed); the spliced text must be valid JSON equal to serde_json's view of the edit.
pub fn splice(data: &[u8]) {
    let mut c = Choices { d: data, i: 0 };
    let n = 1 + c.byte() as usize % 3;
    let target = c.byte() as usize % n;
    let mut agents = Vec::new();
    for i in 0..n {
        let mut m = Map::new();
        let members = [
            "sessionId",
            "name",
            "coordinator",
            "description",
            "port",
            "projectDirectory",
        ];
        let mut keys: Vec<String> = members.iter().map(|s| s.to_string()).collect();
        for e in 0..c.byte() % 4 {
            keys.insert(c.byte() as usize % (keys.len() + 1), format!("extra{e}"));
        }
        for k in keys {
            let v = match k.as_str() {
                "sessionId" => json!(format!("s{i}")),
                "name" => json!(format!("A{i}")),
                "coordinator" => json!(i == 0),
                "port" => json!(41000 + i),
                "description" | "projectDirectory" => json!("."),
                _ => c.value(0),
            };
            m.insert(k, v);
        }
        agents.push(Value::Object(m));
    }
    let mut top = Map::new();
    top.insert("version".into(), json!(1));
    if c.byte() % 2 == 0 {
        top.insert("dashboard".into(), json!({"port": 41999, "big": 7}));
    }
    top.insert("agents".into(), Value::Array(agents));
    let doc = Value::Object(top);
    let mut text = String::new();
    text.push_str(c.pick(&["", "\n", " "]));
    let mut spans = Vec::new();
    let lead = text.len();
    print(&doc, &mut c, &mut text, 0, &mut spans);
    assert_eq!(spans.len(), n, "{lead}");
    text.push_str(c.pick(&["", "\n", "\r\n"]));
    let v: Value = serde_json::from_str(&text).expect("the generated roster is JSON");
    let ops: Vec<(u8, String, Value)> = (0..c.byte() % 5)
        .map(|_| {
            let op = c.byte();
            let key = c
                .pick(&[
                    "closeJob",
                    "handoff",
                    "port",
                    "extra0",
                    "extra1",
                    "name",
                    "sessionId",
                    "new",
                ])
                .to_string();
            (op, key, c.value(0))
        })
        .collect();
    let edit = |o: &mut Map<String, Value>| {
        for (op, k, v) in &ops {
            if k == "sessionId" {
                continue; // the entry is found by it
            }
            if op % 3 == 0 {
                o.remove(k);
            } else {
                o.insert(k.clone(), v.clone());
            }
        }
    };
    let out = check_splice(&text, &v, &format!("s{target}"), "generated", &edit)
        .expect("a generated roster always splices");
    changed_only_inside(&text, &out, spans[target]);
}

// -------------------------------------------------------------------------------------------
// What pi and the workers write.

/// A pi session file (header, task, tail scan, skimmed huge lines), also read from a leaf, then
/// classified: no panic; the task shows no control character.
pub fn session_file(data: &[u8]) {
    let path = scratch().join(format!("2026-01-01T00-00-00-000Z_{SID}.jsonl"));
    std::fs::write(&path, data).unwrap();
    if let Ok(sum) = evidence::sessions::read_session(&path) {
        if let Some(t) = &sum.task {
            no_controls(t, "the task");
            assert!(!t.contains('\n'));
        }
        let _ = intercom_pane::seam::board::classify::classify(&sum, 1_800_000_000_000);
    }
    let leaf = std::str::from_utf8(data.get(..8).unwrap_or_default()).unwrap_or("x");
    let _ = evidence::sessions::read_session_from_leaf(&path, leaf, None);
    // Tokens and cost: counting the whole file at once, and on in small reads, agree, and never
    // go past the end.
    use evidence::sessions::usage::{advance, count, UsageTally};
    let mut whole = UsageTally::default();
    count(&mut whole, data);
    assert!(whole.counted_to <= data.len() as u64);
    let f = std::fs::File::open(&path).unwrap();
    let mut steps = UsageTally::default();
    for _ in 0..64 {
        if advance(&f, data.len() as u64, &mut steps, 1) == 0 {
            break;
        }
    }
    assert!(steps.counted_to <= data.len() as u64);
    if steps.counted_to == whole.counted_to {
        assert_eq!(steps.usage, whole.usage);
    }
}

/// A pi session file as `log NAME` reads it: backward from its end (`--since`), and forward a
/// few bytes at a time as `--follow` sees pi append it. Both give the same entries and the same
/// skipped-line counts; tight budgets are kept; no panic, whatever the bytes.
pub fn session_timeline(data: &[u8]) {
    use evidence::sessions::backward::Limits;
    use evidence::sessions::timeline::{follow_timeline, read_timeline, What, READ_LIMITS};
    let path = scratch().join("timeline.jsonl");
    std::fs::write(&path, data).unwrap();
    let back = read_timeline(&path, None, &READ_LIMITS).unwrap();
    assert!(back.bytes <= data.len() as u64);
    assert!(!back.truncated);
    let step = 1 + u64::from(data.first().copied().unwrap_or(0) % 64);
    let fwd = follow_timeline(&path, step).unwrap();
    assert_eq!(back.entries, fwd.entries);
    assert_eq!(back.skipped, fwd.skipped);
    for e in &back.entries {
        match &e.what {
            What::Question { text } | What::Answer { text, .. } => {
                assert!(text.chars().count() <= 200 && !text.contains('\n'));
            }
            What::Tool(t) => assert!(t.args.chars().count() <= 161 && !t.args.contains('\n')),
            What::Turn(t) => {
                assert!(t.usage.usage.cost().is_finite() && !t.usage.at_least);
                if let (Some(d), Some(at), Some(end)) = (t.duration_ms, e.at, t.ended) {
                    assert_eq!(d, end - at);
                }
            }
            What::Compaction {} | What::Event { .. } => {}
        }
    }
    // Tight budgets: kept, never a panic.
    let tight = Limits {
        max_bytes: 257,
        max_lines: 3,
        line_cap: 100,
    };
    let t = read_timeline(&path, None, &tight).unwrap();
    assert!(t.bytes <= 257);
    // A cutoff keeps only entries at or after it (those with a time).
    let cut = 1_796_119_230_000;
    let since = read_timeline(&path, Some(cut), &READ_LIMITS).unwrap();
    assert!(since.entries.len() <= back.entries.len());
}

/// Intercom observation log bytes (the first byte: cut start, closed file): every event has
/// its required fields; every line's fields parse without panic.
pub fn observation_log(data: &[u8]) {
    let (flags, rest) = data.split_first().unwrap_or((&0, &[]));
    for e in evidence::log_event::parse_tail(rest, flags & 1 == 1, flags & 2 == 2) {
        assert!(!e.writer_id.is_empty() && !e.session_id.is_empty());
    }
    for line in rest.split(|&b| b == b'\n').take(64) {
        if let Some(f) = evidence::log_line::Fields::parse(line) {
            let _ = (
                f.str("event"),
                f.u64("ts"),
                f.bool("ok"),
                f.str_at(0),
                f.u64_at(1),
            );
        }
    }
}

/// A worker's Intercom report file: accepted only for the expected session.
pub fn report(data: &[u8]) {
    if let Some(r) = evidence::reports::parse_report(data, SID) {
        assert_eq!(r.session_id, SID);
        no_controls(&r.summary, "a report summary");
    }
}

/// A seat registration file.
pub fn registration(data: &[u8]) {
    use evidence::registrations::{parse_record, Event, PiState, RunEvent};
    let path = Path::new("/fuzz/.pi-intercom/seats/x.json");
    if let Ok(r) = parse_record(path, data) {
        // What the reader accepts, the writer writes back the same (one type for both), and
        // the caps hold.
        let bytes = r.to_bytes().expect("an accepted record serializes");
        let again = parse_record(path, &bytes).expect("a written record reads back");
        assert_eq!(again, r);
        assert!(r
            .channel
            .as_ref()
            .is_none_or(|c| c.starts_with('/') && c.len() <= 107));
        assert!(r.session_id.as_ref().is_none_or(|s| s.len() <= 256));
        if let Some(pi) = &r.pi {
            assert!(pi.state.check().is_ok());
        }
    }
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = RunEvent::parse(s);
        let _ = Event::parse(s);
        // `register --pi-state`: an accepted picture keeps its caps and round-trips.
        if let Ok(st) = PiState::from_arg(s) {
            assert!(st.check().is_ok());
            let text = serde_json::to_string(&st).expect("a picture serializes");
            assert_eq!(PiState::from_arg(&text).expect("a picture reads back"), st);
        }
    }
}

/// `seen.json`: a JSON object of strings, or refused.
pub fn seen(data: &[u8]) {
    if let Some(m) = evidence::seen::parse_seen(data) {
        let v: Value = serde_json::from_slice(data).expect("accepted seen marks are JSON");
        assert_eq!(v.as_object().map(Map::len), Some(m.len()));
    }
}

// -------------------------------------------------------------------------------------------
// What the multiplexers and peers answer.

/// A tmux `list-panes` listing: accepted panes are `%N` ids of one server.
pub fn tmux_listing(data: &[u8]) {
    let _ = intercom_pane::seam::mux::tmux::parse_rows(data);
    if let Ok(list) = intercom_pane::seam::mux::tmux::parse_listing(data, || Ok(())) {
        for p in &list.panes {
            assert!(
                intercom_pane::seam::mux::tmux::is_pane_id(&p.id),
                "{:?}",
                p.id
            );
        }
    }
}

/// Herdr's reply lines (a snapshot, then process infos): sanitized names, bounded panes.
pub fn herdr_listing(data: &[u8]) {
    let mut lines = data.split(|&b| b == b'\n');
    let snapshot = lines.next().unwrap_or_default();
    let infos: Vec<&[u8]> = lines.take(300).collect();
    if let Ok(list) = intercom_pane::seam::mux::herdr::listing_from_replies(snapshot, &infos) {
        assert!(list.panes.len() <= intercom_pane::seam::mux::herdr::MAX_PANES);
        for p in &list.panes {
            for s in [&p.title, &p.window_name, &p.current_command, &p.marker]
                .into_iter()
                .flatten()
            {
                no_controls(s, "a Herdr name");
            }
        }
    }
}

/// The reply channel's answer line and a health endpoint's HTTP response (first byte picks).
pub fn peer_answers(data: &[u8]) {
    let (which, rest) = data.split_first().unwrap_or((&0, &[]));
    if which % 2 == 0 {
        let a = intercom_pane::seam::mux::pi_channel::parse_answer(rest, "id-1");
        // Shown to the person: bounded (500 characters and an ellipsis) and sanitized.
        assert!(a.detail.chars().count() <= 501, "{:?}", a.detail);
        no_controls(&a.detail, "a channel answer");
    } else {
        assert!(
            intercom_pane::seam::probe::classify_response(rest, "sid-1").is_some(),
            "an in-memory response always ends"
        );
    }
}

// -------------------------------------------------------------------------------------------
// Text and names.

/// JavaScript's `String.prototype.trim` set (WhiteSpace and LineTerminator), as pi applies it.
fn js_trimmed(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The reply text rules and the sanitizers every shown text passes.
pub fn reply_text(data: &[u8]) {
    let Ok(t) = std::str::from_utf8(data) else {
        return;
    };
    let ok = reply_text::check_text(t).is_ok();
    if ok {
        assert!(!t.chars().any(reply_text::is_refused_control));
        assert!(!t.chars().all(reply_text::is_invisible));
        assert!(t.chars().count() <= reply_text::MAX_REPLY_CHARS);
        // What is sent: pi's own trim of it (JavaScript's), never blank.
        let sent = reply_text::trim_like_pi(t);
        assert_eq!(sent, t.trim_matches(js_trimmed));
        assert!(!sent.is_empty());
        if reply_text::check_for_editor(t).is_ok() {
            assert!(!sent.starts_with(['!', '/']) && !t.contains('\t'));
        } else {
            assert!(sent.starts_with(['!', '/']) || t.contains('\t'));
        }
    }
    assert!(t.starts_with(reply_text::without_legacy_trailer(t)));
    let clean = intercom_pane::seam::text::sanitize(t);
    no_controls(&clean, "sanitize");
    assert!(!clean.contains(['\n', '\t']));
    let line = intercom_pane::seam::text::one_line(t, 240);
    assert!(line.chars().count() <= 240 && !line.contains('\n'));
    let _ = intercom_pane::seam::text::clip(t, 40);
    // One shell word: left bare only when every byte is safe, else quoted whole.
    let q = intercom_pane::seam::text::shell_quote(t);
    assert!(
        q == t
            && !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
            || q.starts_with('\'') && q.ends_with('\'') && q.len() >= 2,
        "{t:?} -> {q:?}"
    );
}

/// `/proc/<pid>/stat`, a command line (NUL-separated) judged as pi or not, and the names read
/// from folders (session files, observation logs, seat and connector names).
pub fn proc_and_names(data: &[u8]) {
    let _ = intercom_pane::seam::proc::parse_stat(data);
    let argv: Vec<String> = data
        .split(|&b| b == 0)
        .take(64)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    if let Some((exe, rest)) = argv.split_first() {
        let _ = intercom_pane::seam::proc::pi_verdict(Path::new(exe), rest);
    }
    let s = String::from_utf8_lossy(data);
    if let Some(id) = evidence::sessions::session_id_from_name(&s) {
        assert!(s.contains(id));
    }
    let _ = evidence::observations::match_log_name(&s);
    let _ = evidence::log_event::is_lower_uuid(&s);
    let _ = evidence::connectors::safe_name(&s);
    let _ = evidence::reports::report_file_name(&s);
}

/// The records read from the state folders: a close job record (`.pi-intercom/jobs/<job>.json`,
/// mode 0600) and a connector binding (`<data root>/discord/<name>.json`).
pub fn records(data: &[u8]) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let root = scratch();
    let job = intercom_pane::seam::actions::close::record::path(root, "j-fuzz");
    let binding = root.join("discord/fuzz.json");
    std::fs::create_dir_all(root.join("discord")).unwrap();
    for p in [&job, &binding] {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(p)
            .unwrap();
        f.write_all(data).unwrap();
    }
    let _ = intercom_pane::seam::actions::close::record::read(root, "j-fuzz");
    let set = evidence::connectors::read_bindings(root);
    assert!(set.items.len() <= 1);
}

/// What another host sends (its stream lines and records, its hello) and what the hosts file
/// and `--expect-seat` give: parsed without a panic; a row made from another host's record is
/// always tagged with that host and keyed apart from this machine's; a hosts file accepted
/// names only valid hosts, destinations that are never options and source flags only; every
/// quoted word is one single-quoted word.
pub fn hosts(data: &[u8]) {
    use intercom_pane::seam::hosts::{expect, file, hello, quote, wire};
    let (which, rest) = data.split_first().unwrap_or((&0, &[]));
    let text = String::from_utf8_lossy(rest);
    match which % 5 {
        0 => {
            let records: Vec<Value> = match wire::line(&text) {
                wire::Line::Board(b) => wire::records(&b).into_iter().cloned().collect(),
                wire::Line::Seat { record, .. } => vec![record],
                _ => Vec::new(),
            };
            for r in records
                .iter()
                .chain(serde_json::from_str::<Value>(&text).ok().as_ref())
            {
                if let Some(row) = wire::row_of("h-1", r, 5) {
                    let h = row.host.as_ref().expect("tagged");
                    assert_eq!(h.name, "h-1");
                    assert!(
                        row.id.starts_with("h-1\u{1f}") && row.seen_key.starts_with("h-1\u{1f}")
                    );
                    assert!(row.state_source.to_string().starts_with("host h-1: "));
                }
            }
        }
        1 => {
            if let Ok(h) = hello::judge(rest) {
                assert_eq!(h.protocol, hello::PROTOCOL);
                assert_eq!(h.echo.as_deref(), Some(quote::PROBE_WORD));
            }
        }
        2 => {
            for h in file::parse(rest).unwrap_or_default() {
                assert!(!h.name.is_local() && !h.dest.starts_with('-'));
                assert!(h.args.iter().step_by(2).all(|f| f.starts_with("--")));
            }
        }
        3 => {
            for w in text.split('\0') {
                let q = quote::word(w).unwrap();
                assert!(q.starts_with('\'') && q.ends_with('\''));
                // Inside, a quote only ever appears as the `'\''` sequence.
                let inner = &q[1..q.len() - 1];
                assert!(!inner.replace("'\\''", "").contains('\''), "{q}");
            }
            assert!(quote::word("a\0b").is_err());
        }
        _ => {
            if let Ok(e) = expect::SeatExpect::parse(&text) {
                assert_eq!(expect::SeatExpect::parse(&e.token()).unwrap(), e);
            }
        }
    }
}

/// git's `-z` outputs (`src/git/parse.rs`): the first byte picks the parser. Whatever the bytes,
/// no panic; every name is whole (no NUL, not empty), every commit id is 40 or 64 hex digits,
/// a merge's conflicted files are listed once each.
pub fn git_outputs(data: &[u8]) {
    use intercom_pane::seam::git::parse;
    let (which, rest) = data.split_first().unwrap_or((&0, &[]));
    let whole = |n: &[u8]| !n.is_empty() && !n.contains(&0);
    match which % 5 {
        0 => {
            for f in parse::numstat(rest) {
                assert!(whole(&f.path), "{f:?}");
            }
        }
        1 => {
            for c in parse::commits(rest) {
                assert!(matches!(c.id.len(), 40 | 64), "{c:?}");
                assert!(!c.subject.contains('\0'));
            }
        }
        2 => {
            if let Some((tree, files)) = parse::merge_tree(rest) {
                assert!(matches!(tree.len(), 40 | 64));
                for (i, f) in files.iter().enumerate() {
                    assert!(whole(f));
                    assert!(!files[..i].contains(f), "listed twice: {f:?}");
                }
            }
        }
        3 => {
            for w in parse::worktrees(rest) {
                assert!(!w.path.contains(&0));
            }
            for n in parse::names(rest) {
                assert!(whole(&n));
            }
        }
        _ => {
            let lines = parse::text_lines(rest);
            if let Some(n) = lines {
                assert!(n <= rest.len() as u64);
            }
        }
    }
}
