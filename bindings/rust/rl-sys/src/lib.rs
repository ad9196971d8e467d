//! Raw bindings to rl's C ABI (`rl.h`), one to one: every function, struct,
//! enum and numeric constant of the header, generated ahead of time by
//! `bindings/rust/rl-sys/generate` (so a build needs no libclang) and checked
//! against the header by this crate's tests (`tests/header.rs`: the header's
//! declarations and the C compiler's sizes, offsets and values).
//!
//! The conventions are rl.h's: a fallible call returns an `rl_status` and
//! takes an optional `*mut *mut rl_error` last; versioned structs are
//! initialised with their `rl_*_init` function (the `*_INIT` macros are C
//! only). The safe API is the `rl` crate.
//!
//! Linking: the bundled static librl by default (linux x86-64 and aarch64),
//! the system librl through pkg-config with the `dynamic-linking` feature,
//! or the librl.so of a directory named by `RL_SYS_LIB_DIR` (see build.rs).

#![allow(non_camel_case_types, non_upper_case_globals)]

#[rustfmt::skip]
mod bindings;
pub use bindings::*;
