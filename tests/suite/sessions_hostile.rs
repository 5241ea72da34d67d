//! Hostile files: huge sparse files, huge lines, garbage bytes, wrong kinds of files. Each must
//! answer fast, bounded, and truthfully.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::io_count::bytes_read;
use crate::sessions_common;

use intercom_pane::seam::board::classify::{classify, Activity};
use intercom_pane::seam::board::reason::StateReason;
use intercom_pane::seam::evidence::sessions::{
    read_session, read_session_with, SessionError, READ_BUDGET,
};
use intercom_pane::seam::evidence::ScanMemory;
use intercom_pane::seam::fsguard::FsError;
use serde_json::json;
use sessions_common::Session;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

const ID: &str = "0190bbbb-0000-7000-8000-000000000001";

fn header() -> String {
    format!(
        "{}\n",
        json!({"type":"session","version":3,"id":ID,"timestamp":"2026-11-29T10:00:00.000Z","cwd":"/w"})
    )
}

/// The lines after the header of a session ending in a running tool.
fn tool_tail() -> (String, i64) {
    let mut s = Session::new(ID);
    s.user("Run the long command");
    s.tool_call("Running.");
    let mut t = String::from("\n");
    for l in &s.lines[1..] {
        t.push_str(l);
        t.push('\n');
    }
    (t, s.clock)
}

/// Room for the reads that are not file contents (the thread's own counter, `/proc` lookups).
const READ_SLACK: u64 = 64 * 1024;
/// How long a refused special file may take before the test calls it blocked (generous).
const HANG_GUARD: Duration = Duration::from_secs(30);

#[test]
fn four_gib_sparse_file_with_a_valid_tail() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let f = std::fs::File::create(&p).unwrap();
    f.write_all_at(header().as_bytes(), 0).unwrap();
    let len: u64 = 4 << 30;
    f.set_len(len).unwrap();
    let (tail, clock) = tool_tail();
    f.write_all_at(tail.as_bytes(), len - tail.len() as u64)
        .unwrap();
    drop(f);

    let (s, read) = bytes_read(|| read_session(&p).unwrap());
    // Not 4 GiB: at most the reader's budget.
    assert!(read <= READ_BUDGET + READ_SLACK, "read {read} bytes");
    assert_eq!(s.file_len, len);
    assert_eq!(s.session_id, ID);
    // The task sits beyond a hole: unknown rather than a guess.
    assert_eq!(s.task, None);
    let c = classify(&s, clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::ToolRunning)
    );
    assert_eq!(s.last_assistant_text.as_deref(), Some("Running."));
    // The newest entries decided everything: the scan never reached the hole.
    assert_eq!(s.skipped_lines, 0);
    assert!(!s.tail_truncated);

    // A tail of a lone tool result needs older entries: the scan reaches the hole, counts it
    // once and stops there, fast.
    let lone = format!(
        "\n{}\n",
        json!({"type":"message","id":"dd000001","parentId":"dd000000","timestamp":"2026-11-29T12:00:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false}})
    );
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    // Cut the old tail off, then grow back: the gap reads as zeros.
    f.set_len(len - (1 << 20)).unwrap();
    f.set_len(len).unwrap();
    f.write_all_at(lone.as_bytes(), len - lone.len() as u64)
        .unwrap();
    drop(f);
    let (s, read) = bytes_read(|| read_session(&p).unwrap());
    assert!(read <= READ_BUDGET + READ_SLACK, "read {read} bytes");
    assert_eq!(classify(&s, clock).reason, StateReason::ToolResult);
    assert_eq!(s.skipped_lines, 1, "the hole counts as one skipped line");
    assert!(s.tail_truncated);
    assert_eq!(s.model, None, "unknown, not guessed");
}

/// Write one `message` line whose `content` text is `size` bytes, without holding it in memory.
fn write_huge_line(f: &mut std::fs::File, role_prefix: &str, suffix: &str, size: usize) {
    f.write_all(role_prefix.as_bytes()).unwrap();
    let block = vec![b'a'; 64 * 1024];
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len());
        f.write_all(&block[..n]).unwrap();
        left -= n;
    }
    f.write_all(suffix.as_bytes()).unwrap();
}

