//! `--host` on the commands (docs/behaviour.md §12): an action names one machine and runs
//! there, through `hosts::delegate`, as the same guarded command; `scan` reads several
//! machines' boards at once; `status` pages one machine's workers. `hello` answers a board on
//! another machine.

use std::io::IsTerminal;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use clap::ArgMatches;

use crate::cli::{Command, HelloArgs, ScanArgs, SourceArgs, StatusArgs};
use crate::cmd::host_forward;
use crate::cmd::text_input::{self, REPLY_TEXT};
use crate::hosts::delegate::{self, Delegated, EXIT_NOT_STARTED};
use crate::hosts::{self, hello, Host, Target};
use crate::text::sanitize;

/// How long a reply there may take (its own deadlines are shorter).
const REPLY_DEADLINE: Duration = Duration::from_secs(60);
/// Beyond a close's or resume's own deadline, for the scans and checks around it.
const SLACK: Duration = Duration::from_secs(60);
/// A remote `scan --json` or `status --json` must answer within this long.
const READ_DEADLINE: Duration = Duration::from_secs(20);
/// `--watch` with another host: the stream is each machine's own.
const WATCH_HERE: &str = "--watch streams this machine's board only (it writes this machine's \
     board files); `status --watch --host all` streams several hosts' boards merged";
/// Largest board read from a host.
const MAX_BOARD: usize = 32 * 1024 * 1024;

/// Why a command naming another machine was refused here, or did not run there.
#[derive(Debug)]
pub(crate) enum HostCmdError {
    /// `--host` itself: unknown, malformed, several for an action.
    Host(hosts::HostError),
    /// A flag that names something on this machine.
    LocalFlag(&'static str),
    /// The text or file to send could not be read here.
    Input(text_input::InputError),
    NotAWorkerName(String),
    /// `log --follow --host`.
    FollowHere,
    /// This machine's own board, for `scan --host local,…`.
    Local(crate::cmd::options::OptionsError),
    BoardFiles(crate::views::board_files::BoardError),
    /// What another host answered (or that it did not) to the sidebar's `seen`.
    There {
        host: String,
        what: String,
    },
}

impl std::fmt::Display for HostCmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostCmdError::Host(e) => write!(f, "{e}"),
            HostCmdError::LocalFlag(flag) => write!(
                f,
                "{flag} names something on this machine; with --host, that host's flags come \
                 from the hosts file (its \"root\" and \"args\")"
            ),
            HostCmdError::Input(e) => write!(f, "{e}"),
            HostCmdError::NotAWorkerName(n) => write!(f, "{n:?} is not a worker name"),
            HostCmdError::FollowHere => {
                f.write_str("--follow follows a session file on this machine only")
            }
            HostCmdError::Local(e) => write!(f, "{e}"),
            HostCmdError::BoardFiles(e) => write!(f, "board files not written: {e}"),
            HostCmdError::There { host, what } => write!(f, "host {host}: {what}"),
        }
    }
}

/// `hello`: one JSON line.
pub(crate) fn hello(a: &HelloArgs) -> i32 {
    crate::cmd::out(format_args!("{}", hello::line(a.echo.as_deref())));
    0
}

/// `seen KEY --last-activity ISO [--unsee]` on this machine: the mark written under the data
/// root, one JSON line said (exit 0), or refused (exit 2, nothing written).
pub(crate) fn seen(a: &crate::cli::SeenArgs) -> i32 {
    let key_ok = !a.key.is_empty()
        && a.key.len() <= 512
        && a.key.contains('/')
        && !a.key.chars().any(char::is_control);
    if !key_ok {
        return refused(format!(
            "{:?} is not a seat key (<project>/<agent>)",
            sanitize(&a.key)
        ));
    }
    let Some(at) = crate::clock::parse_iso(&a.last_activity) else {
        return refused(format!(
            "--last-activity {:?} is not an ISO 8601 time",
            sanitize(&a.last_activity)
        ));
    };
    let r = match crate::cmd::options::resolve(&a.src) {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    let iso = crate::clock::format_iso(at);
    match crate::actions::seen::set_seen(&r.opts.data_root, &a.key, &iso, !a.unsee) {
        Ok(_) => {
            let said = SeenSaid {
                key: sanitize(&a.key),
                seen: !a.unsee,
                last_activity: iso,
            };
            crate::cmd::out(format_args!("{}", json_line(&said)));
            0
        }
        Err(e) => refused(format!("seen not saved: {e}")),
    }
}

fn seen_flags(last_activity_iso: &str, seen: bool) -> Vec<String> {
    let mut flags = vec!["--last-activity".to_string(), last_activity_iso.to_string()];
    push_flag(&mut flags, !seen, "--unsee");
    flags
}

/// `seen --host H`: run there, its answer and exit code unchanged.
fn seen_remote(a: &crate::cli::SeenArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "seen", &flags, std::slice::from_ref(&a.key));
    finish(
        host,
        "seen",
        delegate::run(host, &words, None, READ_DEADLINE),
        true,
    )
}

