//! The sidebar on a built-in changing fleet (no Intercom root needed).
//!
//! `cargo run --example ui_demo -- [--workers N] [--pass-ms MS] [--interval-ms MS] [--data-root DIR]`
//!
//! Seats change state every pass; one is named with terminal escape sequences and a bidi
//! override to show they render as harmless text. Seen marks go to `DIR/board/seen.json` when
//! `--data-root` is given, else they are refused with a reason. Replies are refused (no reply path).

use std::sync::Arc;
use std::time::Duration;

use intercom_pane::clock::SystemClock;
use intercom_pane::ui::demo::DemoSource;
use intercom_pane::ui::{
    run_monitor_with, DataRootSeen, MonitorOptions, NoReplyPath, NoSeenWriter, SeenWriter,
};

fn main() {
    let mut workers = 8usize;
    let mut pass_ms = 200u64;
    let mut interval_ms = 3000u64;
    let mut data_root = None;
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
            other => {
                eprintln!("ui_demo: unknown argument {other:?}");
                std::process::exit(2)
            }
        }
    }
    let clock = Arc::new(SystemClock);
    let source = DemoSource::new(workers, Duration::from_millis(pass_ms), clock.clone());
    let seen: Arc<dyn SeenWriter> = match data_root {
        Some(d) => Arc::new(DataRootSeen {
            data_root: d.into(),
        }),
        None => Arc::new(NoSeenWriter {
            reason: "the demo has no data root (pass --data-root DIR)".into(),
        }),
    };
    let opts = MonitorOptions {
        pass_interval: Duration::from_millis(interval_ms),
        color: None,
    };
    if let Err(e) = run_monitor_with(Box::new(source), seen, Arc::new(NoReplyPath), clock, opts) {
        eprintln!("ui_demo: {e}");
        std::process::exit(1);
    }
}
