//! Built-in classification cases: each writes a real session file, reads it back from disk with
//! `read_session`, and classifies it as the board would.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::sessions_common;

use intercom_pane::seam::board::classify::{classify, Activity, Classification};
use intercom_pane::seam::board::reason::StateReason;
use intercom_pane::seam::clock::Ms;
use intercom_pane::seam::evidence::sessions::{read_session, SessionSummary};
use serde_json::json;
use sessions_common::Session;

fn read(s: &Session) -> SessionSummary {
    let dir = tempfile::tempdir().unwrap();
    let p = s.write_in(dir.path());
    read_session(&p).unwrap()
}

fn class_at(s: &Session, now: Ms) -> Classification {
    classify(&read(s), now)
}

/// Classify a little after the last entry was written.
fn class(s: &Session) -> Classification {
    class_at(s, s.clock + 500)
}

fn started() -> Session {
    let mut s = Session::new("0190aaaa-0000-7000-8000-000000000001");
    s.user("Deploy the thing");
    s
}

#[test]
fn plain_reply_is_idle_and_fields_are_read() {
    let mut s = started();
    s.reply("BOARD_REPLY_OK");
    let sum = read(&s);
    assert_eq!(sum.session_id, "0190aaaa-0000-7000-8000-000000000001");
    assert_eq!(sum.cwd, "/home/dev/proj");
    assert_eq!(sum.task.as_deref(), Some("Deploy the thing"));
    assert_eq!(sum.model.as_deref(), Some("fake-model"));
    assert_eq!(sum.provider.as_deref(), Some("fake"));
    assert_eq!(sum.last_assistant_text.as_deref(), Some("BOARD_REPLY_OK"));
    assert_eq!(sum.last_error, None);
    assert_eq!(sum.skipped_lines, 0);
    assert_eq!(sum.last_activity, Some(s.clock));
    assert_eq!(sum.newest_entry_id, s.last);
    let c = classify(&sum, s.clock + 1000);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Idle, StateReason::CompletedReply)
    );
}

#[test]
fn input_needed_is_waiting_only_with_the_exact_marker() {
    let mut s = started();
    s.reply("\n  \nInput needed: Choose staging or production.\nMore detail.");
    let c = class(&s);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Waiting, StateReason::InputNeeded)
    );

    for text in [
        "```\nInput needed: inside a code block\n```",
        "> Input needed: quoted",
        "  Input needed: indented",
        "Should I deploy to production?",
        "Input needed: ",
        "Done.\nInput needed: not the first line",
    ] {
        let mut s = started();
        s.reply(text);
        assert_eq!(class(&s).activity, Activity::Idle, "{text:?}");
    }
}

#[test]
fn thinking_blocks_do_not_count() {
    let mut s = started();
    s.assistant_blocks(
        json!([{"type":"thinking","thinking":"Input needed: from thinking"},{"type":"text","text":"All done."}]),
        "stop",
    );
    assert_eq!(class(&s).activity, Activity::Idle);
    let mut s = started();
    s.assistant_blocks(
        json!([{"type":"thinking","thinking":"Input needed: only thinking"}]),
        "stop",
    );
    assert_eq!(class(&s).activity, Activity::Idle);
    let mut s = started();
    s.assistant_blocks(
        json!([{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Input needed: pick a port"}]),
        "stop",
    );
    assert_eq!(class(&s).activity, Activity::Waiting);
}

#[test]
fn a_later_ordinary_reply_clears_input_needed() {
    let mut s = started();
    s.reply("Input needed: staging or production?");
    s.user("staging");
    assert_eq!(class(&s).reason, StateReason::UserMessage);
    s.reply("Deployed to staging.");
    assert_eq!(class(&s).activity, Activity::Idle);
}

#[test]
fn bookkeeping_after_a_request_keeps_it_waiting() {
    let mut s = started();
    s.reply("Input needed: staging or production?");
    s.entry(json!({"type":"model_change","provider":"other","modelId":"big-model"}));
    s.entry(json!({"type":"label","targetId":"x","label":"l"}));
    let sum = read(&s);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Waiting);
    // The later model_change names the model.
    assert_eq!(sum.model.as_deref(), Some("big-model"));
    assert_eq!(sum.provider.as_deref(), Some("other"));
}

#[test]
fn tool_activity_is_working() {
    let mut s = started();
    s.tool_call("Running it.");
    assert_eq!(class(&s).reason, StateReason::ToolRunning);
    s.tool_result();
    assert_eq!(class(&s).reason, StateReason::ToolResult);
    // Hours later it is still working: only a new entry ends a running tool.
    assert_eq!(
        class_at(&s, s.clock + 3_600_000).activity,
        Activity::Working
    );

    let mut s = started();
    s.tool_call("Input needed: should I continue?");
    let c = class(&s);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::ToolRunning)
    );

    // Tool calls decide, not stopReason.
    let mut s = started();
    s.assistant_blocks(
        json!([{"type":"toolCall","id":"c","name":"read","arguments":{}}]),
        "stop",
    );
    assert_eq!(class(&s).activity, Activity::Working);
    let mut s = started();
    s.assistant_blocks(json!([{"type":"text","text":"ok"}]), "toolUse");
    assert_eq!(class(&s).activity, Activity::Idle);
}