/// Mark or unmark `key` seen on `host` (a row of another host in the sidebar).
pub(crate) fn seen_there(
    host: &Host,
    key: &str,
    last_activity_iso: &str,
    seen: bool,
) -> Result<(), HostCmdError> {
    let words = delegate::words(
        host,
        "seen",
        &seen_flags(last_activity_iso, seen),
        &[key.to_string()],
    );
    match delegate::run(host, &words, None, READ_DEADLINE) {
        Delegated::Ran { code: 0, .. } => Ok(()),
        Delegated::Ran { code, stderr, .. } => Err(HostCmdError::There {
            host: host.name.to_string(),
            what: format!(
                "refused it (exit {code}): {}",
                crate::text::one_line(&stderr, 200)
            ),
        }),
        Delegated::NotStarted(why) => Err(HostCmdError::There {
            host: host.name.to_string(),
            what: format!("not done: {}", sanitize(&why)),
        }),
        Delegated::Unknown(why) => Err(HostCmdError::There {
            host: host.name.to_string(),
            what: format!("unknown whether it was saved: {}", sanitize(&why)),
        }),
    }
}

/// `Some(exit)` when `cmd` names another machine with `--host` (it ran there, or was refused
/// here); `None` when it runs on this machine as usual.
/// A seat named as the board shows another host's row, `HOST:NAME` (`build:W1`, `local:W1`),
/// is that host's seat: `--host HOST` and the name there.
pub(crate) fn qualify(cmd: &mut Command) {
    let (name, src) = match cmd {
        Command::Reply(a) => (&mut a.name, &mut a.src),
        Command::CloseWorker(a) => (&mut a.name, &mut a.src),
        Command::ResumeWorker(a) => (&mut a.name, &mut a.src),
        Command::Retire(a) => (&mut a.name, &mut a.src),
        Command::Log(a) => (&mut a.name, &mut a.src),
        Command::Explain(a) => (&mut a.name, &mut a.src),
        Command::Review(a) => (&mut a.name, &mut a.src),
        Command::Jump(a) => match a.name.as_mut() {
            Some(n) => (n, &mut a.src),
            None => return,
        },
        _ => return,
    };
    let Some((host, seat)) = name.split_once(':') else {
        return;
    };
    let Ok(h) = hosts::HostName::parse(host) else {
        return;
    };
    if seat.is_empty() || src.hosts.len() > 1 {
        return;
    }
    // Only a host this machine knows (and the one --host names, when given): a seat whose own
    // name holds a ':' stays as it is.
    let known = h.is_local() || hosts::file_hosts().is_ok_and(|f| f.iter().any(|x| x.name == h));
    let same = src
        .hosts
        .first()
        .is_none_or(|g| hosts::HostName::parse(g).is_ok_and(|g| g == h));
    if known && same {
        let seat = seat.to_string();
        *name = seat;
        src.hosts = vec![h.to_string()];
    }
}

pub(crate) fn elsewhere(cmd: &Command, m: &ArgMatches) -> Option<i32> {
    match cmd {
        Command::Reply(a) => there(&a.src, a, |a, h| reply(a, h, m)),
        Command::CloseWorker(a) => there(&a.src, a, |a, h| Ok(close(a, h, m))),
        Command::ResumeWorker(a) => there(&a.src, a, |a, h| Ok(resume(a, h, m))),
        Command::Spawn(a) => there(&a.src, a, |a, h| spawn(a, h, m)),
        Command::Retire(a) => there(&a.src, a, |a, h| Ok(retire(a, h, m))),
        Command::Review(a) => there(&a.src, a, |a, h| Ok(review(a, h, m))),
        Command::Land(a) => there(&a.src, a, |a, h| Ok(land(a, h, m))),
        Command::Board(a) => there(&a.src, a, |a, h| Ok(board(a, h, m))),
        Command::Log(a) => there(&a.src, a, |a, h| log(a, h, m)),
        Command::Explain(a) => there(&a.src, a, |a, h| Ok(explain(a, h, m))),
        Command::Seen(a) => there(&a.src, a, |a, h| Ok(seen_remote(a, h, m))),
        Command::Status(a) => status(a),
        Command::Scan(a) => scan(a),
        _ => None,
    }
}

