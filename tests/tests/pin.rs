//! The spec root holds exactly the files `specs/pin.json` pins (same bytes, by SHA-256).

use crate::common;

use sha2::{Digest, Sha256};

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn spec_root_matches_the_pin() {
    let root = common::spec_root();
    let pin_path = common::workspace().join("specs/pin.json");
    let pin: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pin_path).expect("read pin.json")).expect("pin.json is JSON");
    let files = pin["files"].as_array().expect("files array");
    assert!(files.len() >= 2, "pin.json lists too few files");
    let mut mismatches = Vec::new();
    for f in files {
        let path = f["path"].as_str().expect("path");
        let want = f["sha256"].as_str().expect("sha256");
        match std::fs::read(root.join(path)) {
            Ok(bytes) => {
                let got = format!("{:x}", Sha256::digest(&bytes));
                if got != want {
                    mismatches.push(format!("{path}: sha256 {got}, pinned {want}"));
                }
            }
            Err(e) => mismatches.push(format!("{path}: {e}")),
        }
    }
    assert!(
        mismatches.is_empty(),
        "spec root {} differs from specs/pin.json:\n{}",
        root.display(),
        mismatches.join("\n")
    );
}
