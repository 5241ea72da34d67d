//! The parameters of each Herdr request this crate sends (Herdr 0.8.2's socket API, field names
//! as its schema has them): one serde type each, so a request's shape is checked by the compiler
//! rather than spelled by hand at every call.

use serde::Serialize;

/// The request line: `{"id", "method", "params"}`.
#[derive(Serialize)]
pub(super) struct Request<'a, P: Serialize> {
    pub id: &'a str,
    pub method: &'a str,
    pub params: P,
}

/// A request without parameters (`{}`).
#[derive(Serialize)]
pub(super) struct NoParams {}

#[derive(Serialize)]
pub(super) struct Pane<'a> {
    pub pane_id: &'a str,
}

#[derive(Serialize)]
pub(super) struct OptWorkspace<'a> {
    pub workspace_id: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct Tab<'a> {
    pub tab_id: &'a str,
}

#[derive(Serialize)]
pub(super) struct CallerPane<'a> {
    pub caller_pane_id: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct Split<'a> {
    pub target_pane_id: &'a str,
    pub direction: &'static str,
    pub ratio: f64,
    pub cwd: Option<&'a str>,
    pub focus: bool,
    pub env: &'a serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
pub(super) struct Swap<'a> {
    pub source_pane_id: &'a str,
    pub target_pane_id: &'a str,
}

#[derive(Serialize)]
pub(super) struct Label<'a> {
    pub pane_id: &'a str,
    pub label: &'a str,
}

/// `pane.send_input`: a line and the keys after it.
#[derive(Serialize)]
pub(super) struct SendInput<'a> {
    pub pane_id: &'a str,
    pub text: &'a str,
    pub keys: [&'static str; 1],
}

#[derive(Serialize)]
pub(super) struct AgentPrompt<'a> {
    pub target: &'a str,
    pub text: &'a str,
}

/// `tab.create` (with `workspace_id`) and `workspace.create` (without).
#[derive(Serialize)]
pub(super) struct Create<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<&'a str>,
    pub cwd: &'a str,
    pub env: &'a serde_json::Map<String, serde_json::Value>,
    pub focus: bool,
    pub label: &'a str,
}

/// `pane.report_metadata` with one token.
#[derive(Serialize)]
pub(super) struct Metadata<'a> {
    pub pane_id: &'a str,
    pub source: &'static str,
    pub tokens: std::collections::BTreeMap<&'static str, &'a str>,
}

#[derive(Serialize)]
pub(super) struct Read<'a> {
    pub pane_id: &'a str,
    pub source: &'static str,
    pub format: &'static str,
}

/// `events.subscribe`.
#[derive(Serialize)]
pub(super) struct Subscribe {
    pub subscriptions: Vec<Kind>,
}

#[derive(Serialize)]
pub(super) struct Kind {
    #[serde(rename = "type")]
    pub kind: &'static str,
}