/// `run` on the one other machine `src` names (`None`: this machine); a refusal is exit 2.
fn there<A>(
    src: &SourceArgs,
    a: &A,
    run: impl FnOnce(&A, &Host) -> Result<i32, HostCmdError>,
) -> Option<i32> {
    let host = remote_of(src)?;
    Some(host.and_then(|h| run(a, &h)).unwrap_or_else(refused))
}

fn refused(msg: impl std::fmt::Display) -> i32 {
    eprintln!("intercom-pane: {msg}");
    2
}

/// `None`: this machine. `Some(Ok(host))`: the one other machine named. `Some(Err(why))`: a bad
/// `--host`, several of them, or flags that only mean something here.
fn remote_of(src: &SourceArgs) -> Option<Result<Host, HostCmdError>> {
    if src.hosts.is_empty() {
        return None;
    }
    match hosts::one_target(&src.hosts) {
        Ok(Target::Local) => None,
        Ok(Target::Remote(h)) => Some(no_local_flags(src).map(|()| h)),
        Err(e) => Some(Err(HostCmdError::Host(e))),
    }
}

/// A command run on another host takes that host's flags from the hosts file: this machine's
/// `--config`, `--root`, … would name folders here.
fn no_local_flags(src: &SourceArgs) -> Result<(), HostCmdError> {
    let given = [
        ("--config", src.config.is_some()),
        ("--root", src.root.is_some()),
        ("--repo", src.repo.is_some()),
        ("--fleet", src.fleet.is_some()),
        ("--sessions-dir", !src.sessions_dirs.is_empty()),
        ("--tmux-socket", src.tmux_socket.is_some()),
        ("--now", src.now.is_some()),
        (
            "--liveness",
            !matches!(src.liveness, crate::cli::LivenessArg::Tmux),
        ),
    ];
    match given.iter().find(|(_, g)| *g) {
        Some((flag, _)) => Err(HostCmdError::LocalFlag(flag)),
        None => Ok(()),
    }
}

fn push_flag(flags: &mut Vec<String>, on: bool, flag: &str) {
    if on {
        flags.push(flag.to_string());
    }
}

fn push_value(flags: &mut Vec<String>, flag: &str, value: Option<String>) {
    if let Some(v) = value {
        flags.extend([flag.to_string(), v]);
    }
}

fn reply(a: &crate::cli::ReplyArgs, host: &Host, m: &ArgMatches) -> Result<i32, HostCmdError> {
    let text = text_input::read_text(
        REPLY_TEXT,
        a.text.as_deref(),
        a.file.as_deref(),
        std::io::stdin(),
    )
    .map_err(HostCmdError::Input)?;
    // The text rules here first: a bad text never leaves this machine.
    if let Err(r) = crate::actions::reply::check_text(&text) {
        eprintln!("intercom-pane: {r}");
        return Ok(r.exit().code());
    }
    // The text goes on standard input (`-`), wherever the caller gave it.
    let flags = host_forward::flags(m, &["text", "file"]);
    let words = delegate::words(host, "reply", &flags, &[a.name.clone(), "-".into()]);
    let d = delegate::run(host, &words, Some(text.as_bytes()), REPLY_DEADLINE);
    Ok(finish(host, "reply", d, a.json))
}

fn close(a: &crate::cli::CloseWorkerArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "close-worker", &flags, std::slice::from_ref(&a.name));
    let deadline = Duration::from_secs(a.deadline_secs) + SLACK;
    let d = delegate::run(host, &words, None, deadline);
    finish(host, "close-worker", d, a.json)
}

