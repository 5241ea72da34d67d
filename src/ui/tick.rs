//! When an age on screen changes next (`12s` → `13s`, `1m` → `2m`): the loop redraws then, and
//! only then, so ages tick at render time without a pass and nothing is drawn while nothing
//! shown changes (docs/behaviour.md §3a).
//!
//! Two rules keep an idle sidebar from drawing every second: the title's age of the last pass
//! is `<1m` until a minute has passed, then minutes (a true upper bound; with the live engine a
//! pass runs whenever something changed and every 30 s anyway); and a row age counted in minutes or more is redrawn within `COARSE_BATCH` of its
//! change (so the rows of a quiet board are redrawn together, a few times a minute at most).
//! And only the ages a frame drew count (`fit::drawing` notes them as their text is made).

use crate::clock::{short_age, Ms};
use crate::snapshot::Snapshot;
use crate::ui::fit::Shown;

/// A row age in minutes or more changes on screen at most this long after it changes.
pub(crate) const COARSE_BATCH: Ms = 5_000;

/// The title's age of the last pass: `<1m` under a minute, then minutes. With the live engine a
/// pass runs whenever something changed and every 30 s anyway, so `<1m` stays true while the
/// sidebar runs, and an idle sidebar is not redrawn for the title (finer steps cost two more
/// frames every 30 s, each a full render of the list).
pub(crate) fn title_age(secs: i64) -> String {
    match secs {
        s if s < 60 => "<1m".into(),
        s => short_age(s),
    }
}

/// When `title_age` of `at` next changes, after `now`.
fn title_change(now: Ms, at: Ms) -> Ms {
    let age = now.saturating_sub(at).max(0);
    if age < 60_000 {
        return at + 60_000;
    }
    next_change(now, at)
}

/// The next time after `now` at which the age of `at` is shown differently (`short_age`: seconds
/// below a minute, then minutes, hours, days; a time ahead of the clock reads "in the future"
/// until it is less than a second ahead).
pub(crate) fn next_change(now: Ms, at: Ms) -> Ms {
    if at > now {
        // Shown as a future time until `at - 1000` (`fit::is_future`); then as `0s`.
        let flip = at.saturating_sub(1000);
        return if flip > now {
            flip
        } else {
            at.saturating_add(1000)
        };
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

/// The earliest time, after `now`, at which the frame drawn at `now` from `snap` would look
/// different by time alone: an age it showed (`shown`, noted while drawing) ticks over, a line
/// it showed goes, or the title's step changes. Ages nobody sees (a row's other times, a
/// closed details pane) do not wake the loop.
pub(crate) fn next_redraw(snap: Option<&Snapshot>, shown: &[Shown], now: Ms) -> Option<Ms> {
    let at = |s: &Shown| match *s {
        Shown::Age(t) => {
            let at = next_change(now, t);
            if at - t >= 60_000 {
                // A minute-level change: redrawn with the others of the same few seconds.
                at.div_euclid(COARSE_BATCH) * COARSE_BATCH + COARSE_BATCH
            } else {
                at
            }
        }
        Shown::Until(t) => t,
    };
    // The bench's measure of what noting the drawn ages buys (`stream_bench`): every row's times
    // instead, as a loop that does not know what the frame drew would have to.
    let rows: Vec<Shown> = match snap {
        Some(s) if crate::live::switched_off("ages") => s
            .rows
            .iter()
            .flat_map(|r| [r.state_at, r.last_activity, r.relaunched_at])
            .flatten()
            .map(Shown::Age)
            .collect(),
        _ => Vec::new(),
    };
    shown
        .iter()
        .chain(rows.iter())
        .map(at)
        .filter(|&t| t > now)
        .chain(snap.map(|s| title_change(now, s.scanned_at)))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::short_age;

    #[test]
    fn the_next_change_is_when_the_shown_age_changes() {
        let at = 1_000_000;
        for now in [
            at,
            at + 500,
            at + 59_999,
            at + 60_000,
            at + 125_000,
            at + 3_700_000,
        ] {
            let next = next_change(now, at);
            assert!(next > now);
            let shown = |t: Ms| short_age((t - at) / 1000);
            assert_eq!(
                shown(now),
                shown(next - 1),
                "unchanged until {next} from {now}"
            );
            assert_ne!(shown(now), shown(next), "changed at {next} from {now}");
        }
        // Minutes: a minute later, not a second.
        assert_eq!(next_change(at + 125_000, at), at + 180_000);
        // A time ahead of the clock: when it stops being "in the future".
        assert_eq!(next_change(at, at + 5_000), at + 4_000);
    }

    #[test]
    fn the_title_steps_and_each_step_stays_true_until_the_next() {
        let at = 1_000_000;
        assert_eq!(title_age(0), "<1m");
        assert_eq!(title_age(29), "<1m");
        assert_eq!(title_age(59), "<1m");
        assert_eq!(title_age(61), "1m");
        for now in [at, at + 9_999, at + 10_000, at + 45_000, at + 61_000] {
            let next = title_change(now, at);
            assert!(next > now);
            let shown = |t: Ms| title_age((t - at) / 1000);
            assert_eq!(shown(now), shown(next - 1));
            assert_ne!(shown(now), shown(next));
        }
    }
    #[test]
    fn only_what_the_frame_showed_wakes_the_loop() {
        let now = 10_000_000;
        // Nothing shown that changes, no snapshot: no redraw.
        assert_eq!(next_redraw(None, &[], now), None);
        // An age in seconds: the next second.
        let shown = [Shown::Age(now - 12_500)];
        assert_eq!(next_redraw(None, &shown, now), Some(now + 500));
        // An age in minutes: its minute, batched.
        let shown = [Shown::Age(now - 125_000)];
        let at = next_redraw(None, &shown, now).unwrap();
        assert!(
            at >= now + 55_000 && at <= now + 55_000 + COARSE_BATCH,
            "{at}"
        );
        // A line shown until a time: that time; one already past is not a reason.
        let shown = [Shown::Until(now + 7_000), Shown::Until(now - 1)];
        assert_eq!(next_redraw(None, &shown, now), Some(now + 7_000));
    }

    #[test]
    fn a_frame_notes_the_ages_it_draws_and_nothing_else() {
        use crate::ui::fit::{age_secs, drawing, elapsed_secs};
        let now = 10_000_000;
        let ((), shown) = drawing(|| {
            age_secs(now, now - 3_000);
            elapsed_secs(now, now - 4_000);
        });
        assert_eq!(shown, vec![Shown::Age(now - 3_000)]);
        // Outside a frame nothing is kept.
        age_secs(now, now - 5_000);
        let ((), shown) = drawing(|| ());
        assert!(shown.is_empty());
    }
}
