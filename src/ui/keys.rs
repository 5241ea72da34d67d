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
    /// The worker list, no panel open.
    List,
    /// The worker list with the details or the preview panel open.
    Details,
    /// The reply editor (printable keys type text there).
    Reply,
    /// A refusal on screen: only Enter/Esc (dismiss) and Ctrl+C (quit) do anything, so text
    /// typed after a refused `r` can never act as commands.
    Notice,
    /// The key help overlay.
    Help,
    /// Typing the name filter (printable keys are its text).
    Filter,
    /// A close or resume waiting for its explicit confirmation.
    Confirm,
    /// The spawn form (printable keys are its text; it handles its own keys).
    Spawn,
    /// The hosts view (`m`): every other machine's state; one asked again at a time.
    Hosts,
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
    /// Enter: go to the selected worker's pane (or expand/collapse the Seen group).
    Jump,
    /// Next / previous seat that needs attention, wrapping.
    NextAttention,
    PrevAttention,
    /// Open/close the details panel (or switch the panel to details).
    ToggleDetails,
    /// Open/close the preview panel (or switch the panel to the preview).
    TogglePreview,
    /// Open/close the review view: the worker's changed files and diff.
    ToggleReview,
    /// Open/close the panel with the worker's timeline (`log NAME`).
    ToggleTimeline,
    /// Esc with a panel open.
    CloseDetails,
    /// Scroll the panel (short panes).
    ScrollDetailsUp,
    ScrollDetailsDown,
    /// Esc in the list: clear the filter, else quit.
    Back,
    /// Leave the monitor (only the monitor: nothing else is touched).
    Quit,
    ToggleSeen,
    HideOffline,
    HideSeen,
    /// `H`: every other host waiting to be asked again is asked now.
    RetryHosts,
    /// `m`: the hosts view; in it, select a host, ask the selected one again now, close it.
    OpenHosts,
    HostUp,
    HostDown,
    RetryHost,
    CloseHosts,
    OpenReply,
    /// Ask to close / resume the selected worker (a confirmation follows).
    CloseWorker,
    ResumeWorker,
    /// Raise the selected worker's cost budget by half (asks first).
    RaiseBudget,
    /// `+`: the spawn form (name, first task, worktree).
    OpenSpawn,
    /// The confirmation's answer.
    Confirm,
    Cancel,
    OpenHelp,
    CloseHelp,
    /// A page of the help overlay: the rows it has, less one kept for context.
    HelpPageDown,
    HelpPageUp,
    /// `/`: type a name filter; Enter keeps it, Esc clears it.
    OpenFilter,
    AcceptFilter,
    ClearFilter,
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
    /// Key label in the key line; empty keeps the binding out of the key line (the help
    /// overlay still lists it).
    pub label: &'static str,
    /// What it does, in the key line and the help overlay.
    pub what: &'static str,
}

const LIST: &[Mode] = &[Mode::List, Mode::Details];
const LIST_ONLY: &[Mode] = &[Mode::List];
const DETAILS_ONLY: &[Mode] = &[Mode::Details];
const REPLY: &[Mode] = &[Mode::Reply];
const NOTICE: &[Mode] = &[Mode::Notice];
const HELP: &[Mode] = &[Mode::Help];
const FILTER: &[Mode] = &[Mode::Filter];
const CONFIRM: &[Mode] = &[Mode::Confirm];
const HOSTS: &[Mode] = &[Mode::Hosts];
const ALL: &[Mode] = &[
    Mode::List,
    Mode::Details,
    Mode::Reply,
    Mode::Notice,
    Mode::Help,
    Mode::Filter,
    Mode::Confirm,
    Mode::Spawn,
    Mode::Hosts,
];

const fn b(
    keys: &'static [Key],
    action: Action,
    modes: &'static [Mode],
    label: &'static str,
    what: &'static str,
) -> Binding {
    Binding {
        keys,
        action,
        modes,
        label,
        what,
    }
}

