//! Text of a skimmed line (one too long to parse whole; only its first and last `SKIM_WINDOW`
//! bytes are read). The visitor cannot keep a string that the window cuts off, so the reply text
//! that decides `waiting` is recovered here from raw bytes:
//! - a text block (or a string `content`) that starts in the head: its decoded prefix, which
//!   holds the first line whenever that line starts in the window;
//! - else, when the head shows the content opening with another block (a huge thinking block or
//!   tool call) that runs past the window, the first block that starts in the tail, if it is a
//!   complete text block.
//!
//! Why raw patterns are safe: inside a JSON string every `"` is escaped, so a `"type":"text"`
//! written with bare quotes is structure, wherever the window starts. What the skipped middle
//! held is not known: a text block there (several blocks in one multi-MiB line) would be missed,
//! the same limit the tail's `stopReason` already has.

const CONTENT_BLOCKS: &[u8] = b"\"content\":[";
const CONTENT_STRING: &[u8] = b"\"content\":\"";
const TEXT_BLOCK: &[u8] = b"{\"type\":\"text\",\"text\":\"";
const BLOCK_START: &[u8] = b"{\"type\":\"";

/// Where `needle` first occurs in `hay` (never for an empty needle).
pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The text the head and tail windows of a skimmed message line show, if any.
pub(super) fn skimmed_text(head: &[u8], tail: &[u8]) -> Option<String> {
    if let Some(at) = find(head, CONTENT_STRING) {
        return decode_prefix(&head[at + CONTENT_STRING.len()..]);
    }
    let start = find(head, CONTENT_BLOCKS)? + CONTENT_BLOCKS.len();
    let blocks = &head[start..];
    if blocks.starts_with(TEXT_BLOCK) {
        return decode_prefix(&blocks[TEXT_BLOCK.len()..]);
    }
    if !blocks.starts_with(BLOCK_START) {
        return None;
    }
    // The first block is something else and the head was cut inside the line: the first block
    // that starts in the tail follows the cut one.
    let next = (0..tail.len()).find(|&i| {
        matches!(tail.get(i.wrapping_sub(1)), Some(b',') | Some(b'['))
            && tail[i..].starts_with(BLOCK_START)
    })?;
    let block = &tail[next..];
    if !block.starts_with(TEXT_BLOCK) {
        return None;
    }
    complete_string(&block[TEXT_BLOCK.len()..])
}

/// A JSON string that ends within `bytes` (they start right after its opening quote).
fn complete_string(bytes: &[u8]) -> Option<String> {
    let end = string_end(bytes)?;
    serde_json::from_slice::<String>(&quoted(&bytes[..end])).ok()
}

/// The decoded start of a JSON string that may be cut off by the window's end.
fn decode_prefix(bytes: &[u8]) -> Option<String> {
    if let Some(end) = string_end(bytes) {
        return serde_json::from_slice::<String>(&quoted(&bytes[..end])).ok();
    }
    let mut body = bytes;
    // Drop a cut-off UTF-8 sequence and a cut-off escape at the end; a few tries are enough.
    for _ in 0..8 {
        if let Ok(s) = serde_json::from_slice::<String>(&quoted(body)) {
            return Some(s);
        }
        let valid = match std::str::from_utf8(body) {
            Ok(_) => body.len(),
            Err(e) => e.valid_up_to(),
        };
        let cut = match body[..valid].iter().rposition(|&b| b == b'\\') {
            // An escape within the last 6 bytes may be the cut one.
            Some(i) if valid - i <= 6 => i,
            _ if valid < body.len() => valid,
            _ => return None,
        };
        body = &body[..cut];
    }
    None
}

/// Index of the closing quote of a string whose body starts at `bytes[0]`.
fn string_end(bytes: &[u8]) -> Option<usize> {
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some(i),
            _ => {}
        }
    }
    None
}

fn quoted(body: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(body.len() + 2);
    v.push(b'"');
    v.extend_from_slice(body);
    v.push(b'"');
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-11-30T00:00:00.000Z","message":{"role":"assistant","content":["#;

    #[test]
    fn a_text_block_cut_by_the_head_keeps_its_first_line() {
        let head = format!(
            "{HEAD}{{\"type\":\"text\",\"text\":\"\\n\\nInput needed: choose A or B\\nmore aaaa"
        );
        let t = skimmed_text(head.as_bytes(), b"").unwrap();
        assert!(
            t.starts_with("\n\nInput needed: choose A or B\nmore"),
            "{t:?}"
        );
        // Cut inside an escape, and inside a multi-byte character.
        for cut in [r"Input needed: é\u00", r"Input needed: x\"] {
            let head = format!("{HEAD}{{\"type\":\"text\",\"text\":\"{cut}");
            let t = skimmed_text(head.as_bytes(), b"").unwrap();
            assert!(t.starts_with("Input needed: "), "{t:?}");
        }
        let mut head = format!("{HEAD}{{\"type\":\"text\",\"text\":\"Input needed: é").into_bytes();
        head.pop();
        assert_eq!(skimmed_text(&head, b"").unwrap(), "Input needed: ");
    }

    #[test]
    fn a_text_block_after_a_huge_thinking_block_is_read_from_the_tail() {
        let head = format!("{HEAD}{{\"type\":\"thinking\",\"thinking\":\"bbbb");
        let tail = br#"bbbb \"},{\"type\":\"text\",\"text\":\"x\"} bbb","thinkingSignature":"s"},{"type":"text","text":"Input needed: choose"}],"stopReason":"stop"}}"#;
        assert_eq!(
            skimmed_text(head.as_bytes(), tail).as_deref(),
            Some("Input needed: choose")
        );
        // The first block starting in the tail is a tool call: no text is claimed.
        let tail = br#"bbb"},{"type":"toolCall","id":"c","name":"bash","arguments":{}},{"type":"text","text":"Input needed: x"}]}}"#;
        assert_eq!(skimmed_text(head.as_bytes(), tail), None);
    }

    #[test]
    fn a_string_content_is_read_from_the_head() {
        let head = r#"{"type":"message","message":{"role":"user","content":"Paste: aaaa"#;
        assert_eq!(
            skimmed_text(head.as_bytes(), b"").as_deref(),
            Some("Paste: aaaa")
        );
    }
}
