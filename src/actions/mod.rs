//! Explicit mutations. Every byte written goes through `store`.

pub mod register;
pub mod seen;
pub mod store;
