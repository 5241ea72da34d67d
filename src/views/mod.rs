//! Read-only projections of one `Scan`: board files, the printed table, the status page (JSON
//! and as text).

pub mod board_files;
pub mod json;
pub mod print;
pub mod status_json;
pub mod status_text;
