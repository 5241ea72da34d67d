//! `intercom-pane completions <shell>` and `intercom-pane man`: generated from the same clap
//! definitions as the parser, so they never fall behind the flags.

use std::path::Path;

use crate::cli::{CompletionsArgs, ManArgs, NamesArgs};
use crate::cmd::exit::DocsExit;
use crate::store;

fn written(ok: bool) -> DocsExit {
    if ok {
        DocsExit::Written
    } else {
        DocsExit::Failed
    }
}

pub(crate) fn completions(args: &CompletionsArgs) -> DocsExit {
    let mut cmd = crate::cli::full_command();
    // Into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "intercom-pane", &mut script);
    let script = super::completion_names::with_names(args.shell, script);
    written(crate::cmd::out_bytes(&script))
}

/// `intercom-pane names`: the roster's agent names, one per line, for the shell completions.
/// A name a line cannot hold (a control character) is left out; no roster prints nothing.
pub(crate) fn names(args: &NamesArgs) -> DocsExit {
    let found = match &args.root {
        Some(r) => crate::evidence::config::load(r).ok(),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| crate::evidence::config::discover(&d).ok().flatten()),
    };
    let mut out = String::new();
    for a in found.iter().flat_map(|c| c.agents.iter()) {
        if !a.name.is_empty() && !a.name.chars().any(char::is_control) {
            out.push_str(&a.name);
            out.push('\n');
        }
    }
    written(crate::cmd::out_bytes(out.as_bytes()))
}

fn render(cmd: clap::Command) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    Ok(out)
}

/// Every visible page: the main one, then `intercom-pane-<command>` for each command.
fn pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let top = crate::cli::full_command();
    let mut pages = vec![("intercom-pane.1".to_string(), render(top.clone())?)];
    // The tree is built: clap's own `help` command is in it, and has no page of its own.
    for sub in top
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        let name = format!("intercom-pane-{}", sub.get_name());
        // The page is named `intercom-pane-<command>` (as man looks it up); its SYNOPSIS shows
        // the command as typed: `intercom-pane <command>`.
        let page = sub
            .clone()
            .display_name(name.clone())
            .bin_name(format!("intercom-pane {}", sub.get_name()));
        pages.push((format!("{name}.1"), render(page)?));
    }
    Ok(pages)
}

pub(crate) fn man(args: &ManArgs) -> DocsExit {
    let pages = match pages() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("intercom-pane: man: {e}");
            return DocsExit::Failed;
        }
    };
    let Some(dir) = &args.out_dir else {
        let main = pages.first().map(|p| p.1.as_slice()).unwrap_or_default();
        return written(crate::cmd::out_bytes(main));
    };
    // A fresh account has no man folder yet.
    if let Err(e) = store::create_dir_all_private(dir) {
        eprintln!("intercom-pane: man: {e}");
        return DocsExit::Failed;
    }
    for (file, bytes) in &pages {
        if let Err(e) = store::write_atomic_derived(&Path::new(dir).join(file), bytes) {
            eprintln!("intercom-pane: man: {e}");
            return DocsExit::Failed;
        }
    }
    crate::cmd::out(format_args!(
        "wrote {} pages to {}",
        pages.len(),
        dir.display()
    ));
    DocsExit::Written
}
