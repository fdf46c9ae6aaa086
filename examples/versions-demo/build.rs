//! Generates the orchard API (three versions, custom resources and conversions) into `$OUT_DIR/orchard.rs`
//! from `armgen.yaml` and the hand-written fixture specs in `fixtures/`. Nothing in this crate is written for
//! the fixture: adding a version is one entry in `armgen.yaml` (and its spec file).

fn main() {
    let built = armgen::Builder::new("armgen.yaml")
        .specs("..")
        .single_file("orchard.rs")
        .compile();
    if let Err(e) = built {
        eprintln!("armgen: {e}");
        std::process::exit(1);
    }
}
