//! A crate whose API types are generated at build time by armgen's library API (see `build.rs`), from the
//! hand-written greenhouse spec in `fixtures/`.
//!
//! The generated file holds `pub mod greenhouse { pub mod v2 { pub const API_VERSION: &str; pub mod arm
//! { … } } }`; it is included here as it is, so the types are `build_rs_demo::greenhouse::v2::arm::…`.

include!(concat!(env!("OUT_DIR"), "/greenhouse.rs"));
