//! The one quoting rule for what runs on another host: ssh joins its arguments into one string
//! that the remote user's login shell parses again, so every word of a remote command is
//! single-quoted, always (`'` written as `'\''`), and a word that cannot survive a C string (a
//! NUL) is refused. The handshake (`hosts::link`) sends a word holding every character that
//! matters to a shell and refuses a host whose shell does not hand it back unchanged (a shell
//! that is not POSIX-like, such as csh or fish).

/// Why a remote command could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NulInWord;

impl std::fmt::Display for NulInWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a word of the remote command holds a NUL byte")
    }
}

/// One word for a POSIX shell, single-quoted whatever it holds.
pub fn word(w: &str) -> Result<String, NulInWord> {
    if w.contains('\0') {
        return Err(NulInWord);
    }
    Ok(format!("'{}'", w.replace('\'', "'\\''")))
}

/// A whole command line: each word quoted, joined by spaces.
pub(crate) fn command<S: AsRef<str>>(argv: &[S]) -> Result<String, NulInWord> {
    let words: Result<Vec<String>, NulInWord> = argv.iter().map(|w| word(w.as_ref())).collect();
    Ok(words?.join(" "))
}

/// What the handshake asks the remote shell to hand back unchanged: quotes, expansions,
/// separators, comments, globs, history, a tmux format and a newline.
pub const PROBE_WORD: &str = "a'b\"c $(x) `y` ${z} ;|&<>* ? ~ # ! \\ #(t) #{u} %1\nend\t";

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh -c` makes of a quoted command: its words, one per line, NUL-separated.
    fn through_sh(words: &[&str]) -> Vec<String> {
        let line = command(words).unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let mut v: Vec<String> = text.split('\0').map(str::to_string).collect();
        v.pop();
        v
    }

    #[test]
    fn hostile_words_come_back_exactly() {
        let words = [
            "'",
            "''",
            "a'b",
            "$(touch /tmp/ip-quote-pwned)",
            "`touch /tmp/ip-quote-pwned`",
            "x\ny",
            ";",
            "a;b",
            "#(touch /tmp/ip-quote-pwned)",
            "#{pane_id}",
            "#",
            "&&",
            "|",
            "*",
            "~",
            "!",
            "$HOME",
            "\\",
            "\\'",
            "-",
            "--",
            "",
            " ",
            "\t",
            "é日本",
            PROBE_WORD,
        ];
        assert_eq!(through_sh(&words), words);
        assert!(!std::path::Path::new("/tmp/ip-quote-pwned").exists());
    }

    #[test]
    fn every_word_is_quoted_and_nul_refused() {
        assert_eq!(word("abc").unwrap(), "'abc'");
        assert_eq!(word("it's").unwrap(), "'it'\\''s'");
        assert_eq!(word("").unwrap(), "''");
        assert_eq!(word("a\0b"), Err(NulInWord));
        assert_eq!(command(&["a", "b c"]).unwrap(), "'a' 'b c'");
    }

    #[test]
    fn generated_words_round_trip() {
        // A small deterministic generator over the characters a shell cares about.
        let alphabet: Vec<char> = "'\"$`\\;|&<>()[]{}*?~#!% \t\nab-=:.,/é".chars().collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut words = Vec::new();
        for _ in 0..200 {
            let mut w = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 12) as usize;
            for i in 0..len {
                let k = ((seed >> (i * 5)) as usize) % alphabet.len();
                w.push(alphabet[k]);
            }
            words.push(w);
        }
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        assert_eq!(through_sh(&refs), words);
    }
}