fn resume(a: &crate::cli::ResumeWorkerArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "resume-worker", &flags, std::slice::from_ref(&a.name));
    let deadline = Duration::from_secs(a.wait_secs) + SLACK;
    let d = delegate::run(host, &words, None, deadline);
    finish(host, "resume-worker", d, a.json)
}

fn spawn(a: &crate::cli::SpawnArgs, host: &Host, m: &ArgMatches) -> Result<i32, HostCmdError> {
    // The first task's file is read here (a file of this machine) and sent as `--prompt`, to be
    // checked by the host's own rules; `--dir` is a folder there, relative to that host's root.
    let mut flags = host_forward::flags(m, &["prompt_file"]);
    if let (None, Some(f)) = (&a.prompt, &a.prompt_file) {
        let text = text_input::read_text(REPLY_TEXT, None, Some(f), std::io::stdin())
            .map_err(HostCmdError::Input)?;
        flags.push(format!("--prompt={text}"));
    }
    // pi's own arguments follow spawn's `--`, so the name goes before it (never read as a
    // flag: a worker name cannot start with '-').
    if a.name.starts_with('-') {
        return Err(HostCmdError::NotAWorkerName(sanitize(&a.name)));
    }
    let mut words = delegate::words(host, "spawn", &flags, &[]);
    words.pop();
    words.push(a.name.clone());
    if !a.pi_args.is_empty() {
        words.push("--".into());
        words.extend(a.pi_args.iter().cloned());
    }
    let deadline = Duration::from_secs(a.wait_secs) + SLACK;
    Ok(finish(
        host,
        "spawn",
        delegate::run(host, &words, None, deadline),
        a.json,
    ))
}

fn retire(a: &crate::cli::RetireArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "retire", &flags, std::slice::from_ref(&a.name));
    finish(
        host,
        "retire",
        delegate::run(host, &words, None, SLACK),
        a.json,
    )
}

fn review(a: &crate::cli::ReviewArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "review", &flags, std::slice::from_ref(&a.name));
    finish(
        host,
        "review",
        delegate::run(host, &words, None, SLACK),
        a.json,
    )
}

fn land(a: &crate::cli::LandArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "land", &flags, &a.names);
    let deadline = SLACK * u32::try_from(a.names.len()).unwrap_or(u32::MAX).max(1);
    finish(
        host,
        "land",
        delegate::run(host, &words, None, deadline),
        a.json,
    )
}

/// Say how a delegated command ended and give its exit code: what the host printed comes back
/// as it is (on a terminal, each line sanitized: it is another machine's text); a command that
/// did not run, or whose outcome is unknown, is said to be so — never done.
fn finish(host: &Host, what: &str, d: Delegated, json: bool) -> i32 {
    let code = d.code();
    match &d {
        Delegated::Ran { stdout, stderr, .. } => {
            let tagged = with_host(stdout, host.name.as_str(), ACTIONS.contains(&what));
            let stdout = &tagged;
            if std::io::stdout().is_terminal() {
                for line in String::from_utf8_lossy(stdout).lines() {
                    crate::cmd::out(format_args!("{}", sanitize(line)));
                }
            } else {
                crate::cmd::out_bytes(stdout);
            }
            for line in stderr.lines().take(200) {
                eprintln!("{}", sanitize(line));
            }
        }
        Delegated::NotStarted(why) | Delegated::Unknown(why) => {
            let (outcome, said) = match &d {
                Delegated::NotStarted(_) => ("not_started", "not done".to_string()),
                _ => (
                    "unknown",
                    format!("the outcome of {what} there is unknown (check the board before doing it again)"),
                ),
            };
            if json {
                let v = NotRun {
                    host: host.name.as_str(),
                    command: what,
                    outcome,
                    detail: sanitize(why),
                };
                crate::cmd::out(format_args!("{}", json_line(&v)));
            }
            eprintln!(
                "intercom-pane: host {}: {said}: {}",
                host.name,
                sanitize(why)
            );
        }
    }
    code
}

/// The commands that act (their receipts name the host they acted on).
const ACTIONS: [&str; 5] = ["reply", "close-worker", "resume-worker", "spawn", "retire"];