#[test]
fn a_16_mib_tool_result_as_the_newest_entry_is_working() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Dump the logs");
    let call = s.tool_call("Reading logs.");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(s.text().as_bytes()).unwrap();
    write_huge_line(
        &mut f,
        &format!(
            r#"{{"type":"message","id":"aaaa0001","parentId":"{call}","timestamp":"2026-11-29T11:00:00.000Z","message":{{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{{"type":"text","text":""#
        ),
        r#""}],"isError":false,"durationMs":5,"timestamp":1}}"#,
        16 << 20,
    );
    f.write_all(b"\n").unwrap();
    drop(f);

    let (sum, read) = bytes_read(|| read_session(&p).unwrap());
    assert!(read <= READ_BUDGET + READ_SLACK, "read {read} bytes");
    let c = classify(&sum, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::ToolResult)
    );
    assert!(sum.branch[0].skimmed);
    assert_eq!(sum.newest_entry_id.as_deref(), Some("aaaa0001"));
    // The branch continues past the huge line to the tool call and the task.
    assert_eq!(sum.last_assistant_text.as_deref(), Some("Reading logs."));
    assert_eq!(sum.task.as_deref(), Some("Dump the logs"));
    assert_eq!(sum.skipped_lines, 0);
}

#[test]
fn a_huge_assistant_line_is_skimmed_from_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    let u = s.user("Write the report");
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(s.text().as_bytes()).unwrap();
    // 3 MiB of thinking, then a tool call, then stopReason at the end: working.
    write_huge_line(
        &mut f,
        &format!(
            r#"{{"type":"message","id":"bbbb0001","parentId":"{u}","timestamp":"2026-11-29T11:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":""#
        ),
        r#""},{"type":"toolCall","id":"c9","name":"write","arguments":{"path":"r.md"}}],"provider":"fake","model":"fake-model","stopReason":"toolUse"}}"#,
        3 << 20,
    );
    f.write_all(b"\n").unwrap();
    drop(f);
    let sum = read_session(&p).unwrap();
    assert!(sum.branch[0].skimmed);
    assert_eq!(classify(&sum, s.clock).reason, StateReason::ToolRunning);

    // Same size, ending in an error: the error message is read from the tail.
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(s.text().as_bytes()).unwrap();
    write_huge_line(
        &mut f,
        &format!(
            r#"{{"type":"message","id":"bbbb0002","parentId":"{u}","timestamp":"2026-11-29T11:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":""#
        ),
        r#""}],"provider":"fake","model":"fake-model","stopReason":"aborted","errorMessage":"Operation aborted"}}"#,
        3 << 20,
    );
    f.write_all(b"\n").unwrap();
    drop(f);
    let sum = read_session(&p).unwrap();
    let c = classify(&sum, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::Aborted)
    );
    assert_eq!(sum.last_error.as_deref(), Some("Operation aborted"));
}

/// A reply line over the parse cap that asks for input: its text is recovered from the ends the
/// skim reads, whether it starts the content (3 MiB of text) or follows 3 MiB of thinking; and
/// the previous reply's text is never shown in its place.
#[test]
fn a_huge_reply_asking_for_input_is_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Plan it");
    s.reply("Earlier answer.");
    let u = s.user("And the rollout?");
    let shapes = [
        (
            r#"{"type":"text","text":"Input needed: staging or production? "#,
            r#""}],"provider":"fake","model":"fake-model","stopReason":"stop"}}"#,
        ),
        (
            r#"{"type":"thinking","thinking":""#,
            r#"","thinkingSignature":"s"},{"type":"text","text":"Input needed: staging or production?"}],"provider":"fake","model":"fake-model","stopReason":"stop"}}"#,
        ),
    ];
    for (open, close) in shapes {
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(s.text().as_bytes()).unwrap();
        write_huge_line(
            &mut f,
            &format!(
                r#"{{"type":"message","id":"dddd0001","parentId":"{u}","timestamp":"2026-11-29T11:00:00.000Z","message":{{"role":"assistant","content":[{open}"#
            ),
            close,
            3 << 20,
        );
        f.write_all(b"\n").unwrap();
        drop(f);
        let sum = read_session(&p).unwrap();
        assert!(sum.branch[0].skimmed);
        let c = classify(&sum, s.clock);
        assert_eq!(
            (c.activity, c.reason),
            (Activity::Waiting, StateReason::InputNeeded),
            "{open}"
        );
        let last = sum.last_assistant_text.clone().unwrap_or_default();
        assert!(
            last.starts_with("Input needed: staging or production?"),
            "{last:?}"
        );
    }
}

#[test]
fn invalid_utf8_and_malformed_lines_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Task");
    s.reply("Input needed: which region?");
    let mut bytes = s.text().into_bytes();
    bytes.extend_from_slice(
        b"{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"\xff\xfe\"}}\n",
    );
    bytes.extend_from_slice(b"not json at all\n");
    bytes.extend_from_slice(b"[1,2,3]\n");
    bytes.extend_from_slice(b"{\"no_type\":1}\n");
    bytes.extend_from_slice(b"\n\n");
    std::fs::write(&p, &bytes).unwrap();
    let sum = read_session(&p).unwrap();
    assert_eq!(sum.skipped_lines, 4);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Waiting);
}

