//! Key bindings as data: one table drives both dispatch and the help line, so they cannot drift.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as the binding table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Ctrl(char),
    /// Alt+Enter (a terminal sends ESC CR): a newline in the reply editor.
    AltEnter,
    Up,
    Down,
    Left,
    Right,
    Enter,
    Esc,
    Backspace,
    Delete,
    Home,
    End,
    PageUp,
    PageDown,
}

/// Which part of the sidebar has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The worker list, details closed.
    List,
    /// The worker list with details open.
    Details,
    /// The reply editor (printable keys type text there).
    Reply,
    /// A refusal on screen: only Enter/Esc (dismiss) and Ctrl+C (quit) do anything, so text
    /// typed after a refused `r` can never act as commands.
    Notice,
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Enter: open/close details (or expand/collapse the Seen group).
    ToggleDetails,
    /// Esc with details open.
    CloseDetails,
    /// Scroll the details panel (short panes).
    ScrollDetailsUp,
    ScrollDetailsDown,
    /// Leave the monitor (only the monitor: nothing else is touched).
    Quit,
    ToggleSeen,
    HideOffline,
    HideSeen,
    OpenReply,
    Send,
    CloseReply,
    CursorLeft,
    CursorRight,
    CursorHome,
    CursorEnd,
    DeleteBack,
    DeleteForward,
    /// Line break in the reply editor.
    NewLine,
    /// Previous/next line in the reply editor.
    CursorUp,
    CursorDown,
    /// Clear the refusal on screen; does nothing else.
    Dismiss,
}

/// One row of the binding table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [Key],
    pub action: Action,
    pub modes: &'static [Mode],
    /// Key label in the help line; empty keeps the binding out of the help line.
    pub label: &'static str,
    /// What it does, in the help line.
    pub what: &'static str,
}

const LIST: &[Mode] = &[Mode::List, Mode::Details];
const LIST_ONLY: &[Mode] = &[Mode::List];
const DETAILS_ONLY: &[Mode] = &[Mode::Details];
const REPLY: &[Mode] = &[Mode::Reply];
const NOTICE: &[Mode] = &[Mode::Notice];
const ALL: &[Mode] = &[Mode::List, Mode::Details, Mode::Reply, Mode::Notice];

/// The table. First match wins; order is also the help line order.
pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[Key::Up, Key::Char('k')],
        action: Action::Up,
        modes: LIST,
        label: "↑↓/jk",
        what: "select",
    },
    Binding {
        keys: &[Key::Down, Key::Char('j')],
        action: Action::Down,
        modes: LIST,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Enter],
        action: Action::ToggleDetails,
        modes: LIST_ONLY,
        label: "⏎",
        what: "details",
    },
    Binding {
        keys: &[Key::Enter, Key::Esc],
        action: Action::CloseDetails,
        modes: DETAILS_ONLY,
        label: "⏎/Esc",
        what: "close",
    },
    Binding {
        keys: &[Key::PageDown],
        action: Action::ScrollDetailsDown,
        modes: DETAILS_ONLY,
        label: "PgDn/PgUp",
        what: "scroll",
    },
    Binding {
        keys: &[Key::PageUp],
        action: Action::ScrollDetailsUp,
        modes: DETAILS_ONLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Char('s')],
        action: Action::ToggleSeen,
        modes: LIST,
        label: "s",
        what: "seen",
    },
    Binding {
        keys: &[Key::Char('r')],
        action: Action::OpenReply,
        modes: LIST,
        label: "r",
        what: "reply",
    },
    Binding {
        keys: &[Key::Char('o')],
        action: Action::HideOffline,
        modes: LIST,
        label: "o",
        what: "hide offline",
    },
    Binding {
        keys: &[Key::Char('h')],
        action: Action::HideSeen,
        modes: LIST,
        label: "h",
        what: "hide seen",
    },
    Binding {
        keys: &[Key::PageUp],
        action: Action::PageUp,
        modes: LIST,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::PageDown],
        action: Action::PageDown,
        modes: LIST,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Home, Key::Char('g')],
        action: Action::Top,
        modes: LIST,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::End, Key::Char('G')],
        action: Action::Bottom,
        modes: LIST,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Enter],
        action: Action::Send,
        modes: REPLY,
        label: "⏎",
        what: "send",
    },
    Binding {
        keys: &[Key::Esc],
        action: Action::CloseReply,
        modes: REPLY,
        label: "Esc",
        what: "close",
    },
    Binding {
        keys: &[Key::AltEnter, Key::Ctrl('j')],
        action: Action::NewLine,
        modes: REPLY,
        label: "M-⏎/^J",
        what: "newline",
    },
    Binding {
        keys: &[Key::Up],
        action: Action::CursorUp,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Down],
        action: Action::CursorDown,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Enter, Key::Esc],
        action: Action::Dismiss,
        modes: NOTICE,
        label: "⏎/Esc",
        what: "dismiss",
    },
    Binding {
        keys: &[Key::Left],
        action: Action::CursorLeft,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Right],
        action: Action::CursorRight,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Home, Key::Ctrl('a')],
        action: Action::CursorHome,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::End, Key::Ctrl('e')],
        action: Action::CursorEnd,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Backspace],
        action: Action::DeleteBack,
        modes: REPLY,
        label: "",
        what: "",
    },
    Binding {
        keys: &[Key::Delete],
        action: Action::DeleteForward,
        modes: REPLY,
        label: "",
        what: "",
    },
    // Esc quits only when nothing is open: in Details mode the CloseDetails row above wins.
    Binding {
        keys: &[Key::Esc, Key::Char('q')],
        action: Action::Quit,
        modes: LIST_ONLY,
        label: "q",
        what: "quit",
    },
    Binding {
        keys: &[Key::Char('q')],
        action: Action::Quit,
        modes: DETAILS_ONLY,
        label: "q",
        what: "quit",
    },
    Binding {
        keys: &[Key::Ctrl('c')],
        action: Action::Quit,
        modes: ALL,
        label: "^C",
        what: "quit",
    },
];

