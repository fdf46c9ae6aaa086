//! The `armgen` binary end to end on the real specs: determinism, `check` (and `check --diff`), the short and
//! `--verbose` output, errors and exit codes. (`armgen diff`, the API-change report, is in `apidiff.rs`.)
//!
//! These tests need the spec root; they fail when `CI` is set and it is missing, and are ignored otherwise
//! (`cfg(spec_root_missing)`, see `tests/README.md` at the workspace root).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The spec root, resolved as the generator does. Tests that call this are marked
/// `#[cfg_attr(spec_root_missing, ignore = ...)]` (`generator/build.rs` sets the `cfg` when the spec root is missing
/// and `CI` is not set), so a missing spec root here fails the test.
fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    })
}

fn armgen(args: &[&str], specs: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_armgen"))
        .args(args)
        .arg("--specs")
        .arg(specs)
        .arg("--config")
        .arg(workspace().join("azure-arm.yaml"))
        .output()
        .expect("run armgen")
}

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under dir").to_path_buf();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn generating_twice_into_empty_folders_is_byte_identical() {
    let specs = spec_root();
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    for dir in [a.path(), b.path()] {
        let out = armgen(&["generate", "--out", dir.to_str().expect("utf-8 path")], &specs);
        assert!(out.status.success(), "generate failed: {}", text(&out));
    }
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    assert!(ta.len() > 10, "expected a crate, got {} files", ta.len());
    assert_eq!(
        ta.iter().map(|(p, _)| p).collect::<Vec<_>>(),
        tb.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for ((path, x), (_, y)) in ta.iter().zip(&tb) {
        assert!(x == y, "{} differs between two generations", path.display());
    }
    // And the committed crate is what generation writes.
    let committed = tree(&workspace().join("generated"));
    assert_eq!(
        committed, ta,
        "generated/ is stale: run `cargo run -p armgen -- generate`"
    );
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn check_passes_on_the_committed_crate_and_fails_after_hand_edits() {
    let specs = spec_root();
    let generated = workspace().join("generated");
    let ok = armgen(&["check", "--out", generated.to_str().expect("utf-8 path")], &specs);
    assert!(ok.status.success(), "check fails on the committed crate: {}", text(&ok));

    let copy = tempfile::tempdir().expect("tempdir");
    let out_dir = copy.path().join("generated");
    for (rel, bytes) in tree(&generated) {
        let p = out_dir.join(&rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, bytes).expect("write");
    }
    let out = out_dir.to_str().expect("utf-8 path");
    assert!(
        armgen(&["check", "--out", out], &specs).status.success(),
        "a faithful copy must pass"
    );

    // Where the config's layout (`output.versionCrates`) puts a version's ARM types.
    let config = armgen::config::Config::load(&workspace().join("azure-arm.yaml")).expect("config");
    let layout = armgen::emit::CrateLayout::of(&config.output);
    let edited_rel = format!("{}/managed_cluster.rs", layout.arm_dir("containerservice", "v2alpha1"));
    let removed_rel = format!("{}/snapshot.rs", layout.arm_dir("containerservice", "v1beta1"));
    // A hand edit to one generated file.
    let edited = out_dir.join(&edited_rel);
    let mut contents = std::fs::read_to_string(&edited).expect("read");
    contents = contents.replacen(
        "pub struct ManagedCluster {",
        "pub struct ManagedCluster {\n    pub hand_edit: bool,",
        1,
    );
    std::fs::write(&edited, contents).expect("write");
    // A removed file and an extra one.
    std::fs::remove_file(out_dir.join(&removed_rel)).expect("remove");
    std::fs::write(out_dir.join("src/extra.rs"), "// not generated\n").expect("write");

    let failed = armgen(&["check", "--out", out], &specs);
    assert_eq!(
        failed.status.code(),
        Some(1),
        "check must fail after hand edits: {}",
        text(&failed)
    );
    let report = text(&failed);
    assert!(report.contains(&format!("modified: {edited_rel}")), "{report}");
    assert!(report.contains(&format!("missing:  {removed_rel}")), "{report}");
    assert!(report.contains("extra:    src/extra.rs"), "{report}");

    // `check --diff` shows the hand edit as a removed line.
    let diff = armgen(&["check", "--diff", "--out", out], &specs);
    assert_eq!(diff.status.code(), Some(1));
    assert!(text(&diff).contains("-    pub hand_edit: bool,"), "{}", text(&diff));

    // `generate` repairs the folder, after which `check` passes again.
    let regen = armgen(&["generate", "--out", out], &specs);
    assert!(regen.status.success(), "{}", text(&regen));
    assert!(
        !out_dir.join("src/extra.rs").exists(),
        "generate removes files it does not write"
    );
    assert!(armgen(&["check", "--out", out], &specs).status.success());
}

#[test]
fn missing_spec_root_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_armgen"))
        .args(["check", "--specs", "/nonexistent/specs", "--config"])
        .arg(workspace().join("azure-arm.yaml"))
        .output()
        .expect("run armgen");
    assert_eq!(out.status.code(), Some(2));
    let t = text(&out);
    for needle in ["--specs", "AZURE_REST_API_SPECS", "specs/azure-rest-api-specs"] {
        assert!(t.contains(needle), "error does not mention {needle}: {t}");
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn generate_is_short_by_default_and_detailed_with_verbose() {
    let specs = spec_root();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let short = armgen(&["generate", "--out", out], &specs);
    assert!(short.status.success(), "{}", text(&short));
    let stdout = String::from_utf8_lossy(&short.stdout);
    // The configured versions, in order: (group/version, ARM API version).
    let config = armgen::Config::load(&workspace().join("azure-arm.yaml")).expect("config");
    let versions: Vec<(String, String)> = config
        .groups
        .iter()
        .flat_map(|(g, group)| {
            group
                .versions
                .iter()
                .map(move |(v, version)| (format!("{g}/{v}"), version.arm_api_version.clone()))
        })
        .collect();
    // One line per version, the CRD budget line and a total.
    assert_eq!(stdout.lines().count(), versions.len() + 2, "{stdout}");
    let budget = stdout
        .lines()
        .find(|l| l.starts_with("crds: "))
        .expect("a CRD budget line");
    assert!(
        budget.contains(" manifests, the largest ") && budget.ends_with("% of the 1048576-byte budget"),
        "{budget}"
    );
    for (version, api) in &versions {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("{version} (ARM {api}): ")) && l.contains(" resources, ")),
            "{version}: {stdout}"
        );
    }
    assert!(stdout.contains(" written, 0 removed, 0 unchanged in "), "{stdout}");
    assert!(!stdout.contains("timings"));
    // Not a terminal: no progress, no colour.
    assert!(short.stderr.is_empty(), "{}", String::from_utf8_lossy(&short.stderr));

    let verbose = armgen(&["generate", "--verbose", "--out", out], &specs);
    assert!(verbose.status.success(), "{}", text(&verbose));
    let stdout = String::from_utf8_lossy(&verbose.stdout);
    for needle in [
        "spec root: ",
        "(ManagedCluster, AgentPool,",
        "timings:",
        "  load ",
        "  emit ",
        "  structure ",
        "  write ",
        "  total ",
        ", 0 written, 0 removed,",
    ] {
        assert!(stdout.contains(needle), "--verbose lacks {needle:?}: {stdout}");
    }
    // Progress, one line per step, on stderr.
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    for (i, (version, api)) in versions.iter().enumerate() {
        let step = format!("[{}/{}] {version} (ARM {api})", i + 1, versions.len());
        assert!(stderr.contains(&step), "{step}: {stderr}");
    }
    assert!(stderr.contains("emit Rust"), "{stderr}");
}

#[test]
fn errors_name_the_place_and_are_not_coloured_off_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("bad.yaml");
    std::fs::write(
        &config,
        "output:\n  crateName: x\ngroups:\n  g:\n    provider: P\n    specFolder: .\n    versionz: {}\n",
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_armgen"))
        .args(["check", "--config"])
        .arg(&config)
        .env("NO_COLOR", "1")
        .output()
        .expect("run armgen");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\u{1b}'), "colour in {err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].starts_with("error: unknown field `versionz`"), "{err}");
    assert_eq!(
        lines[1],
        format!("  --> {}: config key `groups.g.versionz`", config.display())
    );
}

#[test]
fn a_bad_command_line_exits_with_2() {
    for args in [&["frobnicate"][..], &["diff", "v1beta1"], &["check", "--no-such-flag"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_armgen"))
            .args(args)
            .output()
            .expect("run armgen");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    }
}
