//! The backward scan of a session file (see the parent module for why).

use super::parse::{parse_line, skim_line, to_entry, Entry, RawEntry};
use super::{
    EntryKind, Role, StopReason, TailDamage, CHUNK, ENOUGH_BRANCH, FIRST_READ, LINE_PARSE_CAP,
    MAX_ENTRIES, SEEK_CHUNK, SKIM_WINDOW, TAIL_BUDGET, TEXT_SEARCH_BUDGET,
};
use memchr::{memchr, memrchr};

use crate::clock::Ms;
use crate::fsguard;

// ---------------------------------------------------------------------------------------------
// The backward scan.

/// Collects entries newest first and follows the branch as it goes.
pub(super) struct Tail {
    /// Entries met so far (≤ MAX_ENTRIES).
    pub(super) seen: usize,
    /// The entries on the branch, newest first.
    pub(super) branch: Vec<Entry>,
    pub(super) want: Option<String>,
    pub(super) linear: bool,
    pub(super) branch_done: bool,
    pub(super) skipped: u32,
    pub(super) newest_entry_id: Option<String>,
    pub(super) last_activity: Option<Ms>,
    /// The branch starts at this entry instead of the last line (pi's `/tree` moved its leaf
    /// without writing anything); the newest message on that branch is the last activity.
    pub(super) leaf: Option<String>,
    /// The newest lines could not be read: met before any entry (see `TailDamage`).
    pub(super) damage: Option<TailDamage>,
}

impl Tail {
    fn new(leaf: Option<&str>) -> Tail {
        Tail {
            seen: 0,
            branch: Vec::new(),
            want: leaf.map(str::to_string),
            linear: false,
            branch_done: false,
            skipped: 0,
            newest_entry_id: None,
            last_activity: None,
            leaf: leaf.map(str::to_string),
            damage: None,
        }
    }

    /// Record damage met before any entry was read: it hides the newest state.
    fn damaged(&mut self, d: TailDamage) {
        if self.seen == 0 && self.damage.is_none() {
            self.damage = Some(d);
        }
    }

    fn push(&mut self, e: Entry) {
        let first = self.seen == 0;
        self.seen += 1;
        if self.leaf.is_none()
            && self.last_activity.is_none()
            && e.branch.kind == EntryKind::Message
        {
            self.last_activity = e.branch.timestamp;
        }
        let on_branch = if first && self.leaf.is_none() {
            self.newest_entry_id = e.branch.id.clone();
            self.linear = e.branch.id.is_none();
            true
        } else if first {
            self.newest_entry_id = e.branch.id.clone();
            // Old linear files have no ids to start a branch at.
            !self.branch_done && self.want.is_some() && self.want == e.branch.id
        } else if self.linear {
            true
        } else {
            !self.branch_done && self.want.is_some() && self.want == e.branch.id
        };
        if !on_branch {
            return;
        }
        if !self.linear {
            self.want = e.parent_id.clone();
            self.branch_done = self.want.is_none();
        }
        if self.leaf.is_some()
            && self.last_activity.is_none()
            && e.branch.kind == EntryKind::Message
        {
            self.last_activity = e.branch.timestamp;
        }
        self.branch.push(e);
    }

    /// True when older entries cannot change the summary: the deciding entries, the model and
    /// some assistant and user text are known (or the branch is complete). Past `TEXT_SEARCH_BUDGET`
    /// bytes `scanned`, the last assistant text is left unknown rather than searched for.
    fn enough(&self, scanned: u64) -> bool {
        if self.branch_done {
            return true;
        }
        let mut decided = false;
        let mut errors = 0;
        for e in &self.branch {
            let b = &e.branch;
            let Some(role) = b.role else { continue };
            match role {
                Role::User | Role::ToolResult => {
                    decided = true;
                    break;
                }
                Role::Assistant => {
                    let failed = !b.has_tool_call
                        && matches!(b.stop_reason, Some(StopReason::Error | StopReason::Length));
                    if !failed {
                        decided = true;
                        break;
                    }
                    errors += 1;
                    if errors >= 4 {
                        decided = true;
                        break;
                    }
                }
                _ => {}
            }
        }
        if !decided {
            return false;
        }
        let has_model = self.branch.iter().any(|e| e.model.is_some());
        let has_text = |role| {
            self.branch
                .iter()
                .any(|e| e.branch.role == Some(role) && e.text.is_some())
        };
        // The newest user text too (the sidebar's preview), within the same bounds.
        has_model
            && ((has_text(Role::Assistant) && has_text(Role::User))
                || self.branch.len() >= ENOUGH_BRANCH
                || scanned >= TEXT_SEARCH_BUDGET)
    }
}

