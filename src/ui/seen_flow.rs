//! The Seen mark part of `App::update`: `s` marks or unmarks the selected row at its current
//! last activity, shown at once and written by the runner; quick presses never race on disk.

use crate::clock::format_iso;
use crate::ui::app::{App, Effect, SeenOverride};
use crate::ui::ports::SeenNotSaved;

impl App {
    pub(super) fn toggle_seen(&mut self, fx: &mut Vec<Effect>) {
        let Some(row) = self.selected_row() else {
            self.message = Some("select a worker to mark it seen".into());
            return;
        };
        let Some(last) = row.last_activity else {
            self.message = Some("seen needs a last activity time; this seat has none".into());
            return;
        };
        let seen = !self.is_seen(row);
        let (row_id, key) = (row.id.clone(), row.seen_key.clone());
        if let Some(o) = self.seen_overrides.get_mut(&row_id) {
            if o.pending {
                // Shown at once; written when the write in flight reports back.
                o.seen = seen;
                o.last_activity = Some(last);
                return;
            }
        }
        self.seen_overrides.insert(
            row_id.clone(),
            SeenOverride {
                last_activity: Some(last),
                seen,
                pending: true,
                key: key.clone(),
                snapshots_after: 0,
            },
        );
        fx.push(Effect::WriteSeen {
            row_id,
            key,
            last_activity_iso: format_iso(last),
            seen,
        });
    }

    /// A Seen/Unsee write finished: done, or one more write when the person toggled again
    /// meanwhile; a failure undoes the shown mark and says why.
    pub(super) fn on_seen_finished(
        &mut self,
        row_id: String,
        seen: bool,
        result: Result<(), SeenNotSaved>,
        fx: &mut Vec<Effect>,
    ) {
        match result {
            Ok(()) => {
                if let Some(o) = self.seen_overrides.get_mut(&row_id) {
                    if o.seen == seen {
                        o.pending = false;
                    } else if let Some(last) = o.last_activity {
                        // The user toggled again while this write ran: save the latest wish.
                        fx.push(Effect::WriteSeen {
                            row_id: row_id.clone(),
                            key: o.key.clone(),
                            last_activity_iso: format_iso(last),
                            seen: o.seen,
                        });
                    }
                }
            }
            Err(e) => {
                self.seen_overrides.remove(&row_id);
                // The error's own text quotes values sanitized.
                self.message = Some(format!("seen not saved: {e}"));
            }
        }
    }
}
