//! The sidebar with real pi 1.6.0 workers in a real tmux (a private server, a real client
//! attached to it): a worker asking a known question shows it in its row and in details within
//! one refresh; `n`/`N` walk the seats that need you; ⏎ moves the client to the worker's pane
//! (`list-clients` says which pane the client shows); `C` closes a worker and `R` brings it back,
//! from the list, with the same on-disk results as the commands.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo test`
//! reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::{binary_on_path, first_prompt, prepare_agent_dir};
use crate::real_pi_support;
use crate::scan_support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, wait_ready, SERIAL};
use scan_support::*;
use serde_json::Value;

const QUESTION: &str = "Choose staging or production.";

struct Worker {
    name: &'static str,
    agent: PathBuf,
    file: PathBuf,
}

struct Fleet {
    env: Env,
    server: TmuxServer,
    /// Keeps the client attached (an outer server whose pane runs `tmux attach`).
    client: TmuxServer,
    root: PathBuf,
    sock: String,
    workers: Vec<Worker>,
}

impl Fleet {
    fn sessions_args(&self) -> Vec<String> {
        let mut a = vec!["--tmux-socket".to_string(), self.sock.clone()];
        for w in &self.workers {
            a.push("--sessions-dir".into());
            a.push(w.agent.join("sessions").display().to_string());
        }
        a
    }

    fn index(&self) -> Value {
        let args = self.sessions_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        scan_json(&self.env, &args)
    }

    /// The sidebar's screen.
    fn screen(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", "=C:"])
    }

    /// Keys to the client (they reach the pane it shows: the sidebar).
    fn keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "=client:"];
        a.extend_from_slice(keys);
        self.client.tmux(&a);
    }

    fn wait_screen(&self, what: &str, ms: u64, pred: impl Fn(&str) -> bool) -> String {
        wait_for(ms, || {
            let s = self.screen();
            pred(&s).then_some(s)
        })
        .unwrap_or_else(|| panic!("timed out waiting for {what}:\n{}", self.screen()))
    }

    fn selected(&self) -> String {
        self.screen()
            .lines()
            .find(|l| l.starts_with('›'))
            .unwrap_or("")
            .to_string()
    }

    fn pane_of(&self, session: &str) -> String {
        self.server
            .tmux(&[
                "list-panes",
                "-t",
                &format!("={session}:"),
                "-F",
                "#{pane_id}",
            ])
            .trim()
            .to_string()
    }

    fn config(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.root.join(".pi-intercom/config.json")).unwrap())
            .unwrap()
    }
}

fn exports(tools: &std::path::Path, agent: &std::path::Path, sys: &str) -> String {
    format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}",
        tools.display(),
        real_pi().display(),
        agent.display()
    )
}

