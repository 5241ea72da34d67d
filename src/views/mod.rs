//! Read-only projections of one `Scan`: board files, the printed table, the status page (JSON
//! and as text), the board page, the `--watch` stream.

pub(crate) mod board_files;
pub(crate) mod board_page;
pub(crate) mod explain;
pub(crate) mod headline;
pub(crate) mod json;
pub(crate) mod print;
pub(crate) mod rechecks;
pub(crate) mod status_json;
pub(crate) mod status_text;
pub(crate) mod stream;
pub(crate) mod timeline;
