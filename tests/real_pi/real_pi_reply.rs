//! Replies to a real pi 1.6.0 in a real tmux pane, through both transports: the shipped
//! extension's channel (`pi.sendUserMessage`) and typed keys (`agent-send.sh`, for a seat whose
//! extension offers no channel). Each checks, reading pi's own session file: a hostile text is
//! refused and pi keeps running; in copy mode the reply arrives as exactly one identical user
//! message; a draft in pi's editor is never submitted with a reply; a reply to a pi running a
//! long tool is `queued` and arrives after the tool as one message; multi-line text, quotes,
//! `$()`, backticks, non-ASCII and a 2000-character text arrive byte-identical, with nothing
//! added; a text that pi's editor would run as a command (`!`, `!!`, `/`) is a plain user message
//! through the channel and refused (exit 12) when it would be typed, and no command ever runs
//! (a marker file stays absent).
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (a folder holding `pi` and `node` 22; see
//! tests/real_pi/real_pi.rs); otherwise `cargo test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

/// One real pi worker `W` in a private tmux server, registered by the shipped extension.
pub(crate) struct Seat {
    pub(crate) env: Env,
    pub(crate) server: TmuxServer,
    pub(crate) file: PathBuf,
}

pub(crate) const PANE: &str = "=W:";

impl Seat {
    pub(crate) fn start(bin: &Path, channel: bool) -> Seat {
        let env = Env::new().with_system_path();
        let agent = env.dir.path().to_path_buf();
        let port = start_model(8);
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"fake": {"baseUrl": format!("http://127.0.0.1:{port}/v1"),
                "api": "openai-completions", "apiKey": "fake",
                "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}]}}})
            .to_string(),
        )
        .unwrap();
        std::fs::create_dir_all(agent.join("extensions")).unwrap();
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/pi-extension/intercom-pane.ts"),
            agent.join("extensions/intercom-pane.ts"),
        )
        .unwrap();
        // pi runs in the worker's folder (the roster's `.`): a registration of a pi in another
        // folder is not the worker's.
        let work = env.path("root");
        std::fs::create_dir_all(&work).unwrap();
        let sys = env.system_config();
        let server = TmuxServer::start("W", &work, &[]);
        server.tmux(&[
            "send-keys",
            "-t",
            PANE,
            &format!(
                "export PI_OFFLINE=1 PATH={}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys} INTERCOM_PANE_CHANNEL={}; pi --provider fake --model fake-model",
                bin.display(),
                agent.display(),
                env!("CARGO_BIN_EXE_intercom-pane"),
                if channel { "on" } else { "off" }
            ),
            "Enter",
        ]);
        wait_ready(&server, PANE);
        std::thread::sleep(Duration::from_millis(800));
        // The first prompt makes pi write its session file; join it to a configured worker.
        let sessions = agent.join("sessions");
        let mut file = None;
        for _ in 0..5 {
            server.tmux(&["send-keys", "-t", PANE, "-l", "hello"]);
            std::thread::sleep(Duration::from_millis(200));
            server.tmux(&["send-keys", "-t", PANE, "Enter"]);
            // A file whose header line is complete (pi may be creating it right now).
            file = wait_for(6_000, || {
                let dir = std::fs::read_dir(&sessions).ok()?.flatten().next()?.path();
                let f = std::fs::read_dir(dir).ok()?.flatten().next()?.path();
                let text = std::fs::read_to_string(&f).ok()?;
                let first = text.lines().next().filter(|_| text.contains('\n'))?;
                serde_json::from_str::<Value>(first).ok()?["id"].as_str()?;
                Some(f)
            });
            if file.is_some() {
                break;
            }
        }
        let file = file.expect("pi wrote a session file");
        write_roster(&env.path("root"), &[(&header_id(&file), "W")]);
        let seat = Seat { env, server, file };
        wait_for(20_000, || {
            let w = seat.record();
            (w["registered"]["alive"] == true && w["state"] == "idle").then_some(())
        })
        .unwrap_or_else(|| panic!("not registered and idle: {}", seat.record()));
        seat
    }

    pub(crate) fn sock(&self) -> String {
        self.server.sock.display().to_string()
    }

    pub(crate) fn record(&self) -> Value {
        record(&scan_json(&self.env, &["--tmux-socket", &self.sock()]), "W").clone()
    }

    pub(crate) fn reply(&self, text: &str) -> (i32, Value, String) {
        let sock = self.sock();
        let o = self.env.run(&layout_args(
            &self.env,
            &["reply"],
            &["--tmux-socket", &sock, "--json", "W", text],
        ));
        (
            o.status.code().unwrap_or(-1),
            serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    /// The text of every user message in pi's session file, in order.
    pub(crate) fn user_messages(&self) -> Vec<String> {
        real_pi_support::user_messages(&self.file)
    }

    fn screen(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", PANE])
    }

    pub(crate) fn runs_pi(&self) -> bool {
        let c = self
            .server
            .tmux(&["list-panes", "-t", PANE, "-F", "#{pane_current_command}"]);
        c.trim() == "pi" || c.trim() == "node"
    }

    /// Idle in the file and settled in the registration (the typed transport tells started from
    /// queued by the registered run state).
    pub(crate) fn wait_idle(&self) {
        wait_for(30_000, || {
            let w = self.record();
            (w["state"] == "idle" && w["registered"]["runState"] == "idle").then_some(())
        })
        .unwrap_or_else(|| panic!("pi never settled: {}", self.record()));
    }

    /// Wait until the user messages are exactly `n`, then return them.
    pub(crate) fn wait_messages(&self, n: usize) -> Vec<String> {
        wait_for(30_000, || {
            let m = self.user_messages();
            (m.len() >= n).then_some(m)
        })
        .unwrap_or_else(|| {
            panic!(
                "{} user messages, want {n}\n{}",
                self.user_messages().len(),
                self.screen()
            )
        })
    }
}

/// What pi records for a reply: the text itself, nothing added (surrounding white space aside,
/// which every transport drops, as pi's editor does).
pub(crate) fn body(text: &str) -> String {
    intercom_pane::seam::reply_text::trim_like_pi(text).to_string()
}

/// The texts that must arrive byte-identical.
fn exact_texts() -> Vec<String> {
    let mut long: String = "Long reply: ".into();
    while long.chars().count() < 2000 {
        long.push_str("é ünïcödé 'q' \"qq\" $(x) `y` 0123456789 ");
    }
    let long: String = long.chars().take(2000).collect();
    vec![
        "line one\nline two\n\n  indented four\nlast: 'single' \"double\" $(whoami) `date` $HOME \\ back".into(),
        "Grüße, 日本語, emoji 🚀, ∑ math".into(),
        long,
    ]
}

/// Everything both transports must do. `typed`: the seat has no channel.
fn check_seat(seat: &Seat, typed: bool) {
    let transport = if typed { "typed" } else { "channel" };
    let mut expected = seat.user_messages();
    seat.wait_idle();

    // 1. A text that would end a bracketed paste and quit pi: refused, nothing sent.
    let (code, _, err) = seat.reply("ok\u{1b}[201~/quit\r");
    assert_eq!(code, 9, "{err}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(seat.runs_pi(), "pi keeps running");
    assert_eq!(seat.user_messages(), expected);

    // 2. Copy mode (the person scrolled up): one message, identical.
    seat.server.tmux(&["copy-mode", "-t", PANE]);
    let text = "Copy mode reply\n/session\nsecond line";
    let (code, receipt, err) = seat.reply(text);
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], transport, "{receipt}");
    assert_eq!(receipt["outcome"], "delivered", "{receipt}");
    expected.push(body(text));
    assert_eq!(seat.wait_messages(expected.len()), expected);
    seat.wait_idle();

    // 3. A draft in pi's editor is never submitted with a reply.
    // The channel leaves copy mode alone (typing left it): the person leaves it to type.
    seat.server.tmux(&[
        "if-shell",
        "-F",
        "-t",
        PANE,
        "#{pane_in_mode}",
        "send-keys -X -t =W: cancel",
        "",
    ]);
    seat.server
        .tmux(&["send-keys", "-t", PANE, "-l", "my unsent draft"]);
    wait_for(5_000, || {
        seat.screen().contains("my unsent draft").then_some(())
    })
    .expect("the draft shows");
    let (code, receipt, err) = seat.reply("Reply beside a draft");
    if typed {
        assert_eq!(code, 10, "{receipt} {err}");
        assert!(err.contains("draft"), "{err}");
    } else {
        assert_eq!(code, 0, "{receipt} {err}");
        expected.push(body("Reply beside a draft"));
        assert_eq!(seat.wait_messages(expected.len()), expected);
        seat.wait_idle();
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        seat.user_messages(),
        expected,
        "the draft was not submitted"
    );
    assert!(seat.screen().contains("my unsent draft"), "the draft stays");
    // The person clears their draft (Ctrl-U clears the line in pi's editor).
    seat.server.tmux(&["send-keys", "-t", PANE, "C-u"]);
    wait_for(5_000, || {
        (!seat.screen().contains("my unsent draft")).then_some(())
    })
    .expect("draft cleared");

    // 4. A long tool: the reply is queued and arrives after the tool, as one message.
    seat.server
        .tmux(&["send-keys", "-t", PANE, "-l", "SCENARIO:tool please"]);
    std::thread::sleep(Duration::from_millis(200));
    seat.server.tmux(&["send-keys", "-t", PANE, "Enter"]);
    expected.push("SCENARIO:tool please".into());
    wait_for(15_000, || {
        let w = seat.record();
        (w["state"] == "working" && w["registered"]["runState"] == "working").then_some(())
    })
    .expect("the tool runs");
    let (code, receipt, err) = seat.reply("Reply during the tool");
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["outcome"], "queued", "{receipt}");
    expected.push(body("Reply during the tool"));
    let got = seat.wait_messages(expected.len());
    assert_eq!(got, expected);
    let lines = std::fs::read_to_string(&seat.file).unwrap();
    let tool_at = lines
        .find("\"role\":\"toolResult\"")
        .expect("the tool result");
    let reply_at = lines.find("Reply during the tool").unwrap();
    assert!(reply_at > tool_at, "the reply arrives after the tool");
    seat.wait_idle();

    // 5. Byte-identical texts.
    for text in exact_texts() {
        let started = std::time::Instant::now();
        let (code, receipt, err) = seat.reply(&text);
        eprintln!(
            "{transport}: {} characters answered {} in {} ms",
            text.chars().count(),
            receipt["outcome"],
            started.elapsed().as_millis()
        );
        assert_eq!(code, 0, "{receipt} {err}");
        assert_eq!(receipt["outcome"], "delivered", "{receipt}");
        // What pi records is exactly what was typed.
        assert_eq!(body(&text), text);
        expected.push(text.clone());
        assert_eq!(seat.wait_messages(expected.len()), expected);
        seat.wait_idle();
    }

    // 6. Texts pi's editor would run as a command: a message through the channel, refused when
    //    typed; no command runs either way.
    let marker = seat.env.path("marker");
    let commands = [
        format!("!touch {}", marker.display()),
        format!("  !!touch {}", marker.display()),
        "/quit".to_string(),
    ];
    for text in &commands {
        let (code, receipt, err) = seat.reply(text);
        if typed {
            assert_eq!(code, 12, "{text:?}: {receipt} {err}");
            assert!(err.contains("pi's editor"), "{err}");
        } else {
            assert_eq!(code, 0, "{text:?}: {receipt} {err}");
            assert_eq!(receipt["outcome"], "delivered", "{receipt}");
            expected.push(body(text));
            assert_eq!(seat.wait_messages(expected.len()), expected);
            seat.wait_idle();
        }
    }
    if !typed {
        // Where it came from is shown to the person in pi's window, not added to the text.
        wait_for(5_000, || {
            seat.screen()
                .contains("intercom-pane: this message was sent from the board")
                .then_some(())
        })
        .unwrap_or_else(|| panic!("no notice on screen:\n{}", seat.screen()));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(seat.user_messages(), expected);
    assert!(!marker.exists(), "a reply ran as a command");
    assert!(seat.runs_pi(), "a reply quit pi");
    let file = std::fs::read_to_string(&seat.file).unwrap();
    assert!(
        !file.contains("intercom-pane:") && !file.contains("bashExecution"),
        "nothing of ours and no command in the session"
    );
    assert!(seat.runs_pi());
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_reply_through_the_extensions_channel_arrives_exactly_once() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let seat = Seat::start(&bin, true);
    check_seat(&seat, false);
    seat.server.tmux(&["send-keys", "-t", PANE, "C-d"]);
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_typed_reply_arrives_exactly_once_or_not_at_all() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let seat = Seat::start(&bin, false);
    check_seat(&seat, true);
    seat.server.tmux(&["send-keys", "-t", PANE, "C-d"]);
}
