//! Pure classification and projection of evidence into what the views show.

pub(crate) mod alerts;
pub(crate) mod classify;
pub(crate) mod intercom;
pub(crate) mod overflow;
pub(crate) mod pi_rules;
pub(crate) mod provenance;
pub(crate) mod reason;
pub(crate) mod record;
pub(crate) mod verdict;