/// The table. First match wins; order is also the key line's and the overlay's order.
pub const BINDINGS: &[Binding] = &[
    b(&[Key::Enter], Action::Jump, LIST, "⏎", "go to pane"),
    b(
        &[Key::Char('n')],
        Action::NextAttention,
        LIST,
        "n/N",
        "next needing you",
    ),
    b(
        &[Key::Char('N')],
        Action::PrevAttention,
        LIST,
        "",
        "previous needing you",
    ),
    b(
        &[Key::Char('d')],
        Action::ToggleDetails,
        LIST,
        "d",
        "details",
    ),
    b(
        &[Key::Char('p')],
        Action::TogglePreview,
        LIST,
        "p",
        "preview",
    ),
    // Not on the key line (it is full); the `?` overlay lists it.
    b(
        &[Key::Char('l')],
        Action::ToggleTimeline,
        LIST,
        "",
        "timeline: turns, tools, questions (log)",
    ),
    b(&[Key::Char('r')], Action::OpenReply, LIST, "r", "reply"),
    b(
        &[Key::Char('v')],
        Action::ToggleReview,
        LIST,
        "",
        "review: changed files and diff",
    ),
    b(
        &[Key::Esc],
        Action::CloseDetails,
        DETAILS_ONLY,
        "Esc",
        "close panel",
    ),
    b(
        &[Key::PageDown],
        Action::ScrollDetailsDown,
        DETAILS_ONLY,
        "PgDn/PgUp",
        "scroll",
    ),
    b(
        &[Key::PageUp],
        Action::ScrollDetailsUp,
        DETAILS_ONLY,
        "",
        "scroll up",
    ),
    b(
        &[Key::Char('s')],
        Action::ToggleSeen,
        LIST,
        "s",
        "mark seen",
    ),
    b(
        &[Key::Char('C')],
        Action::CloseWorker,
        LIST,
        "C",
        "close worker",
    ),
    b(
        &[Key::Char('R')],
        Action::ResumeWorker,
        LIST,
        "R",
        "resume worker",
    ),
    b(
        &[Key::Char('$')],
        Action::RaiseBudget,
        LIST,
        // In the help overlay only: the key line is full.
        "",
        "raise budget",
    ),
    b(
        &[Key::Char('+')],
        Action::OpenSpawn,
        LIST,
        "+",
        "spawn worker",
    ),
    b(&[Key::Char('/')], Action::OpenFilter, LIST, "/", "filter"),
    b(
        &[Key::Up, Key::Char('k')],
        Action::Up,
        LIST,
        "↑↓/jk",
        "select",
    ),
    b(
        &[Key::Down, Key::Char('j')],
        Action::Down,
        LIST,
        "",
        "select down",
    ),
    b(
        &[Key::Char('o')],
        Action::HideOffline,
        LIST,
        "o",
        "hide offline",
    ),
    b(&[Key::Char('h')], Action::HideSeen, LIST, "h", "hide seen"),
    b(
        &[Key::Char('H')],
        Action::RetryHosts,
        LIST,
        "",
        "ask other hosts again now",
    ),
    b(
        &[Key::Char('m')],
        Action::OpenHosts,
        LIST,
        "",
        "hosts: every machine's state",
    ),
    b(&[Key::PageUp], Action::PageUp, LIST, "", "page up"),
    b(&[Key::PageDown], Action::PageDown, LIST, "", "page down"),
    b(&[Key::Home, Key::Char('g')], Action::Top, LIST, "", "first"),
    b(
        &[Key::End, Key::Char('G')],
        Action::Bottom,
        LIST,
        "",
        "last",
    ),
    b(&[Key::Char('?')], Action::OpenHelp, LIST, "?", "help"),
    // Esc in the list: clear the filter first, else quit (in Details the row above wins).
    b(
        &[Key::Esc],
        Action::Back,
        LIST_ONLY,
        "",
        "clear filter, else quit",
    ),
    b(&[Key::Char('q')], Action::Quit, LIST, "q", "quit"),
    b(&[Key::Enter], Action::Send, REPLY, "⏎", "send"),
    b(&[Key::Esc], Action::CloseReply, REPLY, "Esc", "close"),
    b(
        &[Key::AltEnter, Key::Ctrl('j')],
        Action::NewLine,
        REPLY,
        "M-⏎/^J",
        "newline",
    ),
    b(&[Key::Up], Action::CursorUp, REPLY, "", "line up"),
    b(&[Key::Down], Action::CursorDown, REPLY, "", "line down"),
    b(&[Key::Left], Action::CursorLeft, REPLY, "", "left"),
    b(&[Key::Right], Action::CursorRight, REPLY, "", "right"),
    b(
        &[Key::Home, Key::Ctrl('a')],
        Action::CursorHome,
        REPLY,
        "",
        "line start",
    ),
    b(
        &[Key::End, Key::Ctrl('e')],
        Action::CursorEnd,
        REPLY,
        "",
        "line end",
    ),
    b(
        &[Key::Backspace],
        Action::DeleteBack,
        REPLY,
        "",
        "delete back",
    ),
    b(&[Key::Delete], Action::DeleteForward, REPLY, "", "delete"),
    b(
        &[Key::Enter, Key::Esc],
        Action::Dismiss,
        NOTICE,
        "⏎/Esc",
        "dismiss",
    ),
    b(
        &[Key::Char('y')],
        Action::Confirm,
        CONFIRM,
        "y",
        "yes, do it",
    ),
    b(
        &[Key::Char('n'), Key::Esc],
        Action::Cancel,
        CONFIRM,
        "n/Esc",
        "cancel",
    ),
    b(
        &[Key::Enter],
        Action::AcceptFilter,
        FILTER,
        "⏎",
        "keep filter",
    ),
    b(
        &[Key::Esc],
        Action::ClearFilter,
        FILTER,
        "Esc",
        "clear filter",
    ),
    b(
        &[Key::Backspace],
        Action::DeleteBack,
        FILTER,
        "",
        "delete back",
    ),
    b(
        &[Key::PageDown, Key::Char(' ')],
        Action::HelpPageDown,
        HELP,
        "PgDn/PgUp",
        "page",
    ),
    b(&[Key::PageUp], Action::HelpPageUp, HELP, "", "page up"),
    b(
        &[Key::Char('j'), Key::Down],
        Action::ScrollDetailsDown,
        HELP,
        "",
        "scroll",
    ),
    b(
        &[Key::Char('k'), Key::Up],
        Action::ScrollDetailsUp,
        HELP,
        "",
        "scroll up",
    ),
    b(
        &[Key::Esc, Key::Char('?'), Key::Char('q'), Key::Enter],
        Action::CloseHelp,
        HELP,
        "Esc/?",
        "close help",
    ),
    b(
        &[Key::Up, Key::Char('k')],
        Action::HostUp,
        HOSTS,
        "↑↓/jk",
        "select host",
    ),
    b(
        &[Key::Down, Key::Char('j')],
        Action::HostDown,
        HOSTS,
        "",
        "select next host",
    ),
    b(
        &[Key::Char('H'), Key::Enter],
        Action::RetryHost,
        HOSTS,
        "H/⏎",
        "retry now",
    ),
    b(
        &[Key::Esc, Key::Char('m'), Key::Char('q')],
        Action::CloseHosts,
        HOSTS,
        "Esc/m",
        "close hosts",
    ),
    b(&[Key::Ctrl('c')], Action::Quit, ALL, "^C", "quit"),
];