/// The table's action for `key` in `mode`, if any.
pub fn action_for(mode: Mode, key: Key) -> Option<Action> {
    BINDINGS
        .iter()
        .find(|b| b.modes.contains(&mode) && b.keys.contains(&key))
        .map(|b| b.action)
}

/// The help line for `mode`, built from the same table (`^C quit` is shown only where `q` is not).
pub fn help_line(mode: Mode) -> String {
    help_parts(mode).join("  ")
}

/// The help line fitted to `width` columns: entries drop from the end, but how to quit stays.
pub fn help_line_fitted(mode: Mode, width: usize) -> String {
    let mut parts = help_parts(mode);
    let quit = parts.pop().unwrap_or_default();
    loop {
        let mut all = parts.clone();
        all.push(quit.clone());
        let line = all.join("  ");
        if parts.is_empty() || crate::text::width(&line) <= width {
            return line;
        }
        parts.pop();
    }
}

fn help_parts(mode: Mode) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let has_q = BINDINGS
        .iter()
        .any(|b| b.modes.contains(&mode) && b.keys.contains(&Key::Char('q')));
    for b in BINDINGS.iter().filter(|b| b.modes.contains(&mode)) {
        if b.label.is_empty() || (has_q && b.keys == [Key::Ctrl('c')]) {
            continue;
        }
        parts.push(format!("{} {}", b.label, b.what));
    }
    parts
}

/// Translate a crossterm key event; `None` for keys the sidebar does not use.
pub fn key_of(ev: &KeyEvent) -> Option<Key> {
    if ev.modifiers.contains(KeyModifiers::ALT) {
        return (ev.code == KeyCode::Enter).then_some(Key::AltEnter);
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    Some(match ev.code {
        KeyCode::Char(c) if ctrl => Key::Ctrl(c.to_ascii_lowercase()),
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Left => Key::Left,
        KeyCode::Right => Key::Right,
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Delete => Key::Delete,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn esc_closes_details_before_quitting() {
        assert_eq!(
            action_for(Mode::Details, Key::Esc),
            Some(Action::CloseDetails)
        );
        assert_eq!(action_for(Mode::List, Key::Esc), Some(Action::Quit));
        assert_eq!(action_for(Mode::Reply, Key::Esc), Some(Action::CloseReply));
        for m in [Mode::List, Mode::Details, Mode::Reply, Mode::Notice] {
            assert_eq!(action_for(m, Key::Ctrl('c')), Some(Action::Quit));
        }
        // A refusal on screen: only Enter/Esc dismiss it; letters (even `q`, `o`, `r`) do nothing.
        for k in [Key::Enter, Key::Esc] {
            assert_eq!(action_for(Mode::Notice, k), Some(Action::Dismiss));
        }
        for c in ['q', 'o', 'r', 's', 'h', 'j', 'k', 'g', 'G'] {
            assert_eq!(action_for(Mode::Notice, Key::Char(c)), None, "{c}");
        }
        for k in [Key::Up, Key::Down, Key::PageDown, Key::Home, Key::AltEnter] {
            assert_eq!(action_for(Mode::Notice, k), None, "{k:?}");
        }
        // In the editor `q` is text, not quit.
        assert_eq!(action_for(Mode::Reply, Key::Char('q')), None);
        assert_eq!(
            action_for(Mode::Details, Key::Char('q')),
            Some(Action::Quit)
        );
    }

    #[test]
    fn alt_enter_and_ctrl_j_are_newlines_in_the_editor_only() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let alt_enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT);
        assert_eq!(key_of(&alt_enter), Some(Key::AltEnter));
        // What crossterm reports for the byte 0x0A in raw mode.
        let ctrl_j = KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL);
        assert_eq!(key_of(&ctrl_j), Some(Key::Ctrl('j')));
        let alt_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT);
        assert_eq!(key_of(&alt_x), None);
        for k in [Key::AltEnter, Key::Ctrl('j')] {
            assert_eq!(action_for(Mode::Reply, k), Some(Action::NewLine));
            assert_eq!(action_for(Mode::List, k), None);
        }
        assert_eq!(action_for(Mode::Reply, Key::Enter), Some(Action::Send));
    }

    #[test]
    fn help_line_comes_from_the_table() {
        assert_eq!(
            help_line(Mode::List),
            "↑↓/jk select  ⏎ details  s seen  r reply  o hide offline  h hide seen  q quit"
        );
        assert_eq!(
            help_line(Mode::Reply),
            "⏎ send  Esc close  M-⏎/^J newline  ^C quit"
        );
        assert_eq!(help_line(Mode::Notice), "⏎/Esc dismiss  ^C quit");
        // Every labelled binding dispatches to its own action in its modes.
        for b in BINDINGS.iter().filter(|b| !b.label.is_empty()) {
            for &m in b.modes {
                assert!(b.keys.iter().any(|&k| action_for(m, k) == Some(b.action)));
            }
        }
    }
}
