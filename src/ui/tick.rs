//! When an age on screen changes next (`12s` → `13s`, `1m` → `2m`): the loop redraws then, and
//! only then, so ages tick at render time without a pass and nothing is drawn while nothing
//! shown changes (docs/behaviour.md §3a).

use crate::clock::Ms;
use crate::snapshot::Snapshot;

/// The next time after `now` at which the age of `at` is shown differently (`short_age`: seconds
/// below a minute, then minutes, hours, days; a time ahead of the clock reads "in the future"
/// until it is less than a second ahead).
pub fn next_change(now: Ms, at: Ms) -> Ms {
    if at > now {
        // Shown as a future time until `at - 1000` (`fit::is_future`); then as `0s`.
        let flip = at.saturating_sub(1000);
        return if flip > now { flip } else { at.saturating_add(1000) };
    }
    let secs = (now - at) / 1000;
    let unit = match secs {
        s if s < 60 => 1,
        s if s < 3600 => 60,
        s if s < 86_400 => 3600,
        _ => 86_400,
    };
    at.saturating_add((secs / unit + 1) * unit * 1000)
}

/// The earliest time any age the sidebar shows from `snap` changes, if it shows one.
pub fn next_redraw(snap: &Snapshot, now: Ms) -> Option<Ms> {
    let mut times = vec![snap.scanned_at];
    for r in &snap.rows {
        times.extend(r.last_activity);
        times.extend(r.relaunched_at);
        times.extend(r.connection.checked_at);
        times.extend(r.activity.as_ref().and_then(|a| a.observed_at));
        times.extend(r.report.as_ref().map(|x| x.updated_at));
        times.extend(r.handoff.as_ref().map(|x| x.updated_at));
        times.extend(r.close_job.as_ref().map(|x| x.updated_at));
    }
    times.into_iter().map(|t| next_change(now, t)).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::short_age;

    #[test]
    fn the_next_change_is_when_the_shown_age_changes() {
        let at = 1_000_000;
        for now in [at, at + 500, at + 59_999, at + 60_000, at + 125_000, at + 3_700_000] {
            let next = next_change(now, at);
            assert!(next > now);
            let shown = |t: Ms| short_age((t - at) / 1000);
            assert_eq!(shown(now), shown(next - 1), "unchanged until {next} from {now}");
            assert_ne!(shown(now), shown(next), "changed at {next} from {now}");
        }
        // Minutes: a minute later, not a second.
        assert_eq!(next_change(at + 125_000, at), at + 180_000);
        // A time ahead of the clock: when it stops being "in the future".
        assert_eq!(next_change(at, at + 5_000), at + 4_000);
    }
}
