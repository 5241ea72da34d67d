//! `intercom-pane init`, `spawn NAME` and `retire NAME`: flags → the action → the receipt (one
//! line per fact, or JSON with `--json`). Exit codes are the actions' enums.

use std::path::PathBuf;

use serde_json::Value;

use crate::actions::init::{self, InitExit, InitRequest, Launch};
use crate::actions::retire::{self, RetireExit, RetireRequest};
use crate::actions::spawn::{self, Folder, SpawnExit, SpawnRequest};
use crate::cli::{InitArgs, RetireArgs, SpawnArgs};
use crate::cmd::options;
use crate::cmd::text_input::{self, TextArg};
use crate::evidence::config::{self, MuxChoice};
use crate::scan::RootChoice;
use crate::text::sanitize;

const PROMPT: TextArg = TextArg {
    noun: "first task",
    usage: "give --prompt TEXT or --prompt-file FILE",
};

fn print(v: &Value, json: bool, lines: impl FnOnce(&Value)) {
    if json {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string_pretty(v).unwrap_or_default()
        ));
    } else {
        lines(v);
    }
}

pub(crate) fn run_init(args: &InitArgs) -> InitExit {
    let req = InitRequest {
        root: args.root.clone().unwrap_or_else(|| PathBuf::from(".")),
        name: args.name.clone(),
        description: args.description.clone(),
        multiplexer: args.multiplexer.as_deref().and_then(MuxChoice::parse),
        pi_program: args.pi.clone(),
        system_config: args.config.as_deref().map(crate::paths::absolute),
        data_root: crate::cmd::options::data_root(args.config.as_deref())
            .ok()
            .map(|c| c.data_root),
        detach: args.detach,
    };
    let created = match init::init(&req) {
        Ok(c) => c,
        Err((exit, why)) => {
            eprintln!("intercom-pane: init: {}", sanitize(&why));
            return exit;
        }
    };
    if let Some(w) = &created.warning {
        eprintln!("intercom-pane: init: {}", sanitize(w));
    }
    print(&created.to_json(), args.json, |_| {
        crate::cmd::out(format_args!(
            "created {} (coordinator {}, session {})",
            sanitize(&created.config.display().to_string()),
            sanitize(&args.name),
            created.session_id
        ));
        let where_ = match &created.launch {
            Launch::InPane { .. } => "in this pane",
            Launch::NewTmuxSession { .. } => "in a new tmux session",
            Launch::DetachedTmuxSession { .. } => "in a new detached tmux session",
        };
        let verb = if args.start { "starting" } else { "start" };
        crate::cmd::out(format_args!("{verb} the coordinator's pi {where_}:"));
        crate::cmd::out(format_args!("  {}", sanitize(&created.command_line())));
    });
    if !args.start {
        return InitExit::Created;
    }
    let e = match &created.launch {
        Launch::InPane { argv, env, .. } => {
            use std::os::unix::process::CommandExt;
            let (prog, rest) = argv
                .split_first()
                .map_or(("pi", &[][..]), |(p, r)| (p.as_str(), r));
            std::process::Command::new(prog)
                .args(rest)
                .current_dir(&created.root)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .exec()
        }
        Launch::DetachedTmuxSession {
            session,
            args: words,
        } => {
            return start_detached(&created, &req, session, words, args.json);
        }
        Launch::NewTmuxSession { args } => {
            if let Err(e) = std::env::set_current_dir(&created.root) {
                eprintln!("intercom-pane: init --start: {e}");
                return InitExit::Failed;
            }
            crate::mux::tmux::exec_new_session(args)
        }
    };
    eprintln!("intercom-pane: init --start: could not start: {e} (the roster is written; run the command above)");
    InitExit::Failed
}

/// `--start --detach`: the session started, then the wait for the coordinator's registration
/// (the next command, `spawn`, opens its workers beside that pane).
fn start_detached(
    created: &init::Created,
    req: &InitRequest,
    session: &str,
    words: &[String],
    json: bool,
) -> InitExit {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    if let Err(e) = crate::mux::tmux::new_session_detached(words, &created.root, deadline) {
        eprintln!(
            "intercom-pane: init --start: tmux did not start the session {session}: {} (the roster is written; run the command above)",
            sanitize(&e.to_string())
        );
        return InitExit::Failed;
    }
    let Some(data_root) = &req.data_root else {
        eprintln!("intercom-pane: init --start: tmux session {session} started; the data root is unknown, so its registration was not waited for");
        return InitExit::Created;
    };
    if !json {
        crate::cmd::out(format_args!(
            "waiting for the coordinator's pi to register (at most {} s)",
            init::DETACH_WAIT.as_secs()
        ));
    }
    if init::wait_registered(created, data_root) {
        if !json {
            crate::cmd::out(format_args!(
                "the coordinator's pi runs in tmux session {session}: `intercom-pane spawn NAME` adds workers beside it; `tmux attach -t {session}` goes there"
            ));
        }
        return InitExit::Created;
    }
    eprintln!(
        "intercom-pane: init --start: the coordinator's pi in tmux session {session} did not register within {} s: look at that session (is pi on PATH, the pi extension installed? `intercom-pane doctor` checks both)",
        init::DETACH_WAIT.as_secs()
    );
    InitExit::Failed
}