#[test]
fn a_bash_command_run_by_the_person_never_decides() {
    // `!ls` in pi appends a bashExecution and starts no turn: the reply before it decides.
    let bash =
        json!({"type":"message","message":{"role":"bashExecution","command":"ls","output":"a"}});
    let mut s = started();
    s.reply("All done.");
    s.entry(bash.clone());
    assert_eq!(class(&s).reason, StateReason::CompletedReply);
    let mut s = started();
    s.reply("Input needed: pick a branch.");
    s.entry(bash);
    assert_eq!(class(&s).reason, StateReason::InputNeeded);
}

#[test]
fn a_steer_after_a_tool_result_is_working() {
    let mut s = started();
    s.tool_call("Running.");
    s.tool_result();
    s.user("also check the logs");
    assert_eq!(class(&s).reason, StateReason::UserMessage);
}

#[test]
fn retry_window_decides_between_working_and_error() {
    let mut s = started();
    let e = s.error("429: rate limited");
    s.wait(0);
    let ce = s.context_edit(&e);
    assert!(!ce.is_empty());
    let at = s.clock;
    let c = class_at(&s, at + 1_000);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::Retrying)
    );
    let c = class_at(&s, at + 30_000);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::FinalError)
    );
    assert_eq!(read(&s).last_error.as_deref(), Some("429: rate limited"));

    // Second failure in a row waits 4 s, third 8 s.
    let e2 = s.error("429: again");
    s.context_edit(&e2);
    let at = s.clock;
    assert_eq!(class_at(&s, at + 6_000).activity, Activity::Working);
    assert_eq!(class_at(&s, at + 20_000).activity, Activity::Error);
    let e3 = s.error("429: again");
    s.context_edit(&e3);
    let at = s.clock;
    assert_eq!(class_at(&s, at + 10_000).activity, Activity::Working);
    assert_eq!(class_at(&s, at + 12_000).activity, Activity::Error);
    // The 4th error has no context_edit: final at once.
    s.error("429: giving up");
    let c = class_at(&s, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::FinalError)
    );
    assert_eq!(read(&s).last_error.as_deref(), Some("429: giving up"));
}

#[test]
fn an_error_without_context_edit_is_final() {
    let mut s = started();
    s.error("400: bad request");
    let c = class_at(&s, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::FinalError)
    );
    // A context_edit aimed at some other entry schedules nothing for this error.
    s.context_edit("deadbeef");
    assert_eq!(class_at(&s, s.clock).activity, Activity::Error);
}

#[test]
fn a_successful_retry_clears_the_error() {
    let mut s = started();
    let e = s.error("503: busy");
    s.context_edit(&e);
    s.reply("Recovered answer.");
    let sum = read(&s);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Idle);
    assert_eq!(sum.last_error, None);
    assert_eq!(
        sum.last_assistant_text.as_deref(),
        Some("Recovered answer.")
    );
}

#[test]
fn aborted_and_length_are_errors() {
    let mut s = started();
    s.aborted();
    let sum = read(&s);
    let c = classify(&sum, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::Aborted)
    );
    assert_eq!(sum.last_error.as_deref(), Some("Operation aborted"));

    let mut s = started();
    s.assistant_blocks(json!([{"type":"text","text":"cut"}]), "length");
    let c = class(&s);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Error, StateReason::Length)
    );
}