/// What a host printed, naming that host: a JSON object (the whole answer, or each line) gets
/// `"host": NAME` when it has no `host` of its own; an action's text receipt gets `host NAME: `
/// before each line. Anything else comes back unchanged.
fn with_host(stdout: &[u8], name: &str, action: bool) -> Vec<u8> {
    let tag = |v: &mut Value| -> bool {
        match v.as_object_mut() {
            Some(o) => {
                if !o.contains_key("host") {
                    o.insert("host".into(), Value::from(name));
                }
                true
            }
            None => false,
        }
    };
    if let Ok(mut v) = serde_json::from_slice::<Value>(stdout) {
        return if tag(&mut v) {
            format!("{v}\n").into_bytes()
        } else {
            stdout.to_vec()
        };
    }
    let text = String::from_utf8_lossy(stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut objects = Vec::with_capacity(lines.len());
    for l in &lines {
        let Ok(mut v) = serde_json::from_str::<Value>(l) else {
            break;
        };
        if !tag(&mut v) {
            break;
        }
        objects.push(v.to_string());
    }
    if !lines.is_empty() && objects.len() == lines.len() {
        return objects
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes();
    }
    if action {
        return text
            .lines()
            .map(|l| format!("host {name}: {l}\n"))
            .collect::<String>()
            .into_bytes();
    }
    stdout.to_vec()
}

/// A page's flags (`status`, `board`): the name, offset and limit asked for.
fn push_page(flags: &mut Vec<String>, name: Option<String>, offset: usize, limit: usize) {
    push_value(flags, "--name", name);
    flags.extend([
        "--offset".into(),
        offset.to_string(),
        "--limit".into(),
        limit.to_string(),
    ]);
}

/// `log NAME --host H`: that machine's timeline of its seat, as it printed it. Not `--follow`:
/// a stream is not one bounded call over ssh.
fn log(a: &crate::cli::LogArgs, host: &Host, m: &ArgMatches) -> Result<i32, HostCmdError> {
    if a.follow {
        return Err(HostCmdError::FollowHere);
    }
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "log", &flags, std::slice::from_ref(&a.name));
    Ok(finish(
        host,
        "log",
        delegate::run(host, &words, None, READ_DEADLINE),
        a.json,
    ))
}

/// `explain NAME --host H`: that machine's account of its seat, as it printed it.
fn explain(a: &crate::cli::ExplainArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "explain", &flags, std::slice::from_ref(&a.name));
    finish(
        host,
        "explain",
        delegate::run(host, &words, None, READ_DEADLINE),
        a.json,
    )
}

/// `board --host NAME`: that one machine's page, as it printed it.
fn board(_a: &crate::cli::BoardArgs, host: &Host, m: &ArgMatches) -> i32 {
    let flags = host_forward::flags(m, &[]);
    let words = delegate::words(host, "board", &flags, &[]);
    finish(
        host,
        "board",
        delegate::run(host, &words, None, READ_DEADLINE),
        true,
    )
}

/// `status --host NAME`: that one machine's page, as it printed it with `--json`; without
/// `--json`, in the same words as this machine's `status` (a failure is a sentence, never JSON).
fn status(a: &StatusArgs) -> Option<i32> {
    if a.watch && !a.src.hosts.is_empty() {
        return status_watch(a);
    }
    let host = match remote_of(&a.src)? {
        Ok(h) => h,
        Err(e) => return Some(refused(e)),
    };
    let mut flags = vec!["--json".to_string()];
    push_page(&mut flags, a.name.clone(), a.offset, a.limit);
    push_flag(&mut flags, a.probe, "--probe");
    let words = delegate::words(&host, "status", &flags, &[]);
    let d = delegate::run(&host, &words, None, READ_DEADLINE);
    if a.json {
        return Some(finish(&host, "status", d, true));
    }
    match d {
        Delegated::Ran {
            code: 0, stdout, ..
        } => match serde_json::from_slice::<Value>(&stdout) {
            Ok(page) if page.is_object() => {
                crate::cmd::out(format_args!("host {}:", host.name));
                crate::cmd::out_bytes(crate::views::status_text::status_text(&page).as_bytes());
                Some(0)
            }
            _ => Some(refused(format!(
                "host {}: its status answer could not be read (not a status page)",
                host.name
            ))),
        },
        d => Some(finish(&host, "status", d, false)),
    }
}

