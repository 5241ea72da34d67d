//! Read-only projections of one `Scan`: board files, the printed table, the status page (JSON
//! and as text), the board page, the `--watch` stream.

pub mod board_files;
pub mod board_page;
pub mod explain;
pub mod json;
pub mod print;
pub mod status_json;
pub mod status_text;
pub mod stream;
