//! One alert and the words it goes out with: the short line (tmux message, desktop title), the
//! `--on-alert` JSON line (docs/interop.md §12), the command that jumps to the seat. Pure.

use serde::Serialize;

use crate::alerts::memory::PaneRef;
use crate::board::reason::StateReason;
use crate::clock::{format_iso, Ms};
use crate::snapshot::Row;
use crate::states::BoardState;

/// The JSON line's schema version.
pub(crate) const VERSION: u32 = 1;
/// Most characters of the question or error text carried.
pub(crate) const MAX_TEXT_CHARS: usize = 1000;
/// The host of a seat of this machine (a seat of another host names its own,
/// docs/behaviour.md §12).
pub(crate) const HOST: &str = crate::hosts::LOCAL;
/// The program name the jump command names.
pub(crate) const PROGRAM: &str = "intercom-pane";

/// One alert, as every channel says it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Alert {
    /// The seat's host: `local`, or the host of the hosts file its row came from.
    pub host: String,
    /// The seat's session (`Row::id`).
    pub session: String,
    /// `<project>/<agent>`.
    pub seat_key: String,
    /// Raw names: each channel makes them safe for its consumer.
    pub name: String,
    pub project: String,
    pub state: BoardState,
    pub reason: StateReason,
    /// The question (waiting), the error (error), raw; lines kept.
    pub text: Option<String>,
    /// When the state's evidence was written.
    pub since: Option<Ms>,
    pub at: Ms,
    /// `board::alerts::turn_key`.
    pub turn_key: String,
    pub pane: Option<PaneRef>,
    /// The jump command's argv (`intercom-pane jump --session-id …` and the run's flags).
    pub jump: Vec<String>,
    /// The tmux key (after the prefix) the plugin bound to the last alert's seat, if known.
    pub jump_key: Option<String>,
}

/// Text that reaches a person or a program: controls, escape sequences and bidi overrides
/// removed on every line; lines kept; at most `MAX_TEXT_CHARS` characters.
pub(crate) fn clean_text(s: &str) -> String {
    let joined = s
        .lines()
        .map(crate::text::sanitize)
        .collect::<Vec<_>>()
        .join("\n");
    let t = joined.trim();
    t.chars().take(MAX_TEXT_CHARS).collect()
}

/// A key as its host knows it: a seat of another host is keyed here with its host in front
/// (`SeatKey::on_host`); the JSON line names the host apart and the key as the host has it.
fn there(key: &str) -> &str {
    key.split_once(crate::board::record::HOST_SEPARATOR)
        .map_or(key, |(_, k)| k)
}

impl Alert {
    /// The alert for `row` entering `turn_key`.
    pub(crate) fn of(row: &Row, turn_key: &str, at: Ms, jump_flags: &[String]) -> Alert {
        let text = match row.state {
            BoardState::Waiting => row.question.clone(),
            BoardState::Error => row
                .last_error
                .clone()
                .or_else(|| row.last_assistant_text.clone()),
            _ => None,
        }
        .map(|t| clean_text(&t))
        .filter(|t| !t.is_empty());
        let mut jump = vec![PROGRAM.to_string(), "jump".into()];
        match &row.host {
            // Another host's seat: that host re-checks it and says where (its own flags come
            // from the hosts file, never this run's).
            Some(h) => {
                jump.extend(["--host".to_string(), h.name.clone()]);
                match &h.session_id {
                    Some(id) => jump.extend(["--session-id".to_string(), id.clone()]),
                    None => jump.extend(["--".to_string(), h.key.clone()]),
                }
            }
            None => {
                jump.extend(jump_flags.iter().cloned());
                jump.extend(["--session-id".to_string(), row.id.clone()]);
            }
        }
        Alert {
            host: row
                .host
                .as_ref()
                .map_or_else(|| HOST.to_string(), |h| h.name.clone()),
            session: row.id.clone(),
            seat_key: row.seen_key.clone(),
            name: row.name.clone(),
            project: row.project.clone(),
            state: row.state,
            reason: row.state_reason,
            text,
            since: row.state_since(),
            at,
            turn_key: turn_key.to_string(),
            pane: row.pane.as_ref().map(|p| PaneRef {
                kind: p.kind,
                socket: p.socket.clone(),
                pane_id: p.pane_id.clone(),
                pi: p.pi.clone(),
            }),
            jump,
            jump_key: None,
        }
    }

    /// The jump command as one shell line (each word quoted).
    pub(crate) fn jump_line(&self) -> String {
        crate::mux::shell_line(&self.jump)
    }

    /// `Builder is waiting: which branch?` — one line, safe to show (sanitized, clipped).
    pub(crate) fn headline(&self, max_chars: usize) -> String {
        let name = crate::text::sanitize(&self.name);
        let what = match self.state {
            _ if self.reason == crate::board::reason::StateReason::BudgetSoft => {
                "is near its budget"
            }
            BoardState::Waiting => "is waiting for you",
            BoardState::Error => "stopped on an error",
            BoardState::Offline => "went offline",
            _ => "needs you",
        };
        let mut line = format!("{name} {what}");
        if let Some(t) = &self.text {
            line.push_str(": ");
            line.push_str(&crate::text::sanitize(t));
        }
        crate::text::one_line(&line, max_chars)
    }

