//! What a process runs: its executable, command line, environment and folder, and whether that
//! is pi (docs/interop.md §9).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fsguard;

/// Largest command line read (`/proc/<pid>/cmdline`).
const CMDLINE_CAP: u64 = 64 * 1024;
/// Executables that run pi's JavaScript entry script.
const JS_RUNTIMES: [&str; 3] = ["node", "nodejs", "bun"];

/// The executable a process runs (`/proc/<pid>/exe`), as the kernel names it.
pub(crate) fn exe(pid: i32) -> Option<std::path::PathBuf> {
    if pid <= 0 {
        return None;
    }
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The command line of a process (`/proc/<pid>/cmdline`), split at NULs, empty parts dropped
/// (a retitled process pads its title with NULs). Capped at 64 KiB.
pub(crate) fn cmdline(pid: i32) -> Option<Vec<String>> {
    if pid <= 0 {
        return None;
    }
    let bytes =
        fsguard::read_capped(Path::new(&format!("/proc/{pid}/cmdline")), CMDLINE_CAP).ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// Why a process is judged to be pi, or why not. Judged by what the kernel says it runs — its
/// executable (`/proc/<pid>/exe`) and command line — never by its name (`comm`, `argv[0]`,
/// `#{pane_current_command}`), which any program can take (`exec -a pi bash`).
///
/// pi is a JavaScript program: its executable is a JS runtime (`node`, `nodejs`, `bun`), and
/// either its command line still names pi's entry script (a path through a `pi-coding-agent`
/// folder, or a script named `pi`, as `#!/usr/bin/env node` runs it), or it is exactly `pi`:
/// pi 1.6.0 sets its process title, which replaces its whole command line with `pi`. A
/// standalone (compiled) pi binary is not recognized.
pub fn pi_verdict(exe: &Path, argv: &[String]) -> Result<(), NotPi> {
    js_runtime(exe)?;
    if argv.len() == 1 && argv[0] == "pi" {
        return Ok(());
    }
    // The script is the first argument after the runtime's own options.
    let script = argv.iter().skip(1).find(|a| !a.starts_with('-'));
    let is_pi_script = script.is_some_and(|s| {
        let p = Path::new(s);
        p.components()
            .any(|c| c.as_os_str().to_str() == Some("pi-coding-agent"))
            || p.file_name().and_then(|n| n.to_str()) == Some("pi")
    });
    if is_pi_script {
        Ok(())
    } else {
        Err(NotPi::NoPiScript)
    }
}

/// `Ok` when `exe` is a JavaScript runtime, the first half of `pi_verdict`.
fn js_runtime(exe: &Path) -> Result<(), NotPi> {
    let runtime = exe
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(" (deleted)"))
        .unwrap_or("");
    if JS_RUNTIMES.contains(&runtime) {
        Ok(())
    } else {
        Err(NotPi::Executable(exe.to_path_buf()))
    }
}

/// Why a process is not judged to be pi.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotPi {
    /// Its executable is not a JavaScript runtime.
    Executable(PathBuf),
    /// Its command line runs no pi entry script.
    NoPiScript,
    ExeUnreadable,
    CmdlineUnreadable,
}

impl std::fmt::Display for NotPi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotPi::Executable(exe) => write!(
                f,
                "its executable is {}, not a JavaScript runtime running pi",
                crate::text::sanitize(&exe.display().to_string())
            ),
            NotPi::NoPiScript => f.write_str("its command line runs no pi entry script"),
            NotPi::ExeUnreadable => f.write_str("its executable cannot be read"),
            NotPi::CmdlineUnreadable => f.write_str("its command line cannot be read"),
        }
    }
}

impl std::error::Error for NotPi {}

/// `pi_verdict` for a running process.
pub(crate) fn is_pi(pid: i32) -> Result<(), NotPi> {
    pi_command_line(pid).map(|_| ())
}

/// `is_pi`, with the command line it judged (the one read, not a second read that could differ).
pub(crate) fn pi_command_line(pid: i32) -> Result<Vec<String>, NotPi> {
    let exe = exe(pid).ok_or(NotPi::ExeUnreadable)?;
    // Most processes a pass checks (shells, editors) fail here: their command line is not read.
    js_runtime(&exe)?;
    let argv = cmdline(pid).ok_or(NotPi::CmdlineUnreadable)?;
    pi_verdict(&exe, &argv)?;
    Ok(argv)
}

/// Largest environment read (`/proc/<pid>/environ`).
const ENVIRON_CAP: u64 = 256 * 1024;

