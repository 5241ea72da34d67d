//! Discord connector bindings (control board seed): `<dataRoot>/discord/<binding>.json`.
//!
//! Only the safe binding name, the seat and the owner identity are read; binding policy, Discord
//! ids and token paths are never projected. Files must be regular, non-link, mode 0600, ≤ 1 MiB.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fsguard::{self, Kind};

pub(crate) const MAX_BINDING_BYTES: u64 = 1 << 20;
const MAX_BINDINGS: usize = 64;

/// The process that owns a connector, as its binding records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub pid: i32,
    pub boot_id: String,
    pub start_tick: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub name: String,
    pub seat: String,
    pub owner: Option<Owner>,
    pub path: PathBuf,
}

#[derive(Debug, Default)]
pub struct BindingSet {
    pub items: Vec<Binding>,
    pub errors: Vec<BindingError>,
}

/// A binding refused: its name when safe to show, and a fixed code. Shown as
/// `discord/<name>: binding_<code>` (`?` for a name not safe to show).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BindingError {
    pub name: Option<String>,
    pub code: &'static str,
}

impl std::fmt::Display for BindingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.name.as_deref().unwrap_or("?");
        write!(f, "discord/{name}: binding_{}", self.code)
    }
}

/// A binding or seat name that is safe as a path component and in a row label.
pub fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

pub fn read_bindings(data_root: &Path) -> BindingSet {
    let mut set = BindingSet::default();
    let dir = data_root.join("discord");
    let Ok(list) = fsguard::list_dir(&dir, 4 * MAX_BINDINGS) else {
        return set;
    };
    for e in &list.entries {
        if set.items.len() >= MAX_BINDINGS {
            break;
        }
        let Some(file) = e.name_str() else { continue };
        let Some(name) = file.strip_suffix(".json") else {
            continue;
        };
        if !safe_name(name) {
            set.errors.push(BindingError {
                name: None,
                code: "unsafe_name",
            });
            continue;
        }
        if e.kind != Kind::File {
            set.errors.push(BindingError {
                name: Some(name.to_string()),
                code: kind_code(e.kind),
            });
            continue;
        }
        match read_one(&dir.join(file), name) {
            Ok(b) => set.items.push(b),
            Err(code) => set.errors.push(BindingError {
                name: Some(name.to_string()),
                code,
            }),
        }
    }
    set
}

fn kind_code(k: Kind) -> &'static str {
    match k {
        Kind::Link => "link_refused",
        Kind::Fifo => "fifo_refused",
        Kind::Device => "device_refused",
        Kind::Socket => "socket_refused",
        _ => "not_regular",
    }
}

fn read_one(path: &Path, name: &str) -> Result<Binding, &'static str> {
    let f = fsguard::open_regular(path, Some(MAX_BINDING_BYTES)).map_err(|e| e.code())?;
    if f.mode & 0o777 != 0o600 {
        return Err("bad_mode");
    }
    let bytes = fsguard::read_at(&f.file, 0, f.len as usize).map_err(|e| e.code())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| "invalid")?;
    let seat = v
        .get("seat")
        .and_then(Value::as_str)
        .filter(|s| safe_name(s))
        .ok_or("invalid_seat")?;
    let owner = v.get("owner").and_then(|o| {
        Some(Owner {
            pid: i32::try_from(o.get("pid")?.as_i64()?).ok()?,
            boot_id: o.get("bootId")?.as_str()?.to_string(),
            start_tick: o.get("startTick")?.as_u64()?,
        })
    });
    Ok(Binding {
        name: name.to_string(),
        seat: seat.to_string(),
        owner,
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn requires_mode_0600_and_safe_names() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("discord");
        std::fs::create_dir(&d).unwrap();
        let good = d.join("ops.json");
        std::fs::write(
            &good,
            br#"{"seat":"rocko","token":"/secret","owner":{"pid":1,"bootId":"b","startTick":5}}"#,
        )
        .unwrap();
        std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o600)).unwrap();
        let open = d.join("wide.json");
        std::fs::write(&open, br#"{"seat":"rocko"}"#).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&good, d.join("ln.json")).unwrap();

        let set = read_bindings(dir.path());
        assert_eq!(set.items.len(), 1);
        assert_eq!(set.items[0].seat, "rocko");
        assert_eq!(set.items[0].owner.as_ref().unwrap().start_tick, 5);
        let mut errs: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        errs.sort();
        assert_eq!(
            errs,
            vec![
                "discord/ln: binding_link_refused".to_string(),
                "discord/wide: binding_bad_mode".to_string()
            ]
        );
    }
}
