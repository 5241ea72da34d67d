//! `intercom-pane board` (a page of seats) and `intercom-pane wait NAME --state S` (until a seat
//! shows a state): the read-only commands behind the coordinator's `intercom_board` and
//! `intercom_wait` tools.

use std::time::Duration;

use crate::actions::resume;
use crate::cli::{BoardArgs, WaitArgs};
use crate::cmd::exit::{BoardExit, WaitExit};
use crate::cmd::{options, refuse};
use crate::snapshot::{Row, RowRole};
use crate::tools::wait::{self, WaitRequest};
use crate::views::board_page::{self, BoardQuery};

pub(crate) fn run_board(args: &BoardArgs) -> BoardExit {
    let q = BoardQuery {
        attention: args.attention,
        name: args.name.clone(),
        // Another host's board is that host's own `board` (cmd::host_cmd); here, `local`.
        host: args
            .src
            .hosts
            .first()
            .map(|_| crate::hosts::LOCAL.to_string()),
        offset: args.offset,
        limit: args.limit,
    };
    let (_, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let root = pass.config.as_ref().map(|c| c.root.clone());
    let resume_of = |r: &Row| match (&root, r.role) {
        (Some(root), RowRole::Worker) => resume::fence::fence_stage(root, &r.id),
        _ => None,
    };
    match board_page::page(&pass.snapshot, &q, &resume_of) {
        Ok(v) => {
            crate::cmd::out(format_args!(
                "{}",
                crate::views::json::to_string(&v).unwrap_or_default()
            ));
            BoardExit::Printed
        }
        Err(e) => refuse(e),
    }
}

pub(crate) fn run_wait(args: &WaitArgs) -> WaitExit {
    let mut states = Vec::new();
    for s in &args.states {
        match wait::state_named(s) {
            Some(b) => states.push(b),
            None => {
                return refuse(format!(
                    "--state {:?} is not one of working, waiting, error, offline, idle, unknown",
                    crate::text::sanitize(s)
                ))
            }
        }
    }
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let req = WaitRequest {
        name: args.name.clone(),
        states,
        timeout: Duration::from_secs(args.timeout_secs),
        opts: &r.opts,
        clock: r.clock.as_ref(),
    };
    match wait::wait(&req) {
        Ok(v) => {
            crate::cmd::out(format_args!(
                "{}",
                crate::views::json::to_string(&v).unwrap_or_default()
            ));
            if v.reached {
                WaitExit::Reached
            } else {
                WaitExit::TimedOut
            }
        }
        Err(e) => refuse(e),
    }
}
