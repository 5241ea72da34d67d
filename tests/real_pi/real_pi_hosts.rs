//! A real pi 1.6.0 on another host: the simulated host (a network namespace with its own sshd,
//! `hosts_support`) holds a real pi registered by the shipped extension (its reply channel
//! open); from this machine, the board over ssh shows it tagged with its host, and a reply sent
//! with `--host` travels on the channel there and arrives in pi's own session file exactly
//! once, byte for byte.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` and as root with OpenSSH's sshd and `ip netns` (the
//! multi-host tier); otherwise reported as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::hosts_support::{all_answering, board, row, until, Net};
use crate::real_pi_reply::{body, Seat};
use crate::real_pi_support::{real_pi, SERIAL};

#[test]
#[cfg_attr(
    not(all(real_pi, hosts_tier)),
    ignore = "real-pi multi-host tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and root with OpenSSH's sshd, ssh and ip netns (.ci/run installs them)"
)]
fn a_reply_to_a_real_pi_on_another_host_arrives_once() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let seat = Seat::start(&bin, true);
    let env = &seat.env;
    let agent = env.dir.path();
    let mut net = Net::new(&[], &[]);
    let args: Vec<String> = [
        "--config",
        &env.system_config(),
        "--root",
        &env.path("root").display().to_string(),
        "--sessions-dir",
        &agent.join("sessions").display().to_string(),
        "--fleet",
        "none",
        "--repo",
        &env.path("root").display().to_string(),
        "--tmux-socket",
        &seat.sock(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    net.add_bare("gpu", args);

    let mut src = board(&net);
    let s = until(&mut src, 40_000, "the real pi on gpu", |s| {
        all_answering(s) && row(s, "gpu", "W").is_some()
    });
    let w = row(&s, "gpu", "W").unwrap();
    assert_eq!(w.state.as_str(), "idle");
    assert!(
        w.pane.as_ref().and_then(|p| p.pi.as_ref()).is_some(),
        "{w:?}"
    );
    assert!(
        matches!(&w.reply, intercom_pane::seam::snapshot::ReplyPath::Available { target } if target.ends_with(" on gpu"))
    );

    let before = seat.user_messages().len();
    let text = "From another machine: 'quotes' \"dq\" $(whoami) `date` é 日本\nsecond line";
    let o = net.run(&["reply", "--host", "gpu", "--json", "W", "-"], Some(text));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let receipt: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["transport"], "channel", "{receipt}");
    let got = seat.wait_messages(before + 1);
    assert_eq!(got[before], body(text));
    seat.wait_idle();
    assert_eq!(seat.user_messages().len(), before + 1, "exactly once");
}
