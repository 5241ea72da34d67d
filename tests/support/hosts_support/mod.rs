//! Several machines on one (the multi-host tier, docs/behaviour.md §12): each simulated host is
//! a network namespace joined to this one by a veth pair, with its own OpenSSH server (the
//! distribution's `sshd -D -e -f <its own config>`: a private port and host key, one authorized
//! key, `UsePAM no`, `StrictModes no` since its files live under /tmp), its own tmux server
//! with stand-in pi workers that register as the shipped extension does, and `intercom-pane`
//! on PATH there (this test's built binary). The login shell's rc file is hidden from sshd's
//! sessions by a private mount namespace (a person's `~/.bashrc` may be slow or noisy; it is
//! not what is tested). Everything is removed on drop: servers killed, namespaces and links
//! deleted, the shared ssh connections ended.
#![allow(dead_code)]

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use intercom_pane::seam::cli::{Cli, Command as Cmd};
use intercom_pane::seam::clock::{Clock, SystemClock};
use intercom_pane::seam::cmd::live_source::LiveSource;
use intercom_pane::seam::hosts::board::HostsSource;
use intercom_pane::seam::snapshot::{HostState, Row, Snapshot};
use serde_json::json;

use crate::mux_support::{wait_for, TmuxServer};
use crate::pi_support;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// This process's slot (0–99) among the test processes running this rig at once: its subnets
/// (`10.(100+slot).*`) and ports. Each slot is an exclusive `flock` on a file of its own, held
/// while the process lives (the kernel drops it when the process ends): two processes never
/// share one, as `pid % 100` could.
fn rig_slot() -> u8 {
    static SLOT: std::sync::OnceLock<(u8, nix::fcntl::Flock<std::fs::File>)> =
        std::sync::OnceLock::new();
    SLOT.get_or_init(|| {
        let dir = std::env::temp_dir().join("intercom-pane-rig-slots");
        std::fs::create_dir_all(&dir).unwrap();
        let first = (std::process::id() % 100) as u8;
        for k in 0..100u8 {
            let slot = (first + k) % 100;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(slot.to_string()))
                .unwrap();
            if let Ok(lock) =
                nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            {
                return (slot, lock);
            }
        }
        panic!("all 100 slots of the several-hosts rig are taken");
    })
    .0
}

const BIN: &str = env!("CARGO_BIN_EXE_intercom-pane");

/// Run a command that must succeed (setup), with its output on failure.
pub fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One worker of a host: a roster agent, its session file, its pane.
#[derive(Debug, Clone)]
pub struct Worker {
    pub name: String,
    pub id: String,
    pub file: PathBuf,
}

/// One simulated machine.
pub struct SimHost {
    pub name: String,
    pub dir: PathBuf,
    pub ns: String,
    /// The link on this side (set down to cut the host off).
    pub veth: String,
    pub addr: String,
    pub port: u16,
    sshd: Option<Child>,
    pub tmux: Option<TmuxServer>,
    pub workers: Vec<Worker>,
    /// Source flags of a host whose evidence was made elsewhere (`Net::add_bare`).
    pub args: Option<Vec<String>>,
}

/// The simulated machines of one test, a client key all of them accept, a known_hosts file
/// with their keys and the hosts file naming them.
pub struct Net {
    pub dir: tempfile::TempDir,
    pub hosts: Vec<SimHost>,
    pub client_key: PathBuf,
    pub known_hosts: PathBuf,
    pub hosts_file: PathBuf,
    /// This machine's own private folders (data root, tmux, roster) for local rows.
    pub local: PathBuf,
    pub local_tmux: Option<TmuxServer>,
}

fn keygen(path: &Path) {
    sh(
        "ssh-keygen",
        &[
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            path.to_str().unwrap(),
        ],
    );
}

