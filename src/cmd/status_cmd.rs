//! `intercom-pane status [--json] [--name N] [--offset N] [--limit 1..20] [--probe]`: the page as a
//! list, or as JSON with `--json`.

use crate::cli::StatusArgs;
use crate::cmd::exit::StatusExit;
use crate::cmd::watch_cmd::Also;
use crate::cmd::{options, refuse};
use crate::probe::{Connection, ProbeCache, ProbeTarget};
use crate::views::status_json::{self, StatusQuery};

pub(crate) fn run(args: &StatusArgs) -> StatusExit {
    if args.watch {
        let r = match options::resolve(&args.src) {
            Ok(r) => r,
            Err(e) => return refuse(e),
        };
        // `status --watch` is JSON lines whether or not `--json-lines` says so.
        let mut stream = args.stream.clone();
        stream.json_lines = true;
        return match crate::cmd::watch_cmd::run(r, &stream, args.probe, Also::Nothing) {
            Ok(()) => StatusExit::Printed,
            Err(e) => refuse(e),
        };
    }
    let q = StatusQuery {
        name: args.name.clone(),
        offset: args.offset,
        limit: args.limit,
    };
    let mut r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    // A status page reads no transcript further than the scan itself does: its tokens and cost
    // are those of each file's first read, "at least" beyond (`scan` and `explain` read more).
    r.opts.usage_reads = 0;
    let pass = match crate::scan::run(&r.opts, r.clock.as_ref(), None, None) {
        Ok(p) => p,
        Err(e) => return refuse(options::OptionsError::Scan(e)),
    };
    let selected = match status_json::select(&pass, &q) {
        Ok(s) => s,
        Err(e) => return refuse(e),
    };
    // `--probe` checks only this page's workers (the first `limit` after `offset`).
    let port_of = |i: usize| {
        pass.config
            .as_ref()
            .and_then(|c| c.find_by_session(&pass.workers[i].session_id))
            .map(|a| a.port)
            .unwrap_or(0)
    };
    let mut cache = ProbeCache::new();
    if args.probe {
        let targets: Vec<ProbeTarget> = selected
            .iter()
            .skip(q.offset)
            .take(q.limit)
            .map(|&i| ProbeTarget {
                session_id: pass.workers[i].session_id.clone(),
                port: port_of(i),
            })
            .collect();
        let (_tx, rx) = tokio::sync::watch::channel(false);
        if let Err(e) = cache.run_batch_blocking(&targets, || r.clock.now_ms(), rx) {
            return refuse(format!("cannot start the probe runtime: {e}"));
        }
    }
    let now = r.clock.now_ms();
    let connection = |i: usize| {
        let sid = &pass.workers[i].session_id;
        if args.probe {
            cache.get(sid, port_of(i), now).to_json()
        } else {
            Connection::not_checked(sid).to_json()
        }
    };
    let exit = match status_json::page(&pass, &q, &connection, args.probe) {
        Ok(v) if args.json => {
            crate::cmd::out(format_args!(
                "{}",
                crate::views::json::to_string_pretty(&v).unwrap_or_default()
            ));
            StatusExit::Printed
        }
        Ok(v) => {
            crate::cmd::out_bytes(crate::views::status_text::status_text(&v).as_bytes());
            StatusExit::Printed
        }
        Err(e) => refuse(e),
    };
    // The process ends next: freeing every seat's record one by one was 2–3 % of a 255-worker
    // page's time (`benches/floor_compare.py`), for memory the exit gives back at once.
    std::mem::forget(pass);
    exit
}
