//! Read-only projections of one `Scan`: board files, the printed table, the JSON status page,
//! the board page.

pub mod board_files;
pub mod board_page;
pub mod explain;
pub mod json;
pub mod print;
pub mod status_json;