pub(crate) fn run_spawn(args: &SpawnArgs) -> SpawnExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("intercom-pane: spawn: {e}");
            return SpawnExit::Usage;
        }
    };
    let prompt = match (&args.prompt, &args.prompt_file) {
        (None, None) => None,
        (p, f) => match text_input::read_text(PROMPT, p.as_deref(), f.as_deref(), std::io::stdin())
        {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("intercom-pane: spawn: {e}");
                return SpawnExit::Usage;
            }
        },
    };
    let folder = match (&args.dir, &args.worktree) {
        (Some(d), _) => Folder::Dir(d.clone()),
        (None, Some(b)) if b.is_empty() => Folder::Worktree(None),
        (None, Some(b)) => Folder::Worktree(Some(b.clone())),
        (None, None) => Folder::Root,
    };
    let budget = match spawn_budget(args) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("intercom-pane: spawn: {e}");
            return SpawnExit::Usage;
        }
    };
    let progress = crate::cmd::progress("spawn", args.json);
    let req = SpawnRequest {
        name: args.name.clone(),
        folder,
        description: args.description.clone(),
        prompt,
        model: args.model.clone(),
        thinking: args.thinking.clone(),
        extra_args: args.pi_args.clone(),
        budget,
        wait_secs: args.wait_secs,
        pi_program: args.pi.clone(),
        system_config: args.src.config.as_deref().map(crate::paths::absolute),
        scan: &r.opts,
        clock: r.clock.as_ref(),
        progress: &|l: &str| progress.line(l),
        by: crate::evidence::sessions::timeline::Actor::Cli,
    };
    let end = spawn::spawn(&req);
    progress.finish();
    let report = serde_json::to_value(&end.report).unwrap_or_default();
    record_spawn_budget(&r, budget.as_ref(), &report);
    print(&report, args.json, |v| {
        receipt_lines(
            "spawn",
            v,
            &["pane", "sidebar", "cwd", "projectDirectory", "launchSpec"],
        )
    });
    if let Some(p) = report.get("prompt").filter(|p| !p.is_null() && !args.json) {
        crate::cmd::out(format_args!(
            "  first task: {} via {}{}",
            sanitize(p["outcome"].as_str().unwrap_or("?")),
            sanitize(p["transport"].as_str().unwrap_or("-")),
            p["reason"]
                .as_str()
                .map(|r| format!(" ({})", sanitize(r)))
                .unwrap_or_default()
        ));
    }
    end.exit
}

/// The human receipt: result and worker, each check, the named fields, the reason.
fn receipt_lines(cmd: &str, v: &Value, fields: &[&str]) {
    let s = |k: &str| sanitize(v[k].as_str().unwrap_or(""));
    if s("result") == "refused" {
        eprintln!("intercom-pane: {cmd}: {}", s("reason"));
        return;
    }
    crate::cmd::out(format_args!("{}: {}", s("result"), s("worker")));
    for c in v["checks"].as_array().into_iter().flatten() {
        crate::cmd::out(format_args!("  ok  {}", sanitize(c.as_str().unwrap_or(""))));
    }
    for k in fields.iter().chain(&["reason"]) {
        match &v[*k] {
            Value::String(x) => crate::cmd::out(format_args!("  {k}: {}", sanitize(x))),
            Value::Null => {}
            other => crate::cmd::out(format_args!("  {k}: {}", sanitize(&other.to_string()))),
        }
    }
    if let Some(argv) = v.get("argv") {
        crate::cmd::out(format_args!("  launch: {}", sanitize(&argv.to_string())));
    }
}

/// `--budget-usd` and `--budget-tokens` as a budget, refused with the reason before anything
/// is written.
fn spawn_budget(
    args: &SpawnArgs,
) -> Result<Option<crate::budget::spec::Budget>, crate::budget::spec::BudgetError> {
    use crate::budget::spec;
    if args.budget_usd.is_none() && args.budget_tokens.is_none() {
        return Ok(None);
    }
    Ok(Some(spec::Budget {
        cost_micros: args
            .budget_usd
            .map(|v| spec::usd("costUsd", v))
            .transpose()?,
        tokens: args
            .budget_tokens
            .map(|v| spec::tokens("tokens", v))
            .transpose()?,
        soft_percent: spec::DEFAULT_SOFT_PERCENT,
        ..spec::Budget::default()
    }))
}