    /// How to get there, short enough for a message: the plugin's key when known, else
    /// `intercom-pane jump --last` (with the run's `--config`: the jump reads the roster the
    /// alert came from). The JSON line carries the full command.
    pub(crate) fn how_to_jump(&self) -> String {
        match &self.jump_key {
            Some(k) => format!("prefix {} jumps there", crate::text::sanitize(k)),
            None => {
                let mut argv = vec![PROGRAM.to_string(), "jump".into(), "--last".into()];
                if let Some(i) = self.jump.iter().position(|a| a == "--config") {
                    argv.extend(self.jump.iter().skip(i).take(2).cloned());
                }
                format!(
                    "{} jumps there",
                    crate::text::sanitize(&crate::mux::shell_line(&argv))
                )
            }
        }
    }

    /// The tmux message: headline and how to jump, one line.
    pub(crate) fn message(&self) -> String {
        let jump = self.how_to_jump();
        let room = 300usize.saturating_sub(jump.chars().count() + 3);
        format!("{} — {jump}", self.headline(room.max(40)))
    }

    /// The `--on-alert` program's variables (docs/interop.md §12): the main fields as one line
    /// of plain text each (controls and escape sequences removed, clipped), for a program that
    /// takes its words from the environment (a `curl` recipe quoting `"$INTERCOM_PANE_…"`).
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        let one = crate::text::one_line;
        vec![
            ("INTERCOM_PANE_ALERT_HEADLINE", self.headline(200)),
            ("INTERCOM_PANE_ALERT_SEAT", one(&self.name, 100)),
            ("INTERCOM_PANE_ALERT_PROJECT", one(&self.project, 100)),
            ("INTERCOM_PANE_ALERT_HOST", one(&self.host, 100)),
            ("INTERCOM_PANE_ALERT_STATE", self.state.as_str().into()),
            (
                "INTERCOM_PANE_ALERT_TEXT",
                one(self.text.as_deref().unwrap_or(""), MAX_TEXT_CHARS),
            ),
            (
                "INTERCOM_PANE_ALERT_SESSION_ID",
                one(there(&self.session), 200),
            ),
            ("INTERCOM_PANE_ALERT_JUMP", one(&self.jump_line(), 1000)),
        ]
    }

    /// The jump a click on the alert's desktop notification runs: this very program (`exe`),
    /// to the seat's session, and only while it is still in the pane and pi it alerted from
    /// (`--expect-seat`: the jump refuses with exit 4 otherwise). `None` without a pane.
    pub(crate) fn click_jump(&self, exe: &std::path::Path) -> Option<Vec<String>> {
        let pane = self.pane.as_ref()?;
        let pi = pane.pi.as_ref();
        let token = crate::hosts::expect::SeatExpect {
            session_id: None,
            pid: pi.map(|p| p.0),
            start_ticks: pi.map(|p| p.1),
            boot_id: pi.map(|p| p.2.clone()),
            pane: Some(pane.pane_id.clone()),
        }
        .token();
        let mut argv = vec![exe.display().to_string()];
        argv.extend(self.jump.iter().skip(1).cloned());
        argv.extend(["--expect-seat".to_string(), token]);
        Some(argv)
    }

    /// The `--on-alert` JSON line (without its newline). Every text member is raw evidence made
    /// safe for a reader: control characters and bidi overrides removed, then JSON-escaped.
    pub(crate) fn json_line(&self) -> String {
        let line = AlertLine {
            version: VERSION,
            event: "alert",
            at: format_iso(self.at),
            host: clean_text(&self.host),
            seat: clean_text(&self.name),
            project: clean_text(&self.project),
            seat_key: clean_text(there(&self.seat_key)),
            session_id: clean_text(there(&self.session)),
            state: self.state.as_str(),
            reason: self.reason.code(),
            reason_text: self.reason.words(),
            text: self.text.as_deref(),
            since: self.since.map(format_iso),
            turn: clean_text(&self.turn_key),
            pane: self.pane.as_ref().map(|p| AlertPane {
                mux: p.kind.name(),
                pane_id: clean_text(&p.pane_id),
            }),
            jump: AlertJump {
                argv: &self.jump,
                command: self.jump_line(),
                keys: self.jump_key.as_deref(),
            },
        };
        serde_json::to_string(&line).unwrap_or_default()
    }
}

/// The `--on-alert` line (docs/interop.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AlertLine<'a> {
    version: u32,
    event: &'static str,
    at: String,
    host: String,
    seat: String,
    project: String,
    seat_key: String,
    session_id: String,
    state: &'static str,
    reason: std::borrow::Cow<'static, str>,
    reason_text: &'static str,
    text: Option<&'a str>,
    since: Option<String>,
    turn: String,
    pane: Option<AlertPane>,
    jump: AlertJump<'a>,
}

/// The pane an alert came from.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AlertPane {
    mux: &'static str,
    pane_id: String,
}