/// The table's action for `key` in `mode`, if any.
pub(crate) fn action_for(mode: Mode, key: Key) -> Option<Action> {
    BINDINGS
        .iter()
        .find(|b| b.modes.contains(&mode) && b.keys.contains(&key))
        .map(|b| b.action)
}

/// The key line fitted to `width` columns: entries drop from the end, but how to get help and
/// how to quit stay.
pub(crate) fn help_line_fitted(mode: Mode, width: usize) -> String {
    let mut parts = help_parts(mode);
    let keep = parts
        .iter()
        .rev()
        .take_while(|p| p.starts_with("? ") || p.starts_with("q ") || p.starts_with("^C "))
        .count()
        .max(1)
        .min(parts.len());
    let tail = parts.split_off(parts.len() - keep);
    loop {
        let mut all = parts.clone();
        all.extend(tail.iter().cloned());
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
pub(crate) fn key_of(ev: &KeyEvent) -> Option<Key> {
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

/// How the help overlay names a key.
pub(crate) fn key_name(k: Key) -> String {
    match k {
        Key::Char(' ') => "Space".into(),
        Key::Char(c) => c.to_string(),
        Key::Ctrl(c) => format!("^{}", c.to_ascii_uppercase()),
        Key::AltEnter => "M-⏎".into(),
        Key::Up => "↑".into(),
        Key::Down => "↓".into(),
        Key::Left => "←".into(),
        Key::Right => "→".into(),
        Key::Enter => "⏎".into(),
        Key::Esc => "Esc".into(),
        Key::Backspace => "Backspace".into(),
        Key::Delete => "Delete".into(),
        Key::Home => "Home".into(),
        Key::End => "End".into(),
        Key::PageUp => "PgUp".into(),
        Key::PageDown => "PgDn".into(),
    }
}

/// Where each part of the sidebar is named in the help overlay, in order.
const SECTIONS: &[(Mode, &str)] = &[
    (Mode::List, "List"),
    (Mode::Details, "With details or preview open"),
    (Mode::Reply, "Reply box"),
    (Mode::Filter, "Filter (/)"),
    (Mode::Confirm, "Close / resume confirmation"),
    (Mode::Notice, "A refusal on screen"),
    (Mode::Hosts, "Hosts view (m)"),
    (Mode::Help, "This help"),
];

/// The help overlay, built from the table: per part of the sidebar, each binding's keys and
/// what it does (a binding shared with the list is listed once, under List).
pub(crate) fn overlay() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    SECTIONS
        .iter()
        .map(|&(mode, title)| {
            let rows = BINDINGS
                .iter()
                .filter(|b| b.modes.contains(&mode))
                .filter(|b| mode == Mode::List || !b.modes.contains(&Mode::List))
                .filter(|b| mode == Mode::List || b.modes != ALL)
                .map(|b| {
                    let keys: Vec<String> = b.keys.iter().map(|k| key_name(*k)).collect();
                    (keys.join(" "), b.what)
                })
                .collect();
            (title, rows)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole help line for `mode`, built from the table (`^C quit` is shown only where `q`
    /// is not).
    fn help_line(mode: Mode) -> String {
        help_parts(mode).join("  ")
    }

    #[test]
    fn esc_closes_panels_and_clears_the_filter_before_quitting() {
        assert_eq!(
            action_for(Mode::Details, Key::Esc),
            Some(Action::CloseDetails)
        );
        assert_eq!(action_for(Mode::List, Key::Esc), Some(Action::Back));
        assert_eq!(action_for(Mode::Reply, Key::Esc), Some(Action::CloseReply));
        assert_eq!(
            action_for(Mode::Filter, Key::Esc),
            Some(Action::ClearFilter)
        );
        assert_eq!(action_for(Mode::Confirm, Key::Esc), Some(Action::Cancel));
        for m in [
            Mode::List,
            Mode::Details,
            Mode::Reply,
            Mode::Notice,
            Mode::Help,
            Mode::Filter,
            Mode::Confirm,
            Mode::Hosts,
        ] {
            assert_eq!(action_for(m, Key::Ctrl('c')), Some(Action::Quit));
        }
        // A refusal on screen: only Enter/Esc dismiss it; letters (even `q`, `o`, `r`) do nothing.
        for k in [Key::Enter, Key::Esc] {
            assert_eq!(action_for(Mode::Notice, k), Some(Action::Dismiss));
        }
        for c in ['q', 'o', 'r', 's', 'h', 'j', 'k', 'g', 'G', 'y', 'C', 'R'] {
            assert_eq!(action_for(Mode::Notice, Key::Char(c)), None, "{c}");
        }
        // The confirmation takes `y` only; every other letter does nothing.
        for c in ['q', 'C', 'R', 'r', 'Y', 'j'] {
            assert_eq!(action_for(Mode::Confirm, Key::Char(c)), None, "{c}");
        }
        assert_eq!(action_for(Mode::Confirm, Key::Enter), None);
        // In the editor and the filter `q` is text, not quit.
        assert_eq!(action_for(Mode::Reply, Key::Char('q')), None);
        assert_eq!(action_for(Mode::Filter, Key::Char('q')), None);
        assert_eq!(
            action_for(Mode::Details, Key::Char('q')),
            Some(Action::Quit)
        );
        assert_eq!(action_for(Mode::List, Key::Enter), Some(Action::Jump));
        assert_eq!(action_for(Mode::Details, Key::Enter), Some(Action::Jump));
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
    fn key_line_and_overlay_come_from_the_table() {
        assert_eq!(
            help_line(Mode::List),
            "⏎ go to pane  n/N next needing you  d details  p preview  r reply  s mark seen  \
             C close worker  R resume worker  + spawn worker  / filter  ↑↓/jk select  \
             o hide offline  h hide seen  ? help  q quit"
        );
        // The spawn form draws its own keys; only Ctrl+C is the table's there.
        assert_eq!(help_line(Mode::Spawn), "^C quit");
        assert_eq!(
            help_line(Mode::Reply),
            "⏎ send  Esc close  M-⏎/^J newline  ^C quit"
        );
        assert_eq!(help_line(Mode::Notice), "⏎/Esc dismiss  ^C quit");
        assert_eq!(
            help_line(Mode::Hosts),
            "↑↓/jk select host  H/⏎ retry now  Esc/m close hosts"
        );
        assert_eq!(
            action_for(Mode::Hosts, Key::Char('q')),
            Some(Action::CloseHosts)
        );
        assert_eq!(
            action_for(Mode::Hosts, Key::Char('r')),
            None,
            "no reply here"
        );
        assert_eq!(
            action_for(Mode::List, Key::Char('m')),
            Some(Action::OpenHosts)
        );
        assert_eq!(
            help_line(Mode::Confirm),
            "y yes, do it  n/Esc cancel  ^C quit"
        );
        // Narrow: help and quit stay.
        let narrow = help_line_fitted(Mode::List, 30);
        assert!(narrow.ends_with("? help  q quit"), "{narrow}");
        assert!(crate::text::width(&narrow) <= 30, "{narrow}");
        // Every labelled binding dispatches to its own action in its modes.
        for b in BINDINGS.iter().filter(|b| !b.label.is_empty()) {
            for &m in b.modes {
                assert!(b.keys.iter().any(|&k| action_for(m, k) == Some(b.action)));
            }
        }
        // The overlay lists every binding of the list, once, with its keys.
        let o = overlay();
        let list = &o[0].1;
        assert!(list.contains(&("⏎".to_string(), "go to pane")));
        assert!(list.contains(&("Home g".to_string(), "first")));
        assert!(list.contains(&("^C".to_string(), "quit")));
        assert!(list.contains(&("$".to_string(), "raise budget")));
        let details = &o[1].1;
        assert!(details.iter().all(|(_, w)| *w != "select"), "{details:?}");
        assert!(details.contains(&("Esc".to_string(), "close panel")));
        for (title, rows) in &o {
            assert!(!rows.is_empty(), "{title}");
        }
    }
}
