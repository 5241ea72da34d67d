//! Is the pi extension installed where pi looks for it? pi loads extensions from packages named in
//! `settings.json` (`pi install <path | npm: | git:>`, local paths relative to that file) and from
//! `extensions/` folders, both under its agent folder (`$PI_CODING_AGENT_DIR`, else
//! `~/.pi/agent`) and under a project's `.pi/`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Check;
use crate::fsguard::{self, Kind};

const SETTINGS_CAP: u64 = 1024 * 1024;
const MANIFEST_CAP: u64 = 64 * 1024;
/// The `name` in `linux/pi-extension/package.json`.
pub(super) const PACKAGE_NAME: &str = "intercom-pane";
const EXTENSION_FILE: &str = "intercom-pane.ts";

/// pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub(super) fn agent_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    var("PI_CODING_AGENT_DIR")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".pi").join("agent")))
}

/// Where this checkout's package is, when the binary was built from one that still exists.
fn shipped_package() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("linux")
        .join("pi-extension");
    if matches!(fsguard::kind(&p.join("package.json")), Ok(Kind::File)) {
        p.display().to_string()
    } else {
        "<intercom-pane checkout>/linux/pi-extension".into()
    }
}

/// A local package folder (or single file) that is ours.
fn local_is_ours(path: &Path) -> bool {
    match fsguard::kind(path) {
        Ok(Kind::File) => path.file_name().and_then(|n| n.to_str()) == Some(EXTENSION_FILE),
        Ok(Kind::Dir) => fsguard::read_capped(&path.join("package.json"), MANIFEST_CAP)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .is_some_and(|v| v["name"] == PACKAGE_NAME),
        _ => false,
    }
}

/// The package sources a `settings.json` names that are ours.
fn packages_in(settings: &Path) -> Vec<String> {
    let Ok(bytes) = fsguard::read_capped(settings, SETTINGS_CAP) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let base = settings.parent().unwrap_or(Path::new("/"));
    v["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .take(256)
        .filter_map(|p| p.as_str().or_else(|| p["source"].as_str()))
        .filter(|src| {
            let remote = ["npm:", "git:", "http://", "https://", "ssh://"]
                .iter()
                .any(|pre| src.starts_with(pre));
            if remote {
                src.contains(PACKAGE_NAME)
            } else {
                let p = Path::new(src.strip_prefix("file:").unwrap_or(src));
                local_is_ours(&if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    base.join(p)
                })
            }
        })
        .map(str::to_string)
        .collect()
}

/// Every place pi would load the extension from, for pi's agent folder and the project `cwd`.
pub(super) fn installed_at(agent: Option<&Path>, cwd: Option<&Path>) -> Vec<String> {
    let mut found = Vec::new();
    let dirs = agent
        .map(Path::to_path_buf)
        .into_iter()
        .chain(cwd.map(|c| c.join(".pi")));
    for dir in dirs {
        let settings = dir.join("settings.json");
        for src in packages_in(&settings) {
            found.push(format!("package {src} in {}", settings.display()));
        }
        let file = dir.join("extensions").join(EXTENSION_FILE);
        if matches!(fsguard::kind(&file), Ok(Kind::File)) {
            found.push(file.display().to_string());
        }
    }
    found
}

pub(super) fn extension_installed() -> Check {
    let agent = agent_dir();
    let cwd = std::env::current_dir().ok();
    let found = installed_at(agent.as_deref(), cwd.as_deref());
    if let Some(first) = found.first() {
        return Check::ok("extension", format!("installed: {first}"));
    }
    Check::fail(
        "extension",
        format!(
            "the pi extension is not installed in {} (no intercom-pane package in settings.json, no extensions/{EXTENSION_FILE})",
            agent
                .map(|a| a.display().to_string())
                .unwrap_or_else(|| "pi's agent folder (HOME is not set)".into())
        ),
        format!("pi install {}", shipped_package()),
    )
}
