//! The Changes column's reader: one thread that reads the workers' changes only when asked (once
//! at start, then the rows a new board or the review view names), never on a timer. Asks are
//! coalesced while a read runs or waits out its gap, so at most one read runs at a time and a
//! busy board costs at most one read of its moved rows every `ROWS_GAP`.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::ui::changes::{ChangesAsk, RowChanges};
use crate::ui::ports::ChangesSource;

/// Least time between the starts of two reads of some rows (a busy worker's transcript moves
/// every moment; its changes need not be read each time).
pub(crate) const ROWS_GAP: Duration = Duration::from_secs(5);
/// Least time between the start of a read and the next read of every worker.
pub(crate) const ALL_GAP: Duration = Duration::from_secs(15);

/// What is asked and not read yet.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Pending {
    all: bool,
    rows: BTreeSet<String>,
}

impl Pending {
    pub(crate) fn add(&mut self, ask: ChangesAsk) {
        match ask {
            ChangesAsk::All => {
                self.all = true;
                self.rows.clear();
            }
            ChangesAsk::Rows(r) if !self.all => self.rows.extend(r),
            ChangesAsk::Rows(_) => {}
        }
    }

    fn is_empty(&self) -> bool {
        !self.all && self.rows.is_empty()
    }

    fn gap(&self) -> Duration {
        if self.all {
            ALL_GAP
        } else {
            ROWS_GAP
        }
    }

    /// Everything asked, as one ask; nothing is left pending.
    pub(crate) fn take(&mut self) -> Option<ChangesAsk> {
        let p = std::mem::take(self);
        if p.all {
            Some(ChangesAsk::All)
        } else {
            (!p.rows.is_empty()).then_some(ChangesAsk::Rows(p.rows))
        }
    }
}

/// Read when asked until `asks` ends (the sidebar dropped its sender) or `send` says the sidebar
/// is gone; `send` gets the whole column whenever a read changed it. A read that panics ends the
/// column (it stays as last read). Between asks the thread sleeps on the channel alone.
pub(crate) fn serve(
    source: &dyn ChangesSource,
    asks: &Receiver<ChangesAsk>,
    mut send: impl FnMut(BTreeMap<String, RowChanges>) -> bool,
) {
    let mut pending = Pending::default();
    pending.add(ChangesAsk::All);
    let mut column: BTreeMap<String, RowChanges> = BTreeMap::new();
    let mut shown: Option<BTreeMap<String, RowChanges>> = None;
    let mut last_read: Option<Instant> = None;
    loop {
        if pending.is_empty() {
            // No timeout: nothing is due until the board asks (the wait ends with the sidebar).
            match asks.recv() {
                Ok(a) => pending.add(a),
                Err(_) => return,
            }
        }
        // Wait out the gap since the last read, taking in every ask that arrives meanwhile.
        loop {
            let due = last_read.map(|t| t + pending.gap());
            let left = due.map_or(Duration::ZERO, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                while let Ok(a) = asks.try_recv() {
                    pending.add(a);
                }
                break;
            }
            match asks.recv_timeout(left) {
                Ok(a) => pending.add(a),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let Some(ask) = pending.take() else {
            continue;
        };
        last_read = Some(Instant::now());
        let only = match &ask {
            ChangesAsk::All => None,
            ChangesAsk::Rows(r) => Some(r),
        };
        let Ok(read) = panic::catch_unwind(AssertUnwindSafe(|| source.read(only))) else {
            return;
        };
        match only {
            None => column = read,
            Some(rows) => {
                // A row asked for and not read back has no checkout (any more).
                column.retain(|id, _| !rows.contains(id));
                column.extend(read);
            }
        }
        if shown.as_ref() != Some(&column) {
            shown = Some(column.clone());
            if !send(column.clone()) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};

    /// Each row's changes are its `files` count, set by the test; every read is recorded.
    #[derive(Default)]
    struct Counted {
        files: Mutex<BTreeMap<String, u64>>,
        reads: Mutex<Vec<Option<Vec<String>>>>,
    }

    impl ChangesSource for Counted {
        fn read(&self, only: Option<&BTreeSet<String>>) -> BTreeMap<String, RowChanges> {
            self.reads
                .lock()
                .unwrap()
                .push(only.map(|o| o.iter().cloned().collect()));
            self.files
                .lock()
                .unwrap()
                .iter()
                .filter(|(id, _)| only.is_none_or(|o| o.contains(*id)))
                .map(|(id, &files)| {
                    let c = RowChanges {
                        files,
                        ..Default::default()
                    };
                    (id.clone(), c)
                })
                .collect()
        }
        fn review(&self, _: &str) -> Option<crate::ui::changes::ReviewText> {
            None
        }
    }

    fn rows(ids: &[&str]) -> ChangesAsk {
        ChangesAsk::Rows(ids.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn asks_coalesce_and_all_takes_in_rows() {
        let mut p = Pending::default();
        assert_eq!(p.take(), None);
        p.add(rows(&["a"]));
        p.add(rows(&["b", "a"]));
        assert_eq!(p.take(), Some(rows(&["a", "b"])));
        assert_eq!(p.take(), None, "taken: nothing left");
        p.add(rows(&["a"]));
        p.add(ChangesAsk::All);
        p.add(rows(&["c"]));
        assert_eq!(p.take(), Some(ChangesAsk::All));
    }

    /// Once at start, then only when asked (nothing for a quiet stretch), the asked rows only,
    /// asks made while it waits read together, a row gone from the roster leaves the column, and
    /// the thread ends when the sidebar drops its sender.
    #[test]
    fn it_reads_at_start_then_only_the_rows_asked() {
        let src = Arc::new(Counted::default());
        src.files
            .lock()
            .unwrap()
            .extend([("a".to_string(), 1), ("b".to_string(), 2)]);
        let (ask_tx, ask_rx) = mpsc::channel();
        let (out_tx, out_rx) = mpsc::channel();
        let s2 = src.clone();
        let t = std::thread::spawn(move || {
            serve(s2.as_ref(), &ask_rx, |c| out_tx.send(c).is_ok());
        });
        let first = out_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first.len(), 2);
        // Nothing asked: no read however long it waits (here a moment; the bench counts a minute).
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(src.reads.lock().unwrap().len(), 1);
        // `a` changed and `b` left the roster; both asked in two asks, read in one (after the gap).
        src.files.lock().unwrap().insert("a".into(), 5);
        src.files.lock().unwrap().remove("b");
        ask_tx.send(rows(&["a"])).unwrap();
        ask_tx.send(rows(&["b"])).unwrap();
        let next = out_rx
            .recv_timeout(ROWS_GAP + Duration::from_secs(10))
            .unwrap();
        assert_eq!(next.get("a").map(|c| c.files), Some(5));
        assert!(!next.contains_key("b"), "{next:?}");
        assert_eq!(
            *src.reads.lock().unwrap(),
            vec![None, Some(vec!["a".to_string(), "b".to_string()])]
        );
        drop(ask_tx);
        t.join().unwrap();
    }
}
