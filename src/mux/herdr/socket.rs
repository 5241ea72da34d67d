//! Which Herdr server to talk to: exactly the rule of Herdr's own CLI (captures 171–184 of
//! `fixtures/herdr-0.8.2/behaviour`), inside a Herdr pane or not:
//! `$HERDR_SOCKET_PATH` wins; else `$HERDR_SESSION` names a session (`default`, or unset, is the
//! default session; an empty name is refused, as Herdr refuses it); the session's socket lives
//! under `$XDG_CONFIG_HOME/herdr` (else `~/.config/herdr`): `herdr.sock` for the default
//! session, `sessions/<name>/herdr.sock` for a named one.

use std::path::{Path, PathBuf};

use super::super::MuxEnv;

/// The default session's name.
const DEFAULT_SESSION: &str = "default";

/// A session name we will turn into a path: one plain path component.
fn valid_session(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.chars().any(char::is_control)
}

/// Herdr's config folder: `$XDG_CONFIG_HOME/herdr` when it is an absolute path (the XDG rule),
/// else `$HOME/.config/herdr`.
fn config_dir(env: &MuxEnv) -> Option<PathBuf> {
    let base = match env
        .xdg_config_home
        .as_deref()
        .filter(|x| x.starts_with('/'))
    {
        Some(x) => PathBuf::from(x),
        None => Path::new(env.home.as_deref()?).join(".config"),
    };
    Some(base.join("herdr"))
}

/// The socket Herdr's CLI would use in this environment; `None` when it would refuse (an empty
/// or unusable `HERDR_SESSION`) or when no config folder can be named.
pub(super) fn socket_from_env(env: &MuxEnv) -> Option<PathBuf> {
    if let Some(p) = &env.herdr_socket_path {
        return Some(PathBuf::from(p));
    }
    let dir = config_dir(env)?;
    match env.herdr_session.as_deref() {
        None | Some(DEFAULT_SESSION) => Some(dir.join("herdr.sock")),
        Some(name) if valid_session(name) => {
            Some(dir.join("sessions").join(name).join("herdr.sock"))
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> MuxEnv {
        MuxEnv::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        })
    }

    fn sock(vars: &[(&str, &str)]) -> Option<String> {
        socket_from_env(&env(vars)).map(|p| p.display().to_string())
    }

    /// The captured cases, with the captures' paths (171–184).
    #[test]
    fn herdr_cli_socket_rule() {
        let x = ("XDG_CONFIG_HOME", "/home/dev/.config-acc");
        let h = ("HOME", "/home/dev/capture/home");
        let acc = "/home/dev/.config-acc/herdr/sessions/acc/herdr.sock";
        let dflt = "/home/dev/.config-acc/herdr/herdr.sock";
        assert_eq!(
            sock(&[x, h, ("HERDR_SESSION", "acc")]).as_deref(),
            Some(acc)
        ); // 171
        assert_eq!(sock(&[x, h]).as_deref(), Some(dflt)); // 172
        assert_eq!(
            sock(&[x, h, ("HERDR_SESSION", "default")]).as_deref(),
            Some(dflt)
        ); // 176
        assert_eq!(sock(&[x, h, ("HERDR_SESSION", "")]), None); // 177: rc 2
        assert_eq!(
            sock(&[x, h, ("HERDR_SESSION", "other")]).as_deref(),
            Some("/home/dev/.config-acc/herdr/sessions/other/herdr.sock")
        ); // 178
        let over = ("HERDR_SOCKET_PATH", "/home/dev/capture/nonexistent.sock");
        assert_eq!(
            sock(&[x, h, ("HERDR_SESSION", "acc"), over]).as_deref(),
            Some("/home/dev/capture/nonexistent.sock")
        ); // 180–182
        assert_eq!(
            sock(&[h]).as_deref(),
            Some("/home/dev/capture/home/.config/herdr/herdr.sock")
        ); // 183
        assert_eq!(
            sock(&[h, ("HERDR_SESSION", "acc")]).as_deref(),
            Some("/home/dev/capture/home/.config/herdr/sessions/acc/herdr.sock")
        ); // 184
        assert_eq!(sock(&[h, ("HERDR_SESSION", "../x")]), None);
        assert_eq!(sock(&[]), None);
    }
}
