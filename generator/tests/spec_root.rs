//! Every file the generator reads resolves inside the spec root.
//!
//! Each test writes a small spec root into a temp dir, next to an `outside/` folder holding a valid spec
//! (`secret.json`) whose description is a marker string: were it read, it would be accepted and the marker
//! would land in doc comments and CRD descriptions. A `$ref` that is an absolute path, a URL, or leads out
//! through `..` or a symlink, and a `specFiles` or `specFolder` entry that escapes, must each fail with an
//! error naming the referring file, the JSON pointer and the config key — and the marker must appear nowhere:
//! not in the error, not on stdout/stderr of `armgen generate`, not in any file written.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/deep_chain.rs"]
#[allow(dead_code)] // the deep-chain writer is for fit.rs and the bench
mod deep_chain;

use armgen::load::SpecSet;
use serde_json::{Value, json};

/// Text that exists only in the outside file.
const MARKER: &str = "OUTSIDE-SECRET-7f3a9c";

/// A temp dir with `root/` (the spec root, holding `azure-arm.yaml` and `widget.json`) and `outside/`.
struct Layout {
    dir: tempfile::TempDir,
}

impl Layout {
    /// A spec root whose `Widget` has a property `x` that is `{"$ref": reference}`; the config names
    /// `spec_files` (relative to `spec_folder`).
    fn new(reference: Option<&str>, spec_folder: &str, spec_files: &[&str]) -> Layout {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).expect("mkdir root");
        std::fs::create_dir_all(&outside).expect("mkdir outside");
        write_json(&outside.join("secret.json"), &widget_spec(None, MARKER));
        write_json(&root.join("widget.json"), &widget_spec(reference, "A widget."));
        let files = spec_files
            .iter()
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let config = format!(
            "output:\n  crateName: widgets-api\ngroups:\n  test:\n    provider: Microsoft.Test\n    specFolder: \
             {spec_folder:?}\n    versions:\n      v1:\n        armApiVersion: \"2024-01-01\"\n        specFiles: \
             [{files}]\n        storage: true\n"
        );
        std::fs::write(root.join("azure-arm.yaml"), config).expect("write config");
        Layout { dir }
    }

    /// Rewrites `widget.json` with `Widget.x` as `{"$ref": reference}`.
    fn set_ref(&self, reference: &str) {
        write_json(
            &self.root().join("widget.json"),
            &widget_spec(Some(reference), "A widget."),
        );
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    /// Generation through the library must fail; returns the message.
    fn generate_error(&self) -> String {
        match armgen::Builder::new(self.root().join("azure-arm.yaml"))
            .specs(self.root())
            .generate()
        {
            Ok(g) => {
                let leaked = g.files.values().any(|c| c.contains(MARKER));
                panic!(
                    "expected an error, but generation produced {} files (outside content in them: {leaked})",
                    g.files.len()
                )
            }
            Err(e) => e.to_string(),
        }
    }

    /// Runs `armgen generate` on the layout; it must exit with 2, print `expected` and leak nothing.
    fn assert_binary_refuses(&self, expected: &[&str]) {
        let out_dir = self.dir.path().join("out");
        let out = Command::new(env!("CARGO_BIN_EXE_armgen"))
            .arg("generate")
            .arg("--config")
            .arg(self.root().join("azure-arm.yaml"))
            .arg("--specs")
            .arg(self.root())
            .arg("--out")
            .arg(&out_dir)
            .env("NO_COLOR", "1")
            .output()
            .expect("run armgen");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "armgen generate must fail:\n{text}");
        assert_contains(&text, expected);
        assert!(!text.contains(MARKER), "outside content on the output:\n{text}");
        for (path, contents) in tree(&out_dir) {
            assert!(
                !contents.contains(MARKER),
                "outside content in the written file {}",
                path.display()
            );
        }
    }
}

/// A one-resource spec; `Widget.x` is `{"$ref": reference}` when given.
fn widget_spec(reference: Option<&str>, description: &str) -> Value {
    let mut properties = json!({"name": {"type": "string", "description": description}});
    if let Some(r) = reference {
        properties["x"] = json!({"$ref": r});
    }
    deep_chain::widget_document(
        "Widgets",
        json!({
            "Widget": {
                "type": "object",
                "description": description,
                "properties": {"properties": {"$ref": "#/definitions/WidgetProperties", "x-ms-client-flatten": true}}
            },
            "WidgetProperties": {"type": "object", "description": description, "properties": properties},
            "Secret": {"type": "object", "description": description, "properties": {"value": {"type": "string", "description": description}}}
        }),
    )
}

fn write_json(path: &Path, value: &Value) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::write(path, serde_json::to_string_pretty(value).expect("json")).expect("write json");
}