/// The budget spawn wrote into the new entry, recorded as its first change.
fn record_spawn_budget(
    r: &options::Resolved,
    budget: Option<&crate::budget::spec::Budget>,
    report: &Value,
) {
    let (Some(b), Some(id)) = (budget, report["sessionId"].as_str()) else {
        return;
    };
    let root = match &r.opts.root {
        RootChoice::Exact(p) => Some(p.clone()),
        RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        RootChoice::Skip => None,
    };
    let Some(root) = root else { return };
    let root = crate::paths::absolute(&root);
    // Only when the entry holds it (a spawn refused before writing its entry changed nothing).
    let written = config::load(&root)
        .ok()
        .and_then(|c| c.find_by_session(id).and_then(|a| a.budget))
        == Some(*b);
    if written {
        let change = crate::budget::record::Change {
            at: r.clock.now_ms(),
            by: "spawn".into(),
            from: Value::Null,
            to: b.to_json(),
        };
        if let Err(e) = crate::budget::record::append(&root, id, &change) {
            eprintln!("intercom-pane: spawn: the budget was set, but not recorded: {e}");
        }
    }
}

pub(crate) fn run_retire(args: &RetireArgs) -> RetireExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("intercom-pane: retire: {e}");
            return RetireExit::Usage;
        }
    };
    let root = match &r.opts.root {
        RootChoice::Exact(p) => Some(p.clone()),
        RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        RootChoice::Skip => None,
    };
    let Some(root) = root else {
        eprintln!(
            "intercom-pane: retire: {}",
            crate::actions::no_roster_at(&r.opts.root)
        );
        return RetireExit::Usage;
    };
    let end = retire::retire(&RetireRequest {
        root: crate::paths::absolute(&root),
        name: args.name.clone(),
        remove_worktree: args.remove_worktree,
        discard: args.discard,
        data_root: r.opts.data_root.clone(),
        clock: r.clock.as_ref(),
    });
    let report = serde_json::to_value(&end.report).unwrap_or_default();
    print(&report, args.json, |v| {
        receipt_lines("retire", v, &["sessionId", "archive"]);
        if let Some(w) = v.get("worktree").filter(|w| !w.is_null()) {
            crate::cmd::out(format_args!(
                "  worktree: {}",
                sanitize(w["detail"].as_str().unwrap_or(""))
            ));
        }
    });
    end.exit
}

/// The sidebar's spawner: the command's own guarded `spawn`, with the monitor's sources.
pub(crate) struct CommandSpawner {
    pub opts: crate::scan::ScanOptions,
    /// The program a spawn starts (`pi`; the demo's stand-in in the demo).
    pub pi_program: String,
    /// Why a worktree cannot be asked for here (the demo: no repository, no `git`).
    pub no_worktree: Option<&'static str>,
    pub system_config: Option<PathBuf>,
    pub clock: std::sync::Arc<dyn crate::clock::Clock>,
}

impl crate::ui::ports::Spawner for CommandSpawner {
    fn unavailable_reason(&self) -> Option<String> {
        matches!(self.opts.root, RootChoice::Skip)
            .then(|| "no Intercom roster (run `intercom-pane init`)".to_string())
    }

    fn spawn(
        &self,
        ask: &crate::ui::ports::SpawnAsk,
        stage: &dyn Fn(&str),
    ) -> crate::ui::ports::WorkerOutcome {
        if let (true, Some(why)) = (ask.worktree, self.no_worktree) {
            return crate::ui::ports::WorkerOutcome {
                ok: false,
                result: "refused".into(),
                detail: why.into(),
            };
        }
        let req = SpawnRequest {
            name: ask.name.clone(),
            folder: if ask.worktree {
                Folder::Worktree(None)
            } else {
                Folder::Root
            },
            description: None,
            prompt: ask.prompt.clone(),
            model: None,
            thinking: None,
            extra_args: Vec::new(),
            budget: None,
            wait_secs: 60,
            pi_program: self.pi_program.clone(),
            system_config: self.system_config.clone(),
            scan: &self.opts,
            clock: self.clock.as_ref(),
            progress: stage,
            by: crate::evidence::sessions::timeline::Actor::Sidebar,
        };
        let end = spawn::spawn(&req);
        let detail = match &end.report.reason {
            Some(r) => sanitize(r),
            None => format!(
                "running in {}",
                sanitize(end.report.pane.as_deref().unwrap_or(""))
            ),
        };
        crate::ui::ports::WorkerOutcome {
            ok: end.exit == SpawnExit::Spawned,
            result: end.report.result.as_str().to_string(),
            detail,
        }
    }
}
