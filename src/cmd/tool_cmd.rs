//! `intercom-pane tool (check | TOOL) --pi-pid P [--args JSON]`: the coordinator's pi tools, as
//! the shipped extension runs them. Every answer is one JSON line on stdout, every string in it
//! sanitized; the close prints its acceptance first and its ending when the job ends.

use serde_json::{json, Value};

use crate::cli::ToolArgs;
use crate::cmd::options;
use crate::scan::RootChoice;
use crate::tools::{self, caller, Ctx, Tool, ToolExit};

/// Longest answer line; a longer one (none is expected) is replaced by an error.
const MAX_LINE_BYTES: usize = 64 * 1024;

fn print(v: &Value) {
    let line = crate::views::json::to_string(&tools::sanitized(v.clone())).unwrap_or_default();
    if line.len() > MAX_LINE_BYTES {
        crate::cmd::out(format_args!(
            "{}",
            json!({"error": format!("the answer is over {MAX_LINE_BYTES} bytes; not shown")})
        ));
    } else {
        crate::cmd::out(format_args!("{line}"));
    }
}

fn refused(args: &ToolArgs, why: impl std::fmt::Display) -> ToolExit {
    let v = json!({"refused": why.to_string()});
    print(&v);
    logged(args, ToolExit::Refused, &v)
}

/// The call in the opt-in log (a forged call shows there too), and its exit.
fn logged(args: &ToolArgs, exit: ToolExit, answer: &Value) -> ToolExit {
    crate::log::write(&crate::log::ToolCall {
        tool: crate::text::clip(&crate::text::sanitize(&args.tool), 64),
        pi_pid: args.pi_pid,
        exit: exit.code(),
        refused: answer.get("refused"),
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
            let v = json!({"coordinator": false, "code": e.code(), "refused": e.to_string()});
            print(&v);
            return logged(args, ToolExit::Refused, &v);
        }
    };
    let Some(tool) = tool else {
        print(&json!({"coordinator": true, "name": coordinator.name,
            "root": coordinator.root, "tools": tools::definitions()}));
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
    logged(args, end.exit, &end.result)
}
