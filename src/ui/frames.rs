//! Which rows each frame shows in a new state, for the `FrameLog` (the `live_frame` log event
//! the latency bench reads): compared only when something listens.

use std::collections::HashMap;
use std::sync::Arc;

use crate::states::BoardState;
use crate::ui::app::App;
use crate::ui::ports::FrameLog;

/// The states the last frame showed, to tell the `FrameLog` which rows changed.
pub(crate) struct Frames {
    log: Option<Arc<dyn FrameLog>>,
    shown: HashMap<String, BoardState>,
    scanned_at: Option<crate::clock::Ms>,
}

impl Frames {
    pub(crate) fn new(log: Option<Arc<dyn FrameLog>>) -> Frames {
        Frames {
            log: log.filter(|l| l.enabled()),
            shown: HashMap::new(),
            scanned_at: None,
        }
    }

    /// After a frame: say which rows it shows in a new state (only for a new pass).
    pub(crate) fn drawn(&mut self, app: &App) {
        let (Some(log), Some(snap)) = (&self.log, app.snapshot()) else {
            return;
        };
        if self.scanned_at == Some(snap.scanned_at) {
            return;
        }
        self.scanned_at = Some(snap.scanned_at);
        let mut changed = Vec::new();
        let mut shown = HashMap::with_capacity(snap.rows.len());
        for r in &snap.rows {
            if self.shown.get(&r.id) != Some(&r.state) {
                changed.push((r.id.clone(), r.state.as_str()));
            }
            shown.insert(r.id.clone(), r.state);
        }
        self.shown = shown;
        if !changed.is_empty() {
            log.frame(&changed, snap.scanned_at);
        }
    }
}
