//! `intercom-pane budget NAME [--raise USD | --usd USD | --tokens N | --off | --check]`: flags →
//! `budget::change` (the roster and the change record) → where the budget stands now, from one
//! scan pass, with its recorded changes.

use serde::Serialize;

use crate::budget::change::{self, Edit};
use crate::budget::check::{self, Verdict};
use crate::budget::record::{self, Change};
use crate::cli::BudgetArgs;
use crate::cmd::exit::BudgetExit;
use crate::cmd::options;
use crate::evidence::config;
use crate::scan::RootChoice;
use crate::text::sanitize;

/// What `budget --json` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    name: String,
    session_id: String,
    /// The change just made, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<Change>,
    /// The roster's budget value now (`null`: none).
    budget: serde_json::Value,
    /// Where it stands (`null`: the worker is not on the board, or no budget applies).
    standing: serde_json::Value,
    verdict: Verdict,
    /// Its recorded changes, oldest first.
    changes: Vec<Change>,
}

fn refuse(msg: impl std::fmt::Display) -> BudgetExit {
    eprintln!("intercom-pane: budget: {msg}");
    BudgetExit::Refused
}

pub(crate) fn run(args: &BudgetArgs) -> BudgetExit {
    // A roster on another machine: its budget is changed there, where its extension checks it.
    if !args.src.hosts.is_empty() {
        return refuse("not with --host: run intercom-pane budget on that host");
    }
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let root = match &r.opts.root {
        RootChoice::Exact(p) => Some(p.clone()),
        RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        RootChoice::Skip => None,
    };
    let Some(root) = root else {
        return refuse(crate::actions::no_roster_at(&r.opts.root));
    };
    let root = crate::paths::absolute(&root);
    let cfg = match config::load(&root) {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    let agent = match (&args.name, &args.session_id) {
        (Some(n), _) => cfg.find_by_name(n),
        (None, Some(id)) => cfg.find_by_session(id),
        (None, None) => None,
    };
    let Some(agent) = agent.cloned() else {
        let who = args
            .name
            .as_deref()
            .or(args.session_id.as_deref())
            .unwrap_or("");
        return refuse(format!("no worker {:?} in the roster", sanitize(who)));
    };
    if agent.coordinator {
        return refuse("budgets are for workers, not the coordinator");
    }
    let edit = match (args.raise, args.usd, args.tokens, args.off) {
        (Some(v), ..) => Some(Edit::Raise(v)),
        (_, Some(v), ..) => Some(Edit::Usd(v)),
        (_, _, Some(v), _) => Some(Edit::Tokens(v)),
        (.., true) => Some(Edit::Off),
        _ => None,
    };
    let mut exit = BudgetExit::Done;
    let mut changed = None;
    if let Some(edit) = edit {
        match change::apply(
            &root,
            &agent.session_id,
            edit,
            args.by.as_str(),
            r.clock.now_ms(),
        ) {
            Ok(c) => changed = Some(c),
            Err(change::ChangeError::Write(m)) => {
                eprintln!("intercom-pane: budget: {}", sanitize(&m));
                exit = BudgetExit::Failed;
            }
            Err(e) => return refuse(format!("{}: {e}", sanitize(&agent.name))),
        }
    }
    // No limit anywhere: the extension's check needs no pass (it runs before every prompt).
    if args.check && agent.budget.is_none() && cfg.budget.is_none() {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string(&check::verdict(&agent.name, None)).unwrap_or_default()
        ));
        return exit;
    }
    // Where it stands now, from one pass (the change above included).
    let pass = crate::scan::run(&r.opts, r.clock.as_ref(), None, None).ok();
    let view = pass.as_ref().and_then(|p| {
        p.snapshot
            .rows
            .iter()
            .find(|row| row.id == agent.session_id)
            .and_then(|row| row.budget.clone())
    });
    let verdict = check::verdict(&agent.name, view.as_ref());
    if args.check {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string(&verdict).unwrap_or_default()
        ));
        return exit;
    }
    let now_budget = config::load(&root)
        .ok()
        .and_then(|c| c.find_by_session(&agent.session_id).cloned())
        .and_then(|a| a.budget)
        .map(|b| b.to_json())
        .unwrap_or(serde_json::Value::Null);
    let report = Report {
        name: agent.name.clone(),
        session_id: agent.session_id.clone(),
        changed,
        budget: now_budget,
        standing: view
            .as_ref()
            .map(crate::budget::to_json)
            .unwrap_or(serde_json::Value::Null),
        verdict,
        changes: record::read(&root, &agent.session_id),
    };
    if args.json {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        ));
        return exit;
    }
    let name = sanitize(&agent.name);
    if let Some(c) = &report.changed {
        crate::cmd::out(format_args!("{name}: budget changed ({})", c.words()));
    }
    match view.as_ref().map(|v| v.short()).filter(|w| !w.is_empty()) {
        Some(w) => crate::cmd::out(format_args!("{name}: {}", sanitize(&w))),
        None if report.budget.is_null() => crate::cmd::out(format_args!("{name}: no budget")),
        None => crate::cmd::out(format_args!(
            "{name}: budget set; nothing spent on the board yet"
        )),
    }
    if report.verdict.hold {
        crate::cmd::out(format_args!(
            "  held: {} — lift with {}",
            sanitize(&report.verdict.line),
            sanitize(&report.verdict.lift)
        ));
    }
    for c in report.changes.iter().rev().take(5) {
        crate::cmd::out(format_args!(
            "  {} {}",
            crate::clock::format_iso(c.at),
            c.words()
        ));
    }
    exit
}
