//! Programs an alert runs: the person's `--on-alert PROGRAM [ARGS…]` (one JSON line on its
//! stdin, the alert's main fields in `INTERCOM_PANE_ALERT_*` variables) and `notify-send` (whose
//! clicked action may run a jump: `Job::then`). Each runs as an argv, never through a shell, on a small pool of
//! threads fed by a bounded queue: at most `concurrency` at once, each killed at its deadline,
//! its stdout capped (a program that floods it is killed), its failures logged and never
//! fatal. A full queue drops the new job (logged): a hung program can never hold up the passes
//! or the next alerts beyond its own slot.

use std::process::Command;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::mux::spawn::{self, RunError};

/// Jobs waiting for a free slot.
const QUEUE: usize = 64;
/// Most stdout kept from a program (more kills it: it floods).
const STDOUT_CAP: usize = 64 * 1024;

/// One program run.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// `on_alert`, `desktop`: for the log.
    pub channel: &'static str,
    pub argv: Vec<String>,
    pub stdin: Option<Vec<u8>>,
    /// Variables added to its environment: fixed names, values one line of plain text.
    pub env: Vec<(&'static str, String)>,
    /// When the program ends printing this word as its first line, run this argv (bounded by
    /// `THEN_TIMEOUT`): a desktop notification's clicked action and the jump it asks for.
    pub then: Option<(&'static str, Vec<String>)>,
    /// Waiting is this program's purpose (`notify-send --wait`): reaching the deadline is its
    /// usual ending, not a failure to log.
    pub waits: bool,
}

/// Deadline of the program `Job::then` runs (a jump: a fresh pass, then the move).
pub(crate) const THEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How one run ended (what the log says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    Ok,
    Exit(Option<i32>, String),
    TimedOut,
    Flooded,
    NotFound,
    Failed(String),
}

/// Run one job now (on the caller's thread), bounded by `timeout`.
pub(crate) fn run_job(job: &Job, timeout: Duration) -> Ended {
    run_job_out(job, timeout).0
}

/// `run_job`, and what the program printed (when it ended by itself).
fn run_job_out(job: &Job, timeout: Duration) -> (Ended, Vec<u8>) {
    let Some((prog, args)) = job.argv.split_first() else {
        return (Ended::Failed("no program".into()), Vec::new());
    };
    let mut cmd = Command::new(prog);
    cmd.args(args);
    for (k, v) in &job.env {
        // A value is one line without NUL (`Alert::env`); one that is not is left out.
        if !v.contains(['\0', '\n', '\r']) {
            cmd.env(k, v);
        }
    }
    // Its own process group: a Ctrl-C meant for the sidebar or watcher is not its.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    match spawn::run(
        &mut cmd,
        job.stdin.as_deref(),
        Instant::now() + timeout,
        STDOUT_CAP,
    ) {
        Ok(out) if out.status.success() => (Ended::Ok, out.stdout),
        Ok(out) => {
            let err = String::from_utf8_lossy(&out.stderr);
            (
                Ended::Exit(out.status.code(), crate::text::one_line(&err, 200)),
                Vec::new(),
            )
        }
        Err(RunError::Timeout) => (Ended::TimedOut, Vec::new()),
        Err(RunError::Oversize) => (Ended::Flooded, Vec::new()),
        Err(RunError::NotFound) => (Ended::NotFound, Vec::new()),
        Err(RunError::Spawn(e)) => (Ended::Failed(e), Vec::new()),
    }
}

/// What the program printed, when it ended well within `timeout`.
pub(crate) fn output(job: &Job, timeout: Duration) -> Option<Vec<u8>> {
    match run_job_out(job, timeout) {
        (Ended::Ok, out) => Some(out),
        _ => None,
    }
}

/// Run the job, then what its output asks for (`Job::then`); log what failed.
fn run_and_follow(job: &Job, timeout: Duration) {
    let t = Instant::now();
    let (ended, out) = run_job_out(job, timeout);
    if !(job.waits && ended == Ended::TimedOut) {
        log_ended(job, &ended, t.elapsed().as_millis());
    }
    let Some((word, argv)) = &job.then else {
        return;
    };
    let first = String::from_utf8_lossy(&out);
    if ended != Ended::Ok || first.lines().next().map(str::trim) != Some(*word) {
        return;
    }
    let then = Job {
        channel: job.channel,
        argv: argv.clone(),
        stdin: None,
        env: Vec::new(),
        then: None,
        waits: false,
    };
    let ended = run_job(&then, THEN_TIMEOUT);
    let detail = match &ended {
        Ended::Ok => "moved".to_string(),
        Ended::Exit(code, err) => format!("exit {code:?}: {err}"),
        other => format!("{other:?}"),
    };
    crate::log::write(&crate::log::AlertDesktopJump {
        argv,
        detail: &detail,
    });
}

