//! `intercom-pane explain NAME [--json] [--probe]`: one pass, then every source's evidence for
//! one seat and the rule that chose its state (`views::explain`).

use crate::cli::ExplainArgs;
use crate::cmd::exit::ExplainExit;
use crate::cmd::{options, refuse};
use crate::probe::{ProbeCache, ProbeTarget};
use crate::scan::SeatLookup;

pub(crate) fn run(args: &ExplainArgs) -> ExplainExit {
    let (r, mut pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let key = match pass.find_seat(&args.name) {
        Ok(k) => k,
        Err(why) => {
            // Where no roster was found, a roster agent's name is unknown for that reason.
            let roster = match why {
                SeatLookup::Unknown => pass.snapshot.roster.missing(),
                SeatLookup::Ambiguous(_) => None,
            };
            eprintln!(
                "intercom-pane: {} {:?}{}",
                match why {
                    SeatLookup::Unknown => "no seat named",
                    SeatLookup::Ambiguous(_) => "several seats are named (use <project>/<agent>)",
                },
                crate::text::clip(&crate::text::sanitize(&args.name), 80),
                roster.map(|r| format!(": {r}")).unwrap_or_default()
            );
            return ExplainExit::UnknownSeat;
        }
    };
    if args.probe {
        // The seat's own configured port only.
        let target: Vec<ProbeTarget> = pass
            .records
            .iter()
            .find(|rec| rec.key() == key)
            .and_then(|rec| rec.session_id.clone())
            .and_then(|sid| {
                pass.probe_targets()
                    .into_iter()
                    .find(|t| t.session_id == sid)
            })
            .into_iter()
            .collect();
        let mut cache = ProbeCache::new();
        let (_tx, rx) = tokio::sync::watch::channel(false);
        if let Err(e) = cache.run_batch_blocking(&target, || r.clock.now_ms(), rx) {
            return refuse(format!("cannot start the probe runtime: {e}"));
        }
        pass.apply_connections(&cache, r.clock.now_ms());
    }
    let now = pass.scanned_at;
    let Some(e) = crate::views::explain::explain(&pass, &key, now) else {
        return ExplainExit::UnknownSeat;
    };
    if args.json {
        crate::cmd::out(format_args!(
            "{}",
            crate::views::json::to_string_pretty(&e).unwrap_or_default()
        ));
    } else {
        for line in crate::views::explain::render(&e) {
            crate::cmd::out(format_args!("{line}"));
        }
    }
    ExplainExit::Printed
}
