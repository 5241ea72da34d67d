//! The exit codes of the commands whose outcome no action decides (`exit_code::exit_enum!`), one
//! enum per command, each variant naming the outcome, the number in one place (`--help` lists
//! them, checked by `tests/suite/cli_help.rs`, and docs/commands.md). The others keep theirs
//! beside their action: `reply`, `ensure-monitor`, `close-worker`, `resume-worker`,
//! `spawn-worker`, `retire-worker`, `init`, `tool`.

use crate::exit_code::exit_enum;

exit_enum! {
    /// `scan`.
    ScanExit {
        /// The board files were written (and printed).
        Written = 0,
        /// Bad flags or setup, board files not written, or (`--print`) a roster that was found
        /// or named but cannot be used.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `status`.
    StatusExit {
        Printed = 0,
        /// Bad flags or setup, an unknown `--name`, an offset past the end.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `explain`.
    ExplainExit {
        Printed = 0,
        /// Bad flags or setup.
        Refused = 2,
        /// No seat, or several, of that name.
        UnknownSeat = 5,
    } refused: Refused
}

exit_enum! {
    /// `log`.
    LogExit {
        /// Printed (with `--follow`: streamed until SIGTERM, SIGHUP or SIGINT).
        Printed = 0,
        /// Bad flags or setup, a `--since` that is neither a duration nor a time.
        Refused = 2,
        /// No seat, or several, of that name.
        UnknownSeat = 5,
        /// The seat has no session file yet, or it cannot be read.
        NoSession = 6,
    } refused: Refused
}

exit_enum! {
    /// `board`.
    BoardExit {
        Printed = 0,
        /// Bad flags or setup, an unknown `--name` or `--host`, a `--limit` out of range.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `wait`.
    WaitExit {
        /// The seat showed one of the states.
        Reached = 0,
        /// The timeout passed first (the seat as last seen is printed).
        TimedOut = 1,
        /// Bad flags or setup, no such seat, a name of several seats.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `monitor`.
    MonitorExit {
        /// The person quit.
        Quit = 0,
        /// The terminal could not be used.
        Failed = 1,
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `watch`.
    WatchExit {
        /// Stopped by SIGTERM, SIGHUP or SIGINT.
        Stopped = 0,
        /// The passes could not go on (a thread could not be started).
        Failed = 1,
        /// Bad flags, settings or data root: nothing started.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `jump`.
    JumpExit {
        /// The person's client (tmux) or Herdr now shows the seat's pane.
        Moved = 0,
        /// The multiplexer did not do it (no client attached, the switch did not hold).
        Failed = 1,
        /// Bad flags or data root.
        Refused = 2,
        /// Nothing to go to: no alert recorded, the seat is not on the board or has no live pane.
        NoTarget = 3,
        /// The seat's pane or pi changed since the alert: nothing moved.
        Changed = 4,
    } refused: Refused
}

exit_enum! {
    /// `register`.
    RegisterExit {
        /// Written, or a newer record already there.
        Written = 0,
        /// Checked but not written.
        NotWritten = 1,
        /// Not pi, not its ancestor, a session file of another session, another live pi's seat.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `handoff`.
    HandoffExit {
        Saved = 0,
        /// Not from the worker that was asked, no such open job, a bad summary: nothing written.
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `doctor`.
    DoctorExit {
        /// Every needed part is in place.
        AllInPlace = 0,
        /// A check failed (each failure names a fix; a bad `--config` is one).
        CheckFailed = 1,
    }
}

exit_enum! {
    /// `completions` and `man`.
    DocsExit {
        Written = 0,
        /// Writing failed.
        Failed = 1,
        Refused = 2,
    } refused: Refused
}

exit_enum! {
    /// `review`.
    ReviewExit {
        Printed = 0,
        /// Bad flags or setup, no roster.
        Refused = 2,
        /// No worker of that name.
        UnknownWorker = 5,
    } refused: Refused
}

exit_enum! {
    /// `land`.
    LandExit {
        /// Every worker named landed, or was in the branch already (`--dry-run`: none refused).
        Landed = 0,
        /// git failed while merging (the merge was taken back).
        Failed = 1,
        /// Bad flags or setup, no roster.
        Refused = 2,
        /// A worker was refused; it and the rest of the queue were not landed.
        NotLanded = 3,
        /// No worker of that name.
        UnknownWorker = 5,
    } refused: Refused
}

exit_enum! {
    /// `budget`.
    BudgetExit {
        /// Shown, changed, or (`--check`) checked.
        Done = 0,
        /// The roster could not be changed, or the change not recorded.
        Failed = 1,
        /// Bad flags or setup, no such worker, the coordinator, or a value refused.
        Refused = 2,
    } refused: Refused
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::close::CloseExit;
    use crate::actions::monitor_run::EnsureExit;
    use crate::actions::reply::ReplyExit;
    use crate::exit_code::Refusable;

    #[test]
    fn refusals_are_exit_2_everywhere() {
        assert_eq!(CloseExit::REFUSED.code(), 2);
        assert_eq!(EnsureExit::REFUSED.code(), 2);
        assert_eq!(ReplyExit::REFUSED.code(), 2);
        assert_eq!(ScanExit::REFUSED.code(), 2);
        assert_eq!(StatusExit::REFUSED.code(), 2);
        assert_eq!(MonitorExit::REFUSED.code(), 2);
        assert_eq!(RegisterExit::REFUSED.code(), 2);
        assert_eq!(HandoffExit::REFUSED.code(), 2);
        assert_eq!(DocsExit::REFUSED.code(), 2);
        assert_eq!(RegisterExit::NotWritten.code(), 1);
        assert_eq!(DoctorExit::CheckFailed.code(), 1);
    }
}
