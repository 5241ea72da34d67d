//! The sidebar's ownership record `<root>/.pi-intercom/monitor-<hash>.json` (docs/interop.md §4),
//! and the one rule of which placement stage may follow which (docs/behaviour.md §5).
//!
//! The record's shape is shared with Intercom's own Herdr launcher, which writes `version`,
//! `sessionId`, `workspace`, `caller`, `pane` and `stage` (`rename_pending` and `observed` among
//! its stages): every field is optional on read, and keys this build does not know are kept when
//! the record is written back. intercom-pane never writes `rename_pending` or `observed`; it reads
//! `observed` as placed, and `rename_pending` as a launch of Intercom's to fence.
//!
//! ```text
//! (none) → split_pending                               (a fresh placement)
//! split_pending → split_pending                        (taken up again: recorded first)
//! split_pending → swap_pending → label_pending         (Herdr: split down, swap above)
//! split_pending → label_pending                        (tmux: split above)
//! label_pending → run_pending → submitted              (Herdr: the command typed)
//! label_pending → submitted                            (tmux: the split ran it)
//! submitted | observed → run_pending                   (Herdr: relaunched after a restart)
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{cap, cap_opt, FieldError, Validate, MAX_ID, MAX_TEXT};
use crate::mux::herdr::{Focus, FocusNote};
use crate::mux::{MuxKind, ServerIdentity};

/// A placement's stage, as the record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MonitorStage {
    SplitPending,
    /// Intercom's launcher only (between its split and its rename): never written here.
    RenamePending,
    SwapPending,
    LabelPending,
    RunPending,
    Submitted,
    /// Intercom's launcher only (it saw the monitor run): never written here; read as placed.
    Observed,
}

impl MonitorStage {
    /// The name in the record.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MonitorStage::SplitPending => "split_pending",
            MonitorStage::RenamePending => "rename_pending",
            MonitorStage::SwapPending => "swap_pending",
            MonitorStage::LabelPending => "label_pending",
            MonitorStage::RunPending => "run_pending",
            MonitorStage::Submitted => "submitted",
            MonitorStage::Observed => "observed",
        }
    }

    /// A placement that ended: the pane was placed and the monitor started in it.
    pub(crate) fn is_placed(self) -> bool {
        matches!(self, MonitorStage::Submitted | MonitorStage::Observed)
    }

    /// A stage of our own placement that a later run may take up where it stopped.
    pub(crate) fn is_ours_pending(self) -> bool {
        matches!(
            self,
            MonitorStage::SplitPending
                | MonitorStage::SwapPending
                | MonitorStage::LabelPending
                | MonitorStage::RunPending
        )
    }

    /// The stage our placement records after this one's step on `kind` (`None`: it ended, or
    /// this is not a stage of ours).
    pub(crate) fn next(self, kind: MuxKind) -> Option<MonitorStage> {
        use MonitorStage::*;
        // Herdr cannot split above (split below, then swap) nor run the split's argv (typed).
        let (swap, typed) = (!kind.caps().splits_above, !kind.caps().split_runs_argv);
        match self {
            SplitPending if swap => Some(SwapPending),
            SplitPending => Some(LabelPending),
            SwapPending if swap => Some(LabelPending),
            LabelPending if typed => Some(RunPending),
            LabelPending => Some(Submitted),
            RunPending if typed => Some(Submitted),
            _ => None,
        }
    }
}

/// Whether our placement on `kind` may record `to` over a record at `from` (`None`: a fresh
/// record).
pub(crate) fn may_follow(from: Option<MonitorStage>, to: MonitorStage, kind: MuxKind) -> bool {
    use MonitorStage::*;
    match (from, to) {
        (None | Some(SplitPending), SplitPending) => true,
        (Some(Submitted | Observed), RunPending) => kind.caps().panes_survive_restart,
        (Some(f), t) => f.next(kind) == Some(t),
        (None, _) => false,
    }
}

