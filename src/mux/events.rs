//! One pane-event listener per server for the live engine (`live::panes`): a tmux control-mode
//! client attached to one session, or a Herdr subscription covering the server. Both say only
//! that panes changed (`Notice`); the live engine lists the server again.

use std::os::fd::RawFd;
use std::path::Path;
use std::time::Instant;

use super::herdr::events::HerdrEvents;
use super::herdr::Herdr;
use super::tmux::control::ControlClient;
pub(crate) use super::tmux::control::Notice;
use super::tmux::Tmux;
use super::{MuxError, MuxKind};

/// tmux before 3.7 may crash when a control-mode client attaches while another client's command
/// sends notifications (a client identified as control mode before its control state exists:
/// tmux GitHub issue 4980, fixed in 3.7). On those, no control client is attached: the live
/// engine compares the server's child processes instead.
pub(crate) const CONTROL_FROM: (u32, u32) = (3, 7);

/// A server's listener.
pub(crate) enum PaneEvents {
    Tmux(ControlClient),
    Herdr(HerdrEvents),
}

impl PaneEvents {
    /// Whether the server at `socket` can have a listener at all: tmux from `CONTROL_FROM`
    /// (`tmux -V` once per program and PATH; `false` when it cannot say); Herdr always.
    pub(crate) fn supported(kind: MuxKind, socket: &Path, deadline: Instant) -> bool {
        match kind {
            MuxKind::Tmux => Tmux::at_socket(socket)
                .version(deadline)
                .is_ok_and(|v| v >= CONTROL_FROM),
            MuxKind::Herdr => true,
        }
    }

    /// Start one (`None`: nothing to start it on — tmux attaches to a session, `$N`, and none is
    /// known; `Caps::events_per_session`).
    pub(crate) fn start(
        kind: MuxKind,
        socket: &Path,
        session: Option<&str>,
        deadline: Instant,
    ) -> Option<Result<PaneEvents, MuxError>> {
        match kind {
            MuxKind::Tmux => Some(
                Tmux::at_socket(socket)
                    .control_client(session?, deadline)
                    .map(PaneEvents::Tmux),
            ),
            MuxKind::Herdr => Some(
                Herdr::at_socket(socket)
                    .subscribe(deadline)
                    .map(PaneEvents::Herdr),
            ),
        }
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        match self {
            PaneEvents::Tmux(c) => c.raw_fd(),
            PaneEvents::Herdr(h) => h.raw_fd(),
        }
    }

    pub(crate) fn ready(&self) -> bool {
        match self {
            PaneEvents::Tmux(c) => c.ready(),
            // Confirmed before `subscribe` returned.
            PaneEvents::Herdr(_) => true,
        }
    }

    pub(crate) fn ended(&self) -> bool {
        match self {
            PaneEvents::Tmux(c) => c.ended(),
            PaneEvents::Herdr(h) => h.ended(),
        }
    }

    pub(crate) fn read_notices(&mut self, out: &mut Vec<Notice>) {
        match self {
            PaneEvents::Tmux(c) => c.read_notices(out),
            PaneEvents::Herdr(h) => h.read_notices(out),
        }
    }

    /// How `doctor` names what watches the server (`control-mode` only while it listens).
    pub(crate) fn shown_as(&self, listening: bool) -> Option<&'static str> {
        match self {
            PaneEvents::Tmux(_) => listening.then_some("control-mode"),
            PaneEvents::Herdr(_) => Some("herdr-events"),
        }
    }
}
