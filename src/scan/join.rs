//! Stage 2 of a pass: each seat joined with its evidence — session file, registration, liveness,
//! observations and connection — into its record, its row and its reply path.

use std::cell::Cell;
use std::collections::HashMap;

use super::build::{build_record, build_row, seat_pane, GitRoots, SeatEvidence};
use super::seats::{
    at_registered_leaf, match_registration, other_session_in_pane, read_seat_session,
    registration_alive, reply_target, seat_hint, ReplyTarget, ReplyUnavailable, SeatSource,
};
use super::ScanOptions;
use crate::board::intercom::WorkerObservation;
use crate::board::record::SeatRecord;
use crate::clock::Ms;
use crate::evidence::config::IntercomConfig;
use crate::evidence::registrations::RegistrationSet;
use crate::evidence::seen::SeenMarks;
use crate::evidence::sessions::usage::{self, UsageMemo};
use crate::evidence::sessions::SessionMemo;
use crate::liveness::{self, PaneCache, RegisteredPi};
use crate::probe::{Connection, ProbeCache};
use crate::snapshot::{PassError, Row, RowRole};

/// What every seat of one pass is joined against (read once per pass).
pub(super) struct Pass<'a> {
    pub(super) opts: &'a ScanOptions,
    pub(super) config: Option<&'a IntercomConfig>,
    /// Configured workers' observations by session id (the first of a repeated id).
    pub(super) workers: &'a HashMap<&'a str, &'a WorkerObservation>,
    pub(super) regs: &'a RegistrationSet,
    pub(super) panes: &'a PaneCache,
    pub(super) seats: &'a [SeatSource],
    pub(super) marks: &'a SeenMarks,
    pub(super) probes: Option<&'a ProbeCache>,
    /// Session files read by earlier passes of the same caller (none: a one-shot pass).
    pub(super) sessions: Option<&'a SessionMemo>,
    /// How far earlier passes counted each file's tokens and cost (none: a one-shot pass).
    pub(super) usage: Option<&'a UsageMemo>,
    /// Bytes this pass may still read forward for tokens and cost, over all its seats.
    pub(super) usage_budget: Cell<u64>,
    pub(super) now: Ms,
}

/// One seat, joined.
pub(super) struct Joined {
    pub(super) record: SeatRecord,
    /// `None` for the coordinator (the sidebar lists workers and seats).
    pub(super) row: Option<Row>,
    pub(super) reply: Result<ReplyTarget, ReplyUnavailable>,
    /// `Some(alive)` when a registration matched: `false` when it is stale.
    pub(super) registered: Option<bool>,
}

impl Pass<'_> {
    /// Join one seat. Per-seat read errors are added to `errors`.
    pub(super) fn join(
        &self,
        seat: &SeatSource,
        git: &mut GitRoots,
        errors: &mut Vec<PassError>,
    ) -> Joined {
        let agent_cfg = seat
            .agent_index
            .and_then(|i| self.config.and_then(|c| c.agents.get(i)));
        let session = read_seat_session(seat, self.sessions, errors);
        // A roster agent's folder: where its pi must run for a registration to be its own.
        let folder = agent_cfg.and_then(|a| self.config.map(|c| c.root.join(&a.project_directory)));
        let reg = match_registration(seat, folder.as_deref(), self.regs, session.summary());
        let reg_alive = reg.and_then(registration_alive);
        let session = match reg.filter(|_| reg_alive == Some(true)) {
            Some(r) => at_registered_leaf(session, r, self.sessions),
            None => session,
        };
        let registered_pi = reg.and_then(|r| {
            Some(RegisteredPi {
                pid: r.pid?,
                alive: reg_alive?,
            })
        });
        let live = liveness::seat_liveness_registered(
            self.panes,
            seat_hint(seat, reg).as_ref(),
            self.opts.liveness,
            registered_pi,
        );
        let obs = agent_cfg
            .filter(|a| !a.coordinator)
            .and_then(|a| self.workers.get(a.session_id.as_str()).copied());
        let connection = agent_cfg.map(|a| match self.probes {
            Some(p) => p.get(&a.session_id, a.port, self.now),
            None => Connection::not_checked(&a.session_id),
        });
        let evidence = SeatEvidence {
            seat,
            session: &session,
            reg,
            reg_alive,
            live: &live,
            obs,
            connection: connection.as_ref(),
            other_session: other_session_in_pane(seat, reg, self.regs, self.seats),
            usage: session.summary().map(|s| {
                usage::tally(
                    &s.path,
                    &s.usage,
                    s.file_len,
                    self.usage,
                    &self.usage_budget,
                )
            }),
        };
        let mut record = build_record(&evidence, self.marks, git, self.now);
        // A pane whose pi runs another session is not this seat's pi running.
        let pi_runs = record.alive == Some(true)
            && record.state_reason != crate::board::reason::StateReason::PaneRunsOtherSession;
        let reply = reply_target(seat, folder.as_deref(), reg, reg_alive, pi_runs);
        let row = (seat.role != RowRole::Coordinator)
            .then(|| build_row(&evidence, &record, agent_cfg, &reply));
        record.seat = Some(super::build::seat_extra(
            seat.role,
            seat_pane(&evidence).as_ref(),
            &super::build::reply_path(&reply),
            row.as_ref(),
        ));
        Joined {
            record,
            row,
            reply,
            registered: reg.map(|_| reg_alive != Some(false)),
        }
    }
}