/// The record's `stage`: one this build knows, or another tool's name (kept and shown, and
/// fenced as a launch this build cannot take up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum RecordedStage {
    Known(MonitorStage),
    Other(String),
}

/// How the pane was placed (Herdr cannot split above).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PlacementKind {
    /// Split down, then swapped above.
    SplitDownSwap,
}

/// What the placement did to the person's focus (`mux::herdr::FocusNote` without its detail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FocusOutcome {
    Unchanged,
    Restored,
    NotRestored,
}

impl From<&FocusNote> for FocusOutcome {
    fn from(n: &FocusNote) -> FocusOutcome {
        match n {
            FocusNote::Unchanged => FocusOutcome::Unchanged,
            FocusNote::Restored => FocusOutcome::Restored,
            FocusNote::NotRestored(_) => FocusOutcome::NotRestored,
        }
    }
}

/// Why a placed monitor was started again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Relaunch {
    /// Its pane came back from a Herdr server restart as a fresh shell.
    AfterServerRestart,
}

/// The ownership record. Fields after `updated_at` appear once a stage set them. The fields are
/// in the order 0.1's builders inserted them, so a fresh record's bytes are the same; one
/// difference: `paneTerminal` is left out when unknown (tmux) where 0.1 wrote `null` (both read
/// the same, here and in Intercom, which does not read it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MonitorRecord {
    /// 1 (Intercom's launcher writes 1 too).
    pub version: Option<u32>,
    /// The coordinator's pi session.
    pub session_id: Option<String>,
    /// The tmux session id, or the Herdr workspace.
    pub workspace: Option<String>,
    /// The coordinator's pane.
    pub caller: Option<String>,
    /// The coordinator pane's Herdr terminal id.
    pub caller_terminal: Option<String>,
    pub stage: Option<RecordedStage>,
    pub multiplexer: Option<MuxKind>,
    pub socket: Option<String>,
    pub server: Option<ServerIdentity>,
    pub window_id: Option<String>,
    /// `intercom-pane:<uuid>`, also set on the pane (and in its environment while placed).
    pub marker: Option<String>,
    pub updated_at: Option<String>,
    /// Herdr: the focus before the split (put back after the swap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_before: Option<Focus>,
    /// The monitor's pane (absent before the split).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane_terminal: Option<String>,
    /// The pane was split by a run that died before recording it, and found by its marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adopted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<PlacementKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<FocusOutcome>,
    /// What `focus` was checked on (`mux::herdr::FOCUS_CHECKED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_checked: Option<String>,
    /// How far putting the focus back got, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_detail: Option<String>,
    /// When a later run took up this placement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relaunched: Option<Relaunch>,
    /// Keys this build does not know (another tool's): kept as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A step the stage rule does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IllegalStep {
    pub from: String,
    pub to: MonitorStage,
}

impl std::fmt::Display for IllegalStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the placement cannot go from stage {:?} to {}",
            self.from,
            self.to.as_str()
        )
    }
}

impl std::error::Error for IllegalStep {}

impl MonitorRecord {
    /// The stage, when it is one this build knows.
    pub(crate) fn stage(&self) -> Option<MonitorStage> {
        match &self.stage {
            Some(RecordedStage::Known(s)) => Some(*s),
            _ => None,
        }
    }

    /// The stage's name as recorded (`""` when there is none).
    pub(crate) fn stage_name(&self) -> &str {
        match &self.stage {
            Some(RecordedStage::Known(s)) => s.as_str(),
            Some(RecordedStage::Other(s)) => s,
            None => "",
        }
    }

    /// The placement ended (`submitted`, or Intercom's `observed`).
    pub(crate) fn is_placed(&self) -> bool {
        self.stage().is_some_and(MonitorStage::is_placed)
    }

    /// The marker, when the record names a non-empty one.
    pub(crate) fn marker(&self) -> Option<&str> {
        self.marker.as_deref().filter(|m| !m.is_empty())
    }