#[test]
fn recoverable_length_is_working_inside_the_window() {
    let mut s = started();
    let l = s.assistant_blocks(json!([{"type":"text","text":"cut"}]), "length");
    s.context_edit(&l);
    // pi summarizes before it retries; from the file alone that is timed like a retry wait (the
    // registration tells a longer summary apart).
    assert_eq!(
        class_at(&s, s.clock + 1_000).reason,
        StateReason::Compacting
    );
    assert_eq!(class_at(&s, s.clock + 60_000).reason, StateReason::Length);

    // Recoverable length: edit, compaction, then the retry runs however long it takes.
    let mut s = started();
    let l = s.assistant_blocks(json!([{"type":"text","text":"cut"}]), "length");
    s.context_edit(&l);
    s.compaction();
    assert_eq!(class_at(&s, s.clock + 60_000).reason, StateReason::Retrying);

    // A compaction with no edit is a manual /compact: the cut-off turn stays an error.
    let mut s = started();
    s.assistant_blocks(json!([{"type":"text","text":"cut"}]), "length");
    s.compaction();
    assert_eq!(class_at(&s, s.clock + 1_000).reason, StateReason::Length);
}

#[test]
fn compaction_after_overflow_is_working_but_not_after_a_reply() {
    let mut s = started();
    let e = s.error("400: context_length_exceeded: prompt is too long");
    s.context_edit(&e);
    s.compaction();
    let c = class_at(&s, s.clock + 1_000);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::Retrying)
    );

    // A final (not retried) error, then a manual /compact: still the error.
    let mut s = started();
    s.error("400: bad request");
    s.compaction();
    assert_eq!(
        class_at(&s, s.clock + 1_000).reason,
        StateReason::FinalError
    );

    let mut s = started();
    s.reply("Finished.");
    s.compaction();
    assert_eq!(class(&s).activity, Activity::Idle);
    let mut s = started();
    s.reply("Input needed: merge now?");
    s.compaction();
    assert_eq!(class(&s).activity, Activity::Waiting);
}

#[test]
fn v1_files_without_ids_are_linear() {
    let mut s = Session::v1("v1-session-0001");
    s.user_str("Old style task\n\nwith   spaces");
    s.tool_call("Looking.");
    let sum = read(&s);
    assert!(sum.linear);
    assert_eq!(sum.task.as_deref(), Some("Old style task with spaces"));
    assert_eq!(classify(&sum, s.clock).activity, Activity::Working);
    s.tool_result();
    s.reply("Input needed: which file?");
    let sum = read(&s);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Waiting);
    assert_eq!(sum.newest_entry_id, None);
    assert_eq!(sum.model.as_deref(), Some("fake-model"));
}

#[test]
fn abandoned_branches_do_not_decide() {
    let mut s = started();
    let u1 = s.last.clone();
    // Abandoned branch: a tool call and its result.
    s.tool_call("Trying something.");
    s.tool_result();
    s.reply("Input needed: old question on the abandoned branch");
    // The user went back to the first message; the new reply hangs off it.
    s.entry_with_parent(
        json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"All good."}],"provider":"p2","model":"m2","stopReason":"stop"}}),
        u1,
    );
    let sum = read(&s);
    let c = classify(&sum, s.clock);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Idle, StateReason::CompletedReply)
    );
    assert_eq!(sum.last_assistant_text.as_deref(), Some("All good."));
    assert_eq!(sum.model.as_deref(), Some("m2"));
    // The branch is the reply, the user message, and what came before it — not the tool turn.
    assert!(sum.branch.iter().all(|e| !e.has_tool_call));

    // The other way round: the newest line continues an older tool result.
    let mut s = started();
    s.tool_call("Running.");
    let tr = s.tool_result();
    s.reply("Input needed: newer but abandoned");
    s.entry_with_parent(
        json!({"type":"message","message":{"role":"user","content":"steer"}}),
        Some(tr),
    );
    assert_eq!(class(&s).reason, StateReason::UserMessage);
}

#[test]
fn the_system_message_is_never_the_task() {
    let mut s = Session::new("0190aaaa-0000-7000-8000-000000000002");
    let sum = read(&s);
    assert_eq!(sum.task, None);
    assert_eq!(classify(&sum, s.clock).reason, StateReason::NoMessages);
    s.user_str("The real task");
    assert_eq!(read(&s).task.as_deref(), Some("The real task"));
}

