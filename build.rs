//! Test tiers that need programs this machine may not have (a real pi with Node 22, a real
//! Herdr, man-db's `man`) are compiled as ignored, with the reason, when those programs are
//! absent, so a tier that did not run is reported as `ignored` by `cargo test`, never as a pass.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rustc-check-cfg=cfg(real_pi)");
    println!("cargo::rustc-check-cfg=cfg(real_herdr)");
    println!("cargo::rustc-check-cfg=cfg(hosts_tier)");
    println!("cargo::rustc-check-cfg=cfg(has_man)");
    println!("cargo::rustc-check-cfg=cfg(has_curl)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=INTERCOM_PANE_REAL_PI");
    println!("cargo::rerun-if-env-changed=PATH");
    if let Some(dir) = std::env::var_os("INTERCOM_PANE_REAL_PI") {
        let dir = PathBuf::from(dir);
        if is_file(&dir.join("pi")) && is_file(&dir.join("node")) {
            println!("cargo::rustc-cfg=real_pi");
        }
    }
    if on_path("herdr") {
        println!("cargo::rustc-cfg=real_herdr");
    }
    // The multi-host tier starts an OpenSSH server per simulated host in a network namespace of
    // its own: it needs root, sshd, ssh, ssh-keygen, ip and unshare.
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false);
    if root
        && is_file(Path::new("/usr/sbin/sshd"))
        && ["ssh", "ssh-keygen", "ip", "unshare"]
            .iter()
            .all(|p| on_path(p))
    {
        println!("cargo::rustc-cfg=hosts_tier");
    }
    // The documented webhook and ntfy recipes for `--on-alert` run curl.
    if on_path("curl") {
        println!("cargo::rustc-cfg=has_curl");
    }
    // The README's man step is run by a test with man-db's own `man`.
    if on_path("man") && on_path("manpath") {
        println!("cargo::rustc-cfg=has_man");
    }
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| is_file(&d.join(name))))
        .unwrap_or(false)
}

fn is_file(p: &Path) -> bool {
    std::fs::metadata(p).map(|m| m.is_file()).unwrap_or(false)
}
