//! The alert settings, from one documented place (docs/behaviour.md §3b "Settings"): the file
//! `$XDG_CONFIG_HOME/intercom-pane/alerts.json` (or `--alert-config`), then the tmux plugin's
//! options on the run's tmux server, then the command's flags; each later one wins per setting.
//! Pure: the caller reads the file and the options and passes their text in.

use serde::Deserialize;

use crate::board::alerts::Rules;
use crate::states::BoardState;

/// Largest settings file read.
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Most arguments of the `onAlert` program (with the program).
pub(crate) const MAX_ARGV: usize = 32;
/// Longest `onAlert` argument.
pub(crate) const MAX_ARG: usize = 4096;
/// Longest wait for a click on a desktop notification's Jump.
pub(crate) const MAX_DESKTOP_JUMP_SECS: u64 = 3600;

/// Whether to show desktop notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Desktop {
    /// When a desktop session is there (`DBUS_SESSION_BUS_ADDRESS`, `DISPLAY` or
    /// `WAYLAND_DISPLAY` set) and `notify-send` runs.
    Auto,
    Off,
}

/// Every setting, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// Alerts at all (the status line still counts).
    pub enabled: bool,
    pub rules: Rules,
    /// No alert for a seat whose pane is the active pane of an attached client.
    pub quiet_when_visible: bool,
    /// Keep `@intercom_pane_status` up to date on the tmux servers the board knows.
    pub status_line: bool,
    /// `display-message` on every attached client.
    pub display_message: bool,
    /// The terminal bell (on the terminal the sidebar or watcher runs in).
    pub bell: bool,
    pub desktop: Desktop,
    /// How long a desktop notification offers its Jump action (`notify-send --wait`, where it
    /// can); 0: no action, the notification only says how to jump.
    pub desktop_jump_secs: u64,
    /// Run this program (argv) with one JSON line on stdin per alert.
    pub on_alert: Option<Vec<String>>,
    pub on_alert_timeout_secs: u64,
    pub on_alert_concurrency: usize,
    /// The key (after the prefix) the tmux plugin bound to jump to the last alert (said in the
    /// alert's text; the plugin sets `@intercom-pane-jump-key` to the key it bound).
    pub jump_key: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: true,
            rules: Rules::default(),
            quiet_when_visible: true,
            status_line: true,
            display_message: false,
            bell: false,
            desktop: Desktop::Auto,
            desktop_jump_secs: 300,
            on_alert: None,
            on_alert_timeout_secs: 10,
            on_alert_concurrency: 2,
            jump_key: None,
        }
    }
}

/// The settings file (every member optional; unknown members are refused, so a typo is said).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    enabled: Option<bool>,
    settle_secs: Option<u64>,
    catch_up_secs: Option<u64>,
    quiet_when_visible: Option<bool>,
    mute: Option<Vec<String>>,
    status_line: Option<bool>,
    display_message: Option<bool>,
    bell: Option<bool>,
    desktop: Option<Desktop>,
    desktop_jump_secs: Option<u64>,
    on_alert: Option<Vec<String>>,
    on_alert_timeout_secs: Option<u64>,
    on_alert_concurrency: Option<usize>,
}

/// The tmux options the plugin documents, in the order `apply_tmux` takes their values.
pub(crate) const TMUX_OPTIONS: [&str; 8] = [
    "@intercom-pane-alerts",
    "@intercom-pane-alert-settle",
    "@intercom-pane-alert-quiet",
    "@intercom-pane-alert-status",
    "@intercom-pane-alert-display",
    "@intercom-pane-alert-bell",
    "@intercom-pane-alert-desktop",
    "@intercom-pane-jump-key",
];

/// A setting that breaks its rule, named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SettingError(pub String);

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "alert settings: {}", crate::text::sanitize(&self.0))
    }
}

