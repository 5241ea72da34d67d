//! What `--help` shows after each command's options: examples and exit codes. The codes are each
//! command's exit enum (`cmd::exit` and the actions' enums); `tests/suite/cli_help.rs` checks
//! that every code listed here is one the command can return and that none is missing.

pub(crate) const SCAN: &str = "\
Examples:
  intercom-pane scan --print                 one pass, one line per seat
  intercom-pane scan --json                  the index (board/index.json) on stdout
  intercom-pane scan --watch --json-lines    keep the board files current and stream them

Exit codes:
  0  the board files were written (--watch: ended by SIGTERM, SIGHUP, SIGINT or the reader)
  2  refused: bad flags or setup, a roster that cannot be used (said on stderr)";

pub(crate) const STATUS: &str = "\
Examples:
  intercom-pane status                       the configured workers, as a list
  intercom-pane status --json --limit 20     the same page as JSON (Intercom's worker status)
  intercom-pane status --watch --json-lines  the board as JSON lines while it changes

Exit codes:
  0  printed (--watch: ended by SIGTERM, SIGHUP, SIGINT or the reader going away)
  2  refused: bad flags or setup, an unknown --name, an offset past the end";

pub(crate) const BOARD: &str = "\
Examples:
  intercom-pane board --attention            the seats waiting on you or in error, as JSON
  intercom-pane board --name Builder         one seat

Exit codes:
  0  printed
  2  refused: bad flags or setup, an unknown --name or --host, a --limit out of range";

pub(crate) const WAIT: &str = "\
Examples:
  intercom-pane wait Builder --state waiting,error --timeout-secs 120

Exit codes:
  0  the seat shows one of the states (printed as JSON)
  1  timed out (the seat as last seen is printed)
  2  refused: bad flags or setup, no such seat, a name of several seats";

pub(crate) const TOOL: &str = "\
Examples (run by the pi extension, in the coordinator's pi):
  intercom-pane tool check --pi-pid 4242
  intercom-pane tool intercom_board --pi-pid 4242 --args '{\"attention\": true}'

Exit codes:
  0  done
  1  ran but did not succeed (a reply not delivered, a close not closed, …)
  2  refused: not the roster's coordinator's pi, bad arguments; nothing run";

pub(crate) const MONITOR: &str = "\
Examples:
  intercom-pane monitor                      the sidebar for the roster at or above this folder
  intercom-pane monitor --no-probe           without loopback health checks

Exit codes:
  0  you quit (q)
  1  the terminal could not be used
  2  refused: bad flags or setup";

pub(crate) const WATCH: &str = "\
Examples:
  intercom-pane watch --bell
  intercom-pane watch --on-alert notify.sh   each alert's JSON line on the program's stdin

Exit codes:
  0  stopped by SIGTERM, SIGHUP or SIGINT
  1  the passes could not go on
  2  refused: bad flags, settings or data root; nothing started";

pub(crate) const JUMP: &str = "\
Examples:
  intercom-pane jump --last                  to the seat that alerted last (the plugin's prefix J)
  intercom-pane jump --back                  to the sidebar the last Enter came from (bind it in Herdr)

Exit codes:
  0  moved
  1  the multiplexer did not move (no client attached, the switch did not hold)
  2  refused: bad flags or data root
  3  nothing to go to
  4  the seat's pane or pi changed since the alert: nothing moved";

pub(crate) const REGISTER: &str = "\
Run by the pi extension in linux/pi-extension/, not by hand.

Exit codes:
  0  written, or a newer record is already there
  1  checked but not written
  2  refused: not pi, not its ancestor, another session's file, another live pi's seat";

pub(crate) const REPLY: &str = "\
Examples:
  intercom-pane reply Builder 'use staging'
  printf 'line one\\nline two\\n' | intercom-pane reply Builder -
  intercom-pane reply Builder -f answer.txt --json

Exit codes:
  0   delivered, or queued behind a running turn
  1   failed
  2   bad flags or setup (no text, an unreadable -f, a bad --config)
  3   the text is blank
  4   the text is too long (over 2000 characters)
  5   no seat, or more than one, has that name (the known names are listed)
  6   no reply path: no live registration, no pane, the pane runs another pi, no channel
  7   a connector seat
  8   the delivery tool could not be started
  9   a control character in the text
  10  the pane is not ready for typing (a draft or dialog in pi's editor)
  11  sent, not confirmed: do not resend
  12  a first ! or / or a TAB, on a seat without the extension's channel
  14  --expect-seat: the seat is not the one the board showed; nothing was sent";

pub(crate) const ENSURE_MONITOR: &str = "\
Run by the pi extension when the coordinator's pi starts; by hand, in the coordinator's pane:
  intercom-pane ensure-monitor
  intercom-pane ensure-monitor --recover     after a placement that stopped half-way

Exit codes:
  0  placed, kept, relaunched or skipped (a worker, a roster without workers)
  1  a step failed
  2  refused
  3  not in a tmux or Herdr pane
  4  another ensure-monitor holds the lock
  5  a placement was left half-done: look, then --recover";

pub(crate) const CLOSE_WORKER: &str = "\
Examples:
  intercom-pane close-worker Builder --dry-run   every check, nothing changed
  intercom-pane close-worker Builder
  intercom-pane close-worker Builder --recover   after an interrupted or uncertain job

Exit codes:
  0   closed (or a dry run passed, or a fence recovered)
  1   not closed (failed, timed out or uncertain: the receipt says what next)
  2   refused before anything was asked
  5   a close job is running, was interrupted or is uncertain
  6   the worker has no reply path to ask for its handoff
  14  --expect-seat: the worker is not the seat the board showed; nothing was asked";

pub(crate) const HANDOFF: &str = "\
Run by the worker's pi when close-worker asks it (the request names the job):
  intercom-pane handoff --job JOB_ID --summary 'Merged the fix; notes in NOTES.md.'

Exit codes:
  0  saved
  2  refused: not from the worker that was asked, no such open job, a bad summary";

pub(crate) const RESUME_WORKER: &str = "\
Examples:
  intercom-pane resume-worker Builder --confirm-closed --dry-run
  intercom-pane resume-worker Builder --confirm-closed

Exit codes:
  0   resumed (the new seat registered), a dry run passed, or a fence re-checked
  1   the launch failed
  2   bad flags or setup, an unknown name, the coordinator, a name tmux would change
  3   --confirm-closed was not given
  4   something still runs the worker's session (it says where)
  5   a close job or another resume is open
  6   the saved session file is missing or names another session
  7   no coordinator pane to open beside
  8   launched, but the new seat did not register in time
  14  --expect-seat: the worker is not the seat the board showed";

pub(crate) const RESTORE: &str = "\
Examples:
  intercom-pane restore --dry-run
  intercom-pane restore
  intercom-pane restore --only Builder --continue

Exit codes:
  0  every agent asked for runs now, or was left out on purpose (closed, retired)
  1  a launch failed
  2  bad flags or setup, a name the roster does not have
  3  an agent could not be started, or did not register in time
  5  another restore of this roster is running";

pub(crate) const INIT: &str = "\
Examples:
  intercom-pane init                          print the command that starts the coordinator
  intercom-pane init --start                  start it now
  intercom-pane init --start --detach         start it in a tmux session of its own, then spawn

Exit codes:
  0  created
  1  writing failed, or --start could not start pi (--detach: or it did not register in 60 s)
  2  a bad flag or folder
  3  this folder has a roster already: nothing changed";

pub(crate) const SPAWN: &str = "\
Examples:
  intercom-pane spawn Tester --prompt 'Run the test suite and report failures.'
  intercom-pane spawn Docs --worktree docs-pass --model sonnet

Exit codes:
  0  spawned (and the first task delivered or queued)
  1  a step failed
  2  bad flags or setup
  3  a name that cannot be a worker's
  4  the name is taken, or being spawned now
  5  a bad folder or worktree
  6  the roster is full
  7  no coordinator pane to open beside
  8  launched, but the new seat did not register in time
  9  registered, but the first task was not delivered";

pub(crate) const RETIRE: &str = "\
Examples:
  intercom-pane retire Tester
  intercom-pane retire Docs --remove-worktree
  intercom-pane retire Docs --remove-worktree --discard

Exit codes:
  0  removed from the roster
  1  a step failed; nothing removed
  2  no roster, no such worker, or the coordinator
  3  removed; its worktree kept because it holds work
  4  something still runs the worker's session
  5  a close job, a resume or a spawn of it is open";

pub(crate) const BUDGET: &str = "\
Examples:
  intercom-pane budget Tester
  intercom-pane budget Tester --raise 2
  intercom-pane budget Tester --usd 10
  intercom-pane budget Tester --tokens 2000000
  intercom-pane budget Tester --off

Exit codes:
  0  shown, changed or checked
  1  the roster could not be changed, or the change not recorded
  2  bad flags or setup, no such worker, the coordinator, or a value refused";

pub(crate) const REVIEW: &str = "\
Examples:
  intercom-pane review Tester
  intercom-pane review Docs --json
  intercom-pane review Docs --patch | less -R

Exit codes:
  0  printed (a worker outside git is printed with a note)
  2  bad flags or setup, no roster
  5  no worker of that name";

pub(crate) const LAND: &str = "\
Examples:
  intercom-pane land Tester --dry-run
  intercom-pane land Tester Docs
  intercom-pane land Docs --into release
  intercom-pane land Docs --rebase

Exit codes:
  0  every worker landed (or was already in the branch), or --dry-run found nothing refused
  1  git failed while merging (the merge was undone; the receipt says)
  2  bad flags or setup, no roster
  3  refused (still working, conflicts, a checkout with changes); nothing changed from there on
  5  no worker of that name";

pub(crate) const DEMO: &str = "\
Examples:
  intercom-pane demo                          the sidebar on simulated workers (keys on screen)
  intercom-pane demo --print --passes 3       the board printed three times, then gone

Exit codes:
  0    ended; everything it started is removed
  1    it could not start (tmux missing, the watchdog did not start)
  2    (--print) the scan refused the demo's root
  128+N  ended by signal N, after removing everything";

pub(crate) const EXPLAIN: &str = "\
Examples:
  intercom-pane explain Builder              each source's evidence, its age, and the rule
  intercom-pane explain Builder --json --probe

Exit codes:
  0  printed
  2  refused: bad flags or setup
  5  no seat, or several, of that name";

pub(crate) const LOG: &str = "\
Examples:
  intercom-pane log Builder --since 30m      its turns, tools, questions and answers
  intercom-pane log Builder --follow         and then each new one as pi writes it
  intercom-pane log Builder --since 2026-12-01T09:00:00Z --json

Exit codes:
  0  printed
  2  refused: bad flags or setup, a --since that is neither a duration nor a time
  5  no seat, or several, of that name
  6  the seat has no session file yet, or it cannot be read";

pub(crate) const DOCTOR: &str = "\
Examples:
  intercom-pane doctor                        one line per check, with a fix for each problem
  intercom-pane doctor --json

Exit codes:
  0  every needed part is in place
  1  a check failed (each failure names its fix)";

pub(crate) const SEEN: &str = "\
Examples:
  intercom-pane seen demo/Builder --last-activity 2026-12-01T10:00:00Z
  intercom-pane seen demo/Builder --last-activity 2026-12-01T10:00:00Z --unsee --host lab

Exit codes:
  0   saved
  2   refused: not a seat key, not an ISO time, bad flags or setup; nothing written
  20  --host: the host was not reached (nothing ran)
  21  --host: the host stopped answering (whether it was saved is unknown)";

pub(crate) const HELLO: &str = "\
Run by a board on another machine, over ssh (docs/interop.md §13), not by hand:
  intercom-pane hello --echo 'a quoted word'

Exit codes:
  0  printed";

pub(crate) const COMPLETIONS: &str = "\
Examples:
  intercom-pane completions bash > ~/.local/share/bash-completion/completions/intercom-pane

Exit codes:
  0  written
  1  writing failed
  2  refused";

pub(crate) const MAN: &str = "\
Examples:
  intercom-pane man | man -l -
  intercom-pane man --out-dir ~/.cargo/share/man/man1

Exit codes:
  0  written
  1  writing failed
  2  refused";