/// `status --watch --host …` (`all`, or several): one merged stream of those machines
/// (`hosts::merged`); `None` when it names this machine alone (the usual stream).
fn status_watch(a: &StatusArgs) -> Option<i32> {
    let targets = match hosts::board_targets(&a.src.hosts) {
        Ok(t) => t,
        Err(e) => return Some(refused(e.to_string())),
    };
    // `all` follows the hosts file, so it is merged even while the file names no host.
    let all = a
        .src
        .hosts
        .iter()
        .any(|g| g.eq_ignore_ascii_case(hosts::ALL));
    if targets == [Target::Local] && !all {
        return None;
    }
    let (local, clock): (_, Arc<dyn crate::clock::Clock>) = if targets.contains(&Target::Local) {
        match crate::cmd::options::resolve(&a.src) {
            Ok(r) => (Some(r.opts), Arc::from(r.clock)),
            Err(e) => return Some(refused(e.to_string())),
        }
    } else {
        // No local part: a flag naming something here would be ignored, so it is refused.
        if let Err(e) = no_local_flags(&a.src) {
            return Some(refused(e));
        }
        (None, Arc::new(crate::clock::SystemClock))
    };
    let plan = hosts::merged::Plan {
        local,
        hosts: hosts::remotes(&targets),
        follow: all.then(hosts::file::default_path).flatten(),
        clock,
        heartbeat: Duration::from_secs(a.stream.heartbeat_secs),
        full_every: Duration::from_secs(a.stream.live.full_pass_secs),
        probe: a.probe,
    };
    Some(match hosts::merged::run(plan) {
        Ok(()) => 0,
        Err(e) => refused(format!("cannot start the stream: {e}")),
    })
}

/// One machine's board for `scan`: its records (each with `host`), or why it is missing.
struct HostBoard {
    name: String,
    records: Vec<Value>,
    problem: Option<(&'static str, String)>,
}

fn read_board(host: &Host) -> HostBoard {
    if let Err(e) = hosts::ssh::control() {
        return HostBoard {
            name: host.name.to_string(),
            records: Vec::new(),
            problem: Some(("refused", e.to_string())),
        };
    }
    // The hello's failure is judged as the board judges it: one state vocabulary.
    if let Err(f) = hello::ask(host) {
        let (state, why) = hosts::link::hello_state(f);
        return HostBoard {
            name: host.name.to_string(),
            records: Vec::new(),
            problem: Some((state.as_str(), why)),
        };
    }
    let words = delegate::words(host, "scan", &["--json".into()], &[]);
    let (records, problem) = match delegate::after_hello(host, &words, None, READ_DEADLINE) {
        Delegated::Ran {
            code: 0, stdout, ..
        } if stdout.len() <= MAX_BOARD => match serde_json::from_slice::<Value>(&stdout) {
            Ok(b) => (
                hosts::wire::records(&b).into_iter().cloned().collect(),
                None,
            ),
            Err(_) => (
                Vec::new(),
                Some(("refused", "its scan --json is not JSON".into())),
            ),
        },
        Delegated::Ran { code, stderr, .. } => (
            Vec::new(),
            Some((
                "refused",
                format!(
                    "its scan ended with exit {code}: {}",
                    crate::text::one_line(&stderr, 200)
                ),
            )),
        ),
        Delegated::NotStarted(why) | Delegated::Unknown(why) => {
            (Vec::new(), Some(("not_answering", why)))
        }
    };
    HostBoard {
        name: host.name.to_string(),
        records: records
            .into_iter()
            .map(|mut r| {
                if let Some(o) = r.as_object_mut() {
                    o.insert("host".into(), Value::from(host.name.as_str()));
                }
                r
            })
            .collect(),
        problem,
    }
}

/// `scan --host …` naming another machine: each host's board read at once (each on its own
/// thread, under its own deadline), this machine's written as usual when it is named.
fn scan(a: &ScanArgs) -> Option<i32> {
    if a.src.hosts.is_empty() {
        return None;
    }
    let targets = match hosts::targets(&a.src.hosts, false) {
        Ok(t) => t,
        Err(e) => return Some(refused(e)),
    };
    if targets == [Target::Local] {
        return None;
    }
    if a.watch {
        return Some(refused(WATCH_HERE));
    }
    let readers: Vec<_> = targets
        .iter()
        .filter_map(|t| match t {
            Target::Remote(h) => {
                let h = h.clone();
                Some(thread::spawn(move || read_board(&h)))
            }
            Target::Local => None,
        })
        .collect();
    let mut boards = Vec::new();
    if targets.contains(&Target::Local) {
        match local_board(&a.src) {
            Ok(b) => boards.push(b),
            Err(e) => return Some(refused(e)),
        }
    }
    for r in readers {
        if let Ok(b) = r.join() {
            boards.push(b);
        }
    }
    print_boards(&boards, a);
    let all = boards.iter().all(|b| b.problem.is_none());
    Some(if all { 0 } else { EXIT_NOT_STARTED })
}

fn local_board(src: &SourceArgs) -> Result<HostBoard, HostCmdError> {
    let (_, pass) = crate::cmd::options::resolve_and_scan(src).map_err(HostCmdError::Local)?;
    crate::views::board_files::write_board_text(&pass).map_err(HostCmdError::BoardFiles)?;
    let records = pass
        .records
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .map(|mut r| {
            if let Some(o) = r.as_object_mut() {
                o.insert("host".into(), Value::from(hosts::LOCAL));
            }
            r
        })
        .collect();
    Ok(HostBoard {
        name: hosts::LOCAL.into(),
        records,
        problem: None,
    })
}

/// `scan --host …`'s answer: each machine's state, then every record (each with `host`).
#[derive(Serialize)]
struct ScanOfHosts<'a> {
    version: u32,
    hosts: Vec<HostLine<'a>>,
    records: Vec<&'a Value>,
}