/// How to get to the seat: the argv, as one shell line, and the keys.
#[derive(Serialize)]
struct AlertJump<'a> {
    argv: &'a [String],
    command: String,
    keys: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> Row {
        let mut r = crate::ui::demo::demo_row(1, 0, 1_000_000);
        r.id = "sess-1".into();
        r.name = "Bad\u{1b}]0;pwn\u{7}#(touch x)\u{202e}name".into();
        r.state = BoardState::Waiting;
        r.state_reason = StateReason::InputNeeded;
        r.question = Some("\"staging\"\u{1b}[31m or\nprod?\u{0}".into());
        r
    }

    #[test]
    fn an_alert_of_another_hosts_seat_names_its_host_and_jumps_there() {
        let mut r = row();
        r.id = crate::hosts::wire::row_id("gpu", "sess-9");
        r.seen_key = crate::hosts::wire::row_id("gpu", "proj/W");
        r.host = Some(crate::snapshot::RowHost {
            name: "gpu".into(),
            key: "proj/W".into(),
            session_id: Some("sess-9".into()),
            answered_at: 0,
            answering: true,
        });
        let a = Alert::of(
            &r,
            "waiting:entry:e1",
            2_000_000,
            &["--config".into(), "/c".into()],
        );
        let v: serde_json::Value = serde_json::from_str(&a.json_line()).unwrap();
        assert_eq!(v["host"], "gpu");
        assert_eq!(v["sessionId"], "sess-9");
        assert_eq!(v["seatKey"], "proj/W");
        assert_eq!(
            v["jump"]["argv"],
            serde_json::json!([
                "intercom-pane",
                "jump",
                "--host",
                "gpu",
                "--session-id",
                "sess-9"
            ])
        );
    }

    #[test]
    fn the_json_line_is_one_escaped_line() {
        let a = Alert::of(&row(), "waiting:entry:e1", 2_000_000, &[]);
        let line = a.json_line();
        assert!(!line.contains('\n') && !line.contains('\u{1b}') && !line.contains('\u{202e}'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["seat"], "Bad#(touch x)name");
        assert_eq!(v["text"], "\"staging\" or\nprod?");
        assert_eq!(v["state"], "waiting");
        assert_eq!(v["reason"], "input_needed");
        assert_eq!(v["host"], "local");
        assert_eq!(
            v["jump"]["argv"],
            serde_json::json!(["intercom-pane", "jump", "--session-id", "sess-1"])
        );
        assert_eq!(
            v["jump"]["command"],
            "intercom-pane jump --session-id sess-1"
        );
    }

    #[test]
    fn the_variables_are_one_clean_line_each() {
        let a = Alert::of(&row(), "waiting:entry:e1", 2_000_000, &[]);
        let env = a.env();
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).unwrap().1.clone();
        for (k, v) in &env {
            assert!(!v.chars().any(char::is_control), "{k}: {v:?}");
        }
        assert_eq!(get("INTERCOM_PANE_ALERT_SEAT"), "Bad#(touch x)name");
        assert_eq!(get("INTERCOM_PANE_ALERT_TEXT"), "\"staging\" or prod?");
        assert_eq!(get("INTERCOM_PANE_ALERT_STATE"), "waiting");
        assert!(get("INTERCOM_PANE_ALERT_HEADLINE").starts_with("Bad#(touch x)name is waiting"));
    }

    #[test]
    fn a_click_jumps_with_this_program_and_the_seat_it_alerted_from() {
        let mut r = row();
        r.pane = Some(crate::snapshot::SeatPane {
            kind: crate::mux::MuxKind::Tmux,
            socket: None,
            pane_id: "%3".into(),
            shell_pid: None,
            pi: Some((42, 7, "boot".into())),
        });
        let a = Alert::of(&r, "waiting:entry:e1", 0, &["--config".into(), "/c".into()]);
        let argv = a.click_jump(std::path::Path::new("/opt/ip")).unwrap();
        assert_eq!(
            argv[..6],
            [
                "/opt/ip",
                "jump",
                "--config",
                "/c",
                "--session-id",
                "sess-1"
            ]
        );
        assert_eq!(argv[6], "--expect-seat");
        let e = crate::hosts::expect::SeatExpect::parse(&argv[7]).unwrap();
        assert_eq!((e.pid, e.start_ticks), (Some(42), Some(7)));
        r.pane = None;
        let a = Alert::of(&r, "waiting:entry:e1", 0, &[]);
        assert!(a.click_jump(std::path::Path::new("/opt/ip")).is_none());
    }

    #[test]
    fn the_message_names_the_way_there() {
        let mut a = Alert::of(
            &row(),
            "waiting:entry:e1",
            0,
            &["--config".into(), "/a b".into()],
        );
        assert!(a
            .message()
            .ends_with("— intercom-pane jump --last --config '/a b' jumps there"));
        a.jump_key = Some("J".into());
        let m = a.message();
        assert!(m.starts_with("Bad#(touch x)name is waiting for you: \"staging\" or prod?"));
        assert!(m.ends_with("— prefix J jumps there"), "{m}");
        assert!(!m.chars().any(char::is_control));
    }
}
