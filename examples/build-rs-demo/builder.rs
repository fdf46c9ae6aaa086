// The armgen generation of this crate, shared by `build.rs` and `tests/greenhouse.rs` (which checks that
// running it again on the up-to-date output writes nothing).

/// Version `v2` of the greenhouse fixture, ARM payload types only (no custom resources), without doc
/// comments, with `Eq` and `Hash` on every type, as one file `greenhouse.rs` (for `include!`).
fn greenhouse_builder() -> armgen::Builder {
    armgen::Builder::new("armgen.yaml")
        .specs("fixtures")
        .versions(["v2"])
        .kubernetes(false)
        .doc_comments(false)
        .derive("Eq")
        .derive("Hash")
        .single_file("greenhouse.rs")
}
