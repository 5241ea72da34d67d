//! `intercom-pane init [--root DIR]`: a new roster with its coordinator (docs/behaviour.md §10).
//!
//! Creates `<root>/.pi-intercom/config.json` — version 1, the multiplexer it runs in, one
//! coordinator entry with a fresh session id and a free loopback port — only when there is none
//! (created whole or not at all, never replacing one made meanwhile), and says the exact command
//! that starts the coordinator's pi in that session. Inside a tmux or Herdr pane (by ancestry,
//! or `$TMUX` / `HERDR_ENV` set) that command is pi itself, run in the pane: never a
//! `tmux new-session`, so tmux is never nested by accident. Outside, it is a new tmux session.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::actions::{launch_spec, spawn};
use crate::evidence::config::MuxChoice;
use crate::exit_code::exit_enum;
use crate::fsguard;
use crate::mux::{self, MuxEnv, MuxKind};
use crate::paths;
use crate::store;

exit_enum! {
    /// The exit code of a run.
    InitExit {
        Created = 0,
        /// Writing failed, or `--start` could not start pi (`--detach`: or it did not register).
        Failed = 1,
        /// A bad flag or folder.
        Usage = 2,
        /// The root has a roster already: nothing changed.
        Exists = 3,
    }
}

pub(crate) struct InitRequest {
    pub root: PathBuf,
    pub name: String,
    pub description: String,
    /// `None`: the multiplexer this command runs in (tmux outside any).
    pub multiplexer: Option<MuxChoice>,
    pub pi_program: String,
    pub system_config: Option<PathBuf>,
    /// The data root: the rosters made here before, whose ports a new one avoids (`None`: none
    /// known; the port is only checked free).
    pub data_root: Option<PathBuf>,
    /// A new detached tmux session wherever this runs (`--detach`).
    pub detach: bool,
}

