//! What `close-worker` prints without `--json`: the report as a receipt a person reads — what
//! happened, to which pane and pi, and what to do next when the worker was not closed. Built
//! from the JSON report itself (the one `--json` prints), so the two never disagree.

use serde_json::Value;

use crate::text::{sanitize, shell_quote};

/// The receipt for one run's report, for the worker named `name`.
pub(crate) fn receipt(report: &Value, name: &str) -> String {
    let worker = report["worker"]
        .as_str()
        .map(sanitize)
        .unwrap_or_else(|| sanitize(name));
    let again = format!("intercom-pane close-worker {}", shell_quote(&worker));
    let mut out = if report.get("mutated").is_some() {
        dry_run(report, &worker)
    } else if report.get("fenced").is_some() {
        format!(
            "nothing to recover for {worker}: no close job is fenced{}; no close was started\n",
            last_job(&report["job"])
        )
    } else if report.get("was").is_some() {
        fence(report, &worker, &again)
    } else {
        ending(report, &worker, &again)
    };
    if report["recorded"] == false && report.get("was").is_none() {
        out.push_str(
            "  note: the final state could not be confirmed in the roster (recorded: false)\n",
        );
    }
    out
}

fn s(v: &Value) -> String {
    sanitize(v.as_str().unwrap_or("?"))
}

fn last_job(job: &Value) -> String {
    match job.as_object() {
        Some(_) => format!(
            " (its last job {} is {})",
            s(&job["jobId"]),
            s(&job["state"]).replace('_', " ")
        ),
        None => String::new(),
    }
}

fn dry_run(r: &Value, worker: &str) -> String {
    let verified = r["identity"] == "verified";
    let mut out = format!(
        "dry run: {worker} in {} pane {} (board: {}) — {}\n",
        s(&r["multiplexer"]),
        s(&r["pane"]),
        s(&r["boardState"]),
        if verified {
            "its pane and pi check out; a close would go ahead".to_string()
        } else {
            format!("a close would stop here: {}", s(&r["identity"]))
        }
    );
    out.push_str(&format!(
        "  a close asks it to run: {}\n  nothing was changed\n",
        s(&r["wouldAsk"])
    ));
    out
}

/// A job left by an earlier run: marked (and, with --recover, re-checked and cleared).
fn fence(r: &Value, worker: &str, again: &str) -> String {
    let (job, was, now) = (s(&r["jobId"]), s(&r["was"]), s(&r["now"]));
    let mut out = format!(
        "close job {job} of {worker} was left {} by a run that ended; it is now {}\n",
        was.replace('_', " "),
        now.replace('_', " ")
    );
    if let Some(found) = r["found"].as_object() {
        out.push_str(&format!(
            "  found: pane {} {}, pi {} {}\n",
            s(&found["pane"]),
            s(&found["paneState"]),
            found["piPid"],
            s(&found["piState"])
        ));
    }
    out.push_str("  nothing was replayed or closed\n");
    out.push_str(&if now == "uncertain" {
        format!(
            "  next: the close may have happened: look at the worker's pane, then `{again} --recover`\n"
        )
    } else {
        format!("  next: run `{again}` to start a new close\n")
    });
    out
}