#[test]
fn a_partial_last_line_is_ignored_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Task");
    s.reply("Done.");
    let mut t = s.text();
    t.push_str(r#"{"type":"message","id":"cc","parentId":"#);
    std::fs::write(&p, t).unwrap();
    let sum = read_session(&p).unwrap();
    assert_eq!(sum.skipped_lines, 0);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Idle);
}

#[test]
fn a_file_without_a_header_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let cases: Vec<Vec<u8>> = vec![
        b"{\"type\":\"message\",\"id\":\"a\"}\n".to_vec(),
        b"{\"type\":\"session\",\"cwd\":\"/w\"}\n".to_vec(),
        b"{\"type\":\"session\",\"id\":\"\",\"cwd\":\"/w\"}\n".to_vec(),
        b"{\"type\":\"session\",\"id\":\"x\"}\n".to_vec(),
        b"\xff\xfe garbage\n".to_vec(),
        b"\n{\"type\":\"session\",\"id\":\"x\",\"cwd\":\"/w\"}\n".to_vec(),
        format!(
            "{{\"type\":\"session\",\"id\":\"x\",\"cwd\":\"{}\"}}\n",
            "a".repeat(70_000)
        )
        .into_bytes(),
    ];
    for c in cases {
        std::fs::write(&p, &c).unwrap();
        let e = read_session(&p).unwrap_err();
        assert_eq!(e, SessionError::InvalidHeader);
        assert_eq!(e.code(), "invalid_header");
    }
    // A header alone is valid: nothing happened yet.
    std::fs::write(&p, header()).unwrap();
    let s = read_session(&p).unwrap();
    assert_eq!(classify(&s, 0).reason, StateReason::NoMessages);
    // Also without its newline.
    std::fs::write(&p, header().trim_end()).unwrap();
    assert_eq!(read_session(&p).unwrap().session_id, ID);
}

#[test]
fn an_empty_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    std::fs::write(&p, b"").unwrap();
    let e = read_session(&p).unwrap_err();
    assert_eq!(e.code(), "empty_file");
}

#[test]
fn fifo_link_device_and_folder_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join(format!("x_{ID}.jsonl"));
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    // Hang guard, not a product deadline: opening a FIFO for reading blocks until a writer
    // comes, which here never happens.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(read_session(&fifo));
    });
    assert_eq!(
        rx.recv_timeout(HANG_GUARD)
            .expect("the FIFO blocked the reader"),
        Err(SessionError::Fs(FsError::Fifo))
    );

    let real = dir.path().join("real.jsonl");
    std::fs::write(&real, header()).unwrap();
    let link = dir.path().join(format!("y_{ID}.jsonl"));
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(read_session(&link).unwrap_err().code(), "link_refused");
    assert_eq!(
        read_session(std::path::Path::new("/dev/null"))
            .unwrap_err()
            .code(),
        "device_refused"
    );
    assert_eq!(read_session(dir.path()).unwrap_err().code(), "not_regular");
    assert_eq!(
        read_session(&dir.path().join("missing.jsonl"))
            .unwrap_err()
            .code(),
        "not_found"
    );
}

#[test]
fn a_hole_between_valid_regions_stops_the_scan() {
    // Zeros in the middle (a crash left a zeroed block): the newest entries still decide.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Before the hole");
    let mut bytes = s.text().into_bytes();
    bytes.extend(std::iter::repeat_n(0u8, 200_000));
    bytes.push(b'\n');
    s.user("After the hole");
    bytes.extend_from_slice(s.lines.last().unwrap().as_bytes());
    bytes.push(b'\n');
    std::fs::write(&p, &bytes).unwrap();
    let sum = read_session(&p).unwrap();
    assert_eq!(classify(&sum, s.clock).reason, StateReason::UserMessage);
    assert_eq!(sum.task.as_deref(), Some("Before the hole"));
    assert_eq!(sum.model, None);
    assert_eq!(sum.skipped_lines, 1);
    assert!(sum.tail_truncated);
}

#[test]
fn deeply_nested_and_odd_typed_fields_do_not_break_reading() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Task");
    s.entry(
        json!({"type":"message","message":{"role":42,"content":{"weird":true},"stopReason":["x"]}}),
    );
    s.entry(json!({"type":"message","message":null}));
    s.reply("ok");
    let mut t = s.text();
    t.push_str(&"[".repeat(10_000));
    t.push('\n');
    std::fs::write(&p, t).unwrap();
    let sum = read_session(&p).unwrap();
    assert_eq!(sum.skipped_lines, 1);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Idle);
}

