//! Herdr (0.8.x) behind the `Multiplexer` trait, over its socket API (docs/interop.md §8).
//!
//! Why the socket and not the CLI: the same requests, without a process spawn per call, and with
//! our own deadline on connect, write and read. Protocol: newline-delimited JSON, one request per
//! connection: `{"id","method","params"}` → `{"id","result":{"type",...}}` or
//! `{"id","error":{"code","message"}}`; a request Herdr cannot parse is answered with an empty id.
//! Reply shapes follow the captures in `fixtures/herdr-0.8.2` and its API schema (protocol 20).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::Value;

use super::{
    CloseOutcome, ErrorCode, Multiplexer, MuxEnv, MuxError, MuxKind, NewWindow, PaneIdentity,
    PaneInfo, PaneList, PiText, ServerIdentity, SplitAbove, Typed, Untyped,
};
use crate::text::sanitize;

pub(crate) mod events;
mod listing;
mod params;
mod place;
mod prompt;
mod types;
mod workspace;
use types::Snapshot;
pub(crate) use types::{HerdrPane, HerdrProcessInfo, Layout, Rect, SwapResult};
mod socket;
pub(in crate::mux) mod wire;
pub use listing::listing_from_replies;
pub(crate) use place::{Focus, FocusNote, FOCUS_CHECKED};
use wire::{bad, err, expect_type, field};

/// Oldest socket protocol we speak (Herdr 0.8.2 reports 20).
pub(crate) const MIN_PROTOCOL: u32 = 20;
/// Cap on panes whose process info one listing asks for.
pub const MAX_PANES: usize = 256;
/// Bound on one `agent.prompt` text, in bytes. `agent.prompt` carries 20 KB intact (Herdr 0.8.2,
/// probed); the reply path's own limit (2000 characters, at most 8 KiB)
/// is checked before, so this only bounds the request.
pub const MAX_PROMPT: usize = 32 * 1024;
/// Metadata source name and token key for our ownership marker (Herdr has no pane options).
const MARKER_SOURCE: &str = "intercom-pane";
const MARKER_TOKEN: &str = "intercom-pane-owner";

static REQUEST_SEQ: AtomicU64 = AtomicU64::new(0);

/// One Herdr server, addressed by its socket path.
#[derive(Debug)]
pub struct Herdr {
    socket: PathBuf,
    pong: OnceLock<(String, u32)>,
}

impl Herdr {
    /// The server listening on `socket`.
    pub fn at_socket(socket: &Path) -> Herdr {
        Herdr {
            socket: socket.to_path_buf(),
            pong: OnceLock::new(),
        }
    }

    /// The socket Herdr's own CLI would use in this environment (`socket::socket_from_env`).
    pub fn socket_from_env(env: &MuxEnv) -> Option<PathBuf> {
        socket::socket_from_env(env)
    }

    /// A client for the socket the environment names.
    pub fn from_env(env: &MuxEnv) -> Option<Herdr> {
        Herdr::socket_from_env(env).map(|p| Herdr::at_socket(&p))
    }

    /// Send one request on a fresh connection and return its `result` object.
    pub fn request(
        &self,
        method: &str,
        params: impl serde::Serialize,
        deadline: Instant,
    ) -> Result<Value, MuxError> {
        let id = format!(
            "intercom-pane:{}:{}",
            std::process::id(),
            REQUEST_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mut line = serde_json::to_vec(&params::Request {
            id: &id,
            method,
            params,
        })
        .map_err(|_| err(ErrorCode::BadRequest, "unserializable params"))?;
        line.push(b'\n');
        wire::exchange(&self.socket, &line, &id, deadline)
    }

    /// `ping`, checked once per client: version and protocol (≥ `MIN_PROTOCOL`).
    pub fn ping(&self, deadline: Instant) -> Result<(String, u32), MuxError> {
        if let Some(p) = self.pong.get() {
            return Ok(p.clone());
        }
        let r = self.request("ping", params::NoParams {}, deadline)?;
        expect_type(&r, "pong")?;
        let version = r
            .get("version")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("pong without version"))?;
        let protocol = r
            .get("protocol")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .ok_or_else(|| bad("pong without protocol"))?;
        if protocol < MIN_PROTOCOL {
            return Err(err(
                ErrorCode::TooOld,
                format!("herdr protocol {protocol} < {MIN_PROTOCOL}"),
            ));
        }
        let pong = (sanitize(version), protocol);
        let _ = self.pong.set(pong.clone());
        Ok(pong)
    }

