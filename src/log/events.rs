//! The events of the opt-in log, one type each: the name (`Event::NAME`) and the fields after
//! it, in the order they are written. A field that is an `Option` with `skip_serializing_if` is
//! absent when `None` (a shape some callers do not have); any other `Option` is written as
//! `null`. Fields of the crate's own types are generic here, so the log depends on nothing.

use std::collections::BTreeSet;

use serde::Serialize;

use super::Event;

/// One scan pass.
#[derive(Serialize)]
pub(crate) struct ScanPass<'a, E> {
    pub ms: u64,
    pub seats: usize,
    pub errors: &'a [E],
}
impl<E: Serialize> Event for ScanPass<'_, E> {
    const NAME: &'static str = "scan_pass";
}

/// A tmux or Herdr call failed (`repeated`: the same failures since it was last written).
#[derive(Serialize)]
pub(crate) struct MuxError<'a> {
    pub code: &'a str,
    pub detail: &'a str,
    pub repeated: u64,
}
impl Event for MuxError<'_> {
    const NAME: &'static str = "mux_error";
}

/// ensure-monitor recorded a stage (`record`), or failed and cleaned up (`detail`, `cleaned`).
#[derive(Serialize)]
pub(crate) struct EnsureMonitorStage<'a, S> {
    pub stage: S,
    pub pane: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleaned: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
}
impl<S: Serialize> Event for EnsureMonitorStage<'_, S> {
    const NAME: &'static str = "ensure_monitor_stage";
}

/// ensure-monitor ended.
#[derive(Serialize)]
pub(crate) struct EnsureMonitorDone<'a> {
    pub outcome: &'a str,
    pub detail: &'a str,
    pub exit: i32,
}
impl Event for EnsureMonitorDone<'_> {
    const NAME: &'static str = "ensure_monitor_done";
}

/// close-worker ended, with its report; `from` the sidebar or `by` a coordinator's tool.
#[derive(Serialize)]
pub(crate) struct CloseWorkerDone<'a, R> {
    pub worker: &'a str,
    pub exit: i32,
    pub report: &'a R,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<&'a str>,
}
impl<R: Serialize> Event for CloseWorkerDone<'_, R> {
    const NAME: &'static str = "close_worker_done";
}

/// A live engine's pass: `why` (what woke it), and `check` when the long timer's check ran
/// first (docs/behaviour.md §3a).
#[derive(Serialize)]
pub(crate) struct LivePass<'a, C> {
    pub ms: u64,
    pub full: bool,
    pub why: &'a BTreeSet<&'static str>,
    pub files: usize,
    pub exited: usize,
    pub polls: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<C>,
}
impl<C: Serialize> Event for LivePass<'_, C> {
    const NAME: &'static str = "live_pass";
}

/// How a live engine watches changed: its health, as `doctor` reads it.
#[derive(Serialize)]
pub(crate) struct LiveWatch<'a, H>(pub &'a H);
impl<H: Serialize> Event for LiveWatch<'_, H> {
    const NAME: &'static str = "live_watch";
}

/// The kernel's inotify queue overflowed (events lost; a full pass follows).
#[derive(Serialize)]
pub(crate) struct LiveOverflow {
    pub overflows: Option<u64>,
}
impl Event for LiveOverflow {
    const NAME: &'static str = "live_overflow";
}

/// The sidebar drew a frame showing new states.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LiveFrame<'a> {
    pub changed: Vec<FrameChange<'a>>,
    pub pass_at: String,
}
impl Event for LiveFrame<'_> {
    const NAME: &'static str = "live_frame";
}

/// One seat a frame shows in a new state.
#[derive(Serialize)]
pub(crate) struct FrameChange<'a> {
    pub id: &'a str,
    pub state: &'a str,
}

/// A coordinator's tool call ended (or was refused).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCall<'a> {
    pub tool: String,
    pub pi_pid: i32,
    pub exit: i32,
    pub refused: Option<&'a str>,
}
impl Event for ToolCall<'_> {
    const NAME: &'static str = "tool_call";
}

/// A `.pi-intercom/.gitignore` could not be kept.
#[derive(Serialize)]
pub(crate) struct GitignoreProblem<'a> {
    pub path: String,
    pub problem: &'a str,
}
impl Event for GitignoreProblem<'_> {
    const NAME: &'static str = "gitignore_problem";
}

/// An alert went out (or was held back); `channels`: those this process sent it on.
#[derive(Serialize)]
pub(crate) struct Alert<'a> {
    pub seat: &'a str,
    pub session: &'a str,
    pub state: &'a str,
    pub key: &'a str,
    pub outcome: &'a str,
    pub channels: &'a [String],
}
impl Event for Alert<'_> {
    const NAME: &'static str = "alert";
}

/// An alert channel failed (never fatal); `server` for a tmux call, `program` (`null` for an
/// empty argv) and `ms` for a program that ran.
#[derive(Serialize)]
pub(crate) struct AlertChannelFailed<'a> {
    pub channel: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<Option<&'a str>>,
    pub detail: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}