/// Why a run's alert settings (its file, the tmux plugin's options, its flags) or its alert
/// thread are not there.
#[derive(Debug)]
pub(crate) enum SettingsError {
    /// The file's contents are refused.
    File {
        path: String,
        err: SettingError,
    },
    /// The file cannot be trusted or read (`why`: the reason in words).
    Unreadable {
        path: String,
        why: String,
    },
    /// A tmux option or a flag is refused.
    Setting(SettingError),
    NoThread(std::io::Error),
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::File { path, err } => write!(f, "{path}: {err}"),
            SettingsError::Unreadable { path, why } => write!(f, "alert settings {path}: {why}"),
            SettingsError::Setting(e) => write!(f, "{e}"),
            SettingsError::NoThread(e) => write!(f, "no alert thread: {e}"),
        }
    }
}

fn ranged(name: &str, v: u64, lo: u64, hi: u64) -> Result<u64, SettingError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(SettingError(format!(
            "{name} must be {lo} to {hi}, not {v}"
        )))
    }
}

/// A state word as a muted state (only states that can alert).
fn state_word(w: &str) -> Result<BoardState, SettingError> {
    match w.trim() {
        "waiting" => Ok(BoardState::Waiting),
        "error" => Ok(BoardState::Error),
        "offline" => Ok(BoardState::Offline),
        other => Err(SettingError(format!(
            "mute takes waiting, error or offline, not {other:?}"
        ))),
    }
}

/// The `onAlert` program: a non-empty argv of bounded words without NUL.
pub(crate) fn check_argv(argv: &[String]) -> Result<(), SettingError> {
    if argv.is_empty() || argv[0].is_empty() {
        return Err(SettingError("onAlert needs a program".into()));
    }
    if argv.len() > MAX_ARGV || argv.iter().any(|a| a.len() > MAX_ARG || a.contains('\0')) {
        return Err(SettingError(format!(
            "onAlert takes at most {MAX_ARGV} words of at most {MAX_ARG} bytes, without NUL"
        )));
    }
    Ok(())
}

impl Settings {
    /// Apply a settings file's text; nothing changes when any of it is refused.
    pub(crate) fn apply_file(&mut self, text: &[u8]) -> Result<(), SettingError> {
        let f: File = serde_json::from_slice(text).map_err(|e| SettingError(e.to_string()))?;
        let mut next = self.clone();
        next.apply_file_members(f)?;
        *self = next;
        Ok(())
    }

    fn apply_file_members(&mut self, f: File) -> Result<(), SettingError> {
        if let Some(v) = f.enabled {
            self.enabled = v;
        }
        if let Some(v) = f.settle_secs {
            self.rules.settle_ms = ranged("settleSecs", v, 0, 600)? as i64 * 1000;
        }
        if let Some(v) = f.catch_up_secs {
            self.rules.catch_up_ms = ranged("catchUpSecs", v, 0, 7 * 24 * 3600)? as i64 * 1000;
        }
        if let Some(v) = f.quiet_when_visible {
            self.quiet_when_visible = v;
        }
        if let Some(m) = f.mute {
            self.rules.muted = m.iter().map(|w| state_word(w)).collect::<Result<_, _>>()?;
        }
        if let Some(v) = f.status_line {
            self.status_line = v;
        }
        if let Some(v) = f.display_message {
            self.display_message = v;
        }
        if let Some(v) = f.bell {
            self.bell = v;
        }
        if let Some(v) = f.desktop {
            self.desktop = v;
        }
        if let Some(v) = f.desktop_jump_secs {
            self.desktop_jump_secs = ranged("desktopJumpSecs", v, 0, MAX_DESKTOP_JUMP_SECS)?;
        }
        if let Some(argv) = f.on_alert {
            check_argv(&argv)?;
            self.on_alert = Some(argv);
        }
        if let Some(v) = f.on_alert_timeout_secs {
            self.on_alert_timeout_secs = ranged("onAlertTimeoutSecs", v, 1, 300)?;
        }
        if let Some(v) = f.on_alert_concurrency {
            self.on_alert_concurrency = ranged("onAlertConcurrency", v as u64, 1, 8)? as usize;
        }
        Ok(())
    }

