//! `intercom-pane register`: parse, find where the record goes, write it. Exit 0 written (or
//! already newer), 2 refused, 1 not written.

use crate::actions::register::{self, RegisterError, Request};
use crate::cli::RegisterArgs;
use crate::clock::{Clock, SystemClock};
use crate::cmd::exit::RegisterExit;
use crate::cmd::{options, refuse};
use crate::evidence::registrations::{Event, PiState};
use crate::mux::MuxEnv;

pub(crate) fn run(args: &RegisterArgs) -> RegisterExit {
    let Some(event) = Event::parse(&args.event) else {
        return refuse(format!(
            "--event {:?}: expected one of {}",
            crate::text::clip(&crate::text::sanitize(&args.event), 40),
            Event::names().join(", ")
        ));
    };
    let pi_state = match args.pi_state.as_deref().map(PiState::from_arg).transpose() {
        Ok(p) => p,
        Err(e) => return refuse(format!("--pi-state: {e}")),
    };
    let pi_args = match args.pi_args.as_deref().map(parse_pi_args).transpose() {
        Ok(a) => a,
        Err(e) => return refuse(format!("--pi-args: {e}")),
    };
    let roots = match options::data_root(args.config.as_deref()) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let req = Request {
        event,
        seq: args.seq,
        pi_pid: args
            .pi_pid
            .unwrap_or_else(|| std::os::unix::process::parent_id() as i32),
        session_id: args.session_id.clone(),
        session_file: args.session_file.clone(),
        sessions_dir: args.sessions_dir.clone(),
        leaf_id: args.leaf_id.clone(),
        cwd: args.cwd.clone(),
        root: args.root.clone(),
        data_root: roots.data_root,
        channel: args.channel.clone(),
        pi_state,
        pi_args,
        model: args.model.clone(),
    };
    match register::register(&req, &MuxEnv::from_process(), SystemClock.now_ms()) {
        Ok(Some(path)) => {
            crate::cmd::out(format_args!("{}", path.display()));
            RegisterExit::Written
        }
        Ok(None) => RegisterExit::Written,
        Err(RegisterError::Refused(m)) => refuse(m),
        Err(RegisterError::Failed(m)) => {
            eprintln!("intercom-pane: registration not written: {m}");
            RegisterExit::NotWritten
        }
    }
}

/// Largest `--pi-args`.
const PI_ARGS_CAP: usize = 64 * 1024;

/// Why `--pi-args` was refused.
#[derive(Debug)]
enum PiArgsError {
    TooLong,
    NotAList(serde_json::Error),
}

impl std::fmt::Display for PiArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PiArgsError::TooLong => write!(f, "over {PI_ARGS_CAP} bytes"),
            PiArgsError::NotAList(e) => write!(f, "not a JSON array of strings ({e})"),
        }
    }
}

/// `--pi-args`: a JSON array of strings, capped.
fn parse_pi_args(s: &str) -> Result<Vec<String>, PiArgsError> {
    if s.len() > PI_ARGS_CAP {
        return Err(PiArgsError::TooLong);
    }
    serde_json::from_str(s).map_err(PiArgsError::NotAList)
}
