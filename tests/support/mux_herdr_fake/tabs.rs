//! The fake's `tab.create`, as Herdr 0.8.2's API schema (`31-api-schema.json`, protocol 20)
//! gives it: `TabCreateParams {cwd, env, focus (default false), label, workspace_id}` (no
//! workspace: the focused one), answered `{"type":"tab_created","tab":TabInfo,
//! "root_pane":PaneInfo}`. The new tab holds one fresh shell pane; without `focus:true` nothing
//! of the focus moves. Each workspace's first tab (`<ws>:t1`) stays implicit, as before; created
//! tabs are listed in the snapshot with a layout of their own.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{error, ok, pane_json, str_param, FakePane, State, AREA};

/// A tab made by `tab.create`.
#[derive(Debug, Clone)]
pub struct FakeTab {
    pub id: String,
    pub workspace_id: String,
    pub label: String,
    /// Its number in the workspace (the implicit first tab is 1).
    pub number: usize,
    /// What the request asked for its shell: folder and extra environment.
    pub cwd: String,
    pub env: BTreeMap<String, String>,
    /// Its only pane.
    pub pane: String,
}

impl State {
    /// `TabInfo` of a created tab.
    pub fn tab_json(&self, t: &FakeTab) -> Value {
        let focused = self
            .panes
            .iter()
            .any(|p| p.id == self.focused && p.tab_id == t.id);
        json!({"agent_status": "unknown", "focused": focused,
               "label": t.label, "number": t.number,
               "pane_count": self.panes.iter().filter(|p| p.tab_id == t.id).count(),
               "tab_id": t.id, "workspace_id": t.workspace_id})
    }

    /// `TabInfo` of any tab (a workspace's implicit first tab too).
    pub fn tab_info(&self, tab: &str) -> Value {
        match self.tabs.iter().find(|t| t.id == tab) {
            Some(t) => self.tab_json(t),
            None => {
                let focused = self
                    .panes
                    .iter()
                    .any(|p| p.id == self.focused && p.tab_id == tab);
                json!({"agent_status": "unknown", "focused": focused, "label": "1", "number": 1,
                       "pane_count": self.panes.iter().filter(|p| p.tab_id == tab).count(),
                       "tab_id": tab, "workspace_id": tab.split(':').next().unwrap_or("")})
            }
        }
    }

    /// The layout of a created tab.
    pub fn tab_layout_json(&self, t: &FakeTab) -> Value {
        self.tab_layout(&t.id)
    }
}

/// `tab.create`: a tab `<ws>:t<n>` holding one new pane whose shell is `State::tab_shell`.
pub fn create(id: &str, params: &Value, s: &mut State) -> Value {
    let ws = str_param(params, "workspace_id")
        .map(str::to_string)
        .unwrap_or_else(|| s.focused_ws.clone());
    if !s.workspaces.iter().any(|w| w.id == ws) {
        return error(
            id,
            "workspace_not_found",
            &format!("workspace {ws} not found"),
        );
    }
    let number = 2 + s.tabs.iter().filter(|t| t.workspace_id == ws).count();
    let tab_id = format!("{ws}:t{number}");
    let cwd = str_param(params, "cwd").unwrap_or("/tmp").to_string();
    let env: BTreeMap<String, String> = params
        .get("env")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let pane_id = s.next_pane_id(&ws);
    let terminal_id = s.next_terminal_id();
    let shell = s.tab_shell;
    s.panes.push(FakePane {
        id: pane_id.clone(),
        terminal_id,
        workspace_id: ws.clone(),
        tab_id: tab_id.clone(),
        label: None,
        cwd: cwd.clone(),
        tokens: BTreeMap::new(),
        shell_pid: shell,
        foreground: vec![(shell, "bash".into(), vec!["/bin/bash".into()])],
        rect: AREA,
    });
    let tab = FakeTab {
        id: tab_id,
        workspace_id: ws,
        label: str_param(params, "label")
            .map(str::to_string)
            .unwrap_or_else(|| number.to_string()),
        number,
        cwd,
        env,
        pane: pane_id.clone(),
    };
    s.tabs.push(tab.clone());
    if params.get("focus").and_then(Value::as_bool) == Some(true) {
        s.focus_pane(&pane_id);
    }
    let focused = s.focused.clone();
    let root = s
        .panes
        .iter()
        .find(|p| p.id == pane_id)
        .map(|p| pane_json(p, &focused));
    ok(
        id,
        json!({"root_pane": root, "tab": s.tab_json(&tab), "type": "tab_created"}),
    )
}

/// What Herdr does with a tab the code under test creates: its shell starts in the folder and
/// with the environment `tab.create` asked for, then runs what is typed into it. Here the shell
/// is a real bash in its own process group that runs the lines it is given, registered as the
/// fake's tab shell; a thread types the first created tab's setup and input once (with Enter).
/// Dropped, the whole group is ended.
pub struct TabShell {
    shell: std::process::Child,
    typist: Option<std::thread::JoinHandle<Option<std::process::ChildStdin>>>,
    /// Kept open once typed: the shell (the tab's pane) lives until the drop.
    stdin: Option<std::process::ChildStdin>,
}

impl TabShell {
    /// Start it for `herdr`, with this base environment (HOME, PATH, …; `HERDR_ENV` and the
    /// socket are added), in `dir`.
    pub fn start(
        herdr: &super::FakeHerdr,
        dir: &std::path::Path,
        env: &[(&str, String)],
    ) -> TabShell {
        use std::io::Write;
        use std::os::unix::process::CommandExt;
        use std::time::{Duration, Instant};
        let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
        let mut shell = std::process::Command::new("/bin/bash")
            .args(["-c", "while IFS= read -r line; do eval \"$line\"; done"])
            .current_dir(dir)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("HERDR_ENV", "1")
            .env("HERDR_SOCKET_PATH", &herdr.socket)
            .stdin(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let shell_pid = shell.id();
        herdr.with(|s| s.tab_shell = shell_pid);
        let mut stdin = shell.stdin.take().unwrap();
        let state = herdr.state.clone();
        let typist = std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(20);
            while Instant::now() < end {
                let typed = {
                    let s = state.lock().unwrap();
                    s.tabs.first().and_then(|t| {
                        let (_, text, keys) = s.inputs.iter().find(|i| i.0 == t.pane)?;
                        let mut setup = format!("export HERDR_PANE_ID={}", quote(&t.pane));
                        for (k, v) in &t.env {
                            setup.push_str(&format!(" {k}={}", quote(v)));
                        }
                        setup.push_str(&format!("; cd {}", quote(&t.cwd)));
                        (keys == &["Enter"]).then(|| format!("{setup}\n{text}\n"))
                    })
                };
                if let Some(lines) = typed {
                    stdin.write_all(lines.as_bytes()).unwrap();
                    stdin.flush().unwrap();
                    return Some(stdin);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            None
        });
        TabShell {
            shell,
            typist: Some(typist),
            stdin: None,
        }
    }

    /// Wait for the typist (≤ 20 s); `true` when it typed.
    pub fn typed(&mut self) -> bool {
        if let Some(t) = self.typist.take() {
            self.stdin = t.join().ok().flatten();
        }
        self.stdin.is_some()
    }
}

impl Drop for TabShell {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", self.shell.id())])
            .status();
        let _ = self.shell.wait();
    }
}
