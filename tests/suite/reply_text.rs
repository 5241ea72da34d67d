//! The reply text rules, in both places they live: `check_text` in Rust and `scripts/agent-send.sh`
//! run directly. Every hostile text is refused by the script with exit 5 and nothing reaches the
//! pane (a private tmux pane running `cat -v`, captured); both agree on every control and every
//! invisible character.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::Path;
use std::process::{Command, Output};

use intercom_pane::seam::actions::reply::{check_text, Refusal};
use intercom_pane::seam::reply_text::{check_for_editor, is_refused_control, TextError, INVISIBLE};
use mux_support::{wait_for, TmuxServer};

fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/agent-send.sh")
        .display()
        .to_string()
}

fn send(server: &TmuxServer, pane: &str, args: &[&str]) -> Output {
    let sock = server.sock.display().to_string();
    let mut cmd = Command::new("bash");
    cmd.arg(script())
        .args(["-s", pane, "-S", "test:intercom-pane", "-L", &sock])
        .args(args);
    cmd.env_remove("TMUX").output().unwrap()
}

fn send_text(server: &TmuxServer, pane: &str, text: &str) -> Output {
    send(server, pane, &["-m", text])
}

/// The texts an attacker (or an accident) would try.
fn hostile() -> Vec<(&'static str, String)> {
    vec![
        ("paste end then quit", "ok\u{1b}[201~/quit\r".into()),
        ("ESC alone", "a\u{1b}b".into()),
        ("CR", "line\rnext".into()),
        ("Ctrl-C", "a\u{3}".into()),
        ("Ctrl-D", "a\u{4}".into()),
        ("DEL", "a\u{7f}".into()),
        ("C1 CSI", "a\u{9b}31m".into()),
        ("C1 NEL", "a\u{85}b".into()),
        ("bidi override", "abc\u{202e}fed".into()),
        ("bidi isolate", "abc\u{2066}x\u{2069}".into()),
        ("blank", " \n\t ".into()),
        (
            "zero-width only",
            "\u{200b}\u{200c}\u{200d}\u{2060}\u{feff}".into(),
        ),
        ("too long", "x".repeat(2201)),
    ]
}

#[test]
fn the_script_refuses_every_hostile_text_and_types_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("t", dir.path(), &["cat", "-v"]);
    let pane = server.tmux(&["list-panes", "-t", "=t:", "-F", "#{pane_id}"]);
    let pane = pane.trim();
    for (what, text) in hostile() {
        let o = send_text(&server, pane, &text);
        assert_eq!(o.status.code(), Some(5), "{what}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("refused") && err.contains("nothing was typed"),
            "{what}: {err}"
        );
        assert!(check_text(&text).is_err(), "check_text lets {what} through");
    }
    // The same through a file (with a NUL, which no argument can carry) and standard input.
    let nul = dir.path().join("nul.txt");
    std::fs::write(&nul, b"before\0after").unwrap();
    let o = send(&server, pane, &["-f", &nul.display().to_string()]);
    assert_eq!(o.status.code(), Some(5), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("control character"));
    let bad_utf8 = dir.path().join("bad.txt");
    std::fs::write(&bad_utf8, b"caf\xe9 \x9b2J").unwrap();
    let o = send(&server, pane, &["-f", &bad_utf8.display().to_string()]);
    assert_eq!(o.status.code(), Some(5), "{o:?}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let screen = server.tmux(&["capture-pane", "-p", "-t", pane]);
    assert_eq!(screen.trim(), "", "nothing reached the pane:\n{screen}");
    // A good text still goes through, in one paste (cat -v shows the paste markers it got).
    let o = send_text(&server, pane, "fine 'text' $(not run)\nsecond line é");
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let screen = wait_for(5_000, || {
        let s = server.tmux(&["capture-pane", "-p", "-t", pane]);
        s.contains("second line").then_some(s)
    })
    .expect("the good text arrived");
    assert!(screen.contains("fine 'text' $(not run)"), "{screen}");
    assert!(
        !screen.contains("^[") || screen.contains("^[[200~"),
        "{screen}"
    );
}