/// A job this run started, as it ended.
fn ending(r: &Value, worker: &str, again: &str) -> String {
    let job = s(&r["jobId"]);
    let detail = s(&r["detail"]);
    match r["state"].as_str().unwrap_or("") {
        "closed" => closed(r, worker, &job),
        "timed_out" => {
            let settling = detail.contains("settle");
            let what = if settling {
                "it saved its handoff, but its turn had not ended"
            } else {
                "it did not save its handoff (its model never ran `intercom-pane handoff`)"
            };
            format!(
                "not closed: {worker} — the deadline passed: {what} (job {job})\n  nothing was closed; {worker} runs on\n  next: look at its pane (is it busy? did it see the request?); when it is idle run `{again}` again (the request is sent anew), or give it longer with --deadline-secs 120; to close it without a handoff, close its pane yourself\n"
            )
        }
        "interrupted" => format!(
            "not closed: {worker} — {detail} (job {job})\n  next: run `{again}` again when you want it closed\n"
        ),
        "uncertain" => format!(
            "uncertain: {worker} — {detail} (job {job})\n  the close was attempted and could not be confirmed; further closes of {worker} are fenced\n  next: look at its pane, then `{again} --recover`\n"
        ),
        state => {
            let reason = s(&r["reason"]).replace('_', " ");
            let next = match r["reason"].as_str().unwrap_or("") {
                "identity_failed" | "worker_changed" => format!(
                    "its pane or pi is not the one the job recorded: `intercom-pane scan --print` shows where {worker} runs now"
                ),
                "delivery_failed" => format!(
                    "the request did not reach it: try `intercom-pane reply {} <text>` to see why",
                    shell_quote(worker)
                ),
                "worker_busy" => format!("wait until {worker} is idle, then run `{again}` again"),
                _ => format!("fix what the reason says, then run `{again}` again"),
            };
            format!(
                "not closed: {worker} — {} ({reason}; job {job})\n  nothing was closed\n  next: {next}\n",
                if detail.is_empty() { state.replace('_', " ") } else { detail }
            )
        }
    }
}

fn closed(r: &Value, worker: &str, job: &str) -> String {
    let c = &r["closed"];
    let mut out = format!("closed: {worker} (job {job})\n");
    if c.is_object() {
        let ended = c["piEndedBy"]
            .as_str()
            .map(|e| format!(", ended by {}", sanitize(e)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  pane {} (shell pid {}) on {}, pi pid {}{ended}\n",
            s(&c["pane"]),
            c["paneShellPid"],
            s(&c["socket"]),
            c["pi"]["pid"]
        ));
    }
    out.push_str(&format!(
        "  its handoff and registration are kept; to bring it back: intercom-pane resume-worker {} --confirm-closed\n",
        shell_quote(worker)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_timeout_says_what_to_do_next() {
        let r = json!({"jobId": "j1", "worker": "Builder", "state": "timed_out",
            "reason": "timeout", "detail": "no handoff before the deadline", "recorded": true,
            "closed": null});
        let text = receipt(&r, "builder");
        assert!(
            text.starts_with(
                "not closed: Builder — the deadline passed: it did not save its handoff"
            ),
            "{text}"
        );
        assert!(
            text.contains("nothing was closed; Builder runs on"),
            "{text}"
        );
        assert!(text.contains("next: look at its pane"), "{text}");
        assert!(
            text.contains("run `intercom-pane close-worker Builder` again"),
            "{text}"
        );
        assert!(!text.contains('{'), "{text}");
    }

    #[test]
    fn a_close_names_the_pane_and_pi() {
        let r = json!({"jobId": "j2", "worker": "W", "state": "closed", "reason": null,
            "detail": "", "recorded": true, "closed": {"pane": "%3", "paneShellPid": 10,
            "socket": "/tmp/s", "pi": {"pid": 11, "startTicks": 5}, "piEndedBy": "sigterm"}});
        let text = receipt(&r, "W");
        assert!(text.starts_with("closed: W (job j2)\n  pane %3 (shell pid 10) on /tmp/s, pi pid 11, ended by sigterm\n"), "{text}");
        assert!(text.contains("resume-worker W --confirm-closed"), "{text}");
    }

    #[test]
    fn hostile_names_are_quoted_and_clean() {
        let r = json!({"jobId": "j", "worker": "a b;\u{1b}[2Jx", "state": "failed",
            "reason": "delivery_failed", "detail": "gone", "recorded": false, "closed": null});
        let text = receipt(&r, "x");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(
            text.contains("close-worker 'a b;x'") || text.contains("reply 'a b;x'"),
            "{text}"
        );
        assert!(text.contains("recorded: false"), "{text}");
    }
}