/// Scan backwards from the end of the file down to (not into) the header line.
///
/// `window` always holds file bytes `[win_start, win_start + len)` whose end is the end of the
/// newest unprocessed line (its newline already consumed).
pub(super) fn scan_tail(
    file: &std::fs::File,
    file_len: u64,
    header_end: u64,
    leaf: Option<&str>,
) -> (Tail, bool) {
    let mut tail = Tail::new(leaf);
    let mut scanned: u64 = 0;
    let mut win_start = file_len;
    let mut window: Vec<u8> = Vec::new();
    let mut at_end = true; // the line being assembled is the last one in the file
    let mut truncated = false;
    let mut chunk_size = FIRST_READ;
    // Every iteration either consumes a line, reads a chunk (bounded by TAIL_BUDGET) or ends.
    loop {
        if tail.seen > 0 && tail.enough(scanned) {
            break;
        }
        if tail.seen >= MAX_ENTRIES {
            truncated = true;
            break;
        }
        let found = memrchr(b'\n', &window);
        if found.is_none() && win_start <= header_end {
            // The window is the first entry line, right after the header.
            if !window.is_empty() && !take_line(&mut tail, &window, !at_end) {
                truncated = true;
            }
            break;
        }
        if let Some(i) = found {
            let ended_by_newline = !at_end;
            at_end = false;
            if !take_line(&mut tail, &window[i + 1..], ended_by_newline) {
                truncated = true;
                break;
            }
            window.truncate(i);
            continue;
        }
        // No line start in the window: the window is one partial line.
        if memchr(0, &window).is_some() {
            // A hole (sparse or zeroed region): nothing before it is worth the budget.
            tail.damaged(TailDamage::Hole);
            tail.skipped += 1;
            truncated = true;
            break;
        }
        if window.len() > LINE_PARSE_CAP {
            match skim_huge(file, win_start, &window, header_end, &mut scanned) {
                Some(sk) => {
                    match sk.entry {
                        Some(r) => tail.push(to_entry(r, true)),
                        None => tail.skipped += 1,
                    }
                    at_end = false;
                    win_start = sk.before_start;
                    window = sk.before;
                    continue;
                }
                None => {
                    truncated = true;
                    break;
                }
            }
        }
        let n = chunk_size.min(win_start - header_end);
        chunk_size = (chunk_size * 2).min(CHUNK);
        if scanned + n > TAIL_BUDGET {
            truncated = true;
            break;
        }
        let Ok(chunk) = fsguard::read_at(file, win_start - n, n as usize) else {
            truncated = true;
            break;
        };
        if chunk.len() as u64 != n {
            // The file shrank under us: what we have is what there is.
            truncated = true;
            break;
        }
        scanned += n;
        win_start -= n;
        let mut joined = chunk;
        joined.extend_from_slice(&window);
        window = joined;
    }
    (tail, truncated)
}

/// Parse one complete line into the tail. False when the line holds NUL bytes: a hole (sparse
/// or zeroed region), and nothing before it is worth the budget.
pub(super) fn take_line(tail: &mut Tail, line: &[u8], ended_by_newline: bool) -> bool {
    if memchr(0, line).is_some() {
        tail.damaged(TailDamage::Hole);
        tail.skipped += 1;
        return false;
    }
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        return true;
    }
    match parse_line(line) {
        Some(raw) => tail.push(to_entry(raw, false)),
        // A last line without its newline may still be being written: not counted as
        // malformed, but the newest state is not known either.
        None if !ended_by_newline => tail.damaged(TailDamage::Cut),
        None => {
            tail.damaged(TailDamage::Malformed);
            tail.skipped += 1
        }
    }
    true
}

/// A huge line, skimmed, and what was read before it.
pub(super) struct Skimmed {
    /// None when even its head names no `type` (malformed).
    pub(super) entry: Option<RawEntry>,
    /// File offset of `before`.
    pub(super) before_start: u64,
    /// Bytes read before the line's newline: the next window.
    pub(super) before: Vec<u8>,
}

/// The window holds the last part (> LINE_PARSE_CAP bytes) of one line that starts before
/// `win_start`. Find its start within the budget and skim it. None: budget, hole or read error.
pub(super) fn skim_huge(
    file: &std::fs::File,
    win_start: u64,
    window: &[u8],
    header_end: u64,
    scanned: &mut u64,
) -> Option<Skimmed> {
    let tail_win = &window[window.len().saturating_sub(SKIM_WINDOW)..];
    let line_end = win_start + window.len() as u64;
    let mut pos = win_start;
    // Bounded by TAIL_BUDGET: each iteration reads SEEK_CHUNK more or ends.
    let (line_start, new_start, before) = loop {
        if pos <= header_end {
            // The line starts right after the header.
            break (header_end, header_end, Vec::new());
        }
        let n = SEEK_CHUNK.min(pos - header_end);
        if *scanned + n > TAIL_BUDGET {
            return None;
        }
        let mut buf = fsguard::read_at(file, pos - n, n as usize).ok()?;
        if buf.len() as u64 != n {
            return None;
        }
        *scanned += n;
        if let Some(i) = memrchr(b'\n', &buf) {
            if memchr(0, &buf[i + 1..]).is_some() {
                return None;
            }
            buf.truncate(i);
            break (pos - n + i as u64 + 1, pos - n, buf);
        }
        if memchr(0, &buf).is_some() {
            return None;
        }
        pos -= n;
    };
    let head_len = SKIM_WINDOW.min((line_end - line_start) as usize);
    let head = fsguard::read_at(file, line_start, head_len).ok()?;
    *scanned += head.len() as u64;
    Some(Skimmed {
        entry: skim_line(&head, tail_win),
        before_start: new_start,
        before,
    })
}