/// Every file under `dir` (none when it does not exist), with its contents.
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.clone(),
                    String::from_utf8_lossy(&std::fs::read(&p).expect("read")).into_owned(),
                ));
            }
        }
    }
    out
}

#[track_caller]
fn assert_contains(message: &str, expected: &[&str]) {
    for e in expected {
        assert!(message.contains(e), "expected {e:?} in:\n{message}");
    }
    assert!(!message.contains(MARKER), "outside content in:\n{message}");
}

/// The site of `Widget.x`'s `$ref` and the config key of the spec file: what every `$ref` error names.
const SITE: &str = "widget.json#/definitions/WidgetProperties/properties/x";
const KEY: &str = "groups.test.versions.v1.specFiles[0]";

/// A `$ref` that must be refused: by the library and by the binary, naming site, reference, key and `why`.
fn assert_ref_refused(layout: &Layout, reference: &str, why: &str) {
    let message = layout.generate_error();
    let quoted = format!("{reference:?}");
    let expected = [SITE, quoted.as_str(), KEY, why];
    assert_contains(&message, &expected);
    layout.assert_binary_refuses(&[SITE, KEY, why]);
}

#[test]
fn an_absolute_path_ref_is_refused() {
    // The absolute path of a file that exists and is a valid spec.
    let layout = Layout::new(None, ".", &["widget.json"]);
    let reference = format!("{}#/definitions/Secret", layout.outside().join("secret.json").display());
    layout.set_ref(&reference);
    assert_ref_refused(&layout, &reference, "an absolute path");
    // `/etc/passwd` too: refused without being read (it is not JSON, so a read would say so instead).
    let layout = Layout::new(Some("/etc/passwd"), ".", &["widget.json"]);
    assert_ref_refused(&layout, "/etc/passwd", "an absolute path");
}