impl Event for AlertChannelFailed<'_> {
    const NAME: &'static str = "alert_channel_failed";
}

impl<'a> AlertChannelFailed<'a> {
    /// A channel's failure with nothing more than its words.
    pub(crate) fn of(channel: &'a str, detail: &'a str) -> Self {
        AlertChannelFailed {
            channel,
            server: None,
            program: None,
            detail,
            ms: None,
        }
    }
}

/// The tmux status option was set.
#[derive(Serialize)]
pub(crate) struct AlertStatusSet<'a> {
    pub value: &'a str,
    pub servers: &'a [String],
}
impl Event for AlertStatusSet<'_> {
    const NAME: &'static str = "alert_status_set";
}

/// A desktop notification's Jump was clicked and the jump ran.
#[derive(Serialize)]
pub(crate) struct AlertDesktopJump<'a> {
    pub argv: &'a [String],
    pub detail: &'a str,
}
impl Event for AlertDesktopJump<'_> {
    const NAME: &'static str = "alert_desktop_jump";
}

/// The alert memory was not usable and was started again.
#[derive(Serialize)]
pub(crate) struct AlertMemoryInvalid {
    pub detail: String,
}
impl Event for AlertMemoryInvalid {
    const NAME: &'static str = "alert_memory_invalid";
}

/// One ssh call to a host ended: `what` for a call that only asks, else `ssh` (ssh's own words,
/// never shown on the screen) and `stderr` (the program's there).
#[derive(Serialize)]
pub(crate) struct HostCall<'a> {
    pub host: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what: Option<&'a str>,
    pub exit: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}
impl Event for HostCall<'_> {
    const NAME: &'static str = "host_call";
}

/// The usual ssh control folder was refused and the fallback is used.
#[derive(Serialize)]
pub(crate) struct HostControl<'a> {
    pub dir: String,
    pub refused: &'a str,
}
impl Event for HostControl<'_> {
    const NAME: &'static str = "host_control";
}

/// A host's state changed on the board (`host`), or the hosts file's did (`hosts`: the hosts
/// it names, when it could be read).
#[derive(Serialize)]
pub(crate) struct HostState<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<String>>,
    pub state: &'a str,
    pub detail: String,
}
impl Event for HostState<'_> {
    const NAME: &'static str = "host_state";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields<E: Event>(e: &E) -> String {
        let line = String::from_utf8(crate::log::line(e, 0)).unwrap_or_default();
        let cut = line.find(",\"event\"").unwrap_or(0);
        line[cut..].trim_end().to_string()
    }

    #[test]
    fn a_line_starts_with_time_pid_command_then_the_event_and_its_fields_in_order() {
        let line = String::from_utf8(crate::log::line(
            &MuxError {
                code: "tmux_failed",
                detail: "d",
                repeated: 2,
            },
            0,
        ))
        .unwrap_or_default();
        assert!(line.starts_with("{\"at\":\"1970-01-01T00:00:00"), "{line}");
        assert!(line.ends_with(
            ",\"event\":\"mux_error\",\"code\":\"tmux_failed\",\"detail\":\"d\",\"repeated\":2}\n"
        ));
        let pid = format!(",\"pid\":{},\"command\":", std::process::id());
        assert!(line.contains(&pid), "{line}");
    }

    #[test]
    fn a_field_some_shapes_lack_is_absent_there_and_a_missing_value_is_null() {
        let asked = HostCall {
            host: "h",
            what: Some("stop"),
            exit: None,
            ssh: None,
            stderr: None,
        };
        assert_eq!(
            fields(&asked),
            r#","event":"host_call","host":"h","what":"stop","exit":null}"#
        );
        let ran = HostCall {
            host: "h",
            what: None,
            exit: Some(255),
            ssh: Some("s".into()),
            stderr: Some(String::new()),
        };
        assert_eq!(
            fields(&ran),
            r#","event":"host_call","host":"h","exit":255,"ssh":"s","stderr":""}"#
        );
        let program = AlertChannelFailed {
            program: Some(None),
            ms: Some(3),
            ..AlertChannelFailed::of("on_alert", "exit 1")
        };
        assert_eq!(
            fields(&program),
            r#","event":"alert_channel_failed","channel":"on_alert","program":null,"detail":"exit 1","ms":3}"#
        );
        let closed = CloseWorkerDone {
            worker: "W",
            exit: 0,
            report: &1,
            from: Some("sidebar"),
            by: None,
        };
        assert_eq!(
            fields(&closed),
            r#","event":"close_worker_done","worker":"W","exit":0,"report":1,"from":"sidebar"}"#
        );
    }

    #[test]
    fn long_values_are_cut_as_before() {
        let long = "x".repeat(2000);
        let line = fields(&AlertMemoryInvalid { detail: long });
        assert_eq!(line.matches('x').count(), 1000, "{line}");
        let servers: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let line = fields(&AlertStatusSet {
            value: "v",
            servers: &servers,
        });
        assert!(line.ends_with(r#""30","31"]}"#), "{line}");
    }
}
