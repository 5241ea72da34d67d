//! Glyphs, words and colours. Words and glyphs always carry state; colour only repeats it.

use ratatui::style::{Color, Modifier, Style};

use crate::board::intercom::ObservedStatus;
use crate::states::{BoardState, ConnState, ReportStatus};

/// One glyph per board state, distinct without colour.
pub(crate) fn glyph(s: BoardState) -> &'static str {
    match s {
        BoardState::Working => "●",
        BoardState::Waiting => "!",
        BoardState::Error => "✗",
        BoardState::Offline => "○",
        BoardState::Idle => "·",
        BoardState::Unknown => "?",
    }
}

/// States a person should look at first (the one rule: `BoardState::needs_attention`).
pub(crate) fn needs_attention(s: BoardState) -> bool {
    s.needs_attention()
}

/// Whether Intercom's observed activity says the opposite of the board state (busy against
/// not busy). The two come from different evidence at different times: the row marks the
/// Activity cell and the details explain which is which.
pub(crate) fn activity_differs(state: BoardState, activity: ObservedStatus) -> bool {
    let busy = matches!(activity, ObservedStatus::Working | ObservedStatus::Thinking);
    let quiet = matches!(activity, ObservedStatus::Idle | ObservedStatus::Closed);
    match state {
        BoardState::Working => quiet,
        BoardState::Waiting | BoardState::Idle | BoardState::Error | BoardState::Offline => busy,
        BoardState::Unknown => false,
    }
}

/// Styles; with `color == false` no foreground or background colour is ever set.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub color: bool,
}

impl Theme {
    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    /// Board state glyph and word.
    pub(crate) fn state(&self, s: BoardState) -> Style {
        match s {
            BoardState::Working => self.fg(Color::Green),
            BoardState::Waiting => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            BoardState::Error => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            BoardState::Offline => self.fg(Color::DarkGray),
            BoardState::Idle => Style::default(),
            BoardState::Unknown => self.fg(Color::Magenta),
        }
    }

    /// Connection word.
    pub(crate) fn conn(&self, c: ConnState) -> Style {
        match c {
            ConnState::Connected => self.fg(Color::Green),
            ConnState::Disconnected => self.fg(Color::Red),
            ConnState::Unknown => self.fg(Color::DarkGray),
        }
    }

    /// Report word.
    pub(crate) fn report(&self, status: ReportStatus) -> Style {
        match status {
            ReportStatus::Blocked => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            ReportStatus::NeedsDecision => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            ReportStatus::ReadyForReview => self.fg(Color::Cyan),
            ReportStatus::Clear => Style::default(),
        }
    }

    /// Old or missing evidence.
    pub(crate) fn dim(&self) -> Style {
        self.fg(Color::DarkGray)
    }

    /// Table header and section titles.
    pub(crate) fn header(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// Warnings (status unavailable, scan errors, refusals).
    pub(crate) fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }

    /// The title line while the sidebar has the keyboard: reverse video, so it shows without
    /// colour too.
    pub(crate) fn focused(&self) -> Style {
        Style::default()
            .add_modifier(Modifier::REVERSED)
            .add_modifier(Modifier::BOLD)
    }

    /// The selected line: reverse video works without colour too.
    pub(crate) fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}
