//! Explicit mutations. Every byte written goes through `store`.

pub mod register;
pub mod reply;
pub mod seen;
pub mod store;