/// A reply sent by an earlier version ends with its trailer line: the task is the person's words
/// only; a message that is only the trailer is no task.
#[test]
fn an_old_replys_trailer_is_never_the_task() {
    use intercom_pane::seam::reply_text::LEGACY_TRAILER;
    let mut s = Session::new("0190aaaa-0000-7000-8000-000000000003");
    s.user_str(&format!("\n{LEGACY_TRAILER}"));
    s.user_str(&format!("Use staging\n{LEGACY_TRAILER}"));
    assert_eq!(read(&s).task.as_deref(), Some("Use staging"));
}

#[test]
fn task_is_one_line_and_clipped() {
    let mut s = Session::new("0190aaaa-0000-7000-8000-000000000003");
    let long = format!("line one\n\tline two {}", "x".repeat(600));
    s.user(&long);
    s.reply("ok");
    let sum = read(&s);
    let task = sum.task.unwrap();
    assert!(task.starts_with("line one line two xxx"));
    assert_eq!(task.chars().count(), 240);
    let mut s = started();
    s.reply(&"é".repeat(900));
    let sum = read(&s);
    assert_eq!(sum.last_assistant_text.unwrap().chars().count(), 500);
}

#[test]
fn many_entries_stop_early_but_keep_the_branch_right() {
    let mut s = started();
    for i in 0..600 {
        s.tool_call(&format!("step {i}"));
        s.tool_result();
    }
    s.reply("Input needed: all 600 steps done, ship it?");
    let sum = read(&s);
    assert_eq!(classify(&sum, s.clock).activity, Activity::Waiting);
    assert_eq!(sum.task.as_deref(), Some("Deploy the thing"));
    assert!(sum.branch.len() < 64, "stopped early: {}", sum.branch.len());
}

/// The exact sequence real pi 1.6.0 wrote for a context overflow (checked against a run with a
/// loopback model): error, context_edit aimed at it, then — only when there is something to
/// summarize — compaction, then the retried reply. Without the compaction pi stops.
#[test]
fn overflow_sequence_as_real_pi_writes_it() {
    let mut s = started();
    s.reply("First answer.");
    s.user("Now the big one");
    let e = s.error("400: {\"message\":\"This model's maximum context length is 1000 tokens. context_length_exceeded\"}");
    s.wait(-990);
    s.context_edit(&e);
    // Summarizing: from the file alone, timed like the first retry wait ...
    assert_eq!(
        class_at(&s, s.clock + 1_000).reason,
        StateReason::Compacting
    );
    // ... and with no compaction after it, the error reads final (the rules need the compaction
    // entry; a registered seat whose run is still going reads working).
    assert_eq!(
        class_at(&s, s.clock + 60_000).reason,
        StateReason::FinalError
    );
    s.compaction();
    // Compaction written: the retry runs now, however long the reply takes.
    assert_eq!(class_at(&s, s.clock + 60_000).reason, StateReason::Retrying);
    s.reply("Answer after compaction.");
    let sum = read(&s);
    assert_eq!(classify(&sum, s.clock).reason, StateReason::CompletedReply);
    assert_eq!(sum.last_error, None);
}

#[test]
fn the_question_the_newest_user_text_and_the_running_tool_come_from_the_tail() {
    // Waiting: the question is the asking part of the reply, the user text the newest one.
    let mut s = started();
    s.user("Now roll it out");
    s.reply("Input needed: Choose staging or production.\n\n1. staging\n2. production\n");
    let sum = read(&s);
    assert_eq!(
        sum.question.as_deref(),
        Some("Choose staging or production.\n\n1. staging\n2. production")
    );
    assert_eq!(sum.last_user_text.as_deref(), Some("Now roll it out"));
    assert_eq!(sum.running_tool, None);

    // An ordinary reply asks nothing, whatever its wording.
    let mut s = started();
    s.reply("Should I deploy?");
    assert_eq!(read(&s).question, None);

    // A tool call without its result: that tool runs, since its message was written.
    let mut s = started();
    s.tool_call("Running it.");
    let sum = read(&s);
    let tool = sum.running_tool.expect("a running tool");
    assert_eq!(tool.name.as_deref(), Some("bash"));
    assert_eq!(tool.since, Some(s.clock));
    assert_eq!(sum.question, None);
    assert_eq!(sum.last_user_text.as_deref(), Some("Deploy the thing"));
    // Its result came back: nothing runs now.
    s.tool_result();
    assert_eq!(read(&s).running_tool, None);
}
