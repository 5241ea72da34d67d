//! The caller's own flags, forwarded to the machine `--host` names: rebuilt from what clap
//! parsed, so a flag added to an action reaches the other side without anyone listing it here.
//! Not forwarded: positionals (each command places its own after `--`), the flags that say which
//! machine and which files (`SourceArgs`: the host's come from the hosts file), and what the
//! caller asks to keep here (a file read on this machine).

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args};

use crate::cli::SourceArgs;

/// Each flag the caller gave to `command` (the subcommand of `matches`), as words for the other
/// side: `--flag` for a switch, `--flag=VALUE` for a value (one word, so a value that starts with
/// `-` stays a value), in the order clap defines them. `keep_here` names ids not sent.
pub(crate) fn flags(matches: &ArgMatches, keep_here: &[&str]) -> Vec<String> {
    let Some((name, sub)) = matches.subcommand() else {
        return Vec::new();
    };
    let root = crate::cli::full_command();
    let Some(def) = root.find_subcommand(name) else {
        return Vec::new();
    };
    let source = SourceArgs::augment_args(clap::Command::new("source"));
    let is_source = |id: &str| source.get_arguments().any(|a| a.get_id() == id);
    let mut out = Vec::new();
    for arg in def.get_arguments() {
        let id = arg.get_id().as_str();
        if arg.is_positional() || is_source(id) || keep_here.contains(&id) {
            continue;
        }
        if sub.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(long) = arg.get_long() else {
            continue;
        };
        match arg.get_action() {
            ArgAction::SetTrue | ArgAction::SetFalse => out.push(format!("--{long}")),
            ArgAction::Count => {
                let n = sub.get_count(id);
                out.extend((0..n).map(|_| format!("--{long}")));
            }
            ArgAction::Set | ArgAction::Append => {
                let bare_allowed = arg.get_num_args().is_some_and(|r| r.min_values() == 0);
                for v in sub.get_raw(id).into_iter().flatten() {
                    let v = v.to_string_lossy();
                    if v.is_empty() && bare_allowed {
                        out.push(format!("--{long}"));
                    } else {
                        out.push(format!("--{long}={v}"));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands an action with `--host` runs on the other machine (`host_cmd::elsewhere`).
    const DELEGATED: [&str; 11] = [
        "reply",
        "close-worker",
        "resume-worker",
        "spawn",
        "retire",
        "review",
        "land",
        "board",
        "log",
        "explain",
        "seen",
    ];

    /// A value clap accepts for `arg`: one of its possible values, else a number (which every
    /// text and number flag here takes).
    fn sample(arg: &clap::Arg) -> String {
        arg.get_possible_values()
            .first()
            .map(|p| p.get_name().to_string())
            .unwrap_or_else(|| "7".into())
    }

    fn positionals(cmd: &clap::Command) -> Vec<String> {
        cmd.get_arguments()
            .filter(|a| a.is_positional() && a.is_required_set())
            .map(|a| match a.get_id().as_str() {
                "key" => "proj/W1".to_string(),
                _ => "W1".to_string(),
            })
            .collect()
    }

    #[test]
    fn every_flag_of_every_delegated_action_reaches_the_other_side() {
        let root = crate::cli::full_command();
        let source = SourceArgs::augment_args(clap::Command::new("source"));
        let mut checked = 0;
        for name in DELEGATED {
            let def = root.find_subcommand(name).expect(name);
            for arg in def.get_arguments() {
                let id = arg.get_id().as_str();
                let in_source = source.get_arguments().any(|a| a.get_id() == id);
                let Some(long) = arg.get_long() else { continue };
                if arg.is_positional() || in_source || matches!(id, "help") {
                    continue;
                }
                let word = match arg.get_action() {
                    ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count => {
                        format!("--{long}")
                    }
                    _ => format!("--{long}={}", sample(arg)),
                };
                let mut argv = vec!["intercom-pane".to_string(), name.to_string()];
                argv.extend(positionals(def));
                argv.extend(["--host".into(), "build".into()]);
                // A flag that needs another gets it (`--discard` needs `--remove-worktree`).
                if id == "discard" {
                    argv.push("--remove-worktree".into());
                }
                // And the command's required flags (`seen --last-activity`).
                for r in def.get_arguments() {
                    if r.is_required_set() && !r.is_positional() && r.get_id() != arg.get_id() {
                        let v = if r.get_id() == "last_activity" {
                            "2026-01-01T00:00:00Z".to_string()
                        } else {
                            sample(r)
                        };
                        argv.push(format!("--{}={v}", r.get_long().unwrap_or_default()));
                    }
                }
                argv.push(word.clone());
                let m = crate::cli::full_command()
                    .try_get_matches_from(&argv)
                    .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                let sent = flags(&m, &[]);
                assert!(sent.contains(&word), "{name} {word}: sent {sent:?}");
                assert!(
                    !sent.iter().any(|w| w.starts_with("--host")),
                    "{name}: --host sent: {sent:?}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 25, "only {checked} flags checked");
    }

    #[test]
    fn values_stay_one_word_and_what_stays_here_is_not_sent() {
        let m = crate::cli::full_command()
            .try_get_matches_from([
                "intercom-pane",
                "spawn",
                "W1",
                "--host",
                "build",
                "--description=-rf $(touch x)",
                "--prompt-file",
                "/tmp/here",
                "--worktree",
                "--",
                "--model",
                "m",
            ])
            .unwrap();
        let sent = flags(&m, &["prompt_file"]);
        assert_eq!(sent, ["--worktree", "--description=-rf $(touch x)"]);
    }
}