/// The variables `keys` of the environment a process started with (`/proc/<pid>/environ`;
/// later changes a program makes to its own environment are not there). A name set twice keeps
/// its first value, as `getenv` (and so pi) reads it. Only the asked names are kept: a pass
/// looks at three of a pi's variables, every pass, for every pi. `None` when unreadable
/// (another user's process).
pub(crate) fn environ(pid: i32, keys: &[&str]) -> Option<HashMap<String, String>> {
    if pid <= 0 {
        return None;
    }
    let bytes =
        fsguard::read_capped(Path::new(&format!("/proc/{pid}/environ")), ENVIRON_CAP).ok()?;
    Some(env_from(&bytes, keys))
}

/// `keys` of an environment block (`NAME=value` entries separated by NULs), first value kept.
fn env_from(bytes: &[u8], keys: &[&str]) -> HashMap<String, String> {
    let mut env = HashMap::new();
    for kv in bytes.split(|&b| b == 0) {
        let Some((k, v)) = std::str::from_utf8(kv)
            .ok()
            .and_then(|kv| kv.split_once('='))
        else {
            continue;
        };
        if keys.contains(&k) && !env.contains_key(k) {
            env.insert(k.to_string(), v.to_string());
        }
    }
    env
}

/// Most descriptors of one process looked at for an open session file.
const MAX_FDS: usize = 1024;

/// The `*.jsonl` files directly in `dir` that the process holds open now (`/proc/<pid>/fd`),
/// each once. Empty when the descriptors cannot be read (another user's process, gone).
pub(crate) fn open_session_files(pid: i32, dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if pid <= 0 {
        return out;
    }
    let fds = Path::new("/proc").join(pid.to_string()).join("fd");
    let Ok(list) = fsguard::list_dir(&fds, MAX_FDS) else {
        return out;
    };
    for e in &list.entries {
        let Ok(target) = std::fs::read_link(fds.join(&e.name)) else {
            continue;
        };
        if target.parent() == Some(dir)
            && target.extension().is_some_and(|x| x == "jsonl")
            && !out.contains(&target)
        {
            out.push(target);
        }
    }
    out
}

/// The current folder of a process (`/proc/<pid>/cwd`).
pub(crate) fn cwd(pid: i32) -> Option<std::path::PathBuf> {
    if pid <= 0 {
        return None;
    }
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{cmdline, cwd, environ, exe, pi_verdict};

    #[test]
    fn pi_is_judged_by_executable_and_command_line() {
        let v = |exe: &str, argv: &[&str]| {
            pi_verdict(
                Path::new(exe),
                &argv.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        // pi 1.6.0 after it set its title, and before (or an older pi).
        assert!(v("/usr/bin/node", &["pi"]).is_ok());
        assert!(v(
            "/opt/n/bin/node",
            &[
                "node",
                "/opt/lib/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js",
                "--continue"
            ]
        )
        .is_ok());
        assert!(v(
            "/usr/bin/node",
            &["node", "--no-warnings", "/usr/local/bin/pi"]
        )
        .is_ok());
        assert!(v(
            "/usr/local/bin/bun",
            &["bun", "/x/pi-coding-agent/dist/bun/cli.js"]
        )
        .is_ok());
        // Names are not enough.
        assert!(v("/usr/bin/bash", &["pi"]).is_err());
        assert!(v("/tmp/x/pi", &["pi"]).is_err());
        assert!(v("/usr/bin/node", &["pi", "-e", "1"]).is_err());
        assert!(v("/usr/bin/node", &["node", "/tmp/other.js"]).is_err());
        assert!(v("/usr/bin/node", &[]).is_err());
    }

    #[test]
    fn an_environment_keeps_the_asked_names_and_a_repeated_name_its_first_value() {
        let block = b"HOME=/h\0PI_CODING_AGENT_DIR=/a\0PATH=/bin\0PI_CODING_AGENT_DIR=/b\0=x\0junk\0\xff=1\0";
        let env = super::env_from(block, &["HOME", "PI_CODING_AGENT_DIR", "NOPE"]);
        assert_eq!(env.len(), 2);
        assert_eq!(env["HOME"], "/h");
        assert_eq!(env["PI_CODING_AGENT_DIR"], "/a");
    }

    #[test]
    fn own_environment_cwd_and_command_line_are_read() {
        let me = std::process::id() as i32;
        let env = environ(me, &["PATH", "NO_SUCH_VARIABLE_X"]).unwrap();
        assert_eq!(env.get("PATH").cloned(), std::env::var("PATH").ok());
        assert_eq!(env.len(), usize::from(std::env::var_os("PATH").is_some()));
        assert_eq!(cwd(me), std::env::current_dir().ok());
        assert!(!cmdline(me).unwrap().is_empty());
        assert!(exe(me).is_some());
    }
}