    pub(crate) fn call(
        &self,
        method: &str,
        params: impl serde::Serialize,
        deadline: Instant,
    ) -> Result<Value, MuxError> {
        self.ping(deadline)?;
        self.request(method, params, deadline)
    }

    /// `pane.list` (all workspaces when `workspace_id` is `None`).
    pub fn pane_list(
        &self,
        workspace_id: Option<&str>,
        deadline: Instant,
    ) -> Result<Vec<HerdrPane>, MuxError> {
        let r = self.call("pane.list", params::OptWorkspace { workspace_id }, deadline)?;
        expect_type(&r, "pane_list")?;
        field(&r, "panes")
    }

    /// `pane.get`; `Ok(None)` on `pane_not_found`.
    pub fn pane_get(
        &self,
        pane_id: &str,
        deadline: Instant,
    ) -> Result<Option<HerdrPane>, MuxError> {
        match self.call("pane.get", params::Pane { pane_id }, deadline) {
            Ok(r) => {
                expect_type(&r, "pane_info")?;
                field(&r, "pane").map(Some)
            }
            Err(e) if e.code == ErrorCode::PaneNotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `pane.current` (the focused pane, or the caller's when `caller_pane_id` is given).
    pub fn pane_current(
        &self,
        caller_pane_id: Option<&str>,
        deadline: Instant,
    ) -> Result<HerdrPane, MuxError> {
        let r = self.call(
            "pane.current",
            params::CallerPane { caller_pane_id },
            deadline,
        )?;
        expect_type(&r, "pane_current")?;
        field(&r, "pane")
    }

    /// `pane.process_info`; `Ok(None)` on `pane_not_found`.
    pub fn process_info(
        &self,
        pane_id: &str,
        deadline: Instant,
    ) -> Result<Option<HerdrProcessInfo>, MuxError> {
        listing::process_info_of(self.call("pane.process_info", params::Pane { pane_id }, deadline))
    }

    /// `pane.split` down (`down = true`) or right, without focus; the existing pane keeps
    /// `ratio` of the space (0.1–0.9).
    pub fn split(
        &self,
        target: &str,
        down: bool,
        ratio: f64,
        cwd: Option<&str>,
        env: &[(String, String)],
        deadline: Instant,
    ) -> Result<HerdrPane, MuxError> {
        if !(0.1..=0.9).contains(&ratio) {
            return Err(err(ErrorCode::BadRequest, "ratio out of 0.1..=0.9"));
        }
        let env = env_map(env)?;
        let r = self.call(
            "pane.split",
            params::Split {
                target_pane_id: target,
                direction: if down { "down" } else { "right" },
                ratio,
                cwd,
                focus: false,
                env: &env,
            },
            deadline,
        )?;
        expect_type(&r, "pane_info")?;
        field(&r, "pane")
    }

    /// `pane.swap` of two panes. A swap that changes the layout focuses the source pane and its
    /// workspace (captured): `place_above` puts the focus back.
    pub fn swap_panes(
        &self,
        source: &str,
        target: &str,
        deadline: Instant,
    ) -> Result<SwapResult, MuxError> {
        let r = self.call(
            "pane.swap",
            params::Swap {
                source_pane_id: source,
                target_pane_id: target,
            },
            deadline,
        )?;
        expect_type(&r, "pane_swap")?;
        field(&r, "swap")
    }

    /// `pane.rename`.
    pub fn rename_pane(
        &self,
        pane_id: &str,
        label: &str,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        let r = self.call("pane.rename", params::Label { pane_id, label }, deadline)?;
        expect_type(&r, "pane_info")
    }

    /// Type a command line into the pane's shell and press Enter (`pane.send_input`, what
    /// `herdr pane run` does).
    pub fn run(&self, pane_id: &str, line: &str, deadline: Instant) -> Result<(), MuxError> {
        if line.contains(['\n', '\r']) || line.contains(|c: char| c.is_control()) {
            return Err(err(
                ErrorCode::BadRequest,
                "command line with control characters",
            ));
        }
        let r = self.call(
            "pane.send_input",
            params::SendInput {
                pane_id,
                text: line,
                keys: ["Enter"],
            },
            deadline,
        )?;
        expect_type(&r, "ok")
    }

    /// `pane.layout` of the tab holding `pane_id`.
    pub fn layout(&self, pane_id: &str, deadline: Instant) -> Result<Layout, MuxError> {
        let r = self.call("pane.layout", params::Pane { pane_id }, deadline)?;
        expect_type(&r, "pane_layout")?;
        field(&r, "layout")
    }

    /// `pane.close` (no precondition: callers re-verify first). `Ok(false)` when the pane was
    /// already gone.
    pub fn close(&self, pane_id: &str, deadline: Instant) -> Result<bool, MuxError> {
        match self.call("pane.close", params::Pane { pane_id }, deadline) {
            Ok(r) => expect_type(&r, "ok").map(|_| true),
            Err(e) if e.code == ErrorCode::PaneNotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A client for the server at `socket` when it is a Herdr server (`kind`): for the steps
    /// only Herdr has (a placement's swap and typed command, a relaunch after a restart).
    pub fn of(kind: MuxKind, socket: &Path) -> Option<Herdr> {
        (kind == MuxKind::Herdr).then(|| Herdr::at_socket(socket))
    }

    /// Type `text` and Enter into the agent in a pane of a server of ours (`agent_prompt`),
    /// with no pi or editor to check: the layer under `Multiplexer::deliver`.
    pub fn send_text(&self, pane_id: &str, text: &str, deadline: Instant) -> Result<(), MuxError> {
        crate::mux::server_is_ours(self.socket_path(), None)?;
        self.agent_prompt(pane_id, text, deadline)
    }

    /// `agent.prompt`: text + Enter to the agent in a pane; `AgentBlocked` at a dialog.
    pub fn agent_prompt(
        &self,
        target: &str,
        text: &str,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        if text.trim().is_empty() || text.len() > MAX_PROMPT {
            return Err(err(ErrorCode::BadRequest, "prompt empty or over 32 KiB"));
        }
        let r = self.call(
            "agent.prompt",
            params::AgentPrompt { target, text },
            deadline,
        )?;
        expect_type(&r, "agent_prompted")
    }

    fn snapshot(&self, deadline: Instant) -> Result<Snapshot, MuxError> {
        let r = self.call("session.snapshot", params::NoParams {}, deadline)?;
        expect_type(&r, "session_snapshot")?;
        field(&r, "snapshot")
    }

    fn identity_from_pong(&self, pong: (String, u32)) -> ServerIdentity {
        ServerIdentity::Herdr {
            socket_path: self.socket.to_string_lossy().into_owned(),
            version: pong.0,
            protocol: pong.1,
        }
    }
}

/// Environment for a new pane's shell, as Herdr takes it: names a shell would take as one
/// identifier, values without NUL (an `execve` environment cannot hold it); anything else is
/// refused before the request is made.
/// A new tab's or workspace's folder and environment, once its command and name are checked.
fn place_of(req: &NewWindow) -> Result<(&str, serde_json::Map<String, Value>), MuxError> {
    if req.argv.is_empty() || req.name.is_empty() || req.name.contains(char::is_control) {
        return Err(err(ErrorCode::BadRequest, "invalid argv or name"));
    }
    let cwd = req
        .cwd
        .to_str()
        .ok_or_else(|| err(ErrorCode::BadRequest, "cwd not UTF-8"))?;
    Ok((cwd, env_map(&req.env)?))
}

impl Herdr {
    /// The command typed into a new tab's or workspace's root pane; that pane as listed.
    fn start_in(
        &self,
        pane: &HerdrPane,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        self.run(&pane.pane_id, &super::shell_line(&req.argv), deadline)?;
        let info = self.process_info(&pane.pane_id, deadline)?;
        Ok(listing::to_pane_info(pane, info.as_ref(), None, None, None))
    }
}

fn env_map(env: &[(String, String)]) -> Result<serde_json::Map<String, Value>, MuxError> {
    env.iter()
        .map(|(k, v)| {
            if !super::valid_env_name(k) || v.contains('\0') {
                Err(err(
                    ErrorCode::BadRequest,
                    "environment name or value Herdr cannot pass",
                ))
            } else {
                Ok((k.clone(), Value::from(v.as_str())))
            }
        })
        .collect()
}

impl Multiplexer for Herdr {
    fn kind(&self) -> MuxKind {
        MuxKind::Herdr
    }

    fn socket_path(&self) -> &Path {
        &self.socket
    }

    fn server_identity(&self, deadline: Instant) -> Result<ServerIdentity, MuxError> {
        let pong = self.ping(deadline)?;
        Ok(self.identity_from_pong(pong))
    }

    /// One `session.snapshot` (panes, labels, geometry), then `pane.process_info` per pane:
    /// Herdr has no batched process query, and liveness needs each pane's foreground process.
    /// Bounded by `MAX_PANES` and the deadline; these are socket requests, not process spawns.
    fn list_panes(&self, deadline: Instant) -> Result<PaneList, MuxError> {
        let pong = self.ping(deadline)?;
        let snap = self.snapshot(deadline)?;
        listing::assemble(&self.socket, &pong.0, &snap, |pane_id| {
            self.process_info(pane_id, deadline)
        })
    }

    fn find_pane(&self, pane_id: &str, deadline: Instant) -> Result<Option<PaneInfo>, MuxError> {
        let Some(p) = self.pane_get(pane_id, deadline)? else {
            return Ok(None);
        };
        let info = self.process_info(pane_id, deadline)?;
        if info.is_none() {
            return Ok(None);
        }
        Ok(Some(listing::to_pane_info(
            &p,
            info.as_ref(),
            None,
            None,
            None,
        )))
    }

    /// Herdr cannot split above: split down, swap, focus put back, layout checked, command
    /// typed (`place::place_above`).
    fn split_above(&self, req: &SplitAbove, deadline: Instant) -> Result<PaneInfo, MuxError> {
        self.place_above(req, deadline).map(|(pane, _)| pane)
    }

    /// `tab.create` in the workspace of `req.beside` without focus, then the command typed into
    /// the new tab's root pane (Herdr starts a shell and runs no program of its own).
    fn new_window(&self, req: &NewWindow, deadline: Instant) -> Result<PaneInfo, MuxError> {
        let beside = self
            .pane_get(&req.beside, deadline)?
            .ok_or_else(|| err(ErrorCode::PaneNotFound, "the coordinator's pane is gone"))?;
        let tab = workspace::Creation::Tab {
            workspace_id: &beside.workspace_id,
        };
        self.create_and_start(tab, req, deadline)
    }

    fn set_marker(&self, pane_id: &str, value: &str, deadline: Instant) -> Result<(), MuxError> {
        if value.is_empty() || value.len() > 1024 || value.contains(char::is_control) {
            return Err(err(ErrorCode::BadRequest, "invalid marker value"));
        }
        let r = self.call(
            "pane.report_metadata",
            params::Metadata {
                pane_id,
                source: MARKER_SOURCE,
                tokens: [(MARKER_TOKEN, value)].into_iter().collect(),
            },
            deadline,
        )?;
        // The schema does not pin this result's type; accept `ok` or the pane.
        match r.get("type").and_then(Value::as_str) {
            Some("ok") | Some("pane_info") => Ok(()),
            _ => Err(bad("unexpected report_metadata result")),
        }
    }

    fn read_marker(&self, pane_id: &str, deadline: Instant) -> Result<Option<String>, MuxError> {
        match self.pane_get(pane_id, deadline)? {
            Some(p) => Ok(p.tokens.get(MARKER_TOKEN).map(|m| sanitize(m))),
            None => Err(err(ErrorCode::PaneNotFound, pane_id)),
        }
    }

    fn rename(&self, pane_id: &str, name: &str, deadline: Instant) -> Result<(), MuxError> {
        self.rename_pane(pane_id, name, deadline)
    }

    fn swap(&self, source: &str, target: &str, deadline: Instant) -> Result<bool, MuxError> {
        self.swap_panes(source, target, deadline).map(|s| s.changed)
    }

    fn deliver(&self, req: &PiText<'_>, deadline: Instant) -> Result<Typed, Untyped> {
        self.deliver_prompt(req, deadline)
    }

    /// A fresh `pane.get` + `pane.process_info` compared with the record, then `pane.close`
    /// (which has no precondition of its own), then a fresh `pane.get` to verify.
    fn close_if_matches(
        &self,
        expected: &PaneIdentity,
        deadline: Instant,
    ) -> Result<CloseOutcome, MuxError> {
        crate::mux::server_is_ours(self.socket_path(), None)?;
        let server = self.server_identity(deadline)?;
        if expected.pane_pid.is_none() || expected.terminal_id.is_none() {
            return Ok(CloseOutcome::Refused("invalid_identity".into()));
        }
        let Some(pane) = self.find_pane(&expected.pane_id, deadline)? else {
            return Ok(CloseOutcome::AlreadyGone);
        };
        if let Some(field) = expected.mismatch(&server, &pane) {
            return Ok(CloseOutcome::Refused(format!("{field}_differs")));
        }
        if !self.close(&expected.pane_id, deadline)? {
            return Ok(CloseOutcome::AlreadyGone);
        }
        match self.pane_get(&expected.pane_id, deadline) {
            Ok(None) => Ok(CloseOutcome::Closed),
            Ok(Some(_)) => Ok(CloseOutcome::Unverified("still_listed".into())),
            Err(e) => Ok(CloseOutcome::Unverified(e.code().to_string())),
        }
    }

    fn jump_to(
        &self,
        target: &str,
        _from: Option<&str>,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        self.jump(target, deadline)
    }

    fn grow_to(&self, _pane_id: &str, _lines: u16, _deadline: Instant) -> Result<bool, MuxError> {
        Err(err(
            ErrorCode::BadRequest,
            "herdr: resizing a pane is not supported",
        ))
    }

    fn looked_at(&self, pane_id: &str, deadline: Instant) -> Result<bool, MuxError> {
        Ok(self.focus(deadline)?.pane == pane_id)
    }
}

#[cfg(test)]
mod tests {
    use super::types::HerdrProcess;
    use super::*;

    #[test]
    fn parses_fixture_shapes() {
        let info: HerdrProcessInfo = serde_json::from_str(
            r#"{"foreground_process_group_id":15492,"foreground_processes":[{"argv":["sleep","300"],"cmdline":"sleep 300","cwd":"/tmp","name":"sleep","pid":15492}],"pane_id":"w1:p3","shell_pid":14564}"#,
        )
        .unwrap();
        assert_eq!(info.foreground().unwrap().name, "sleep");
        assert_eq!(info.shell_pid, Some(14564));
    }

    /// The foreground command as tmux names it (captures 043, 045, 047, 109, 112, 115).
    #[test]
    fn command_is_argv0_like_tmux() {
        let p = |name: &str, argv: Option<&[&str]>| HerdrProcess {
            pid: 1,
            name: name.into(),
            argv: argv.map(|a| a.iter().map(|s| s.to_string()).collect()),
            cwd: None,
        };
        assert_eq!(p("sleep", Some(&["pi", "600"])).command(), "pi");
        assert_eq!(
            p("pi", Some(&["/home/dev/bin/sleep/pi", "600"])).command(),
            "pi"
        );
        assert_eq!(
            p("pi", Some(&["/bin/sh", "/home/dev/bin/script/pi"])).command(),
            "sh"
        );
        assert_eq!(p("sleep", Some(&["sleep", "600"])).command(), "sleep");
        assert_eq!(p("bash", Some(&["-bash"])).command(), "bash");
        assert_eq!(p("cat", None).command(), "cat");
        assert_eq!(p("cat", Some(&[])).command(), "cat");
    }
}