/// Where the coordinator's pi starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Launch {
    /// In the pane this command runs in (`kind` when its multiplexer is known by ancestry).
    InPane {
        kind: Option<MuxKind>,
        /// pi's argv (program first), run in the root with `env` added.
        argv: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// Outside any multiplexer: a new tmux session (the arguments after `tmux new-session`).
    NewTmuxSession { args: Vec<String> },
    /// `--detach`: a new detached tmux session on the person's server (`session`), its pane
    /// kept when pi exits (the arguments after `tmux new-session`, escaped for tmux).
    DetachedTmuxSession { session: String, args: Vec<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Created {
    pub root: PathBuf,
    pub config: PathBuf,
    pub session_id: String,
    pub multiplexer: MuxChoice,
    pub port: u16,
    pub launch: Launch,
    /// Something the person should know that did not stop the roster.
    pub warning: Option<String>,
}

impl Created {
    /// The command line to type, every word quoted for a POSIX shell.
    pub(crate) fn command_line(&self) -> String {
        let cd = format!("cd {}", mux::shell_quote(&self.root.to_string_lossy()));
        match &self.launch {
            Launch::InPane { argv, env, .. } => {
                let mut words: Vec<String> = env
                    .iter()
                    .map(|(k, v)| format!("{k}={}", mux::shell_quote(v)))
                    .collect();
                words.push(mux::shell_line(argv));
                format!("{cd} && {}", words.join(" "))
            }
            Launch::NewTmuxSession { args } | Launch::DetachedTmuxSession { args, .. } => {
                let mut all = vec!["tmux".to_string(), "new-session".into()];
                all.extend(args.iter().cloned());
                format!("{cd} && {}", mux::shell_line(&all))
            }
        }
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        let (place, argv) = match &self.launch {
            Launch::InPane { kind, argv, .. } => {
                (kind.map_or("pane", |k| k.name()).to_string(), argv.clone())
            }
            Launch::NewTmuxSession { args } | Launch::DetachedTmuxSession { args, .. } => {
                let mut a = vec!["tmux".to_string(), "new-session".into()];
                a.extend(args.iter().cloned());
                let place = if matches!(self.launch, Launch::DetachedTmuxSession { .. }) {
                    "detached_tmux_session"
                } else {
                    "new_tmux_session"
                };
                (place.to_string(), a)
            }
        };
        let created = CreatedJson {
            result: "created",
            root: &self.root,
            config: &self.config,
            session_id: &self.session_id,
            multiplexer: self.multiplexer.as_str(),
            port: self.port,
            start_in: place,
            argv,
            command: self.command_line(),
        };
        serde_json::to_value(created).unwrap_or_default()
    }
}

/// `init --json`'s report.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct CreatedJson<'a> {
    result: &'static str,
    root: &'a Path,
    config: &'a Path,
    session_id: &'a str,
    multiplexer: &'static str,
    port: u16,
    start_in: String,
    argv: Vec<String>,
    command: String,
}

/// Whether this command runs inside a multiplexer pane: by ancestry, else by the variables tmux
/// and Herdr set (a pane whose server cannot be asked still must not get a nested tmux).
fn inside() -> (bool, Option<MuxKind>) {
    let env = MuxEnv::from_process();
    let me = std::process::id() as i32;
    let deadline = Instant::now() + Duration::from_secs(3);
    if let Some(o) = mux::owning_multiplexer(me, &env, deadline) {
        return (true, Some(o.kind));
    }
    env.inside()
}

/// A tmux session name from the root's folder name: letters, digits, `-` and `_` only (tmux
/// expands `#` in names and changes `.` and `:`).
fn session_name(root: &Path) -> String {
    let base: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    if base.trim_matches('_').is_empty() {
        "coordinator".into()
    } else {
        format!("{base}-coordinator")
    }
}

pub(crate) fn init(req: &InitRequest) -> Result<Created, (InitExit, String)> {
    let usage = |m: String| (InitExit::Usage, m);
    let root = paths::absolute(&req.root);
    // A worker may not be called coordinator; the coordinator may.
    if req.name.to_lowercase() != "coordinator" {
        spawn::check_name(&req.name).map_err(|e| usage(format!("--name: {e}")))?;
    }
    if req.description.trim().is_empty() || req.description.chars().count() > 4096 {
        return Err(usage(
            "--description must be non-blank, at most 4096 characters".into(),
        ));
    }
    match fsguard::kind(&root) {
        Ok(fsguard::Kind::Dir) => {}
        _ => return Err(usage(format!("{} is not a folder", root.display()))),
    }
    let config = paths::config_file(&root);
    if !matches!(fsguard::kind(&config), Err(fsguard::FsError::NotFound)) {
        return Err((
            InitExit::Exists,
            format!(
                "{} exists: this root has a roster already; nothing changed",
                config.display()
            ),
        ));
    }
    let (in_pane, kind) = inside();
    if req.detach && req.multiplexer.is_some_and(|m| m != MuxChoice::Tmux) {
        return Err(usage(
            "--detach starts a tmux session: it goes with a tmux roster only".into(),
        ));
    }
    // The multiplexer this runs in, else tmux (always tmux with --detach).
    let multiplexer = req.multiplexer.filter(|_| !req.detach);
    let multiplexer = multiplexer.unwrap_or_else(|| {
        if req.detach {
            return MuxChoice::Tmux;
        }
        kind.and_then(|k| MuxChoice::parse(k.name()))
            .unwrap_or(MuxChoice::Tmux)
    });
    let session_id = uuid::Uuid::new_v4().to_string();
    // Another roster on this machine may have its agents' ports saved but not listening now.
    let used = req
        .data_root
        .as_deref()
        .map(super::rosters::ports_in_use)
        .unwrap_or_default();
    let port = spawn::free_port(&used).ok_or_else(|| {
        (
            InitExit::Failed,
            "no free loopback port for the coordinator".to_string(),
        )
    })?;
    let doc = crate::evidence::config::NewRoster {
        version: 1,
        multiplexer: multiplexer.as_str(),
        agents: vec![crate::evidence::config::NewAgent {
            session_id: &session_id,
            name: &req.name,
            coordinator: true,
            description: &req.description,
            port,
            project_directory: ".",
            budget: None,
        }],
    };
    // Intercom's own style: two-space indent, a final newline.
    let mut bytes =
        serde_json::to_vec_pretty(&doc).map_err(|e| (InitExit::Failed, e.to_string()))?;
    bytes.push(b'\n');
    let fail = |e: store::StoreError| (InitExit::Failed, e.to_string());
    store::ensure_dir(&root, &paths::state_dir(&root)).map_err(fail)?;
    if !store::create_shared_new(&config, &bytes).map_err(fail)? {
        return Err((
            InitExit::Exists,
            format!(
                "{} was created meanwhile; nothing changed",
                config.display()
            ),
        ));
    }
    // Only a later `init`'s choice of port depends on it: a failure to remember is said, and
    // is no reason to undo the roster.
    let warning = req
        .data_root
        .as_deref()
        .and_then(|d| super::rosters::remember(d, &root).err())
        .map(|e| {
            format!(
                "this roster is not in the list of rosters (a later init may pick its port): {e}"
            )
        });
    let pi = vec![
        req.pi_program.clone(),
        "--session-id".to_string(),
        session_id.clone(),
    ];
    let env: Vec<(String, String)> = launch_spec::current_env(req.system_config.as_deref())
        .into_iter()
        .filter(|(k, _)| k == "INTERCOM_PANE_CONFIG")
        .collect();
    let launch = if req.detach {
        detached(&session_name(&root), &env, pi)
    } else if in_pane {
        Launch::InPane {
            kind,
            argv: pi,
            env,
        }
    } else {
        Launch::NewTmuxSession {
            args: session_words(&["-s", &session_name(&root)], &env, pi),
        }
    };
    Ok(Created {
        root,
        config,
        session_id,
        multiplexer,
        port,
        launch,
        warning,
    })
}

/// `tmux new-session`'s words after its own: `FLAGS -- [env K=V…] pi …`, each escaped for
/// tmux — a word of the person's (a path, a program) ending in `;` must not end tmux's command.
fn session_words(flags: &[&str], env: &[(String, String)], pi: Vec<String>) -> Vec<String> {
    let mut words: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    words.push("--".into());
    if !env.is_empty() {
        words.push("env".into());
        words.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    }
    words.extend(pi);
    words
        .iter()
        .map(|w| crate::mux::tmux::escape_arg(w))
        .collect()
}

/// `tmux new-session -d -s NAME -- /bin/sh -c KEEPER … [env K=V…] pi …`, then `remain-on-exit`
/// on its pane: when the coordinator's pi exits, its pane stays under the sidebar and `tmux
/// respawn-pane` starts the same command in the same place.
fn detached(session: &str, env: &[(String, String)], pi: Vec<String>) -> Launch {
    let mut words = Vec::new();
    if !env.is_empty() {
        words.push("env".into());
        words.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    }
    words.extend(pi);
    let kept = crate::mux::tmux::kept_argv(&words);
    let mut args = session_words(&["-d", "-s", session], &[], kept);
    args.extend(crate::mux::tmux::keep_pane_words(session));
    Launch::DetachedTmuxSession {
        session: session.to_string(),
        args,
    }
}

/// How long `--detach` waits for the coordinator's pi to register.
pub(crate) const DETACH_WAIT: Duration = Duration::from_secs(60);

/// Wait (at most `DETACH_WAIT`) until the coordinator's pi registered its seat; whether it did.
pub(crate) fn wait_registered(created: &Created, data_root: &Path) -> bool {
    let end = Instant::now() + DETACH_WAIT;
    // Bounded by `end`: one look every 250 ms.
    loop {
        if crate::actions::resume::live::live_registration(
            &created.root,
            data_root,
            &created.session_id,
        )
        .is_some()
        {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detached_words_keep_a_semicolon_of_theirs_from_ending_the_command() {
        let env = vec![("INTERCOM_PANE_CONFIG".to_string(), "/x/cfg;".to_string())];
        let Launch::DetachedTmuxSession { session, args } = detached(
            "proj-coordinator",
            &env,
            vec!["pi;".into(), "--session-id".into()],
        ) else {
            panic!("not detached");
        };
        assert_eq!(session, "proj-coordinator");
        assert_eq!(
            args,
            [
                "-d",
                "-s",
                "proj-coordinator",
                "--",
                "/bin/sh",
                "-c",
                crate::mux::tmux::KEEPER,
                "intercom-pane-coordinator",
                "env",
                "INTERCOM_PANE_CONFIG=/x/cfg\\;",
                "pi\\;",
                "--session-id",
                ";",
                "set-option",
                "-p",
                "-t",
                "=proj-coordinator:",
                "remain-on-exit",
                "on"
            ]
        );
    }

    #[test]
    fn attached_words_keep_a_semicolon_of_theirs_from_ending_the_command() {
        let env = vec![("INTERCOM_PANE_CONFIG".to_string(), "/x/cfg;".to_string())];
        let words = session_words(&["-s", "p-coordinator"], &env, vec!["/bin/pi;".into()]);
        assert_eq!(
            words,
            [
                "-s",
                "p-coordinator",
                "--",
                "env",
                "INTERCOM_PANE_CONFIG=/x/cfg\\;",
                "/bin/pi\\;"
            ]
        );
    }

    #[test]
    fn session_names_hold_nothing_tmux_would_expand() {
        assert_eq!(
            session_name(Path::new("/x/my proj#1")),
            "my_proj_1-coordinator"
        );
        assert_eq!(session_name(Path::new("/")), "coordinator");
        assert_eq!(session_name(Path::new("/x/.:.")), "coordinator");
    }
}
