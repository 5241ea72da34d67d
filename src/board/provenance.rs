//! Where a seat's task, workspace, project and session were found: fixed codes the board files
//! and the status JSON carry (kebab-case, as they always have been), each spelled once in its
//! enum's `as_str`, which serialization goes through.

use serde::{Serialize, Serializer};

use crate::mux::MuxKind;

/// Where the seat's task came from (`taskSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSource {
    /// A connector row: its task is fixed.
    Connector,
    /// The seat's live registration.
    Registration,
    /// The first user message of its session file.
    FirstUserMessage,
}

impl TaskSource {
    /// The code as the board files and the details pane show it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSource::Connector => "connector",
            TaskSource::Registration => "registration",
            TaskSource::FirstUserMessage => "first-user-message",
        }
    }
}

/// Where the seat's workspace came from (`workspaceSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceSource {
    /// The seat's live registration.
    Registration,
    /// The current folder of the live pane.
    Pane(MuxKind),
    /// The `cwd` of the session header.
    SessionCwd,
}

impl WorkspaceSource {
    /// The code as the board files show it.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceSource::Registration => "registration",
            WorkspaceSource::Pane(kind) => kind.pane_source(),
            WorkspaceSource::SessionCwd => "session-cwd",
        }
    }
}

/// Where the seat's active project came from (`activeProjectSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectSource {
    /// The seat's live registration.
    Registration,
    /// The git checkout holding its workspace.
    WorkspaceGitRoot,
}

impl ProjectSource {
    /// The code as the board files show it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectSource::Registration => "registration",
            ProjectSource::WorkspaceGitRoot => "workspace-git-root",
        }
    }
}

/// How the session of a seat found only from a pane's pi process was located (`foundBy`).
// Each variant names its `foundBy` word, and every one of those starts with `pi-`.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// `--session <path|id>` or `--session-id <id>` on pi's command line.
    PiSessionFlag,
    /// `--session-dir <dir>` on pi's command line.
    PiSessionDirFlag,
    /// `PI_CODING_AGENT_SESSION_DIR` in pi's environment.
    PiSessionDirEnv,
    /// `PI_CODING_AGENT_DIR` in pi's environment.
    PiAgentDirEnv,
    /// `~/.pi/agent` under pi's `HOME`.
    PiDefaultAgentDir,
    /// None of the above and no `HOME`: no folder to look in.
    PiNoHome,
    /// pi's command line or environment could not be read.
    PiProcessUnreadable,
}

impl FoundBy {
    /// The code as the board files show it.
    pub fn as_str(self) -> &'static str {
        match self {
            FoundBy::PiSessionFlag => "pi-session-flag",
            FoundBy::PiSessionDirFlag => "pi-session-dir-flag",
            FoundBy::PiSessionDirEnv => "pi-session-dir-env",
            FoundBy::PiAgentDirEnv => "pi-agent-dir-env",
            FoundBy::PiDefaultAgentDir => "pi-default-agent-dir",
            FoundBy::PiNoHome => "pi-no-home",
            FoundBy::PiProcessUnreadable => "pi-process-unreadable",
        }
    }
}

/// What ties a seat found from a pane's pi process to its session file (`sessionTie`): only
/// evidence that names the file, never "the newest file in its folder" (several pis share a
/// folder: two rosters with `projectDirectory "."`, a one-shot `pi -p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionTie {
    /// A live registration of this very process (pid, start ticks, boot id), from any roster
    /// on this machine or the data root: the extension knows the file.
    Registration,
    /// `--session <file|id>` or `--session-id <id>` on its command line (pi replaces its
    /// command line with its title, so only a pi that has not yet).
    CommandLine,
    /// The process holds the file open now (`/proc/<pid>/fd`).
    OpenFile,
    /// No other pi runs in its session folder, and of the folder's files exactly one was
    /// written since this pi started and had begun (its name's time) by then: its own new
    /// session, or the one it resumed (a pi started with no extension, alone in its folder).
    OnlyWritten,
    /// Its session folder holds no session file: it has written none yet.
    NoneInFolder,
    /// Files in its folder could be its session and nothing names one: the state is unknown
    /// (`explain` lists the candidates).
    Undecided,
}

impl SessionTie {
    /// The code as the board files show it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionTie::Registration => "registration",
            SessionTie::CommandLine => "command-line",
            SessionTie::OpenFile => "open-file",
            SessionTie::OnlyWritten => "only-written",
            SessionTie::NoneInFolder => "none-in-folder",
            SessionTie::Undecided => "undecided",
        }
    }

    /// How `explain` says it.
    pub fn words(self) -> &'static str {
        match self {
            SessionTie::Registration => "its live registration names the file",
            SessionTie::CommandLine => "its command line names the file",
            SessionTie::OpenFile => "it holds the file open",
            SessionTie::OnlyWritten => {
                "the only file written in its folder since it started (no other pi runs there)"
            }
            SessionTie::NoneInFolder => "its session folder holds no file yet",
            SessionTie::Undecided => {
                "nothing names its file (no registration: install the extension)"
            }
        }
    }
}

macro_rules! serialize_as_str {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    )*};
}
serialize_as_str!(
    TaskSource,
    WorkspaceSource,
    ProjectSource,
    FoundBy,
    SessionTie
);

#[cfg(test)]
mod tests {
    use super::{FoundBy, ProjectSource, TaskSource, WorkspaceSource};
    use crate::mux::MuxKind;

    #[test]
    fn codes_serialize_as_their_words() {
        let j = |v: serde_json::Value| v.as_str().map(str::to_string);
        let code = |s: &str| Some(s.to_string());
        assert_eq!(
            j(serde_json::json!(TaskSource::FirstUserMessage)),
            code("first-user-message")
        );
        assert_eq!(
            j(serde_json::json!(WorkspaceSource::Pane(MuxKind::Herdr))),
            code("herdr-pane")
        );
        assert_eq!(
            j(serde_json::json!(ProjectSource::WorkspaceGitRoot)),
            code("workspace-git-root")
        );
        assert_eq!(
            j(serde_json::json!(FoundBy::PiProcessUnreadable)),
            code("pi-process-unreadable")
        );
    }
}
