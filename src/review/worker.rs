//! A roster worker's review as the board sees it: its state from the pass, its checkout, and
//! the files it shares with the other live workers (a seat on the board that is not offline).
//! What `review`, `intercom_review` and `close-worker`'s receipt share.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::locate::{self, Checkout};
use super::{overlaps, review, Review};
use crate::evidence::config::{Agent, IntercomConfig};
use crate::scan::Scan;
use crate::states::BoardState;

/// The board's state of the roster's agent, when it has a seat.
pub(crate) fn state_of(pass: &Scan, a: &Agent) -> Option<BoardState> {
    pass.records
        .iter()
        .find(|r| r.session_id.as_deref() == Some(a.session_id.as_str()))
        .map(|r| r.state)
}

/// The review of one agent, and its checkout and repository when it has one.
pub(crate) fn review_agent(
    root: &Path,
    a: &Agent,
    state: Option<BoardState>,
    into: Option<&str>,
    deadline: Instant,
) -> (Review, Option<(Checkout, PathBuf)>) {
    let state_s = state.map(|s| s.as_str().to_string());
    let (folder, tree) = locate::folder_of(root, a);
    match locate::checkout(&folder, tree.as_ref(), deadline) {
        Ok(co) => {
            let r = review(&a.name, state_s, &co, into, true, deadline);
            let common = co.common.clone();
            (r, Some((co, common)))
        }
        Err(m) => (Review::empty(&a.name, state_s, m.to_string()), None),
    }
}

/// `agent`'s review with its overlaps: every pair, among it and the other live workers of its
/// repository, that changed a file both.
pub(crate) fn review_with_overlaps(
    pass: &Scan,
    cfg: &IntercomConfig,
    agent: &Agent,
    into: Option<&str>,
    deadline: Instant,
) -> (Review, Option<Checkout>) {
    let (mut rev, found) = review_agent(&cfg.root, agent, state_of(pass, agent), into, deadline);
    let Some((co, repo)) = found else {
        return (rev, None);
    };
    let others: Vec<(Review, PathBuf)> = cfg
        .workers()
        .filter(|o| o.session_id != agent.session_id)
        .filter(|o| state_of(pass, o).is_some_and(|s| s != BoardState::Offline))
        .filter_map(|o| {
            let (r, f) = review_agent(&cfg.root, o, state_of(pass, o), into, deadline);
            f.map(|(_, repo)| (r, repo))
        })
        .collect();
    let mut all: Vec<(&Review, &Path)> = vec![(&rev, repo.as_path())];
    all.extend(others.iter().map(|(r, p)| (r, p.as_path())));
    let pairs = overlaps(&all);
    rev.overlaps = pairs;
    (rev, Some(co))
}
