//! Types generated at build time (see `build.rs`) from three API versions of the orchard fixture: the custom
//! resources of `v1`, `v2` and `v3` (the hub), and the conversions between them, used by `tests/`.

include!(concat!(env!("OUT_DIR"), "/orchard.rs"));
