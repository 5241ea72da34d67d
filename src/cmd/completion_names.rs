//! Worker names in the shell completions: clap's scripts complete flags and commands only, so
//! each script gets a small addition that asks `intercom-pane names` (the roster found from the
//! current folder) when the word is the NAME of a command that takes one.
//!
//! Data is never code: a name is only ever a value in the shell — bash matches it with `[[ … ]]`
//! and quotes it with `printf %q` (never `compgen -W`, which expands what it is given), zsh
//! splits the output with `${(f)…}` and `compadd` quotes it, fish reads lines as words.

use clap_complete::Shell;

/// The commands whose first positional is a seat or worker NAME of the roster.
pub(crate) const NAMED: [&str; 11] = [
    "reply",
    "jump",
    "log",
    "close-worker",
    "resume-worker",
    "retire",
    "budget",
    "explain",
    "wait",
    "review",
    "land",
];

const BASH: &str = r#"
# Worker names (intercom-pane names: the roster found from the current folder).
_intercom_pane_with_names() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="${COMP_WORDS[1]}" n
    case " __NAMED__ " in
        *" $cmd "*)
            if [[ $COMP_CWORD -ge 2 && $cur != -* && ( $COMP_CWORD -eq 2 || $cmd == land ) ]]; then
                COMPREPLY=()
                while IFS= read -r n; do
                    [[ $n == "$cur"* ]] && COMPREPLY+=("$(printf '%q' "$n")")
                done < <(intercom-pane names 2>/dev/null)
                return 0
            fi
            ;;
    esac
    _intercom__pane "$@"
}
complete -F _intercom_pane_with_names -o bashdefault -o default intercom-pane
"#;

const FISH: &str = r#"
# Worker names (intercom-pane names: the roster found from the current folder).
complete -c intercom-pane -n "__fish_seen_subcommand_from __NAMED__" -f -a "(intercom-pane names 2>/dev/null)"
"#;

const ZSH_FN: &str = r#"
# Worker names (intercom-pane names: the roster found from the current folder).
(( $+functions[_intercom_pane_names] )) ||
_intercom_pane_names() {
    local -a names
    names=(${(f)"$(intercom-pane names 2>/dev/null)"})
    compadd -a names
}
"#;

/// `script` (clap's, for `shell`) with worker names added.
pub(crate) fn with_names(shell: Shell, script: Vec<u8>) -> Vec<u8> {
    let named = NAMED.join(" ");
    match shell {
        Shell::Bash => {
            let mut s = script;
            s.extend_from_slice(BASH.replace("__NAMED__", &named).as_bytes());
            s
        }
        Shell::Fish => {
            let mut s = script;
            s.extend_from_slice(FISH.replace("__NAMED__", &named).as_bytes());
            s
        }
        Shell::Zsh => zsh(script),
        _ => script,
    }
}

/// In each named command's `_arguments` block, its `:name` positional completes with
/// `_intercom_pane_names` (clap writes `_default`); the function goes after `#compdef`.
fn zsh(script: Vec<u8>) -> Vec<u8> {
    let Ok(text) = String::from_utf8(script.clone()) else {
        return script;
    };
    let mut out = String::with_capacity(text.len() + ZSH_FN.len());
    let mut block: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(cmd) = line.strip_prefix('(').and_then(|l| l.strip_suffix(')')) {
            block = NAMED.iter().find(|n| **n == cmd).copied();
        }
        let named_arg = block.is_some()
            && ["':name -- ", "'::name -- ", "'*::names -- "]
                .iter()
                .any(|p| line.starts_with(p))
            && line.ends_with(":_default' \\");
        if named_arg {
            out.push_str(&line.replace(":_default' \\", ":_intercom_pane_names' \\"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
        if i == 0 {
            out.push_str(ZSH_FN);
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command listed takes a NAME first; every command that does is listed (but `spawn`,
    /// whose NAME is a new one, and `seen`, whose key is `<project>/<agent>`).
    #[test]
    fn the_list_is_the_commands_that_take_a_roster_name() {
        let cli = crate::cli::full_command();
        let takes_name = |c: &clap::Command| {
            c.get_positionals()
                .next()
                .is_some_and(|a| a.get_id().as_str().starts_with("name"))
        };
        let mut found: Vec<&str> = cli
            .get_subcommands()
            .filter(|c| takes_name(c))
            .map(|c| c.get_name())
            .filter(|n| !["spawn", "seen"].contains(n))
            .collect();
        found.sort_unstable();
        let mut named = NAMED.to_vec();
        named.sort_unstable();
        assert_eq!(found, named);
    }

    #[test]
    fn zsh_completes_names_only_where_a_roster_name_goes() {
        let mut cmd = crate::cli::full_command();
        let mut raw = Vec::new();
        clap_complete::generate(Shell::Zsh, &mut cmd, "intercom-pane", &mut raw);
        let s = String::from_utf8(zsh(raw)).unwrap();
        assert!(s.starts_with("#compdef intercom-pane\n"), "{}", &s[..80]);
        assert!(s.contains("_intercom_pane_names() {"));
        let uses = s.matches(":_intercom_pane_names' \\").count();
        assert!(uses >= NAMED.len(), "{uses}");
        // spawn's NAME is a new name: no completion from the roster.
        let spawn = s.split("\n(spawn)\n").nth(1).unwrap();
        let spawn = &spawn[..spawn.find(";;").unwrap()];
        assert!(!spawn.contains("_intercom_pane_names"), "{spawn}");
    }
}