    /// Move to `to` at `at` (an ISO time), when the rule allows it for a placement on `kind`;
    /// else nothing changes.
    pub(crate) fn advance(
        &mut self,
        to: MonitorStage,
        kind: MuxKind,
        at: &str,
    ) -> Result<(), IllegalStep> {
        if !may_follow(self.stage(), to, kind) {
            return Err(IllegalStep {
                from: self.stage_name().to_string(),
                to,
            });
        }
        self.stage = Some(RecordedStage::Known(to));
        self.updated_at = Some(at.to_string());
        Ok(())
    }
}

impl Validate for MonitorRecord {
    fn validate(&self) -> Result<(), FieldError> {
        for (field, v) in [
            ("sessionId", &self.session_id),
            ("workspace", &self.workspace),
            ("caller", &self.caller),
            ("callerTerminal", &self.caller_terminal),
            ("windowId", &self.window_id),
            ("marker", &self.marker),
            ("updatedAt", &self.updated_at),
            ("pane", &self.pane),
            ("paneTerminal", &self.pane_terminal),
            ("resumedAt", &self.resumed_at),
        ] {
            cap_opt(field, v.as_deref(), MAX_ID)?;
        }
        if let Some(RecordedStage::Other(s)) = &self.stage {
            cap("stage", s, MAX_ID)?;
        }
        for (field, v) in [
            ("socket", &self.socket),
            ("focusChecked", &self.focus_checked),
            ("focusDetail", &self.focus_detail),
        ] {
            cap_opt(field, v.as_deref(), MAX_TEXT)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MonitorStage::*;

    const ALL: [MonitorStage; 7] = [
        SplitPending,
        RenamePending,
        SwapPending,
        LabelPending,
        RunPending,
        Submitted,
        Observed,
    ];

    #[test]
    fn each_multiplexer_walks_its_own_stages_and_nothing_skips_one() {
        let tmux = [SplitPending, LabelPending, Submitted];
        let herdr = [
            SplitPending,
            SwapPending,
            LabelPending,
            RunPending,
            Submitted,
        ];
        for (kind, path) in [(MuxKind::Tmux, &tmux[..]), (MuxKind::Herdr, &herdr[..])] {
            assert!(may_follow(None, SplitPending, kind));
            for w in path.windows(2) {
                assert!(may_follow(Some(w[0]), w[1], kind), "{kind:?} {w:?}");
            }
            for from in ALL {
                for to in ALL {
                    let on_path = path.windows(2).any(|w| w == [from, to]);
                    let again = from == SplitPending && to == SplitPending;
                    let relaunch = kind == MuxKind::Herdr && from.is_placed() && to == RunPending;
                    assert_eq!(
                        may_follow(Some(from), to, kind),
                        on_path || again || relaunch,
                        "{kind:?} {from:?} → {to:?}"
                    );
                }
            }
        }
        // Intercom's own stages are never written here.
        for from in ALL.map(Some).into_iter().chain([None]) {
            for kind in [MuxKind::Tmux, MuxKind::Herdr] {
                assert!(!may_follow(from, RenamePending, kind));
                assert!(!may_follow(from, Observed, kind));
            }
        }
    }

    #[test]
    fn intercoms_record_is_read_and_its_foreign_keys_kept() {
        let text = r#"{"version":1,"sessionId":"c0ffee00","workspace":"w1","caller":"w1:p1","pane":"w1:p2","stage":"observed","launcher":{"by":"intercom"}}"#;
        let r: MonitorRecord = super::super::decode(text.as_bytes()).unwrap();
        assert!(r.is_placed());
        assert_eq!(r.pane.as_deref(), Some("w1:p2"));
        assert_eq!(r.marker(), None);
        let back: Value = serde_json::to_value(&r).unwrap();
        assert_eq!(back["launcher"]["by"], "intercom");
        let half: MonitorRecord =
            super::super::decode(br#"{"version":1,"stage":"rename_pending"}"#).unwrap();
        assert_eq!(half.stage(), Some(RenamePending));
        assert!(!RenamePending.is_ours_pending() && !half.is_placed());
        let other: MonitorRecord = super::super::decode(br#"{"stage":"dancing"}"#).unwrap();
        assert_eq!((other.stage(), other.stage_name()), (None, "dancing"));
    }

    /// Without the keys whose value is null (absent and null read the same).
    fn without_nulls(v: Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k, without_nulls(v)))
                    .collect(),
            ),
            other => other,
        }
    }

