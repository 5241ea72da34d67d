//! The sidebar on a built-in changing fleet (no Intercom root needed).
//!
//! `cargo run --example ui_demo -- [--workers N] [--pass-ms MS] [--interval-ms MS] [--data-root DIR]
//! [--panic-after-ms MS]`
//!
//! Seats change state every pass; one is named with terminal escape sequences and a bidi
//! override to show they render as harmless text. Seen marks go to `DIR/board/seen.json` when
//! `--data-root` is given, else they are refused with a reason. Replies are refused (no reply path).
//! `--panic-after-ms` makes the UI's clock panic on its first use after that long: it exists to
//! check that a panic on the UI thread still restores the terminal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use intercom_pane::seam::clock::{Clock, Ms, SystemClock};
use intercom_pane::seam::cmd::monitor_cmd::DataRootSeen;
use intercom_pane::seam::ui::demo::DemoSource;
use intercom_pane::seam::ui::ports::{NoReplyPath, NoSeenWriter, SeenWriter};
use intercom_pane::seam::ui::{run_monitor_with, MonitorOptions};

fn main() {
    let mut workers = 8usize;
    let mut pass_ms = 200u64;
    let mut interval_ms = 3000u64;
    let mut data_root = None;
    let mut panic_after = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> u64 {
            let v = args.next().unwrap_or_default();
            v.parse().unwrap_or_else(|_| {
                eprintln!("ui_demo: {name} needs a number, got {v:?}");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--workers" => workers = num("--workers").min(10_000) as usize,
            "--pass-ms" => pass_ms = num("--pass-ms"),
            "--interval-ms" => interval_ms = num("--interval-ms"),
            "--data-root" => data_root = args.next(),
            "--panic-after-ms" => {
                panic_after = Some(Duration::from_millis(num("--panic-after-ms")))
            }
            other => {
                eprintln!("ui_demo: unknown argument {other:?}");
                std::process::exit(2)
            }
        }
    }
    let source = DemoSource::new(
        workers,
        Duration::from_millis(pass_ms),
        Arc::new(SystemClock),
    );
    let clock: Arc<dyn Clock> = match panic_after {
        Some(after) => Arc::new(PanickingClock {
            deadline: Instant::now() + after,
        }),
        None => Arc::new(SystemClock),
    };
    let seen: Arc<dyn SeenWriter> = match data_root {
        Some(d) => Arc::new(DataRootSeen {
            data_root: d.into(),
            hosts: Default::default(),
        }),
        None => Arc::new(NoSeenWriter {
            reason: "the demo has no data root (pass --data-root DIR)".into(),
        }),
    };
    let opts = MonitorOptions {
        pass_interval: Duration::from_millis(interval_ms),
        color: None,
        ..MonitorOptions::default()
    };
    if let Err(e) = run_monitor_with(Box::new(source), seen, Arc::new(NoReplyPath), clock, opts) {
        eprintln!("ui_demo: {e}");
        std::process::exit(1);
    }
}

/// The wall clock until `deadline`, then a panic on the UI thread (see `--panic-after-ms`).
struct PanickingClock {
    deadline: Instant,
}

// The point of `--panic-after-ms`: show that a panic restores the terminal.
#[allow(clippy::panic)]
impl Clock for PanickingClock {
    fn now_ms(&self) -> Ms {
        if Instant::now() >= self.deadline {
            panic!("ui_demo: deliberate panic on the UI thread");
        }
        SystemClock.now_ms()
    }
}
