//! A private, headless real Herdr server for the real-Herdr tier (compiled as ignored when
//! `herdr` is not on PATH): `herdr server` with its own `XDG_CONFIG_HOME` in a temp dir and its
//! own `HERDR_SESSION` (and `HOME`), update checks off, as `fixtures/herdr-0.8.2/behaviour/README.md`
//! describes. Stopped with `herdr server stop` (and the child killed) on drop; nothing else of
//! the machine's Herdr is touched.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use intercom_pane::seam::mux::herdr::Herdr;
use serde_json::Value;

pub struct RealHerdr {
    pub config: tempfile::TempDir,
    pub session: String,
    pub socket: PathBuf,
    server: Option<Child>,
}

impl RealHerdr {
    /// Start a private server and wait (≤ 10 s) until it answers `ping`.
    pub fn start() -> RealHerdr {
        let config = tempfile::Builder::new()
            .prefix("herdr-real-")
            .tempdir()
            .unwrap();
        let herdr_dir = config.path().join("herdr");
        std::fs::create_dir_all(&herdr_dir).unwrap();
        std::fs::write(
            herdr_dir.join("config.toml"),
            "[update]\nversion_check = false\nmanifest_check = false\n",
        )
        .unwrap();
        let session = format!("ip-test-{}", std::process::id());
        let socket = herdr_dir.join("sessions").join(&session).join("herdr.sock");
        let mut h = RealHerdr {
            config,
            session,
            socket,
            server: None,
        };
        h.start_server();
        h
    }

    fn command(&self) -> Command {
        let mut c = Command::new("herdr");
        // HOME too: the panes' shells then read no rc file of the machine's user (one that runs
        // slow or locking start-up work would hold up every pane of a test).
        // SHELL: the panes' shell is $SHELL, and the tier's stand-ins use bash's `exec -a pi`; a
        // CI runner's SHELL may be /bin/sh (dash has no `exec -a`).
        c.env("XDG_CONFIG_HOME", self.config.path())
            .env("HOME", self.config.path())
            .env("SHELL", "/bin/bash")
            .env("HERDR_SESSION", &self.session)
            .env_remove("HERDR_SOCKET_PATH")
            .env_remove("HERDR_ENV")
            .env_remove("HERDR_PANE_ID");
        c
    }

    /// (Re)start the server process and wait for it.
    pub fn start_server(&mut self) {
        let child = self
            .command()
            .arg("server")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("herdr server");
        self.server = Some(child);
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            let h = Herdr::at_socket(&self.socket);
            if h.ping(Instant::now() + Duration::from_millis(500)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("herdr server did not answer at {}", self.socket.display());
    }

    /// `herdr server stop`, then reap the server process (a restart's first half).
    pub fn stop_server(&mut self) {
        // Not `cli`: this runs on drop too, where a panic (no `herdr` to run) aborts the suite.
        let _ = self.command().args(["server", "stop"]).output();
        if let Some(mut c) = self.server.take() {
            let end = Instant::now() + Duration::from_secs(15);
            while Instant::now() < end {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The server process's pid, while it runs.
    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// One `herdr …` call on this server.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("herdr cli")
    }

    /// One `herdr …` call whose stdout is JSON with a `result`.
    pub fn result(&self, args: &[&str]) -> Value {
        let o = self.cli(args);
        assert!(
            o.status.success(),
            "herdr {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["result"].clone()
    }

    /// A new workspace that does not take the focus: its root pane's id.
    pub fn background_pane(&self, cwd: &str, label: &str) -> String {
        let ws = self.result(&[
            "workspace",
            "create",
            "--cwd",
            cwd,
            "--label",
            label,
            "--no-focus",
        ]);
        ws["root_pane"]["pane_id"].as_str().unwrap().to_string()
    }

    /// A background workspace labelled `label` in `root` whose shell stands for the coordinator
    /// of session `session_id`: its registration written under `<root>/.pi-intercom/seats/`
    /// (the shell's pid and identity, this server, the pane) with the fields of `extra` added;
    /// the pane and the shell's pid.
    pub fn coordinator_seat(
        &self,
        root: &std::path::Path,
        session_id: &str,
        label: &str,
        extra: Value,
    ) -> (String, u32) {
        let pane = self.background_pane(&root.display().to_string(), label);
        let shell = self.shell_pid(&pane);
        let id = intercom_pane::seam::proc::identity(shell as i32).unwrap();
        let mut rec = serde_json::json!({"version": 1, "sessionId": session_id, "pid": shell,
            "startTicks": id.start_ticks, "bootId": id.boot_id,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": self.socket.display().to_string(), "paneId": pane}});
        if let (Some(r), Value::Object(more)) = (rec.as_object_mut(), extra) {
            r.extend(more);
        }
        let seats = root.join(".pi-intercom/seats");
        std::fs::create_dir_all(&seats).unwrap();
        std::fs::write(
            seats.join(format!(
                "{}.json",
                intercom_pane::seam::paths::short_id(session_id)
            )),
            rec.to_string(),
        )
        .unwrap();
        (pane, shell)
    }

    /// Move `pane` into the tab of `beside`, split `direction` (`down` or `right`), without
    /// focus; the id it has now (a move to another workspace gives a new one). Found by its
    /// terminal, which a move keeps.
    pub fn move_beside(&self, pane: &str, beside: &str, direction: &str) -> String {
        let terminal = self.result(&["pane", "get", pane])["pane"]["terminal_id"].clone();
        let tab = self.result(&["pane", "get", beside])["pane"]["tab_id"]
            .as_str()
            .unwrap()
            .to_string();
        self.result(&[
            "pane",
            "move",
            pane,
            "--tab",
            &tab,
            "--split",
            direction,
            "--no-focus",
        ]);
        self.result(&["pane", "list"])["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["terminal_id"] == terminal)
            .and_then(|p| p["pane_id"].as_str())
            .unwrap()
            .to_string()
    }

    /// A client for this server.
    pub fn client(&self) -> Herdr {
        Herdr::at_socket(&self.socket)
    }

    /// Wait (≤ 10 s) until the pane's shell is ready, then its shell pid.
    pub fn shell_pid(&self, pane: &str) -> u32 {
        let _ = self.cli(&[
            "pane",
            "wait-output",
            pane,
            "--regex",
            "[$#] *$",
            "--timeout",
            "10000",
        ]);
        let h = self.client();
        let info = h
            .process_info(pane, Instant::now() + Duration::from_secs(3))
            .unwrap()
            .unwrap();
        info.shell_pid.unwrap()
    }
}

impl Drop for RealHerdr {
    fn drop(&mut self) {
        self.stop_server();
    }
}