fn session_lines(id: &str, cwd: &Path) -> String {
    [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":cwd.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Build the thing."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Built."}],"provider":"p","model":"m","stopReason":"stop"}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

/// What a worker's stand-in pi runs: register from the inside (as the extension does; again
/// when many workers starting at once kept the registrations' lock past its 1 s wait), then
/// append every line typed into its pane to its session as a user message (what pi records).
fn worker_script(root: &Path, sys: &Path, w: &Worker) -> String {
    format!(
        "for i in $(seq 30); do {BIN} register --config {sys} --event session_start --seq 1 \
         --pi-pid $$ --session-id {id} --cwd {root} --session-file {file} >/dev/null 2>&1 && break; \
         sleep 0.3; done; n=0; prev=a2; \
         while IFS= read -r line; do n=$((n+1)); ts=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ); \
         t=${{line//\\\\/\\\\\\\\}}; t=${{t//\\\"/\\\\\\\"}}; \
         printf '{{\"type\":\"message\",\"id\":\"t%s-%s\",\"parentId\":\"%s\",\"timestamp\":\"%s\",\"message\":{{\"role\":\"user\",\"content\":\"%s\"}}}}\\n' \"$$\" \"$n\" \"$prev\" \"$ts\" \"$t\" >> {file}; \
         prev=t$$-$n; done; sleep 600",
        sys = sys.display(),
        id = w.id,
        root = root.display(),
        file = w.file.display(),
    )
}

/// Make `dir` a host's evidence: a roster (a coordinator and `names`), session files, a system
/// config; returns its workers.
fn roster(dir: &Path, names: &[&str], tag: &str) -> Vec<Worker> {
    let root = dir.join("root");
    let sessions = dir.join("sessions");
    for d in [
        root.join(".pi-intercom"),
        sessions.clone(),
        dir.join("data"),
        dir.join("repo"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut agents = vec![
        json!({"sessionId": format!("coord-{tag}"), "name": "Coordinator",
        "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    let mut workers = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let id = format!("0000{i:04}-{tag}-7000-8000-000000000000");
        let file = sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
        std::fs::write(&file, session_lines(&id, &root)).unwrap();
        agents.push(json!({"sessionId": id, "name": n, "coordinator": false,
            "description": "W.", "port": 2 + i, "projectDirectory": "."}));
        workers.push(Worker {
            name: n.to_string(),
            id,
            file,
        });
    }
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "tmux", "agents": agents}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("sys.json"),
        json!({"dataRoot": dir.join("data")}).to_string(),
    )
    .unwrap();
    workers
}

/// Start the workers of `dir` in a tmux server of their own (one session each), wait until each
/// registered.
fn start_workers(dir: &Path, workers: &[Worker]) -> TmuxServer {
    start_workers_in(dir, workers, None)
}

/// `start_workers`, in `again` (a killed server started again on its own socket) when given.
fn start_workers_in(dir: &Path, workers: &[Worker], again: Option<TmuxServer>) -> TmuxServer {
    let root = dir.join("root");
    let sys = dir.join("sys.json");
    let seats = root.join(".pi-intercom/seats");
    let _ = std::fs::remove_dir_all(&seats);
    // Every argv before any worker starts: making one writes the stand-in's entry script,
    // which a running stand-in may still be reading.
    let argvs: Vec<Vec<String>> = workers
        .iter()
        .map(|w| pi_support::pi_pane_argv(&dir.join("pi-bin"), &worker_script(&root, &sys, w)))
        .collect();
    let mut server: Option<TmuxServer> = None;
    let mut again = again;
    for (w, argv) in workers.iter().zip(&argvs) {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        match (&server, again.take()) {
            (None, Some(mut s)) => {
                s.launch(&w.name, &root, &argv);
                server = Some(s);
            }
            (None, None) => server = Some(TmuxServer::start(&w.name, &root, &argv)),
            (Some(s), _) => s.new_session(&w.name, &root, &argv),
        }
    }
    let server = server.unwrap();
    let n = workers.len();
    // Each worker's `register` is a process start; a loaded machine needs its time.
    wait_for(20_000 + 2_000 * n as u64, || {
        let count = std::fs::read_dir(&seats)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                    .count()
            })
            .unwrap_or(0);
        (count >= n).then_some(())
    })
    .unwrap_or_else(|| {
        let count = std::fs::read_dir(&seats).map(|rd| rd.count()).unwrap_or(0);
        let last = &workers[workers.len() - 1].name;
        panic!(
            "{count} of {n} workers registered; sessions: {}; {last}'s pane: {}",
            server
                .tmux(&["list-sessions", "-F", "#{session_name}"])
                .replace('\n', " "),
            server.tmux(&["capture-pane", "-p", "-t", &format!("={last}:")])
        )
    });
    server
}

impl SimHost {
    fn tmux_sock(&self) -> String {
        self.tmux
            .as_ref()
            .map(|t| t.sock.display().to_string())
            .unwrap_or_else(|| self.dir.join("no-tmux.sock").display().to_string())
    }

    /// Start (or start again) this host's sshd in its namespace, with a private mount namespace
    /// hiding the login shell's rc file; wait until it accepts connections.
    pub fn start_sshd(&mut self) {
        let cfg = self.dir.join("sshd_config");
        let empty = self.dir.join("empty-rc");
        std::fs::write(&empty, "").unwrap();
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let script = format!(
            "for f in {home}/.bashrc {home}/.profile {home}/.bash_profile; do \
               [ -e \"$f\" ] && mount --bind {empty} \"$f\"; done; \
             exec /usr/sbin/sshd -D -e -f {cfg}",
            empty = empty.display(),
            cfg = cfg.display()
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("sshd.log"))
            .unwrap();
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns,
                "unshare",
                "--mount",
                "--propagation",
                "private",
            ])
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.sshd = Some(child);
        let addr = format!("{}:{}", self.addr, self.port);
        wait_for(10_000, || {
            TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_millis(200))
                .ok()
                .map(|_| ())
        })
        .unwrap_or_else(|| panic!("sshd of {} did not start: {}", self.name, self.sshd_log()));
    }

    pub fn sshd_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// The sshd listener and every process under it (sessions, the commands they run).
    pub fn sshd_tree(&self) -> Vec<i32> {
        let Some(c) = &self.sshd else { return vec![] };
        let root = c.id() as i32;
        let mut out = vec![root];
        // Bounded: each round adds children of what is known; /proc holds finitely many.
        for _ in 0..8 {
            let mut more = Vec::new();
            for e in std::fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let Some(st) = intercom_pane::seam::proc::read_stat(pid) else {
                    continue;
                };
                if out.contains(&st.ppid) && !out.contains(&pid) && !more.contains(&pid) {
                    more.push(pid);
                }
            }
            if more.is_empty() {
                break;
            }
            out.extend(more);
        }
        out
    }

    /// Signal the whole sshd tree.
    pub fn signal_sshd(&self, sig: nix::sys::signal::Signal) {
        for pid in self.sshd_tree() {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        }
    }

    /// Kill sshd and every session it serves.
    pub fn kill_sshd(&mut self) {
        self.signal_sshd(nix::sys::signal::Signal::SIGCONT);
        self.signal_sshd(nix::sys::signal::Signal::SIGKILL);
        if let Some(mut c) = self.sshd.take() {
            let _ = c.wait();
        }
    }

    /// Cut the host off (its end of the link down) or put it back.
    pub fn link(&self, up: bool) {
        sh(
            "ip",
            &["link", "set", &self.veth, if up { "up" } else { "down" }],
        );
    }

    /// A new host key (the old one stays in known_hosts): sshd restarted with it.
    pub fn change_host_key(&mut self) {
        self.kill_sshd();
        let key = self.dir.join("hostkey");
        let _ = std::fs::remove_file(&key);
        let _ = std::fs::remove_file(self.dir.join("hostkey.pub"));
        keygen(&key);
        self.start_sshd();
    }

    /// Restart the host's tmux server with its workers (pane ids are issued again from %0).
    pub fn restart_tmux(&mut self) {
        let mut t = self.tmux.take();
        if let Some(t) = t.as_mut() {
            // The same socket (the hosts file names it), a new server: pane ids start again.
            t.kill();
        }
        self.tmux = Some(start_workers_in(&self.dir, &self.workers, t));
    }

    /// Replace worker `w`'s pi: the old one killed (its pane goes with it), a new one started
    /// for the same session in a new tmux session; returns the new pi's pid once registered.
    pub fn replace_pi(&self, w: usize) -> i32 {
        let old = self.pi_pid(w);
        // The old pi's pane may be the server's last: kept alive, the new session is not raced
        // by a server shutting down ("server exited unexpectedly").
        self.tmux
            .as_ref()
            .unwrap()
            .tmux(&["set-option", "-s", "exit-empty", "off"]);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(old),
            nix::sys::signal::Signal::SIGKILL,
        );
        let root = self.dir.join("root");
        let worker = &self.workers[w];
        // A folder of its own: the running stand-ins still read theirs.
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let argv = pi_support::pi_pane_argv(
            &self.dir.join(format!("pi-bin-{n}")),
            &worker_script(&root, &self.dir.join("sys.json"), worker),
        );
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let name = format!(
            "{}-again-{}",
            worker.name,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.tmux.as_ref().unwrap().new_session(&name, &root, &argv);
        wait_for(15_000, || {
            let p = self.try_pi_pid(w)?;
            (p != old).then_some(p)
        })
        .expect("the new pi registered")
    }

    /// Take this machine's client key off the host's authorized keys.
    pub fn deny(&self) {
        std::fs::write(self.dir.join("authorized_keys"), "").unwrap();
    }

    /// Append a reply that asks for input to `w`'s session (pi's own record of a waiting seat).
    pub fn ask(&self, w: usize, question: &str) {
        let w = &self.workers[w];
        let line = json!({"type":"message","id":format!("q{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            "parentId":null,"timestamp": intercom_pane::seam::clock::format_iso(now_ms()),
            "message":{"role":"assistant","content":[{"type":"text","text":format!("Input needed: {question}")}],
            "provider":"p","model":"m","stopReason":"stop"}});
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&w.file)
            .unwrap();
        writeln!(f, "{line}").unwrap();
    }

    /// The session file's text of worker `w`.
    pub fn transcript(&self, w: usize) -> String {
        std::fs::read_to_string(&self.workers[w].file).unwrap()
    }

    /// The pid of the stand-in pi of worker `w` (from its registration).
    pub fn pi_pid(&self, w: usize) -> i32 {
        self.try_pi_pid(w)
            .unwrap_or_else(|| panic!("worker {w} of {} has no registration", self.name))
    }

    fn try_pi_pid(&self, w: usize) -> Option<i32> {
        let seats = self.dir.join("root/.pi-intercom/seats");
        for e in std::fs::read_dir(seats).ok()?.flatten() {
            let Ok(text) = std::fs::read_to_string(e.path()) else {
                continue;
            };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            if v["sessionId"] == self.workers[w].id.as_str() {
                return v["pid"].as_i64().map(|p| p as i32);
            }
        }
        None
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

impl Net {
    /// `hosts` simulated machines, each with the workers named, and this machine's own
    /// private folders with `local_workers`.
    pub fn new(hosts: &[(&str, &[&str])], local_workers: &[&str]) -> Net {
        // sshd's privilege separation folder (a fresh machine may not have it yet).
        std::fs::create_dir_all("/run/sshd").unwrap();
        let dir = tempfile::Builder::new().prefix("iph-").tempdir().unwrap();
        let client_key = dir.path().join("client_key");
        keygen(&client_key);
        let known_hosts = dir.path().join("known_hosts");
        let mut net = Net {
            client_key,
            known_hosts,
            hosts_file: dir.path().join("hosts.json"),
            local: dir.path().join("local"),
            local_tmux: None,
            hosts: Vec::new(),
            dir,
        };
        std::fs::create_dir_all(&net.local).unwrap();
        let lw = roster(&net.local, local_workers, "0000");
        if !lw.is_empty() {
            net.local_tmux = Some(start_workers(&net.local, &lw));
        }
        for (name, workers) in hosts {
            net.add(name, workers);
        }
        net.write_hosts_file(&[]);
        net
    }

    /// A host whose evidence and workers are made elsewhere (a real pi's folders), with
    /// these source flags: its network namespace, sshd and hosts file entry only.
    pub fn add_bare(&mut self, name: &str, args: Vec<String>) {
        self.add(name, &[]);
        self.host_mut(name).args = Some(args);
        self.write_hosts_file(&[]);
    }

    fn add(&mut self, name: &str, worker_names: &[&str]) {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let id = format!("{:x}{n}", pid & 0xffff);
        let dir = self.dir.path().join(name);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("tmux-tmp")).unwrap();
        std::os::unix::fs::symlink(BIN, dir.join("bin/intercom-pane")).unwrap();
        // Addresses and port unique to this process and host: an ssh connection kept from
        // another test can never be taken for this one, nor another test process's (CI runs
        // the suite and the real-pi tier side by side).
        let slot = rig_slot();
        let (a, b) = (100 + slot, (n % 250) as u8);
        let (here, there) = (format!("10.{a}.{b}.1"), format!("10.{a}.{b}.2"));
        let port = 20_000 + u16::from(slot) * 100 + (n % 100) as u16;
        let ns = format!("iph-{id}");
        let veth = format!("iph{id}");
        let peer = format!("iph{id}p");
        sh("ip", &["netns", "add", &ns]);
        sh(
            "ip",
            &["link", "add", &veth, "type", "veth", "peer", "name", &peer],
        );
        sh("ip", &["link", "set", &peer, "netns", &ns]);
        sh("ip", &["addr", "add", &format!("{here}/24"), "dev", &veth]);
        sh("ip", &["link", "set", &veth, "up"]);
        let nsx = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &ns];
            all.extend_from_slice(args);
            sh("ip", &all);
        };
        nsx(&["ip", "addr", "add", &format!("{there}/24"), "dev", &peer]);
        nsx(&["ip", "link", "set", &peer, "up"]);
        nsx(&["ip", "link", "set", "lo", "up"]);
        keygen(&dir.join("hostkey"));
        std::fs::copy(
            format!("{}.pub", self.client_key.display()),
            dir.join("authorized_keys"),
        )
        .unwrap();
        std::fs::write(
            dir.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress {there}\nHostKey {hk}\nAuthorizedKeysFile {ak}\n\
                 PidFile none\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\n\
                 SetEnv PATH={bin}:/usr/local/bin:/usr/bin:/bin TMUX_TMPDIR={tt}\n",
                hk = dir.join("hostkey").display(),
                ak = dir.join("authorized_keys").display(),
                bin = dir.join("bin").display(),
                tt = dir.join("tmux-tmp").display(),
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("ssh_config"),
            format!(
                "Host *\n  Port {port}\n  User root\n  IdentityFile {key}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile {kh}\n  GlobalKnownHostsFile /dev/null\n",
                key = self.client_key.display(),
                kh = self.known_hosts.display()
            ),
        )
        .unwrap();
        let workers = roster(&dir, worker_names, &format!("{:04x}", n & 0xffff));
        let host = SimHost {
            name: name.to_string(),
            dir: dir.clone(),
            ns,
            veth,
            addr: there,
            port,
            sshd: None,
            tmux: None,
            workers,
            args: None,
        };
        self.trust(&host);
        // Kept before anything can fail, so that a failure still removes it (drop).
        self.hosts.push(host);
        let host = self.hosts.last_mut().unwrap();
        host.start_sshd();
        if !host.workers.is_empty() {
            host.tmux = Some(start_workers(&dir, &host.workers));
        }
    }

    /// Add `h`'s current host key to known_hosts.
    pub fn trust(&self, h: &SimHost) {
        let key = std::fs::read_to_string(h.dir.join("hostkey.pub")).unwrap();
        let mut parts = key.split_whitespace();
        let line = format!(
            "[{}]:{} {} {}\n",
            h.addr,
            h.port,
            parts.next().unwrap(),
            parts.next().unwrap()
        );
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.known_hosts)
            .unwrap();
        f.write_all(line.as_bytes()).unwrap();
    }

    /// Remove every known_hosts line of `h` (its key becomes unknown here).
    pub fn forget(&self, h: &SimHost) {
        let prefix = format!("[{}]:{} ", h.addr, h.port);
        let kh = std::fs::read_to_string(&self.known_hosts).unwrap_or_default();
        let kept: String = kh
            .lines()
            .filter(|l| !l.starts_with(&prefix))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&self.known_hosts, kept).unwrap();
    }

    /// Every file under this machine's folder with its length and modification time: what a
    /// remote action must leave exactly as it was. The in-process board's own live view record
    /// (`data/live/<pid>.json`, what `doctor` shows, rewritten when its watching changes) is
    /// the board's, not the action's.
    pub fn local_listing(&self) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        fn walk(d: &Path, out: &mut Vec<(PathBuf, u64, std::time::SystemTime)>) {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.ends_with("data/live") {
                    continue;
                }
                let Ok(m) = std::fs::symlink_metadata(&p) else {
                    continue;
                };
                if m.is_dir() {
                    walk(&p, out);
                } else {
                    out.push((p, m.len(), m.modified().unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.local, &mut out);
        out.sort();
        out
    }

    pub fn host(&self, name: &str) -> &SimHost {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    pub fn host_mut(&mut self, name: &str) -> &mut SimHost {
        self.hosts.iter_mut().find(|h| h.name == name).unwrap()
    }

    /// The hosts file entry of `h` (`bin` overrides the program there).
    pub fn entry(&self, h: &SimHost, bin: Option<&str>) -> serde_json::Value {
        let d = |p: &str| h.dir.join(p).display().to_string();
        let mut e = match &h.args {
            Some(args) => json!({"name": h.name, "ssh": h.addr, "sshConfig": d("ssh_config"),
                "args": args}),
            None => json!({"name": h.name, "ssh": h.addr, "sshConfig": d("ssh_config"),
                "root": d("root"),
                "args": ["--config", d("sys.json"), "--sessions-dir", d("sessions"), "--fleet", "none",
                         "--repo", d("repo"), "--tmux-socket", h.tmux_sock()]}),
        };
        if let Some(b) = bin {
            e["bin"] = json!(b);
        }
        e
    }

    /// Write the hosts file (mode 0600): every host, `bins` overriding some hosts' program.
    pub fn write_hosts_file(&self, bins: &[(&str, &str)]) {
        let hosts: Vec<serde_json::Value> = self
            .hosts
            .iter()
            .map(|h| {
                let bin = bins.iter().find(|(n, _)| *n == h.name).map(|(_, b)| *b);
                self.entry(h, bin)
            })
            .collect();
        let tmp = self.dir.path().join("hosts.json.tmp");
        std::fs::write(&tmp, json!({"version": 1, "hosts": hosts}).to_string()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::rename(&tmp, &self.hosts_file).unwrap();
    }

    /// Write the hosts file naming only `names` (in that order), each entry edited by `edit`.
    pub fn write_hosts_only(&self, names: &[&str], edit: impl Fn(&str, &mut serde_json::Value)) {
        let hosts: Vec<serde_json::Value> = names
            .iter()
            .map(|n| {
                let mut e = self.entry(self.host(n), None);
                edit(n, &mut e);
                e
            })
            .collect();
        let tmp = self.dir.path().join("hosts.json.tmp");
        std::fs::write(&tmp, json!({"version": 1, "hosts": hosts}).to_string()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::rename(&tmp, &self.hosts_file).unwrap();
    }

    /// The hosts of the hosts file, as the board takes them.
    pub fn board_hosts(&self) -> Vec<intercom_pane::seam::hosts::Host> {
        intercom_pane::seam::hosts::file::read(&self.hosts_file).unwrap()
    }

    /// This machine's flags (its own roster, data root and tmux server).
    pub fn local_args(&self) -> Vec<String> {
        let d = |p: &str| self.local.join(p).display().to_string();
        let mut a = vec![
            "--config".to_string(),
            d("sys.json"),
            "--root".into(),
            d("root"),
            "--sessions-dir".into(),
            d("sessions"),
            "--fleet".into(),
            "none".into(),
            "--repo".into(),
            d("repo"),
        ];
        if let Some(t) = &self.local_tmux {
            a.extend(["--tmux-socket".into(), t.sock.display().to_string()]);
        } else {
            a.extend(["--tmux-socket".into(), d("no-tmux.sock")]);
        }
        a
    }

    /// The binary with this net's hosts file and a private ssh control folder.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .current_dir(self.dir.path())
            .env("INTERCOM_PANE_HOSTS", &self.hosts_file)
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env("TMUX_TMPDIR", self.local.join("tmux-tmp"))
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        c
    }

    /// Run the binary (bounded: killed after 120 s).
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> std::process::Output {
        let mut c = self.command(args);
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let end = Instant::now() + Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > end {
                let _ = child.kill();
                panic!("{args:?} still running after 120 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    }
}

/// `watch` running over a net's hosts: its alert lines as they come.
pub struct Watching {
    pub child: Child,
    pub alerts: std::sync::mpsc::Receiver<serde_json::Value>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Watching {
    /// SIGTERM, then its exit status once its lines are read.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let status = self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        status
    }
}

impl Net {
    /// `watch --settle-secs 0 --no-desktop` with `extra` flags and this machine's flags, its
    /// log at `log`; each JSON line it prints arrives on `alerts`.
    pub fn watch(&self, extra: &[&str], log: &Path) -> Watching {
        let mut args = vec!["watch", "--settle-secs", "0", "--no-desktop"];
        args.extend(extra);
        self.lines(&args, true, log)
    }
}

impl Net {
    /// The binary with `args` (this machine's flags added when `local`), its log at `log`;
    /// each JSON line it prints arrives on `alerts`.
    pub fn lines(&self, args: &[&str], local: bool, log: &Path) -> Watching {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if local {
            all.extend(self.local_args());
        }
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let mut child = self
            .command(&all)
            .env("INTERCOM_PANE_LOG", log)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    let _ = tx.send(v);
                }
            }
        });
        Watching {
            child,
            alerts: rx,
            reader: Some(reader),
        }
    }
}

impl Net {
    /// The real sidebar (`monitor --no-probe --no-alerts` and this machine's flags) in a
    /// private tmux server's session `mon`, with this net's hosts file and control folder.
    pub fn sidebar(&self) -> crate::mux_support::TmuxServer {
        let bin = env!("CARGO_BIN_EXE_intercom-pane");
        let hosts_file = format!("INTERCOM_PANE_HOSTS={}", self.hosts_file.display());
        let run = format!("XDG_RUNTIME_DIR={}", self.dir.path().join("run").display());
        let cfg = format!(
            "XDG_CONFIG_HOME={}",
            self.dir.path().join("config").display()
        );
        // Its log, for a test that fails to say what the sidebar was doing.
        let log = format!(
            "INTERCOM_PANE_LOG={}",
            self.dir.path().join("sidebar.log").display()
        );
        let mut argv = vec![
            "env",
            &hosts_file,
            &run,
            &cfg,
            &log,
            "TERM=xterm-256color",
            bin,
            "monitor",
            "--no-probe",
            "--no-alerts",
        ];
        let local = self.local_args();
        argv.extend(local.iter().map(String::as_str));
        crate::mux_support::TmuxServer::start("mon", self.dir.path(), &argv)
    }
}

impl Net {
    /// The last lines of the sidebar's log (see `sidebar`), for a failure message.
    pub fn sidebar_log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("sidebar.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl SimHost {
    /// The processes running `status --watch` here for a board (the host's `timeout` around
    /// each not counted).
    pub fn streams(&self) -> Vec<i32> {
        self.sshd_tree()
            .into_iter()
            .filter(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let words: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
                !words.first().is_some_and(|w| w.ends_with(b"timeout"))
                    && words.contains(&&b"status"[..])
                    && words.contains(&&b"--watch"[..])
            })
            .collect()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for h in &mut self.hosts {
            // End the shared connections (this net's control folder, and the default one the
            // in-process boards use).
            for ctl in [
                self.dir.path().join("run/intercom-pane/ssh"),
                PathBuf::from(format!(
                    "/tmp/intercom-pane-{}/ssh",
                    intercom_pane::seam::fsguard::my_uid()
                )),
            ] {
                let _ = Command::new("ssh")
                    .args([
                        "-F",
                        &h.dir.join("ssh_config").display().to_string(),
                        "-O",
                        "exit",
                    ])
                    .arg("-o")
                    .arg(format!("ControlPath={}/%C", ctl.display()))
                    .arg(&h.addr)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            h.kill_sshd();
            h.tmux.take();
            let _ = Command::new("ip").args(["link", "del", &h.veth]).status();
            let _ = Command::new("ip").args(["netns", "del", &h.ns]).status();
        }
    }
}

/// The board of `net`: this machine's board stream and every host of the hosts file.
pub fn board(net: &Net) -> HostsSource {
    let mut argv = vec![
        "intercom-pane".to_string(),
        "monitor".into(),
        "--no-probe".into(),
    ];
    argv.extend(net.local_args());
    let Cmd::Monitor(m) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    let r = intercom_pane::seam::cmd::options::resolve(&m.src).unwrap();
    let clock: std::sync::Arc<dyn Clock> = std::sync::Arc::new(SystemClock);
    let memory = std::sync::Arc::new(intercom_pane::seam::evidence::ScanMemory::new());
    let settings = intercom_pane::seam::live::Settings::default();
    let local = LiveSource::new(r.opts, clock.clone(), false, memory, settings).unwrap();
    HostsSource::start(
        Box::new(local),
        net.board_hosts(),
        clock,
        Duration::from_millis(500),
        // Every host checks its connections, as a sidebar without `--no-probe` asks; this
        // machine's part is not checked (nothing of it listens here).
        true,
    )
    .unwrap()
}

/// The board once `pred` holds, within `ms`; the last board in the panic otherwise.
pub fn until(
    src: &mut HostsSource,
    ms: u64,
    what: &str,
    pred: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    let end = Instant::now() + Duration::from_millis(ms);
    let mut last = None;
    while Instant::now() < end {
        if let Some(s) = src.changed_within(end.saturating_duration_since(Instant::now())) {
            if pred(&s) {
                return s;
            }
            last = Some(s);
        }
    }
    panic!(
        "{what}: not within {ms} ms; last board: {:#?}",
        last.map(|s| (s.hosts, names(&s.rows)))
    );
}

/// Each row as `host:name state` (`local` for this machine's).
pub fn names(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| {
            let h = r.host.as_ref().map_or("local", |h| h.name.as_str());
            format!("{h}:{} {}", r.name, r.state.as_str())
        })
        .collect();
    v.sort();
    v
}

pub fn host_state(s: &Snapshot, name: &str) -> HostState {
    s.hosts
        .iter()
        .find(|h| h.name == name)
        .map(|h| h.state)
        .unwrap_or(HostState::Connecting)
}

pub fn row<'a>(s: &'a Snapshot, host: &str, name: &str) -> Option<&'a Row> {
    s.rows
        .iter()
        .find(|r| r.name == name && r.host.as_ref().map_or("local", |h| h.name.as_str()) == host)
}

pub fn all_answering(s: &Snapshot) -> bool {
    !s.hosts.is_empty() && s.hosts.iter().all(|h| h.state == HostState::Answering)
}
