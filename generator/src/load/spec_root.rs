//! Where the spec root is: the search behind [`resolve_spec_root`](crate::resolve_spec_root), and what the
//! build scripts of the workspace's test crates make of it.
//!
//! This file uses `std` only and refers to nothing else in the crate, so that a build script can include it
//! (`#[path = ".../generator/src/load/spec_root.rs"] mod spec_root;`) without depending on `armgen` (a build
//! dependency would compile the whole generator a second time, for the host). The test crates' build scripts
//! call [`emit_test_cfg`] and thereby decide exactly as the generator does whether the spec root is there;
//! `tests/README.md` describes the scheme.

use std::path::{Path, PathBuf};

/// The environment variable naming the spec root.
pub const SPECS_ENV: &str = "AZURE_REST_API_SPECS";
/// The spec root used when neither `--specs` nor the environment variable is given, relative to the
/// config file's folder.
pub const DEFAULT_SPECS: &str = "specs/azure-rest-api-specs";
/// The `cfg` that [`emit_test_cfg`] sets when the spec root is missing (and `CI` is not set).
pub const MISSING_CFG: &str = "spec_root_missing";

/// The file marking a spec root that armgen fetched (`crate::load::fetch`): the pinned spec files, no examples.
pub const FETCHED_MARKER: &str = ".armgen-fetched";

/// No spec root was found: the default place, and each place tried with what it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub default: PathBuf,
    pub tried: Vec<String>,
}

/// Finds the spec root: `explicit` when given, else `$AZURE_REST_API_SPECS` when that is a directory, else
/// `<base>/specs/azure-rest-api-specs`.
pub fn search(explicit: Option<&Path>, base: &Path) -> Result<PathBuf, Missing> {
    let env = std::env::var_os(SPECS_ENV).filter(|v| !v.is_empty()).map(PathBuf::from);
    let default = base.join(DEFAULT_SPECS);
    let status = |p: &Path| if p.is_dir() { "a directory" } else { "not a directory" };
    let mut tried = Vec::new();
    match explicit {
        Some(p) if p.is_dir() => return Ok(p.to_path_buf()),
        Some(p) => tried.push(format!("--specs {} (not a directory)", p.display())),
        None => tried.push("--specs (not given)".into()),
    }
    match &env {
        Some(p) if explicit.is_none() && p.is_dir() => return Ok(p.clone()),
        Some(p) if explicit.is_some() => tried.push(format!(
            "${SPECS_ENV}={} ({}; not used when --specs is given)",
            p.display(),
            status(p)
        )),
        Some(p) => tried.push(format!("${SPECS_ENV}={} (not a directory)", p.display())),
        None => tried.push(format!("${SPECS_ENV} (not set)")),
    }
    if explicit.is_none() && default.is_dir() {
        return Ok(default);
    }
    if explicit.is_some() {
        tried.push(format!(
            "{} ({}; not used when --specs is given)",
            default.display(),
            status(&default)
        ));
    } else {
        tried.push(format!("{} (not a directory)", default.display()));
    }
    Err(Missing { default, tried })
}

/// What a test crate's build script decides: the cargo instructions to print. The spec root is searched as
/// the generator does with no `--specs` (`base` is the workspace root, where `azure-arm.yaml` is).
///
/// - Found: no `cfg`; the tests that need the spec root run.
/// - Missing and `CI` unset: `cfg(spec_root_missing)`, under which those tests are `#[ignore]`d with a reason
///   that `cargo test` prints, and a build warning saying why.
/// - Missing and `CI` set: no `cfg`, so the tests run and fail, naming the places tried; and a warning.
///
/// Cargo reruns the build script when `AZURE_REST_API_SPECS` or `CI` change, and, while the spec root is
/// missing, when something changes in the folder that would hold the default spec root (so that cloning the
/// specs there is noticed). A spec root found at build time and removed later is not noticed until the next
/// rerun: the tests then fail (they never skip silently). A spec root armgen fetched ([`FETCHED_MARKER`]) holds
/// no examples, so it counts as missing here.
pub fn test_cfg_instructions(base: &Path, ci: bool) -> Vec<String> {
    let out = vec![
        format!("cargo::rustc-check-cfg=cfg({MISSING_CFG})"),
        format!("cargo::rerun-if-env-changed={SPECS_ENV}"),
        "cargo::rerun-if-env-changed=CI".to_string(),
    ];
    instructions_for(search(None, base), ci, out)
}

/// [`test_cfg_instructions`] for a search result, after the instructions every build prints (`out`).
fn instructions_for(found: Result<PathBuf, Missing>, ci: bool, mut out: Vec<String>) -> Vec<String> {
    let why = match found {
        // A spec root `armgen generate` fetched holds the pinned spec files only, not the examples the tests read.
        Ok(root) if root.join(FETCHED_MARKER).exists() => format!(
            "{} was fetched by armgen (spec files only, no examples; set {SPECS_ENV} to a checkout with them)",
            root.display()
        ),
        Ok(_) => return out,
        Err(missing) => {
            // The folder that would hold the default spec root, when it exists (watching a path that does not
            // exist would rerun the build script on every build; cargo scans a watched folder recursively, so no
            // farther ancestor either).
            if let Some(watch) = missing.default.parent().filter(|p| p.is_dir()) {
                out.push(format!("cargo::rerun-if-changed={}", watch.display()));
            }
            format!("is missing (tried {}; set {SPECS_ENV})", missing.tried.join("; "))
        }
    };
    if ci {
        out.push(format!(
            "cargo::warning=CI is set and the spec root {why}: the tests that need it will fail"
        ));
    } else {
        out.push(format!("cargo::rustc-cfg={MISSING_CFG}"));
        out.push(format!(
            "cargo::warning=the spec root {why}: the tests that need it are ignored"
        ));
    }
    out
}

/// The whole spec-root part of a build script of a package beside `generator/` (which includes this file with
/// `#[path]`): reruns when the build script or this file changes, then [`emit_test_cfg`] from the workspace root.
pub fn emit_for_package() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../generator/src/load/spec_root.rs");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    emit_test_cfg(manifest_dir.parent().unwrap_or(&manifest_dir));
}

/// Prints [`test_cfg_instructions`] for a build script, with `CI` read from the environment (set and not
/// empty).
pub fn emit_test_cfg(base: &Path) {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    for line in test_cfg_instructions(base, ci) {
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetched_or_missing_spec_root_ignores_the_tests_outside_ci_only() {
        let dir = std::env::temp_dir().join(format!("armgen-spec-root-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("specification")).expect("mkdir");
        let ignored = |found: Result<PathBuf, Missing>, ci: bool| {
            instructions_for(found, ci, Vec::new())
                .iter()
                .any(|l| l == &format!("cargo::rustc-cfg={MISSING_CFG}"))
        };
        let missing = || {
            Err(Missing {
                default: dir.join("nothing"),
                tried: vec!["nothing here".into()],
            })
        };
        assert!(
            !ignored(Ok(dir.clone()), false),
            "a checkout with examples runs the tests"
        );
        assert!(ignored(missing(), false), "no spec root: ignored outside CI");
        assert!(!ignored(missing(), true), "under CI the tests run (and fail)");
        std::fs::write(dir.join(FETCHED_MARKER), "").expect("marker");
        assert!(
            ignored(Ok(dir.clone()), false),
            "a fetched root has no examples: ignored outside CI"
        );
        assert!(!ignored(Ok(dir.clone()), true), "under CI the tests run (and fail)");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
