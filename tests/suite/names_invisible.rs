//! Names that differ only by characters that show nothing (src/names.rs): a roster name holding
//! one is refused, saying which character and where; a name the tool does not choose (a tmux
//! session's, a repo's agent folder's) is shown with the character written out, so two such
//! seats look different on the board.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support::{wait_for, TmuxServer};
use crate::pi_support::fake_pi_program;
use crate::scan_support::*;

use serde_json::Value;

#[test]
fn a_roster_name_with_a_zero_width_character_is_refused_and_named() {
    for (names, bad) in [
        (vec!["Builder", "Builder\u{200b}"], "Builder<U+200B>"),
        (vec!["Re\u{2060}viewer"], "Re<U+2060>viewer"),
        (vec!["Docs\u{a0}Bot"], "Docs<U+00A0>Bot"),
    ] {
        let env = Env::new();
        let root = env.path("root");
        let workers: Vec<(String, &str)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("w{i}"), *n))
            .collect();
        let refs: Vec<(&str, &str)> = workers.iter().map(|(i, n)| (i.as_str(), *n)).collect();
        write_roster(&root, &refs);
        let cfg = env.system_config();
        let root_s = root.display().to_string();
        let on_roster = |cmd: &[&str]| {
            let mut args = cmd.to_vec();
            args.extend(["--config", &cfg, "--root", &root_s, "--fleet", "none"]);
            env.run(&args)
        };
        let o = on_roster(&["scan", "--print", "--liveness", "assume-alive"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{names:?}: {err}");
        assert!(err.contains("shows nothing"), "{err}");
        assert!(err.contains(bad), "{bad} in {err}");
        // `reply` to either name is refused too: the roster is not used.
        let o = on_roster(&["reply", names[0], "hello"]);
        assert_ne!(o.status.code(), Some(0), "{names:?}");
    }
}

#[test]
fn seats_named_by_tmux_sessions_and_folders_show_their_invisible_characters() {
    let env = Env::new().with_system_path();
    let cfg = env.system_config();
    let (node, cli) = fake_pi_program(&env.path("pi-bin"));
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    // Two pis, each with its own home (so each is its own seat).
    let run = |home: &str| {
        format!(
            "export HOME={}; exec -a pi {} {} 'sleep 600'",
            env.path(home).display(),
            node.display(),
            cli.display()
        )
    };
    let server = TmuxServer::start("Builder", &work, &["bash", "-c", &run("h1")]);
    server.new_session("Builder\u{200b}", &work, &["bash", "-c", &run("h2")]);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.lines().filter(|c| c.trim() == "pi").count() == 2).then_some(())
    })
    .expect("both pis run");
    // A repo's agent folders named alike.
    let repo = env.path("repo");
    for agent in ["Docs", "Docs\u{feff}"] {
        let s = repo.join(".pi/state").join(agent).join("sessions");
        std::fs::create_dir_all(&s).unwrap();
        let src = std::path::Path::new(FIXTURES).join("pi-sessions/idle.jsonl");
        let id = header_id(&src);
        std::fs::copy(&src, s.join(format!("2026-11-29T23-13-49-000Z_{id}.jsonl"))).unwrap();
    }
    let sock = server.sock.display().to_string();
    let args = |mode: &str| {
        env.run(&[
            "scan",
            mode,
            "--config",
            &cfg,
            "--repo",
            &repo.display().to_string(),
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
            "--now",
            NOW,
        ])
    };
    let idx = stdout_json(&args("--json"));
    let agents: Vec<String> = idx["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r: &Value| r["agent"].as_str().map(str::to_string))
        .collect();
    assert!(
        agents.iter().any(|a| a.starts_with("Builder %")),
        "{agents:?}"
    );
    assert!(
        agents.iter().any(|a| a.starts_with("Builder<U+200B> %")),
        "{agents:?}"
    );
    assert!(agents.iter().any(|a| a == "Docs"), "{agents:?}");
    assert!(agents.iter().any(|a| a == "Docs<U+FEFF>"), "{agents:?}");
    assert!(
        !agents
            .iter()
            .any(|a| a.contains('\u{200b}') || a.contains('\u{feff}')),
        "{agents:?}"
    );
    let print = String::from_utf8_lossy(&args("--print").stdout).into_owned();
    assert!(print.contains("Builder<U+200B> %"), "{print}");
    assert!(print.contains("/Docs<U+FEFF>"), "{print}");
}