#[test]
fn the_script_and_check_text_agree_on_every_control_and_invisible_character() {
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("t", dir.path(), &["cat", "-v"]);
    // A pane that does not exist: a text the rules let through gets as far as exit 3.
    let absent = "%999";
    let mut controls: Vec<char> = (0u32..0x20)
        .chain(0x7f..0xa0)
        .filter_map(char::from_u32)
        .collect();
    controls.extend(['\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}']);
    controls.extend(['\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}']);
    for c in controls {
        let text = format!("x{c}y");
        let code = if c == '\0' {
            // An argument cannot hold a NUL: a file can.
            let f = dir.path().join("c.txt");
            std::fs::write(&f, text.as_bytes()).unwrap();
            send(&server, absent, &["-f", &f.display().to_string()])
                .status
                .code()
        } else {
            send_text(&server, absent, &text).status.code()
        };
        let refused = is_refused_control(c);
        // The script types: it also refuses what pi's editor would change (a TAB).
        let typeable = check_for_editor(&text).is_ok();
        assert_eq!(typeable, c != '\t');
        assert_eq!(
            code,
            Some(if refused || !typeable { 5 } else { 3 }),
            "U+{:04X}",
            c as u32
        );
        assert_eq!(check_text(&text).is_err(), refused, "U+{:04X}", c as u32);
    }
    let spaces = (0u32..0x3001)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace() && !is_refused_control(*c));
    for c in spaces.chain(INVISIBLE.iter().copied()) {
        let text = format!("{c}{c}");
        assert_eq!(
            check_text(&text),
            Err(Refusal::Text(TextError::Blank)),
            "U+{:04X}",
            c as u32
        );
        let o = send_text(&server, absent, &text);
        assert_eq!(o.status.code(), Some(5), "U+{:04X}: {o:?}", c as u32);
        assert!(String::from_utf8_lossy(&o.stderr).contains("blank"));
        // With a visible character beside it, both let it through (a TAB aside: pi's editor
        // would turn it into spaces, so the script, which types, refuses it as
        // `check_for_editor` does).
        let text = format!("{c}a");
        assert_eq!(check_text(&text), Ok(()));
        let typeable = check_for_editor(&text).is_ok();
        assert_eq!(typeable, c != '\t', "U+{:04X}", c as u32);
        assert_eq!(
            send_text(&server, absent, &text).status.code(),
            Some(if typeable { 3 } else { 5 }),
            "U+{:04X}",
            c as u32
        );
    }
}

/// pi's editor runs a first `!` (after its own trim) as a shell command and takes a first `/`
/// as a command: the script refuses exactly the texts `check_for_editor` refuses, whatever white
/// space pi would trim first, and lets the same character elsewhere through.
#[test]
fn the_script_and_check_for_editor_agree_on_command_prefixes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TmuxServer::start("t", dir.path(), &["cat", "-v"]);
    let absent = "%999";
    let mut texts: Vec<String> = vec![
        "say !x".into(),
        "a/b".into(),
        "\u{200b}!x".into(),
        "ok\n!second".into(),
        "é /x".into(),
        "?".into(),
        "@file".into(),
        "#x".into(),
    ];
    let trimmed = (0u32..0x3001)
        .filter_map(char::from_u32)
        .filter(|c| {
            intercom_pane::seam::reply_text::is_trimmed_by_pi(*c) && !is_refused_control(*c)
        })
        .chain(['\u{feff}']);
    for c in trimmed {
        for p in ['!', '/'] {
            texts.push(format!("{c}{p}x"));
            texts.push(format!("{c}{c}{p}{p}x"));
        }
    }
    texts.extend(["!x", "!!x", "/quit", "/new more"].map(String::from));
    for text in texts {
        let ok = check_text(&text).is_ok() && check_for_editor(&text).is_ok();
        let o = send_text(&server, absent, &text);
        assert_eq!(
            o.status.code(),
            Some(if ok { 3 } else { 5 }),
            "{text:?}: {o:?}"
        );
        if !ok {
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("pi's editor"),
                "{text:?}: {o:?}"
            );
        }
    }
}