#[test]
fn a_dot_dot_ref_leaving_the_root_is_refused() {
    let reference = "../outside/secret.json#/definitions/Secret";
    let layout = Layout::new(Some(reference), ".", &["widget.json"]);
    let resolved = layout.outside().join("secret.json");
    let resolved = resolved.display().to_string();
    assert_ref_refused(&layout, reference, "outside the spec root");
    // The message names where it really leads, not a path with a dangling `..` in it.
    let message = layout.generate_error();
    assert_contains(&message, &[resolved.as_str()]);
    assert!(!message.contains("/../"), "a misleading path in:\n{message}");

    // Deeper: from a nested folder, down into the root and out again.
    let reference = "sub/../../outside/secret.json#/definitions/Secret";
    let layout = Layout::new(Some(reference), ".", &["widget.json"]);
    assert_ref_refused(&layout, reference, "outside the spec root");
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_root_to_outside_is_refused() {
    // A symlinked file.
    let reference = "link.json#/definitions/Secret";
    let layout = Layout::new(Some(reference), ".", &["widget.json"]);
    std::os::unix::fs::symlink(layout.outside().join("secret.json"), layout.root().join("link.json")).expect("symlink");
    assert_ref_refused(&layout, reference, "symlink");

    // A symlinked folder.
    let reference = "common/secret.json#/definitions/Secret";
    let layout = Layout::new(Some(reference), ".", &["widget.json"]);
    std::os::unix::fs::symlink(layout.outside(), layout.root().join("common")).expect("symlink");
    assert_ref_refused(&layout, reference, "symlink");

    // A spec file named in the config that is such a symlink.
    let layout = Layout::new(None, ".", &["link.json"]);
    std::os::unix::fs::symlink(layout.outside().join("secret.json"), layout.root().join("link.json")).expect("symlink");
    let message = layout.generate_error();
    assert_contains(&message, &["azure-arm.yaml", KEY, "link.json", "symlink"]);
    layout.assert_binary_refuses(&[KEY, "symlink"]);
}

#[cfg(unix)]
#[test]
fn a_symlink_inside_the_root_to_inside_is_followed() {
    let layout = Layout::new(Some("link.json#/definitions/Secret"), ".", &["widget.json"]);
    write_json(&layout.root().join("real/secret.json"), &widget_spec(None, "Inside."));
    std::os::unix::fs::symlink(layout.root().join("real/secret.json"), layout.root().join("link.json"))
        .expect("symlink");
    let generation = armgen::Builder::new(layout.root().join("azure-arm.yaml"))
        .specs(layout.root())
        .generate()
        .unwrap_or_else(|e| panic!("a symlink within the root is fine: {e}"));
    assert!(generation.files.values().any(|c| c.contains("Inside.")));
}

#[test]
fn url_refs_are_refused() {
    for (reference, scheme) in [
        ("http://example.com/secret.json#/definitions/Secret", "`http:`"),
        ("https://example.com/secret.json#/definitions/Secret", "`https:`"),
        ("file:///etc/passwd", "`file:`"),
        ("ftp://example.com/x.json", "`ftp:`"),
    ] {
        let layout = Layout::new(Some(reference), ".", &["widget.json"]);
        assert_ref_refused(&layout, reference, "a URL");
        assert_contains(&layout.generate_error(), &[scheme, "never fetches"]);
    }
    let reference = "//example.com/secret.json";
    let layout = Layout::new(Some(reference), ".", &["widget.json"]);
    assert_ref_refused(&layout, reference, "network-path URL");
}

#[test]
fn a_spec_file_entry_leaving_the_root_is_refused() {
    for (entry, shown, resolved) in [
        (
            "../outside/secret.json",
            "../outside/secret.json",
            "outside/secret.json",
        ),
        ("../../etc/hosts", "../../etc/hosts", "../etc/hosts"),
        (
            "sub/../../outside/secret.json",
            "../outside/secret.json",
            "outside/secret.json",
        ),
    ] {
        let layout = Layout::new(None, ".", &["widget.json", entry]);
        let message = layout.generate_error();
        let key = "groups.test.versions.v1.specFiles[1]";
        // Where the entry really leads, as an absolute path with no `..` left in it.
        let mut real = layout.dir.path().to_path_buf();
        for c in Path::new(resolved).components() {
            match c {
                std::path::Component::ParentDir => {
                    real.pop();
                }
                c => real.push(c),
            }
        }
        let real = format!("resolves to {},", real.display());
        assert_contains(
            &message,
            &["azure-arm.yaml", key, shown, &real, "outside the spec root"],
        );
        layout.assert_binary_refuses(&[key, "outside the spec root"]);
    }
    // An absolute entry, too.
    let layout = Layout::new(None, ".", &["widget.json"]);
    let absolute = layout.outside().join("secret.json").display().to_string();
    let layout = Layout::new(None, ".", &[&absolute]);
    assert_contains(&layout.generate_error(), &[KEY, "outside the spec root"]);
}

#[test]
fn a_spec_folder_leaving_the_root_is_refused() {
    for folder in ["../outside", "..", "/etc"] {
        let layout = Layout::new(None, folder, &["secret.json"]);
        let message = layout.generate_error();
        assert_contains(
            &message,
            &["azure-arm.yaml", "groups.test.specFolder", "outside the spec root"],
        );
        layout.assert_binary_refuses(&["groups.test.specFolder", "outside the spec root"]);
    }
}

#[test]
fn dot_dot_refs_that_stay_inside_the_root_work() {
    // Like the real specs: `specification/x/stable/2024-01-01/widget.json` → `../../../common-types/…`.
    let reference = "../../../common-types/v1/types.json#/definitions/Secret";
    let layout = Layout::new(None, "specification/x", &["stable/2024-01-01/widget.json"]);
    write_json(
        &layout.root().join("specification/x/stable/2024-01-01/widget.json"),
        &widget_spec(Some(reference), "A widget."),
    );
    write_json(
        &layout.root().join("specification/common-types/v1/types.json"),
        &widget_spec(None, "Common type."),
    );
    let generation = armgen::Builder::new(layout.root().join("azure-arm.yaml"))
        .specs(layout.root())
        .generate()
        .unwrap_or_else(|e| panic!("a `..` $ref inside the root must load: {e}"));
    assert!(
        generation.files.values().any(|c| c.contains("Common type.")),
        "the common type is generated"
    );
    assert!(
        generation
            .inputs
            .iter()
            .any(|p| p.ends_with("specification/common-types/v1/types.json"))
    );
}

#[test]
fn the_library_without_a_config_names_the_spec_file() {
    let layout = Layout::new(None, ".", &["widget.json"]);
    let e = SpecSet::load(&layout.root(), &[PathBuf::from("../outside/secret.json")])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_contains(&e, &["spec file ../outside/secret.json", "outside the spec root"]);

    // A relative spec root works as well as an absolute one (the check is on absolute, normalised paths).
    let cwd = std::env::current_dir().expect("cwd");
    let relative = pathdiff(&layout.root(), &cwd);
    let specs = SpecSet::load(&relative, &[PathBuf::from("widget.json")])
        .unwrap_or_else(|e| panic!("relative root {}: {e}", relative.display()));
    assert_eq!(specs.docs.len(), 1);
    let e = SpecSet::load(&relative, &[PathBuf::from("../outside/secret.json")])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_contains(&e, &["outside the spec root"]);
}

/// `path` relative to `base` (both absolute), with `..` steps.
fn pathdiff(path: &Path, base: &Path) -> PathBuf {
    let (p, b): (Vec<_>, Vec<_>) = (path.components().collect(), base.components().collect());
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    out
}
