//! `intercom-pane status --json [--name N] [--offset N] [--limit 1..20] [--probe]`.

use crate::cli::StatusArgs;
use crate::cmd::{options, refuse};
use crate::scan;
use crate::snapshot::ConnectionView;
use crate::views::status_json::{self, StatusQuery};

pub fn run(args: &StatusArgs) -> i32 {
    let q = StatusQuery {
        name: args.name.clone(),
        offset: args.offset,
        limit: args.limit,
    };
    if !(1..=status_json::MAX_LIMIT).contains(&q.limit) {
        return refuse(format!("--limit must be 1..20, got {}", q.limit));
    }
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let pass = match scan::run(&r.opts, r.clock.as_ref()) {
        Ok(p) => p,
        Err(e) => return refuse(e),
    };
    let not_checked = |i: usize| ConnectionView::not_checked().to_json(&pass.workers[i].session_id);
    match status_json::page(&pass, &q, &not_checked, false) {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            0
        }
        Err(e) => refuse(e),
    }
}