fn log_ended(job: &Job, ended: &Ended, ms: u128) {
    if *ended == Ended::Ok {
        return;
    }
    let detail = match ended {
        Ended::Ok => String::new(),
        Ended::Exit(code, err) => format!("exit {code:?}: {err}"),
        Ended::TimedOut => "killed at its deadline".into(),
        Ended::Flooded => format!("killed: over {STDOUT_CAP} bytes on stdout"),
        Ended::NotFound => "program not found".into(),
        Ended::Failed(e) => format!("could not start: {e}"),
    };
    crate::log::write(&crate::log::AlertChannelFailed {
        program: Some(job.argv.first().map(String::as_str)),
        ms: Some(ms as u64),
        ..crate::log::AlertChannelFailed::of(job.channel, &detail)
    });
}

/// A pool of runner threads.
pub(crate) struct Pool {
    tx: SyncSender<Job>,
    channel: &'static str,
}

impl Pool {
    /// `concurrency` threads (1..=8), each run bounded by `timeout`.
    pub(crate) fn start(channel: &'static str, concurrency: usize, timeout: Duration) -> Pool {
        let (tx, rx) = mpsc::sync_channel::<Job>(QUEUE);
        let rx: Arc<Mutex<Receiver<Job>>> = Arc::new(Mutex::new(rx));
        for i in 0..concurrency.clamp(1, 8) {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{channel}-{i}"))
                .spawn(move || loop {
                    let job = match rx.lock() {
                        Ok(r) => match r.recv() {
                            Ok(j) => j,
                            Err(_) => return,
                        },
                        Err(_) => return,
                    };
                    run_and_follow(&job, timeout);
                });
            if let Err(e) = spawned {
                let detail = format!("no thread: {e}");
                crate::log::write(&crate::log::AlertChannelFailed::of(channel, &detail));
            }
        }
        Pool { tx, channel }
    }

    /// Queue a job; dropped (and logged) when the queue is full.
    pub(crate) fn submit(&self, job: Job) {
        match self.tx.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                let detail = format!("{QUEUE} runs already waiting: this one dropped");
                crate::log::write(&crate::log::AlertChannelFailed::of(self.channel, &detail));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Job {
        Job {
            channel: "on_alert",
            argv: vec!["/bin/sh".into(), "-c".into(), script.into()],
            stdin: Some(b"{\"a\":1}\n".to_vec()),
            env: Vec::new(),
            then: None,
            waits: false,
        }
    }

    #[test]
    fn every_ending_is_named() {
        let d = Duration::from_secs(5);
        assert_eq!(run_job(&sh("cat >/dev/null"), d), Ended::Ok);
        assert!(
            matches!(run_job(&sh("echo no >&2; exit 3"), d), Ended::Exit(Some(3), e) if e == "no")
        );
        let t = Instant::now();
        assert_eq!(
            run_job(&sh("sleep 30"), Duration::from_millis(300)),
            Ended::TimedOut
        );
        assert!(t.elapsed() < Duration::from_secs(3));
        assert_eq!(run_job(&sh("yes"), d), Ended::Flooded);
        let missing = Job {
            channel: "on_alert",
            argv: vec!["/nonexistent/x".into()],
            stdin: None,
            env: Vec::new(),
            then: None,
            waits: false,
        };
        assert_eq!(run_job(&missing, d), Ended::NotFound);
    }

    #[test]
    fn variables_are_data_and_a_printed_word_runs_what_follows() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("mark");
        let seen = dir.path().join("seen");
        let mut job = sh("printf '%s' \"$INTERCOM_PANE_ALERT_SEAT\" > \"$0\"; echo jump");
        job.argv.push(seen.display().to_string());
        let hostile = format!("$(touch {}) `touch {}`", mark.display(), mark.display());
        job.env = vec![
            ("INTERCOM_PANE_ALERT_SEAT", hostile.clone()),
            ("INTERCOM_PANE_ALERT_TEXT", "two\nlines".into()),
        ];
        let then = dir.path().join("then");
        job.then = Some((
            "jump",
            vec!["/bin/touch".into(), then.display().to_string()],
        ));
        run_and_follow(&job, Duration::from_secs(5));
        assert_eq!(std::fs::read_to_string(&seen).unwrap(), hostile);
        assert!(!mark.exists(), "a variable's value ran as code");
        assert!(then.exists(), "the word did not run what follows");
        // Another word (a notification closed without a click): nothing follows.
        std::fs::remove_file(&then).unwrap();
        job.argv[2] = "echo closed".into();
        run_and_follow(&job, Duration::from_secs(5));
        assert!(!then.exists());
    }
}
