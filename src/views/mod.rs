//! Read-only projections of one `Scan`: board files, the printed table, the JSON status page,
//! the board page, the `--watch` stream.

pub mod board_files;
pub mod board_page;
pub mod json;
pub mod print;
pub mod status_json;
pub mod stream;
