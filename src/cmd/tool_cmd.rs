//! `intercom-pane tool (check | TOOL) --pi-pid P [--args JSON]`: the coordinator's pi tools, as
//! the shipped extension runs them. Every answer is one JSON line on stdout, every string in it
//! sanitized; the close prints its acceptance first and its ending when the job ends.

use serde::Serialize;
use serde_json::Value;

use crate::cli::ToolArgs;
use crate::cmd::options;
use crate::scan::RootChoice;
use crate::tools::{self, answer, caller, Ctx, Refused, Tool, ToolExit};

/// Longest answer line; a longer one (none is expected) is replaced by an error.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// The line printed instead of an answer over `MAX_LINE_BYTES`.
#[derive(Serialize)]
struct TooLong {
    error: String,
}

/// `tool check`'s answer: the caller is the coordinator's pi, and the tools it has.
#[derive(Serialize)]
struct Checked<'a> {
    coordinator: bool,
    name: &'a str,
    root: &'a std::path::Path,
    tools: Vec<Value>,
}

fn print(v: &Value) {
    let line = crate::views::json::to_string(&tools::sanitized(v.clone())).unwrap_or_default();
    if line.len() > MAX_LINE_BYTES {
        let too_long = TooLong {
            error: format!("the answer is over {MAX_LINE_BYTES} bytes; not shown"),
        };
        let line = serde_json::to_string(&too_long).unwrap_or_default();
        crate::cmd::out(format_args!("{line}"));
    } else {
        crate::cmd::out(format_args!("{line}"));
    }
}

fn refuse(args: &ToolArgs, r: &Refused) -> ToolExit {
    print(&answer(r));
    logged(args, ToolExit::Refused, Some(&r.refused))
}

fn refused(args: &ToolArgs, why: impl std::fmt::Display) -> ToolExit {
    refuse(args, &Refused::because(why))
}

/// The call in the opt-in log (a forged call shows there too), and its exit.
fn logged(args: &ToolArgs, exit: ToolExit, refused: Option<&str>) -> ToolExit {
    crate::log::write(&crate::log::ToolCall {
        tool: crate::text::clip(&crate::text::sanitize(&args.tool), 64),
        pi_pid: args.pi_pid,
        exit: exit.code(),
        refused,
    });
    exit
}

pub(crate) fn run(args: &ToolArgs) -> ToolExit {
    // Known names first: nothing about the caller is looked at for a call that cannot run.
    let tool = match args.tool.as_str() {
        "check" => None,
        name => match Tool::from_name(name) {
            Some(t) => Some(t),
            None => {
                return refused(
                    args,
                    format!("no tool named {:?}", crate::text::sanitize(name)),
                )
            }
        },
    };
    let mut r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refused(args, e),
    };
    let coordinator = match caller::verify(args.pi_pid, &r.opts.data_root) {
        Ok(c) => c,
        Err(e) => {
            let r = Refused {
                coordinator: Some(false),
                code: Some(e.code()),
                refused: e.to_string(),
            };
            return refuse(args, &r);
        }
    };
    let Some(tool) = tool else {
        print(&answer(&Checked {
            coordinator: true,
            name: &coordinator.name,
            root: &coordinator.root,
            tools: tools::definitions(),
        }));
        return ToolExit::Done;
    };
    let call = match tools::parse(tool, &args.args) {
        Ok(c) => c,
        Err(e) => return refused(args, e),
    };
    // The roster the caller was verified against, whatever else the flags say.
    r.opts.root = RootChoice::Exact(coordinator.root.clone());
    let system_config = args.src.config.as_ref().map(|c| {
        std::env::current_dir()
            .map(|d| d.join(c))
            .unwrap_or_else(|_| c.clone())
    });
    let ctx = Ctx {
        coordinator: &coordinator,
        opts: &r.opts,
        clock: r.clock.as_ref(),
        system_config,
        early: &print,
    };
    let end = tools::run(call, &ctx);
    print(&end.result);
    let refused = end.result.get("refused").and_then(Value::as_str);
    logged(args, end.exit, refused)
}
