//! The Seen mark part of `App::update`: `s` marks or unmarks the selected row at its current
//! last activity, shown at once and written by the runner; quick presses never race on disk.

use crate::clock::format_iso;
use crate::ui::app::{App, Effect, SeenOverride};

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
}
