//! Generates the greenhouse API types into `$OUT_DIR/greenhouse.rs` (one file of nested modules, for
//! `include!` in `src/lib.rs`). armgen prints `cargo:rerun-if-changed` for exactly the files it read (the
//! config and the spec files of the selected version, common-types included), so cargo reruns this script
//! only when one of them changes, and it rewrites the output only when its contents change.

include!("builder.rs");

fn main() {
    if let Err(e) = greenhouse_builder().compile() {
        // A readable error (file and JSON pointer, or config key) rather than a panic's debug output.
        eprintln!("armgen: {e}");
        std::process::exit(1);
    }
}
