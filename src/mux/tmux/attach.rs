//! A local window showing a pane of another host (docs/behaviour.md §12, jump): one window per
//! (host, server, pane), tagged with the window option `@intercom-pane-jump`, opened beside the
//! caller's pane and made current, or selected again when it is still open. The window runs
//! `ssh -t …` as an argv (never through a shell here); its name is data, so it goes through
//! `literal`; the tag is built from checked parts only (a host name, a hash, `%N`).

use std::time::Instant;

use super::args::{with_env_and_argv, Args};
use super::literal::{self, PaneId};
use super::{Tmux, SMALL_CAP};
use crate::mux::{ErrorCode, Multiplexer, MuxError};

/// The window option that tags a jump window.
const TAG_OPTION: &str = "@intercom-pane-jump";

/// A tag holds only what `tag_for` makes: letters, digits, `-`, `_`, `/`, `%`.
fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 200
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_/%".contains(c))
}

/// Which window (if any) carries `tag`, from `list-windows -a -F '#{window_id}|#{TAG}'`.
fn window_with(out: &[u8], tag: &str) -> Option<String> {
    String::from_utf8_lossy(out).lines().find_map(|l| {
        let (id, t) = l.split_once('|')?;
        (t == tag && id.starts_with('@') && id[1..].bytes().all(|b| b.is_ascii_digit()))
            .then(|| id.to_string())
    })
}

impl Tmux {
    /// Select the window tagged `tag`, or open one beside `beside` (the caller's pane) running
    /// `argv`, named `name`, and tag it. Returns the window id and whether it was reused.
    pub fn open_tagged_window(
        &self,
        beside: &str,
        tag: &str,
        name: &str,
        argv: &[String],
        deadline: Instant,
    ) -> Result<(String, bool), MuxError> {
        if !valid_tag(tag) || argv.is_empty() || argv.iter().any(|a| a.contains('\0')) {
            return Err(MuxError::new(ErrorCode::BadRequest, "invalid jump window"));
        }
        let beside = PaneId::parse(beside)?;
        let list = Args::new("list-windows")
            .arg("-a")
            .arg("-F")
            .arg(&format!("#{{window_id}}|#{{{TAG_OPTION}}}"));
        let out = self.run(list, None, deadline, SMALL_CAP)?;
        if let Some(w) = window_with(&out.stdout, tag) {
            self.run(
                Args::new("select-window").arg("-t").arg(&w),
                None,
                deadline,
                SMALL_CAP,
            )?;
            return Ok((w, true));
        }
        let here = self.find_pane(beside.as_str(), deadline)?.ok_or_else(|| {
            MuxError::new(ErrorCode::PaneNotFound, "the pane to open beside is gone")
        })?;
        let args = Args::new("new-window")
            .arg("-a")
            .arg("-t")
            .arg(&here.window_id)
            .arg("-n")
            .arg(&literal::window_name(name)?)
            .arg("-P")
            .arg("-F")
            .arg("#{window_id}");
        let args = with_env_and_argv(args, &[], argv)?;
        let out = self.run(args, None, deadline, SMALL_CAP)?;
        let w = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !(w.starts_with('@') && w.len() > 1 && w[1..].bytes().all(|b| b.is_ascii_digit())) {
            return Err(MuxError::new(
                ErrorCode::BadReply,
                "the new window's id was not printed",
            ));
        }
        let set = Args::new("set-option")
            .arg("-w")
            .arg("-t")
            .arg(&w)
            .arg(TAG_OPTION)
            .arg(tag);
        self.run(set, None, deadline, SMALL_CAP)?;
        Ok((w, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_listing() {
        assert!(valid_tag("build/3f2a/%3"));
        for bad in ["", "a b", "a;b", "#(x)", "a|b", "a\nb"] {
            assert!(!valid_tag(bad), "{bad:?}");
        }
        let out = b"@1|\n@2|build/x/%3\n@x|build/x/%3\n";
        assert_eq!(window_with(out, "build/x/%3").as_deref(), Some("@2"));
        assert_eq!(window_with(out, "build/x/%4"), None);
    }
}
