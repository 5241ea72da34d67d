//! The live views' checks: whether inotify can watch every folder a pass reads here (else live
//! views fall back to a full pass every 3 s), and how each running view watches now (its
//! record in `<data root>/live/`): by events or by polling, queue overflows, tmux control
//! clients.

use super::Check;
use crate::live::files::WatchSet;
use crate::scan::{Scan, ScanOptions};

fn sysctl(name: &str) -> String {
    crate::fsguard::read_capped(
        std::path::Path::new(&format!("/proc/sys/fs/inotify/{name}")),
        64,
    )
    .ok()
    .and_then(|b| String::from_utf8(b).ok())
    .map(|s| s.trim().to_string())
    .unwrap_or_else(|| "?".into())
}

/// Can this pass's folders all be watched?
pub(super) fn capacity(opts: &ScanOptions, pass: &Scan) -> Check {
    let folders = crate::live::plan::folders(opts, pass);
    let limits = format!(
        "fs.inotify.max_user_watches {}, max_queued_events {}",
        sysctl("max_user_watches"),
        sysctl("max_queued_events")
    );
    let mut set = match WatchSet::new() {
        Ok(s) => s,
        Err(e) => {
            return Check::warn(
                "live updates",
                format!(
                "inotify cannot be used ({e}): the sidebar and --watch run a full pass every 3 s"
            ),
                format!(
                    "raise fs.inotify.max_user_instances (now {})",
                    sysctl("max_user_instances")
                ),
            )
        }
    };
    set.sync(&folders);
    match set.limit() {
        None => Check::ok(
            "live updates",
            format!("inotify watches the {} folders a pass reads ({limits})", set.len()),
        ),
        Some(limit) => Check::warn(
            "live updates",
            format!(
                "{} folders cannot be watched ({}; {limits}): the sidebar and --watch run a full pass every 3 s",
                set.unwatched(),
                limit.as_str()
            ),
            "raise fs.inotify.max_user_watches (sysctl), or watch fewer session folders",
        ),
    }
}

/// How each running live view watches.
pub(super) fn running(opts: &ScanOptions) -> Vec<Check> {
    crate::live::record::running(&opts.data_root)
        .into_iter()
        .map(|r| {
            let h = &r.health;
            let get = |k: &str| h.get(k).cloned().unwrap_or_default();
            let mode = get("mode").as_str().unwrap_or("?").to_string();
            let overflows = get("overflows").as_u64().unwrap_or(0);
            let servers = get("servers").as_array().cloned().unwrap_or_default();
            let listening = servers
                .iter()
                .filter(|s| s.get("listening").and_then(|l| l.as_bool()) == Some(true))
                .count();
            let mut detail = format!(
                "{} (pid {}): {mode}, {} folders, {} pis held, {listening} of {} multiplexer servers watched",
                crate::text::sanitize(&r.command),
                r.process.pid,
                get("watches").as_u64().unwrap_or(0),
                get("pids").as_u64().unwrap_or(0),
                servers.len()
            );
            if let Some(limit) = get("limit").as_str() {
                detail.push_str(&format!(", not every folder watched: {limit}"));
            }
            if overflows > 0 {
                detail.push_str(&format!(
                    ", {overflows} inotify queue overflow(s), last at {} (each caught up by a full pass)",
                    get("lastOverflowAt").as_str().unwrap_or("?")
                ));
            }
            if mode != "events" || overflows > 0 || listening < servers.len() {
                Check::warn(
                    "live view",
                    detail,
                    "raise fs.inotify.max_user_watches / max_queued_events (sysctl); a tmux server without control mode is listed every 5 s",
                )
            } else {
                Check::ok("live view", detail)
            }
        })
        .collect()
}
