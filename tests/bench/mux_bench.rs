//! Bench (ignored by default): tmux processes spawned per liveness pass, and pass times, with
//! 1, 16 and 128 panes. Run: `cargo test --release --test bench mux_bench -- --ignored --nocapture`.
//!
//! Spawns are counted by a PATH shim named `tmux` that logs each call and execs the real tmux.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::mux_support;

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use intercom_pane::seam::liveness::{seat_liveness, LivenessMode, PaneCache, SeatHint};
use intercom_pane::seam::mux::herdr::Herdr;
use intercom_pane::seam::mux::tmux::Tmux;
use intercom_pane::seam::mux::{Liveness, Multiplexer, MuxKind};
use mux_herdr_fake::FakeHerdr;
use mux_support::{fake_pi, soon, TmuxServer};

const PASSES: usize = 20;

fn real_tmux() -> String {
    let out = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn tmux_spawns_per_liveness_pass_are_constant() {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    let shim_dir = work.path().join("shim");
    std::fs::create_dir(&shim_dir).unwrap();
    let log = work.path().join("spawns.log");
    let shim = shim_dir.join("tmux");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real_tmux()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let count = || {
        std::fs::read_to_string(&log)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };

    println!("panes  seats  tmux spawns/pass  mean ms  max ms  (first call)");
    for panes in [1usize, 16, 128] {
        let srv = TmuxServer::start("s0", work.path(), &[pi.to_str().unwrap(), "1000"]);
        // Each further pane is a window of its own (128 panes do not fit in one window);
        // every other one runs a shell instead of pi. Sessions of 8 windows.
        for i in 1..panes {
            let session = format!("s{}", i / 8);
            let exists = srv
                .tmux(&["list-sessions", "-F", "#{session_name}"])
                .lines()
                .any(|l| l == session);
            let cmd: &[&str] = if i % 2 == 0 {
                &["/bin/sh"]
            } else {
                &[pi.to_str().unwrap(), "1000"]
            };
            if exists {
                let mut args = vec!["new-window", "-d", "-t", &session, "--"];
                args.extend_from_slice(cmd);
                srv.tmux(&args);
            } else {
                srv.new_session(&session, work.path(), cmd);
            }
        }
        // One seat per pane's session name and one per pane id.
        let t = Tmux::at_socket(&srv.sock).with_path_env(&shim_dir);
        // Let every pane's program start before measuring.
        mux_support::wait_for(5000, || {
            let l = Tmux::at_socket(&srv.sock).list_panes(soon(5000)).ok()?;
            let pis = l
                .panes
                .iter()
                .filter(|p| p.current_command.as_deref() == Some("pi"));
            (pis.count() == 1 + panes / 2).then_some(())
        })
        .expect("panes started");
        std::fs::write(&log, b"").unwrap();
        let listed = t.list_panes(soon(10_000)).unwrap();
        let first_spawns = count();
        assert_eq!(listed.panes.len(), panes);
        let seats: Vec<SeatHint> = listed
            .panes
            .iter()
            .map(|p| SeatHint::Pane {
                kind: MuxKind::Tmux,
                socket: None,
                pane_id: Some(p.id.clone()),
                session: p.session_name.clone(),
            })
            .collect();

        let mut times = Vec::new();
        let mut per_pass = Vec::new();
        for _ in 0..PASSES {
            let before = count();
            let t0 = Instant::now();
            let list = t.list_panes(soon(10_000));
            let cache = PaneCache::from_listings(vec![((MuxKind::Tmux, None), list)]);
            let states: Vec<Liveness> = seats
                .iter()
                .map(|s| seat_liveness(&cache, Some(s), LivenessMode::Tmux).liveness)
                .collect();
            times.push(t0.elapsed());
            per_pass.push(count() - before);
            let alive = states.iter().filter(|s| **s == Liveness::Alive).count();
            assert_eq!(alive, 1 + panes / 2, "pane 0 and every odd pane run pi");
        }
        let mean = times.iter().sum::<Duration>().as_secs_f64() * 1000.0 / PASSES as f64;
        let max = times.iter().max().unwrap().as_secs_f64() * 1000.0;
        println!(
            "{panes:>5}  {:>5}  {:>16}  {mean:>7.2}  {max:>6.2}  ({first_spawns})",
            seats.len(),
            format!("{:?}", per_pass.iter().max().unwrap()),
        );
        assert!(per_pass.iter().all(|&n| n == 1), "{per_pass:?}");
    }

    // For comparison: Herdr has no process-spawn cost, but one process query per pane.
    for panes in [1usize, 16, 128] {
        let fake = FakeHerdr::start(std::process::id());
        fake.with(|s| {
            let base = s.panes[0].clone();
            for i in 1..panes {
                let mut p = base.clone();
                p.id = format!("w1:p{}", i + 1);
                s.panes.push(p);
            }
        });
        let h = Herdr::at_socket(&fake.socket);
        h.list_panes(soon(10_000)).unwrap();
        let before = fake.methods().len();
        let t0 = Instant::now();
        for _ in 0..PASSES {
            h.list_panes(soon(10_000)).unwrap();
        }
        let ms = t0.elapsed().as_secs_f64() * 1000.0 / PASSES as f64;
        let reqs = (fake.methods().len() - before) / PASSES;
        println!("herdr fake: {panes:>3} panes: {reqs} socket requests/pass, {ms:.2} ms/pass");
    }
}
