//! Pure classification and projection of evidence into what the views show.

pub mod alerts;
pub mod classify;
pub mod intercom;
pub mod overflow;
pub mod provenance;
pub mod reason;
pub mod record;
pub mod verdict;
