//! `intercom-pane doctor`: one line per check, each failure with a fix.
//!
//! Why a separate command: the sidebar shows what the evidence says, not why a seat is missing
//! from it. The doctor asks each link of the chain once (tmux, Herdr, the binary the pi extension
//! runs, the extension in pi, the roster and its sessions, the data root) and says which link is
//! broken. It writes nothing but one probe file in the data root (removed again).

mod checks;
mod install;
mod live;
mod trust;

use serde_json::Value;

use crate::clock::Clock;
use crate::scan::ScanOptions;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ok,
    /// Works, but worth a look (nothing a feature needs is missing).
    Warn,
    /// Something a feature needs is missing: the doctor exits 1.
    Fail,
    /// Not configured here, so not checked.
    Skip,
}

impl Status {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skip => "skip",
        }
    }
}

/// One check's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Check {
    /// A fixed name (`tmux`, `tmux server`, `herdr`, `binary`, `extension`, `extension loaded`,
    /// `roster`, `sessions`, `monitor`, `gitignore`, `live updates`, `live view`, `data root`, `herdr seats`).
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    /// What to do about it (failures and warnings).
    pub fix: Option<String>,
}

impl Check {
    pub(crate) fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }
    pub(crate) fn skip(name: &'static str, detail: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Skip,
            detail: detail.into(),
            fix: None,
        }
    }
    pub(crate) fn fail(
        name: &'static str,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name,
            status: Status::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
    pub(crate) fn warn(
        name: &'static str,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name,
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// `doctor --json`: whether every check passed, and each.
#[derive(serde::Serialize)]
struct ReportJson<'a> {
    ok: bool,
    checks: Vec<CheckJson<'a>>,
}

/// One check in `doctor --json`.
#[derive(serde::Serialize)]
struct CheckJson<'a> {
    name: &'static str,
    status: &'static str,
    detail: &'a str,
    fix: Option<&'a str>,
}

/// Every check, in the order a newcomer sets things up.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    pub(crate) fn failed(&self) -> bool {
        self.checks.iter().any(|c| c.status == Status::Fail)
    }

    pub(crate) fn to_json(&self) -> Value {
        let checks = self
            .checks
            .iter()
            .map(|c| CheckJson {
                name: c.name,
                status: c.status.name(),
                detail: &c.detail,
                fix: c.fix.as_deref(),
            })
            .collect();
        let report = ReportJson {
            ok: !self.failed(),
            checks,
        };
        serde_json::to_value(report).unwrap_or_default()
    }

    /// `ok    tmux: ...` lines, a `fix:` line under each failure or warning, and a summary.
    pub(crate) fn to_text(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            let tag = match c.status {
                Status::Fail => "FAIL",
                s => s.name(),
            };
            out.push_str(&format!("{tag:<5} {}: {}\n", c.name, c.detail));
            if let Some(fix) = &c.fix {
                out.push_str(&format!("      fix: {fix}\n"));
            }
        }
        let fails = self
            .checks
            .iter()
            .filter(|c| c.status == Status::Fail)
            .count();
        if fails == 0 {
            out.push_str("all needed parts are in place\n");
        } else {
            out.push_str(&format!("{fails} check(s) failed\n"));
        }
        out
    }
}

/// Run every check against the resolved options (the same ones `scan` would use).
pub(crate) fn run(opts: &ScanOptions, clock: &dyn Clock) -> Report {
    let mut r = Report::default();
    let herdr = checks::herdr(opts);
    let mut tmux = checks::tmux(opts);
    // Where Herdr answers, a missing tmux only matters for tmux seats: worth a look, no more.
    if herdr.status == Status::Ok {
        for c in tmux.iter_mut().filter(|c| c.status == Status::Fail) {
            c.status = Status::Warn;
        }
    }
    r.checks.extend(tmux);
    r.checks.push(herdr);
    r.checks.push(checks::binary());
    r.checks.push(install::extension_installed());
    r.checks.push(checks::data_root(&opts.data_root));
    r.checks.extend(checks::ssh_control());
    r.checks.extend(trust::log());
    match crate::scan::run(opts, clock, None, None) {
        Ok(pass) => {
            // A roster on Herdr with no seat on tmux needs no tmux server.
            if checks::herdr_only(&pass) {
                for c in r.checks.iter_mut().filter(|c| c.name == "tmux server") {
                    if c.status == Status::Warn {
                        c.status = Status::Skip;
                        c.detail = format!(
                            "{}; none is needed: the roster runs on Herdr and no seat is on tmux",
                            c.detail
                        );
                        c.fix = None;
                    }
                }
            }
            r.checks.extend(checks::herdr_seats(&pass));
            r.checks.extend(checks::roster(&pass));
            r.checks.extend(trust::state_folders(&pass));
            r.checks.extend(checks::monitor(&pass));
            r.checks.extend(checks::gitignore(&pass));
            r.checks.push(live::capacity(opts, &pass));
            r.checks.extend(live::running(opts));
            r.checks.push(checks::extension_loaded(&pass));
        }
        Err(e) => r.checks.push(Check::fail(
            "roster",
            format!("the scan refused to run: {e}"),
            "fix or remove the file it names, then run the doctor again",
        )),
    }
    r
}
