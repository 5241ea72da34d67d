//! The reply text rules' shared table of cases (`tests/fixtures/reply_text_cases.json`), read
//! for the Rust side (`check_text`) and for the pi extension's `checkText`, so both are held to
//! the same verdicts.
#![allow(dead_code)]

use intercom_pane::seam::reply_text::{check_text, TextError};

/// One case: what it shows, the text, the verdict both sides must give.
pub struct Case {
    pub what: String,
    pub text: String,
    pub verdict: String,
}

pub fn cases() -> Vec<Case> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/reply_text_cases.json"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let repeat = c["repeat"].as_u64().unwrap_or(1) as usize;
            let text =
                c["text"].as_str().unwrap().repeat(repeat) + c["then"].as_str().unwrap_or("");
            Case {
                what: c["what"].as_str().unwrap().to_string(),
                text,
                verdict: c["verdict"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// `check_text`'s answer as the table's word.
pub fn rust_verdict(text: &str) -> &'static str {
    match check_text(text) {
        Ok(()) => "ok",
        Err(TextError::Control(..)) => "control",
        Err(TextError::Blank) => "blank",
        Err(TextError::TooLong(_)) => "too_long",
        // A rule added later: its own word, so the table (and the extension) must learn it.
        #[allow(unreachable_patterns)]
        Err(_) => "other",
    }
}