/// Two real pi workers (sessions `W1`, `W2`), each with its own agent folder, registered by the
/// shipped extension and configured in the roster; the sidebar in session `C`, and a real
/// client attached to `C`.
fn start_fleet() -> Fleet {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[]);
    // intercom-pane on the workers' PATH, for their bash tool.
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let server = TmuxServer::start("desk", &root, &[]);
    let mut workers = Vec::new();
    for name in ["W1", "W2"] {
        let agent = env.path(&format!("agent-{name}"));
        std::fs::create_dir_all(&agent).unwrap();
        prepare_agent_dir(&agent);
        server.new_session(name, &root, &[]);
        let target = format!("={name}:");
        server.tmux(&[
            "send-keys",
            "-t",
            &target,
            &format!(
                "{}; pi --provider fake --model fake-model",
                exports(&tools, &agent, &sys)
            ),
            "Enter",
        ]);
        wait_ready(&server, &target);
        let file = first_prompt(&server, &target, "hello", &agent.join("sessions"));
        workers.push(Worker { name, agent, file });
    }
    let roster: Vec<(String, &str)> = workers
        .iter()
        .map(|w| (header_id(&w.file), w.name))
        .collect();
    let roster: Vec<(&str, &str)> = roster.iter().map(|(i, n)| (i.as_str(), *n)).collect();
    write_roster(&root, &roster);
    let sock = server.sock.display().to_string();
    // The sidebar: a monitor in session C, with what resume-worker passes on to a new pi.
    let w1_agent = workers[0].agent.display().to_string();
    let path = format!(
        "PATH={}:{}:{}",
        tools.display(),
        real_pi().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let agent_env = format!("PI_CODING_AGENT_DIR={w1_agent}");
    let home = format!("HOME={}", env.path("home").display());
    let state = format!("XDG_STATE_HOME={}", env.path("state").display());
    let mut argv: Vec<String> = vec![
        "env".into(),
        path,
        agent_env,
        "PI_OFFLINE=1".into(),
        home,
        state,
        "TERM=xterm-256color".into(),
        env!("CARGO_BIN_EXE_intercom-pane").into(),
        "monitor".into(),
        "--config".into(),
        sys.clone(),
        "--root".into(),
        root.display().to_string(),
        "--fleet".into(),
        "none".into(),
        "--no-probe".into(),
    ];
    let client_placeholder = TmuxServer::start("unused", &root, &[]);
    let mut fleet = Fleet {
        env,
        server,
        client: client_placeholder,
        root,
        sock,
        workers,
    };
    argv.extend(fleet.sessions_args());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    fleet.server.new_session("C", &fleet.root, &argv);
    fleet.client = fleet.server.attach_client("C", 160, 40);
    wait_for(20_000, || {
        let idx = fleet.index();
        fleet
            .workers
            .iter()
            .all(|w| {
                let r = record(&idx, w.name);
                r["registered"]["alive"] == true && r["state"] == "idle"
            })
            .then_some(())
    })
    .expect("both workers registered and idle");
    fleet.wait_screen("both rows", 20_000, |s| {
        s.contains(" W1 ") && s.contains(" W2 ")
    });
    fleet
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_sidebar_shows_the_question_goes_to_the_pane_and_closes_and_resumes_real_workers() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = start_fleet();

    // Both workers ask a known question; each row shows it within one refresh of pi writing it.
    for w in &f.workers {
        let target = format!("={}:", w.name);
        f.server.tmux(&[
            "send-keys",
            "-t",
            &target,
            "-l",
            "deploy it SCENARIO:waiting",
        ]);
        f.server.tmux(&["send-keys", "-t", &target, "Enter"]);
    }
    let written = wait_for(60_000, || {
        f.workers
            .iter()
            .all(|w| {
                std::fs::read_to_string(&w.file)
                    .unwrap_or_default()
                    .contains("Input needed: Choose staging")
            })
            .then(Instant::now)
    })
    .expect("both pis wrote their question");
    // One refresh: the 3 s pause after a pass, plus the pass itself.
    let s = f.wait_screen("both questions on their rows", 8_000, |s| {
        f.workers.iter().all(|w| {
            s.lines().any(|l| {
                l.contains(&format!(" {} ", w.name))
                    && l.contains("waiting")
                    && l.contains(QUESTION)
            })
        })
    });
    eprintln!(
        "questions shown {:?} after pi wrote them",
        written.elapsed()
    );
    assert!(
        !s.contains("Input needed:"),
        "the marker is not repeated:\n{s}"
    );
    let idx = f.index();
    for w in &f.workers {
        assert_eq!(record(&idx, w.name)["question"], QUESTION);
    }

    // Details of the selected row show the question too.
    let first = f.selected();
    assert!(first.contains(" W1 "), "{first}");
    f.keys(&["d"]);
    // Until the whole panel is drawn: a capture can catch the terminal mid-frame ("Asks  Choos").
    let s = f.wait_screen("details", 5_000, |s| {
        s.contains("Details · W1")
            && s.lines()
                .any(|l| l.starts_with("Asks") && l.contains(QUESTION))
    });
    assert!(
        s.lines()
            .any(|l| l.starts_with("Asks") && l.contains(QUESTION)),
        "{s}"
    );
    f.keys(&["d"]);
    f.wait_screen("details closed", 5_000, |s| !s.contains("Details ·"));

    // n / N walk the two waiting seats, wrapping.
    for want in ["W2", "W1", "W2"] {
        f.keys(&["n"]);
        wait_for(5_000, || {
            f.selected().contains(&format!(" {want} ")).then_some(())
        })
        .unwrap_or_else(|| panic!("n did not select {want}:\n{}", f.screen()));
    }
    f.keys(&["N"]);
    wait_for(5_000, || f.selected().contains(" W1 ").then_some(()))
        .unwrap_or_else(|| panic!("N did not select W1:\n{}", f.screen()));

    // ⏎ on W2: the client now shows W2's pane, in W2's session.
    f.keys(&["n"]);
    wait_for(5_000, || f.selected().contains(" W2 ").then_some(())).unwrap();
    let sidebar = f.server.client_pane();
    let w2 = f.pane_of("W2");
    f.keys(&["Enter"]);
    wait_for(10_000, || (f.server.client_pane() == w2).then_some(())).unwrap_or_else(|| {
        panic!(
            "the client shows {}, not {w2}:\n{}",
            f.server.client_pane(),
            f.screen()
        )
    });
    assert_eq!(f.server.person_clients("#{session_name}").join("\n"), "W2");
    // Back to the sidebar (as the person would, with their own keys).
    f.server.tmux(&["switch-client", "-t", &sidebar]);
    wait_for(5_000, || (f.server.client_pane() == sidebar).then_some(())).unwrap();

    // Close W1 from the list: the confirmation names it; `y` runs close-worker in the
    // background; the row shows the stage, then the result.
    f.keys(&["N"]);
    wait_for(5_000, || f.selected().contains(" W1 ").then_some(())).unwrap();
    f.keys(&["C"]);
    f.wait_screen("the confirmation", 5_000, |s| {
        s.contains("Close worker W1?")
    });
    f.keys(&["y"]);
    f.wait_screen("the close running", 10_000, |s| s.contains("close-worker:"));
    f.wait_screen("the close receipt", 150_000, |s| {
        s.lines()
            .any(|l| l.contains(" W1 ") && l.contains("close-worker: closed"))
    });
    // The same on disk as `close-worker`: the handoff saved, the job closed, only W1's pane gone.
    let cfg = f.config();
    let w1 = &cfg["agents"][1];
    assert_eq!(w1["name"], "W1");
    assert_eq!(w1["handoff"]["summary"], "All done; nothing left.");
    assert_eq!(w1["closeJob"]["state"], "closed");
    let jobs: Vec<_> = std::fs::read_dir(f.root.join(".pi-intercom/jobs"))
        .unwrap()
        .flatten()
        .collect();
    assert!(!jobs.is_empty(), "the job record is kept");
    let sessions = f.server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    let mut left: Vec<&str> = sessions.lines().collect();
    left.sort();
    assert_eq!(left, ["C", "W2", "desk"], "only W1's pane was closed");
    assert!(cfg["agents"][2]["closeJob"].is_null(), "W2 untouched");

    // Resume W1 from the list: a new window beside the sidebar runs pi in W1's session.
    wait_for(20_000, || {
        (record(&f.index(), "W1")["state"] == "offline").then_some(())
    })
    .expect("W1 reads offline");
    // As the person sees it: acting on a row drawn before the close would be refused (the
    // seat moved since it was seen).
    f.wait_screen("W1 offline on the sidebar", 10_000, |s| {
        s.lines()
            .any(|l| l.contains(" W1 ") && l.contains("offline"))
    });
    f.keys(&["R"]);
    f.wait_screen("the resume confirmation", 5_000, |s| {
        s.contains("Resume worker W1?")
    });
    f.keys(&["y"]);
    let s = f.wait_screen("the resume receipt", 150_000, |s| {
        s.lines().any(|l| {
            l.contains(" W1 ")
                && ["resumed", "refused", "failed", "launched_unconfirmed"]
                    .iter()
                    .any(|r| l.contains(&format!("resume-worker: {r}")))
        })
    });
    f.keys(&["d"]);
    let details = f.wait_screen("W1's details", 5_000, |s| s.contains("Details · W1"));
    assert!(
        s.lines()
            .any(|l| l.contains(" W1 ") && l.contains("resume-worker: resumed")),
        "{s}\n{details}"
    );
    let idx = f.index();
    let w = record(&idx, "W1");
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(
        w["sessionId"],
        header_id(&f.workers[0].file).as_str(),
        "{w}"
    );
    // In a tmux session of its own, named like it (`W1-2` while W1's first session lives on).
    let windows = f
        .server
        .tmux(&["list-windows", "-a", "-F", "#{session_name} #{window_name}"]);
    assert!(
        windows.lines().any(|l| l == "W1 W1" || l == "W1-2 W1"),
        "{windows}"
    );
    // No resume fence is left behind once the new seat registered.
    let fences: Vec<String> = std::fs::read_dir(f.root.join(".pi-intercom/jobs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("resume-") && n.ends_with(".json"))
        .collect();
    assert!(fences.is_empty(), "{fences:?}");
    std::thread::sleep(Duration::from_millis(200));
    f.keys(&["q"]);
}
