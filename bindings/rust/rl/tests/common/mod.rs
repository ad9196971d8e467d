//! What the tests share: the YAML tables as text, the conformance schema.
#![allow(dead_code)]
pub mod schema;
pub mod yaml;