    #[test]
    fn records_the_previous_version_wrote_read_the_same_and_write_back_unchanged() {
        // As 0.1's ensure-monitor wrote them (the `json!` builders before this schema).
        let tmux = r#"{"version": 1, "sessionId": "c-1", "workspace": "$0", "caller": "%0",
            "callerTerminal": null, "stage": "submitted", "multiplexer": "tmux",
            "socket": "/tmp/tmux-0/default",
            "server": {"kind": "tmux", "socket_path": "/tmp/tmux-0/default", "server_pid": 41, "start_time": 1700000000},
            "windowId": "@0", "marker": "intercom-pane:0b7e", "updatedAt": "2026-11-30T00:00:00.000Z",
            "pane": "%1", "paneTerminal": null}"#;
        let herdr = r#"{"version": 1, "sessionId": "c-1", "workspace": "w1", "caller": "w1:p1",
            "callerTerminal": "t-1", "stage": "run_pending", "multiplexer": "herdr",
            "socket": "/run/herdr.sock",
            "server": {"kind": "herdr", "socket_path": "/run/herdr.sock", "version": "0.8.2", "protocol": 1},
            "windowId": "w1:t1", "marker": "intercom-pane:77aa", "updatedAt": "2026-11-30T00:00:01.000Z",
            "pane": "w1:p2", "paneTerminal": "t-2", "adopted": true,
            "focusBefore": {"workspace": "w1", "tab": "w1:t1", "pane": "w1:p1",
                "per_tab": [["w1:t1", "w1:p1"]], "visible_tab": [["w1", "w1:t1"]]},
            "placement": "split_down_swap", "focus": "not_restored",
            "focusChecked": "the focused workspace, tab and pane", "focusDetail": "focus is on w1:p2",
            "resumedAt": "2026-11-30T00:00:02.000Z", "relaunched": "after_server_restart"}"#;
        for (text, stage, kind) in [
            (tmux, Submitted, MuxKind::Tmux),
            (herdr, RunPending, MuxKind::Herdr),
        ] {
            let r: MonitorRecord = super::super::decode(text.as_bytes()).unwrap();
            assert_eq!(r.stage(), Some(stage));
            assert_eq!(r.multiplexer, Some(kind));
            assert!(r.server.is_some() && r.marker().is_some() && r.pane.is_some());
            assert!(r.other.is_empty(), "every key known: {:?}", r.other);
            let old: Value = serde_json::from_str(text).unwrap();
            let back = serde_json::to_value(&r).unwrap();
            assert_eq!(without_nulls(back), without_nulls(old));
        }
    }

    #[test]
    fn a_renamed_or_mistyped_field_is_refused_not_read_as_absent() {
        let e = super::super::decode::<MonitorRecord>(br#"{"pane": 5}"#).unwrap_err();
        assert!(matches!(e, super::super::DecodeError::Shape(_)), "{e}");
        let long = format!(r#"{{"pane": "{}"}}"#, "p".repeat(MAX_ID + 1));
        let e = super::super::decode::<MonitorRecord>(long.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("pane: too long"), "{e}");
    }

    #[test]
    fn advance_writes_only_a_legal_step() {
        let mut r: MonitorRecord = super::super::decode(br#"{"stage":"label_pending"}"#).unwrap();
        let before = r.clone();
        let e = r.advance(SwapPending, MuxKind::Herdr, "t1").unwrap_err();
        assert!(e.to_string().contains("label_pending"), "{e}");
        assert_eq!(r, before);
        r.advance(RunPending, MuxKind::Herdr, "t2").unwrap();
        assert_eq!(r.stage(), Some(RunPending));
        assert_eq!(r.updated_at.as_deref(), Some("t2"));
    }
}
