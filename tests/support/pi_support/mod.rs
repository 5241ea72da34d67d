//! A stand-in for pi that `register` accepts for the reasons it accepts a real one: its
//! executable is a JavaScript runtime's name (`node`: a hard link of bash, so no Node is needed)
//! and its command line runs pi's entry script (`…/pi-coding-agent/dist/cli.js`, here a bash
//! script). Real pi is covered by `tests/real_pi/`.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::mux_support::program_named;
use crate::scan_support::Env;

/// The entry script: first it takes pi's process name, as pi's process title does (so `comm` is
/// `pi`); with an argument, run it as a script; else run each line read from stdin.
const CLI_JS: &str = "printf pi > /proc/$$/comm 2>/dev/null\n\
if [ $# -gt 0 ]; then eval \"$1\"; exit $?; fi\n\
while IFS= read -r line; do eval \"$line\"; done\n";

/// `(runtime, entry script)` of the stand-in, created under `dir`.
pub fn fake_pi_program(dir: &Path) -> (PathBuf, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let node = dir.join("node");
    if !node.exists() {
        program_named("/bin/bash", &node);
    }
    let cli = dir.join("lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
    std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
    // Written once, and by rename: a stand-in already started from it may be reading it, and a
    // second call that truncated it in place made that stand-in read nothing and exit (a seat
    // that never registered, seen once in CI).
    if std::fs::read(&cli).ok().as_deref() != Some(CLI_JS.as_bytes()) {
        let staging = cli.with_extension("js.new");
        std::fs::write(&staging, CLI_JS).unwrap();
        std::fs::rename(&staging, &cli).unwrap();
    }
    (node, cli)
}

/// The shell words of a pane that runs the stand-in under the name `pi` with `script` (which
/// may use `$$`, the stand-in's pid), then stays.
pub fn pi_pane_command(dir: &Path, script: &str) -> String {
    let (node, cli) = fake_pi_program(dir);
    format!(
        "exec -a pi {} {} '{script}; sleep 600; true'",
        node.display(),
        cli.display()
    )
}

/// The argv of a pane that runs the stand-in under the name `pi` with `script` (any text: it is
/// passed as one argument, never re-quoted), for `TmuxServer::start`.
pub fn pi_pane_argv(dir: &Path, script: &str) -> Vec<String> {
    pi_pane_argv_with(dir, &[], script)
}

/// `pi_pane_argv` with `NAME=value` pairs in the environment the stand-in starts with (what
/// `/proc/<pid>/environ` shows).
pub fn pi_pane_argv_with(dir: &Path, env: &[(&str, &str)], script: &str) -> Vec<String> {
    let (node, cli) = fake_pi_program(dir);
    let mut argv: Vec<String> = vec!["env".into()];
    argv.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
    argv.extend([
        "bash".into(),
        "-c".into(),
        "exec -a pi \"$@\"".into(),
        "pi".into(),
        node.display().to_string(),
        cli.display().to_string(),
        script.into(),
    ]);
    argv
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A running stand-in that runs commands on request, as its own children (so they are in its
/// process group and session, as the extension's spawn is).
pub struct FakePi {
    child: Child,
    stdin: ChildStdin,
    dir: PathBuf,
    n: u32,
}

impl FakePi {
    /// Start it with the environment `Env::run` gives the binary.
    pub fn start(env: &Env) -> FakePi {
        let dir = env.path(&format!("fake-pi-{}", rand_suffix()));
        let (node, cli) = fake_pi_program(&dir);
        let mut child = Command::new(node)
            .arg(cli)
            .current_dir(env.dir.path())
            .env_clear()
            .env("HOME", env.path("home"))
            .env("XDG_STATE_HOME", env.path("state"))
            .env("PATH", &env.path_env)
            .env("TMUX_TMPDIR", env.path("tmux-tmp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        FakePi {
            child,
            stdin,
            dir,
            n: 0,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Run `program args…` as a child of this pi; its output (≤ 60 s: a bound against hanging,
    /// generous for the kill loops some tests run through it on a loaded runner).
    /// `register --event session_start` for session `session_id` run by this pi from Herdr's
    /// pane `pane` of the server at `sock` (as the extension does at start), in `cwd`.
    pub fn register_in_herdr(
        &mut self,
        env: &Env,
        sock: &str,
        pane: &str,
        session_id: &str,
        cwd: &std::path::Path,
    ) -> Output {
        let pid = self.pid().to_string();
        let (config, cwd) = (env.system_config(), cwd.display().to_string());
        self.run(
            "/usr/bin/env",
            &[
                &format!("HERDR_SOCKET_PATH={sock}"),
                &format!("HERDR_PANE_ID={pane}"),
                env!("CARGO_BIN_EXE_intercom-pane"),
                "register",
                "--config",
                &config,
                "--event",
                "session_start",
                "--seq",
                "1",
                "--pi-pid",
                &pid,
                "--session-id",
                session_id,
                "--cwd",
                &cwd,
            ],
        )
    }

    pub fn run(&mut self, program: &str, args: &[&str]) -> Output {
        self.n += 1;
        let n = self.n;
        let d = self.dir.display();
        let words: Vec<String> = std::iter::once(program)
            .chain(args.iter().copied())
            .map(quote)
            .collect();
        writeln!(
            self.stdin,
            "{} >{d}/out.{n} 2>{d}/err.{n}; echo $? >{d}/rc.{n}",
            words.join(" ")
        )
        .unwrap();
        self.stdin.flush().unwrap();
        let rc = self.dir.join(format!("rc.{n}"));
        let end = Instant::now() + Duration::from_secs(60);
        // `echo` (a bash builtin: the PATH may be empty) writes the code and newline at once.
        let code: i32 = loop {
            let text = std::fs::read_to_string(&rc).unwrap_or_default();
            if text.ends_with('\n') {
                break text.trim().parse().unwrap();
            }
            assert!(Instant::now() < end, "the fake pi ran nothing");
            std::thread::sleep(Duration::from_millis(10));
        };
        use std::os::unix::process::ExitStatusExt;
        Output {
            status: std::process::ExitStatus::from_raw(code << 8),
            stdout: std::fs::read(self.dir.join(format!("out.{n}"))).unwrap(),
            stderr: std::fs::read(self.dir.join(format!("err.{n}"))).unwrap(),
        }
    }

    /// Move this pi to `dir` (its real folder, as `/proc/<pid>/cwd` shows it).
    pub fn cd(&mut self, dir: &str) {
        let o = self.run("cd", &[dir]);
        assert!(o.status.success(), "cd {dir}: {o:?}");
    }

    /// `intercom-pane register --config <system config> args…`, run by this pi. A `--cwd` given
    /// that is a folder is where this pi runs (it moves there first): `register` records pi's
    /// real folder and refuses a `--cwd` that is not it.
    pub fn register(&mut self, env: &Env, args: &[&str]) -> Output {
        if let Some(i) = args.iter().position(|a| *a == "--cwd") {
            if let Some(dir) = args.get(i + 1).filter(|d| Path::new(d).is_dir()) {
                self.cd(dir);
            }
        }
        let sys = env.system_config();
        let mut all = vec!["register", "--config", sys.as_str()];
        all.extend_from_slice(args);
        self.run(env!("CARGO_BIN_EXE_intercom-pane"), &all)
    }
}

impl Drop for FakePi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rand_suffix() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}
