//! `intercom-pane register`: parse, find where the record goes, write it. Exit 0 written (or
//! already newer), 2 refused, 1 not written.

use crate::actions::register::{self, RegisterError, Request};
use crate::cli::RegisterArgs;
use crate::clock::{Clock, SystemClock};
use crate::cmd::exit::RegisterExit;
use crate::cmd::{options, refuse};
use crate::evidence::config;
use crate::evidence::registrations::RunEvent;
use crate::mux::MuxEnv;

pub fn run(args: &RegisterArgs) -> RegisterExit {
    let Some(event) = RunEvent::parse(&args.event) else {
        return refuse(format!(
            "--event {:?}: expected session_start, agent_start, agent_settled, agent_end or session_shutdown",
            crate::text::clip(&crate::text::sanitize(&args.event), 40)
        ));
    };
    let cwd = match args.cwd.clone().or_else(|| std::env::current_dir().ok()) {
        Some(c) => c,
        None => return refuse("no --cwd and the current folder cannot be read"),
    };
    let roots = match options::data_root(args.config.as_deref()) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    // The Intercom root counts only when its config names this session: a pi that merely runs
    // inside a coordinator's folder is not one of its agents.
    let intercom_root = match &args.root {
        Some(r) => Some(r.clone()),
        None => config::discover_root(&cwd).ok().flatten(),
    }
    .filter(|r| {
        config::load(r)
            .map(|c| c.find_by_session(&args.session_id).is_some())
            .unwrap_or(false)
    });
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
        cwd,
        intercom_root,
        data_root: roots.data_root,
        channel: args.channel.clone(),
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