#[derive(Serialize)]
struct HostLine<'a> {
    name: &'a str,
    state: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    seats: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

/// `seen`'s answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SeenSaid {
    key: String,
    seen: bool,
    last_activity: String,
}

/// A delegated command that did not run there, or whose outcome is unknown (`--json`).
#[derive(Serialize)]
struct NotRun<'a> {
    host: &'a str,
    command: &'a str,
    outcome: &'a str,
    detail: String,
}

/// One JSON line of a serde type, escaped as every view's (these cannot fail to serialize:
/// strings, numbers, flags).
fn json_line(v: &impl Serialize) -> String {
    crate::views::json::to_string(v).unwrap_or_default()
}

fn print_boards(boards: &[HostBoard], a: &ScanArgs) {
    if a.json || !a.print {
        let hosts = boards
            .iter()
            .map(|b| match &b.problem {
                None => HostLine {
                    name: &b.name,
                    state: "answering",
                    seats: Some(b.records.len()),
                    detail: None,
                },
                Some((state, why)) => HostLine {
                    name: &b.name,
                    state,
                    seats: None,
                    detail: Some(sanitize(why)),
                },
            })
            .collect();
        let records = boards.iter().flat_map(|b| b.records.iter()).collect();
        let v = ScanOfHosts {
            version: 1,
            hosts,
            records,
        };
        crate::cmd::out(format_args!(
            "{}",
            crate::views::json::to_string_pretty(&v).unwrap_or_default()
        ));
    }
    if a.print {
        for b in boards {
            if let Some((state, why)) = &b.problem {
                crate::cmd::out(format_args!("! {}: {state}: {}", b.name, sanitize(why)));
            }
            for r in &b.records {
                let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
                let mark = if r.get("waitingOnYou") == Some(&Value::Bool(true)) {
                    '*'
                } else {
                    ' '
                };
                crate::cmd::out(format_args!(
                    "{mark} {}:{}/{} {:<8} {}",
                    b.name,
                    sanitize(s("project")),
                    sanitize(s("agent")),
                    s("state"),
                    crate::text::clip(&sanitize(s("task")), 80)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_host_printed_names_the_host() {
        let one = with_host(b"{\"outcome\":\"delivered\"}\n", "b", true);
        assert_eq!(one, b"{\"outcome\":\"delivered\",\"host\":\"b\"}\n");
        let own = with_host(b"{\"host\":\"local\"}", "b", true);
        assert_eq!(own, b"{\"host\":\"local\"}\n");
        let lines = with_host(b"{\"a\":1}\n{\"a\":2}\n", "b", false);
        assert_eq!(
            lines,
            b"{\"a\":1,\"host\":\"b\"}\n{\"a\":2,\"host\":\"b\"}\n"
        );
        let text = with_host(b"delivered to root/Builder\n", "b", true);
        assert_eq!(text, b"host b: delivered to root/Builder\n");
        let page = b"Builder  idle\n";
        assert_eq!(with_host(page, "b", false), page);
    }
}
