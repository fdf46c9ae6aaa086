//! The standard client against the `fake-apiserver` binary: `kubectl apply`, `get` and `delete` of a CRD and of a
//! custom resource of it, through a kubeconfig that the binary writes (`--kubeconfig`). kubectl needs discovery
//! (`/api`, `/apis`, `/apis/{group}/{version}`) and an OpenAPI document to validate against; the server serves
//! both (see `src/discovery.rs`).
//!
//! Without kubectl on `PATH` the test is ignored with a reason (see `build.rs`); with `CI` set it always runs and
//! fails when kubectl is missing.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd], listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
    subresources: {status: {}}
";

fn widget(colour: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: blue\n  namespace: team-a\nspec:\n  colour: {colour}\n"
    )
}

/// The server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary on a free port, writing its kubeconfig; returns once it listens (it prints its URL then).
fn start(kubeconfig: &Path) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fake-apiserver"))
        .args(["--listen", "127.0.0.1:0", "--kubeconfig"])
        .arg(kubeconfig)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the fake-apiserver binary starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let server = Server(child);
    let mut url = String::new();
    BufReader::new(stdout).read_line(&mut url).expect("the URL line");
    let url = url.trim().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    (server, url)
}

struct Kubectl {
    dir: PathBuf,
}

impl Kubectl {
    fn run(&self, args: &[&str]) -> Output {
        let output = Command::new("kubectl")
            .args(args)
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .env("HOME", &self.dir)
            .output();
        match output {
            Ok(output) => output,
            Err(e) => panic!(
                "running kubectl failed ({e}): kubectl must be on PATH for this test (CI installs it; without it \
                 and without CI set, the test is ignored)"
            ),
        }
    }

    /// Runs kubectl, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {}\n{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write a manifest");
        path.display().to_string()
    }
}

#[test]
#[cfg_attr(
    kubectl_missing,
    ignore = "kubectl is not on PATH: install kubectl to run this test (with CI set it runs and fails instead)"
)]
fn kubectl_applies_gets_and_deletes_a_crd_and_a_custom_resource() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubectl = Kubectl {
        dir: dir.path().to_path_buf(),
    };
    let (_server, url) = start(&dir.path().join("kubeconfig"));
    assert!(kubectl.ok(&["config", "view", "--minify"]).contains(&url));

    // The CRD: created, established, discovered.
    let crd = kubectl.write("crd.yaml", CRD);
    assert_eq!(
        kubectl.ok(&["apply", "-f", &crd]).trim(),
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    );
    kubectl.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ]);
    let resources = kubectl.ok(&["api-resources", "--api-group=example.com", "-o", "wide"]);
    let line = resources
        .lines()
        .find(|line| line.starts_with("widgets "))
        .unwrap_or_else(|| panic!("widgets are discovered:\n{resources}"));
    for column in ["wd", "example.com/v1", "true", "Widget"] {
        assert!(line.split_whitespace().any(|c| c == column), "{column} in {line:?}");
    }
    assert!(kubectl.ok(&["api-versions"]).lines().any(|l| l == "example.com/v1"));

    // A custom resource: created, read back by plural, short name and kind, changed, listed.
    let manifest = kubectl.write("widget.yaml", &widget("blue"));
    assert_eq!(
        kubectl.ok(&["apply", "-f", &manifest]).trim(),
        "widget.example.com/blue created"
    );
    let object: Value =
        serde_json::from_str(&kubectl.ok(&["get", "widgets", "blue", "-n", "team-a", "-o", "json"])).expect("JSON");
    assert_eq!(object["spec"]["colour"], "blue");
    assert_eq!(object["metadata"]["namespace"], "team-a");
    assert!(object["metadata"]["uid"].is_string());
    assert_eq!(
        kubectl.ok(&["get", "wd", "blue", "-n", "team-a", "-o", "jsonpath={.spec.colour}"]),
        "blue"
    );
    let manifest = kubectl.write("widget.yaml", &widget("green"));
    assert_eq!(
        kubectl.ok(&["apply", "-f", &manifest]).trim(),
        "widget.example.com/blue configured"
    );
    assert_eq!(
        kubectl.ok(&[
            "get",
            "widget.example.com/blue",
            "-n",
            "team-a",
            "-o",
            "jsonpath={.spec.colour}"
        ]),
        "green"
    );
    let table = kubectl.ok(&["get", "widgets", "--all-namespaces"]);
    assert!(
        table.lines().any(|l| l.starts_with("team-a") && l.contains("blue")),
        "{table}"
    );
    assert_eq!(
        kubectl.ok(&["get", "widgets", "-A", "-o", "name"]).trim(),
        "widget.example.com/blue"
    );

    // Deleted: the custom resource, then the CRD.
    assert_eq!(
        kubectl.ok(&["delete", "-f", &manifest]).trim(),
        "widget.example.com \"blue\" deleted"
    );
    assert_eq!(kubectl.ok(&["get", "widgets", "-n", "team-a", "-o", "name"]).trim(), "");
    assert_eq!(
        kubectl.ok(&["delete", "-f", &crd]).trim(),
        "customresourcedefinition.apiextensions.k8s.io \"widgets.example.com\" deleted"
    );
    let gone = kubectl.run(&["get", "crd", "widgets.example.com"]);
    assert!(!gone.status.success());
    let stderr = String::from_utf8_lossy(&gone.stderr);
    assert!(stderr.contains("NotFound") || stderr.contains("not found"), "{stderr}");
}
