//! tmux argv pieces: escaping a trailing `;`, versions, socket names, the env-and-program tail and the
//! compare-and-close condition. Pure: nothing here runs tmux.

use std::path::{Path, PathBuf};

use super::super::{valid_env_name, ErrorCode, MuxError, PaneIdentity};
use super::literal::PaneId;

/// Escape an argv element for tmux: a trailing `;` would end the command, so it becomes `\;`
/// (tmux turns `x\;` back into `x;`, and `x\\;` into `x\;`).
pub fn escape_arg(s: &str) -> String {
    match s.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => s.to_string(),
    }
}

/// Parse `tmux -V` output (`tmux 3.3a`, `tmux next-3.4`, `tmux 3.2-rc2`) to (major, minor).
pub(crate) fn parse_version(s: &str) -> Option<(u32, u32)> {
    parse_version_number(s.trim().strip_prefix("tmux ")?)
}

/// Parse a version as `#{version}` prints it (`3.3a`, `next-3.4`, `3.2-rc2`) to (major, minor).
pub(super) fn parse_version_number(v: &str) -> Option<(u32, u32)> {
    let v = v.strip_prefix("next-").unwrap_or(v);
    let (major, rest) = v.split_once('.')?;
    let major: u32 = major.parse().ok()?;
    let minor_digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let minor: u32 = minor_digits.parse().ok()?;
    Some((major, minor))
}

/// The one place a version is held against `MIN_VERSION`.
pub(super) fn supported(v: (u32, u32)) -> Result<(), MuxError> {
    if v < super::MIN_VERSION {
        return Err(MuxError::new(
            ErrorCode::TooOld,
            format!(
                "tmux {}.{} < {}.{}",
                v.0,
                v.1,
                super::MIN_VERSION.0,
                super::MIN_VERSION.1
            ),
        ));
    }
    Ok(())
}

/// Where `tmux -L name` puts its socket: `$TMUX_TMPDIR` (else `/tmp`) `/tmux-<uid>/<name>`.
pub(crate) fn socket_for_name(name: &str, tmux_tmpdir: Option<&str>) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return None;
    }
    let base = tmux_tmpdir.filter(|d| !d.is_empty()).unwrap_or("/tmp");
    let uid = nix::unistd::getuid().as_raw();
    Some(Path::new(base).join(format!("tmux-{uid}")).join(name))
}

/// An argv under construction: `arg` escapes.
#[derive(Debug, Default)]
pub(super) struct Args(pub(super) Vec<String>);

impl Args {
    pub(super) fn new(cmd: &str) -> Args {
        Args(vec![cmd.to_string()])
    }
    pub(super) fn arg(mut self, a: &str) -> Args {
        self.0.push(escape_arg(a));
        self
    }
}

/// `-e NAME=VALUE` for each variable, then `--` and the program: one argument is quoted for
/// the shell tmux hands it to, several are run directly.
pub(super) fn with_env_and_argv(
    mut args: Args,
    env: &[(String, String)],
    argv: &[String],
) -> Result<Args, MuxError> {
    for (k, v) in env {
        if !valid_env_name(k) || v.contains('\0') {
            return Err(MuxError::new(ErrorCode::BadRequest, "invalid env"));
        }
        args = args.arg("-e").arg(&format!("{k}={v}"));
    }
    args = args.arg("--");
    if let [only] = argv {
        // tmux hands a single argument to the shell as a command string; quote it so it is
        // run as one program, exactly as given.
        args = args.arg(&format!("exec {}", super::super::shell_quote(only)));
    } else {
        for a in argv {
            args = args.arg(a);
        }
    }
    Ok(args)
}

/// The `list-panes -f` filter for one pane (a `PaneId` holds nothing a format would read).
pub(super) fn filter_for(pane_id: &PaneId) -> String {
    format!("#{{==:#{{pane_id}},{pane_id}}}")
}

/// The compare-and-close condition: every field must equal the recorded one (tmux's `&&` takes
/// two operands, so the terms are nested).
pub(super) fn close_condition(
    e: &PaneIdentity,
    server_pid: i32,
    start_time: i64,
    pane_pid: i32,
) -> String {
    let terms = [
        format!("#{{==:#{{pid}},{server_pid}}}"),
        format!("#{{==:#{{start_time}},{start_time}}}"),
        format!("#{{==:#{{pane_id}},{}}}", e.pane_id),
        format!("#{{==:#{{session_id}},{}}}", e.session_id),
        format!("#{{==:#{{window_id}},{}}}", e.window_id),
        format!("#{{==:#{{pane_pid}},{pane_pid}}}"),
    ];
    let mut cond = terms[terms.len() - 1].clone();
    for t in terms.iter().rev().skip(1) {
        cond = format!("#{{&&:{t},{cond}}}");
    }
    cond
}

#[cfg(test)]
mod tests {
    use super::{close_condition, escape_arg, parse_version, PaneIdentity};
    use crate::mux::tmux::MIN_VERSION;
    use crate::mux::ServerIdentity;

    #[test]
    fn escapes_trailing_semicolon_only() {
        assert_eq!(escape_arg("a;b"), "a;b");
        assert_eq!(escape_arg("ab;"), "ab\\;");
        assert_eq!(escape_arg(";"), "\\;");
        assert_eq!(escape_arg("a\\;"), "a\\\\;");
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("tmux 3.3a\n"), Some((3, 3)));
        assert_eq!(parse_version("tmux 3.2"), Some((3, 2)));
        assert_eq!(parse_version("tmux next-3.4"), Some((3, 4)));
        assert_eq!(parse_version("tmux 3.2-rc2"), Some((3, 2)));
        assert_eq!(parse_version("tmux master"), None);
        assert!(parse_version("tmux 2.9a").unwrap() < MIN_VERSION);
    }

    #[test]
    fn condition_nests_every_term() {
        let e = PaneIdentity {
            server: ServerIdentity::Tmux {
                socket_path: "/s".into(),
                server_pid: 5,
                start_time: 6,
            },
            pane_id: "%3".into(),
            session_id: "$1".into(),
            window_id: "@2".into(),
            pane_pid: Some(77),
            terminal_id: None,
        };
        let c = close_condition(&e, 5, 6, 77);
        assert_eq!(c.matches("#{&&:").count(), 5);
        for part in [
            "#{pid},5}",
            "#{start_time},6}",
            ",%3}",
            ",$1}",
            ",@2}",
            "#{pane_pid},77}",
        ] {
            assert!(c.contains(part), "{part} in {c}");
        }
    }
}