    /// Apply the tmux options' values (`TMUX_OPTIONS` order; `None` = unset); nothing changes
    /// when any of them is refused.
    pub(crate) fn apply_tmux(&mut self, values: &[Option<String>]) -> Result<(), SettingError> {
        let mut next = self.clone();
        next.apply_tmux_values(values)?;
        *self = next;
        Ok(())
    }

    fn apply_tmux_values(&mut self, values: &[Option<String>]) -> Result<(), SettingError> {
        let get = |i: usize| values.get(i).cloned().flatten();
        let flag = |i: usize| -> Result<Option<bool>, SettingError> {
            match get(i).as_deref().map(str::trim) {
                None => Ok(None),
                Some("on" | "yes" | "1" | "true") => Ok(Some(true)),
                Some("off" | "no" | "0" | "false") => Ok(Some(false)),
                Some(other) => Err(SettingError(format!(
                    "{} takes on or off, not {other:?}",
                    TMUX_OPTIONS[i]
                ))),
            }
        };
        if let Some(v) = flag(0)? {
            self.enabled = v;
        }
        if let Some(s) = get(1) {
            let v: u64 = s.trim().parse().map_err(|_| {
                SettingError(format!("{} takes seconds, not {s:?}", TMUX_OPTIONS[1]))
            })?;
            self.rules.settle_ms = ranged(TMUX_OPTIONS[1], v, 0, 600)? as i64 * 1000;
        }
        if let Some(v) = flag(2)? {
            self.quiet_when_visible = v;
        }
        if let Some(v) = flag(3)? {
            self.status_line = v;
        }
        if let Some(v) = flag(4)? {
            self.display_message = v;
        }
        if let Some(v) = flag(5)? {
            self.bell = v;
        }
        if let Some(v) = flag(6)? {
            self.desktop = if v { Desktop::Auto } else { Desktop::Off };
        }
        // The key is only ever said in a message: a short printable word.
        self.jump_key = get(7)
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty() && k.len() <= 32 && !k.contains(char::is_control))
            .or(self.jump_key.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_tmux_then_flags() {
        let mut s = Settings::default();
        s.apply_file(
            br#"{"settleSecs": 2, "mute": ["offline"], "displayMessage": true,
                 "onAlert": ["notify", "--to", "me"], "desktop": "off", "desktopJumpSecs": 0}"#,
        )
        .unwrap();
        assert_eq!(s.rules.settle_ms, 2_000);
        assert_eq!(s.rules.muted, vec![BoardState::Offline]);
        assert!(s.display_message && s.desktop == Desktop::Off);
        assert_eq!(s.desktop_jump_secs, 0);
        assert_eq!(s.on_alert.as_ref().unwrap()[0], "notify");
        let mut vals = vec![None; TMUX_OPTIONS.len()];
        vals[1] = Some("0".into());
        vals[5] = Some("on".into());
        vals[7] = Some("J".into());
        s.apply_tmux(&vals).unwrap();
        assert_eq!(s.rules.settle_ms, 0);
        assert!(s.bell && s.display_message);
        assert_eq!(s.jump_key.as_deref(), Some("J"));
    }

    #[test]
    fn bad_settings_are_named() {
        let mut s = Settings::default();
        for bad in [
            &br#"{"settle": 2}"#[..],
            br#"{"settleSecs": 9999}"#,
            br#"{"mute": ["working"]}"#,
            br#"{"onAlert": []}"#,
            br#"{"onAlertConcurrency": 0}"#,
            br#"{"desktopJumpSecs": 3601}"#,
            b"not json",
        ] {
            assert!(
                s.apply_file(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            s,
            Settings::default(),
            "a refused file changes nothing it refused"
        );
        let mut vals = vec![None; TMUX_OPTIONS.len()];
        vals[2] = Some("maybe".into());
        assert!(s
            .apply_tmux(&vals)
            .unwrap_err()
            .0
            .contains("@intercom-pane-alert-quiet"));
    }
}