#[test]
fn big_tool_outputs_between_wordless_calls_bound_the_text_search() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Read every file");
    s.reply("Starting.");
    let big = "0123456789abcdef".repeat(200 * 64); // 200 KiB
    for _ in 0..40 {
        s.assistant_blocks(
            json!([{"type":"toolCall","id":"c","name":"read","arguments":{"path":"f"}}]),
            "toolUse",
        );
        s.entry(json!({"type":"message","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":big}],"isError":false}}));
    }
    std::fs::write(&p, s.text()).unwrap();
    let sum = read_session(&p).unwrap();
    assert_eq!(classify(&sum, s.clock).reason, StateReason::ToolResult);
    // "Starting." lies ~8 MiB back, beyond the text search budget: unknown, not searched for.
    assert_eq!(sum.last_assistant_text, None);
    assert!(sum.branch.len() < 30, "{}", sum.branch.len());
    assert_eq!(sum.task.as_deref(), Some("Read every file"));
}

#[test]
fn every_truncation_and_random_garbage_reads_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("x_{ID}.jsonl"));
    let mut s = Session::new(ID);
    s.user("Täsk with ünïcode ✓");
    s.tool_call("Running ✓.");
    s.tool_result();
    s.reply("Input needed: pick ✓ or ✗");
    let full = s.text().into_bytes();
    // Every prefix: a file cut anywhere (even inside a UTF-8 sequence) reads or is refused.
    // Every byte near the end (where the interesting lines are), every 5th before that.
    let dense_from = full.len().saturating_sub(800);
    for n in (0..=full.len()).filter(|&n| n >= dense_from || n % 5 == 0) {
        std::fs::write(&p, &full[..n]).unwrap();
        match read_session(&p) {
            Ok(sum) => {
                let _ = classify(&sum, 0);
            }
            Err(e) => assert!(["empty_file", "invalid_header"].contains(&e.code())),
        }
    }
    // Deterministic pseudo-random garbage after a valid header, with newlines and NULs mixed in.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..100 {
        let mut bytes = header().into_bytes();
        let len = (round * 37) % 3000;
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = match x % 16 {
                0 => b'\n',
                1 => b'{',
                2 => b'"',
                3 => 0,
                _ => (x >> 8) as u8,
            };
            bytes.push(b);
        }
        std::fs::write(&p, &bytes).unwrap();
        let sum = read_session(&p).unwrap();
        let _ = classify(&sum, 0);
    }
}

/// The sidebar reads every seat's session each pass: an unchanged file is not read again, and
/// any change (appended to, replaced, turned into a link) is seen on the next read.
#[test]
fn an_unchanged_session_is_not_read_again_and_every_change_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir
        .path()
        .join(format!("2026-11-29T10-00-00-000Z_{ID}.jsonl"));
    let session = |task: &str| {
        let mut s = Session::new(ID);
        s.user(task);
        s.lines.join("\n") + "\n"
    };
    let task = |c: char| c.to_string().repeat(4000);
    std::fs::write(&p, session(&task('a'))).unwrap();
    // The task is shortened for the board; its first letter tells the versions apart.
    // The sidebar's memory, kept across its passes.
    let memory = ScanMemory::new();
    let read_session = |p: &Path| read_session_with(p, Some(&memory.sessions));
    let read = || {
        read_session(&p)
            .unwrap()
            .task
            .and_then(|t| t.chars().next())
    };
    let (t, n) = bytes_read(read);
    assert_eq!(t, Some('a'));
    assert!(n >= 4000, "{n}");
    // Settled: read once more, then not at all while it stays the same.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(read(), Some('a'));
    let (t, n) = bytes_read(read);
    assert_eq!(t, Some('a'));
    assert!(n < 4000, "an unchanged session was read again ({n} bytes)");
    // Appended to: seen (a new length and times).
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    f.write_all(b"{\"type\":\"custom\",\"id\":\"x1\",\"parentId\":null}\n")
        .unwrap();
    drop(f);
    assert_eq!(
        read_session(&p).unwrap().file_len,
        std::fs::metadata(&p).unwrap().len()
    );
    // Replaced by another file: seen.
    let tmp = dir.path().join("s.tmp");
    std::fs::write(&tmp, session(&task('b'))).unwrap();
    std::fs::rename(&tmp, &p).unwrap();
    assert_eq!(read(), Some('b'));
    // Settled again, then turned into a link to a valid session: refused, never remembered.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(read(), Some('b'));
    std::fs::rename(&p, &tmp).unwrap();
    std::os::unix::fs::symlink(&tmp, &p).unwrap();
    assert!(matches!(
        read_session(&p),
        Err(SessionError::Fs(FsError::Link))
    ));
}
