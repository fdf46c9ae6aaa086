//! Fetching the pinned spec files when no spec root is given (`armgen::load::fetch`), against a local HTTP server
//! started by each test (`support/http.rs`).
//!
//! - On the AKS specs (`specs/pin.json` and `azure-arm.yaml` copied into a temporary folder, the server serving
//!   the upstream form of each pinned file built from the spec root): a fresh folder generates exactly the
//!   committed `generated/`, a second run fetches nothing, a changed cached file is fetched again, a corrupted
//!   download is refused by its hash and a rerun resumes. These need the spec root to build what is served:
//!   they fail when `CI` is set and it is missing, and are skipped with a message otherwise.
//! - On the hand-written fixture (`fixtures/arm`, with a pin written by the test that declares one patch): the
//!   library API, truncated and oversized responses, HTTP errors, base URL precedence and checks, and a user's
//!   own folder at the default place. The server-down test uses the real pin and needs no spec root either.

#[path = "support/http.rs"]
mod http;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use armgen::load::fetch::{MARKER, Pin, sha256_hex};
use http::{Reply, Server};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The development spec root (the tests that serve a copy of it are ignored without one, see tests/README.md).
fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| panic!("the spec root: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file under `dir`, relative path → bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let p = entry.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under dir").to_path_buf();
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

/// `armgen <args> --config <dir>/<config>` in `dir`, with no spec root in the environment and the base URL
/// from `env_base` (as `$ARMGEN_SPEC_BASE_URL`) when given.
fn armgen(dir: &Path, config: &str, args: &[&str], env_base: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_armgen"));
    cmd.current_dir(dir)
        .args(args)
        .arg("--config")
        .arg(dir.join(config))
        .env_remove("AZURE_REST_API_SPECS")
        .env_remove("ARMGEN_SPEC_BASE_URL");
    if let Some(base) = env_base {
        cmd.env("ARMGEN_SPEC_BASE_URL", base);
    }
    cmd.output().expect("run armgen")
}

/// The fetched spec root of a folder.
fn cache(dir: &Path) -> PathBuf {
    dir.join("specs/azure-rest-api-specs")
}

/// Temporary files an interrupted write could leave.
fn temporaries(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    tree(dir)
        .into_keys()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".armgen-fetch-"))
        })
        .collect()
}

// The AKS specs.

/// A fresh checkout without specs: `azure-arm.yaml` and `specs/pin.json` in a temporary folder.
fn fresh_aks() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("specs")).expect("mkdir");
    std::fs::copy(workspace().join("azure-arm.yaml"), dir.path().join("azure-arm.yaml")).expect("copy config");
    std::fs::copy(workspace().join("specs/pin.json"), dir.path().join("specs/pin.json")).expect("copy pin");
    dir
}

fn aks_pin() -> Pin {
    Pin::load(&workspace().join("specs/pin.json")).expect("specs/pin.json")
}

/// What an upstream mirror serves under `prefix`: each pinned file in its upstream form (the spec root's copy
/// with the pin's patches undone), checked against the pin's upstream size and hash.
fn upstream_routes(pin: &Pin, root: &Path, prefix: &str) -> BTreeMap<String, Reply> {
    let mut routes = BTreeMap::new();
    for f in &pin.files {
        let pinned = std::fs::read(root.join(&f.path)).expect("a pinned file in the spec root");
        assert_eq!(
            sha256_hex(&pinned),
            f.sha256,
            "{}: the spec root differs from the pin",
            f.path
        );
        let upstream = pin.unpatch(f, &pinned).expect("unpatch");
        if let Some(u) = &f.upstream {
            assert_eq!(
                (upstream.len() as u64, sha256_hex(&upstream)),
                (u.bytes, u.sha256.clone()),
                "{}: undoing the pin's patches does not give the pinned upstream size and hash",
                f.path
            );
        }
        routes.insert(
            format!("{prefix}/{}/{}", f.upstream_commit, f.path),
            Reply::Body(upstream),
        );
    }
    routes
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_fresh_checkout_generates_the_committed_crate_and_fetches_each_file_once() {
    let root = spec_root();
    let pin = aks_pin();
    let server = Server::start("/mirror", upstream_routes(&pin, &root, "/mirror"));
    let dir = fresh_aks();
    let out = dir.path().join("out");
    let run = armgen(
        dir.path(),
        "azure-arm.yaml",
        &["generate", "--out", out.to_str().expect("utf-8")],
        Some(&server.url),
    );
    assert!(run.status.success(), "{}", text(&run));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let n = pin.files.len();
    for (i, f) in pin.files.iter().enumerate() {
        let line = format!("fetching {}/{n} {}", i + 1, f.path);
        assert!(stderr.lines().any(|l| l == line), "no line {line:?} in:\n{stderr}");
    }
    let mut requested = server.requests();
    requested.sort();
    let mut expected: Vec<String> = server.routes().cloned().collect();
    expected.sort();
    assert_eq!(requested, expected, "every pinned file exactly once");
    for f in &pin.files {
        let bytes = std::fs::read(cache(dir.path()).join(&f.path)).expect("fetched file");
        assert_eq!(sha256_hex(&bytes), f.sha256, "{}", f.path);
    }
    assert!(cache(dir.path()).join(MARKER).is_file(), "the fetched root is marked");

    let (got, want) = (tree(&out), tree(&workspace().join("generated")));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the same files as the committed generated/"
    );
    for (path, bytes) in &want {
        assert!(
            got.get(path) == Some(bytes),
            "{} differs from generated/",
            path.display()
        );
    }

    // A second run, `check` against the committed crate: up to date, nothing fetched.
    let generated = workspace().join("generated");
    let check = armgen(
        dir.path(),
        "azure-arm.yaml",
        &["check", "--out", generated.to_str().expect("utf-8")],
        Some(&server.url),
    );
    assert!(check.status.success(), "{}", text(&check));
    assert!(!text(&check).contains("fetching"), "{}", text(&check));
    assert_eq!(server.requests().len(), n, "the second run fetched nothing");

    // A cached file that no longer has the pinned hash is fetched again, and only that one.
    let f = &pin.files[n - 1];
    let path = cache(dir.path()).join(&f.path);
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).expect("write");
    let again = armgen(
        dir.path(),
        "azure-arm.yaml",
        &["generate", "--out", out.to_str().expect("utf-8")],
        Some(&server.url),
    );
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr)
            .lines()
            .any(|l| l == format!("fetching 1/1 {}", f.path)),
        "{}",
        text(&again)
    );
    assert_eq!(server.requests().len(), n + 1);
    assert_eq!(sha256_hex(&std::fs::read(&path).expect("read")), f.sha256);
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_corrupted_download_is_refused_by_its_hash_and_a_rerun_resumes() {
    let root = spec_root();
    let pin = aks_pin();
    // The fixed-up file when there is one (its upstream hash is the one checked), else the last.
    let (k, bad) = pin
        .files
        .iter()
        .enumerate()
        .find(|(_, f)| f.upstream.is_some())
        .unwrap_or((pin.files.len() - 1, &pin.files[pin.files.len() - 1]));
    let good = upstream_routes(&pin, &root, "");
    let mut routes = good.clone();
    let key = format!("/{}/{}", bad.upstream_commit, bad.path);
    let corrupted = match routes.get(&key) {
        Some(Reply::Body(b)) => {
            let mut b = b.clone();
            let mid = b.len() / 2;
            b[mid] ^= 0x20;
            b
        }
        _ => panic!("no route for {key}"),
    };
    let actual = sha256_hex(&corrupted);
    routes.insert(key.clone(), Reply::Body(corrupted));
    let server = Server::start("", routes);
    let dir = fresh_aks();
    let run = armgen(
        dir.path(),
        "azure-arm.yaml",
        &["generate", "--out", "out"],
        Some(&server.url),
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = String::from_utf8_lossy(&run.stderr).to_string();
    let expected = bad.upstream.as_ref().map_or(&bad.sha256, |u| &u.sha256);
    let url = format!("{}{key}", server.url);
    for needle in [
        bad.path.as_str(),
        url.as_str(),
        expected.as_str(),
        actual.as_str(),
        "refused",
        "AZURE_REST_API_SPECS",
        "--spec-base-url",
        "ARMGEN_SPEC_BASE_URL",
    ] {
        assert!(message.contains(needle), "the error does not name {needle}:\n{message}");
    }
    assert!(!message.contains("panicked"), "{message}");
    assert!(
        !cache(dir.path()).join(&bad.path).exists(),
        "nothing written for the refused file"
    );
    assert_eq!(temporaries(&cache(dir.path())), Vec::<PathBuf>::new());
    assert!(!dir.path().join("out").exists(), "no generation without the specs");

    // Against a good mirror, the files verified before the refusal are kept: only the rest is fetched.
    let server = Server::start("", good);
    let rerun = armgen(
        dir.path(),
        "azure-arm.yaml",
        &["generate", "--out", "out"],
        Some(&server.url),
    );
    assert!(rerun.status.success(), "{}", text(&rerun));
    assert_eq!(server.requests().len(), pin.files.len() - k);
    assert_eq!(
        server.requests().first(),
        Some(&key),
        "the refused file is the first fetched again"
    );
}

#[test]
fn no_server_is_a_clear_error_naming_the_file_the_url_and_what_to_do() {
    let pin = aks_pin();
    let port = Server::closed_port();
    let dir = fresh_aks();
    let base = format!("http://127.0.0.1:{port}");
    let run = armgen(dir.path(), "azure-arm.yaml", &["check", "--spec-base-url", &base], None);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = String::from_utf8_lossy(&run.stderr).to_string();
    let first = &pin.files[0];
    for needle in [
        format!("cannot fetch {}", first.path),
        format!("{base}/{}/{}", first.upstream_commit, first.path),
        "request failed".to_string(),
        "AZURE_REST_API_SPECS".to_string(),
        "--spec-base-url".to_string(),
    ] {
        assert!(
            message.contains(&needle),
            "the error does not name {needle}:\n{message}"
        );
    }
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(
        message.lines().filter(|l| l.starts_with("fetching ")).count(),
        1,
        "stops at the first failure:\n{message}"
    );
}

// The fixture.

const FIXTURE_CONFIG: &str = "output:\n  crateName: widgets-api\ngroups:\n  fixture:\n    provider: Microsoft.Fixture\n    \
                              specFolder: fixture\n    versions:\n      v1:\n        armApiVersion: \"2024-01-01\"\n        \
                              specFiles: [widgets.json]\n        storage: true\n";
const FIXTURE_COMMIT: &str = "1111111111111111111111111111111111111111";
const FIXTURE_FILES: [&str; 2] = ["fixture/widgets.json", "common/types.json"];

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm")
}

/// A folder with the fixture config and a pin of the fixture files; `widgets.json` is pinned as a fix-up of an
/// "upstream" form with a trailing comma before its last closing brace. Returns the folder and what a mirror
/// serves (upstream forms, by `<prefix>/<commit>/<path>`).
fn fresh_fixture(prefix: &str) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("armgen.yaml"), FIXTURE_CONFIG).expect("config");
    let mut files = Vec::new();
    let mut served = BTreeMap::new();
    for (i, path) in FIXTURE_FILES.iter().enumerate() {
        let pinned = std::fs::read(fixture_root().join(path)).expect("fixture");
        let mut entry = serde_json::json!({
            "path": path,
            "upstream_commit": FIXTURE_COMMIT,
            "bytes": pinned.len(),
            "sha256": sha256_hex(&pinned),
        });
        let mut upstream = pinned.clone();
        if i == 0 {
            let last = pinned.iter().rposition(|b| *b == b'}').expect("a closing brace");
            upstream.insert(last, b',');
            entry["upstream"] = serde_json::json!({
                "bytes": upstream.len(),
                "sha256": sha256_hex(&upstream),
                "provenance": "made by the test",
                "patches": [{ "offset": last, "find": ",", "replace": "", "because": "a trailing comma" }],
            });
        }
        files.push(entry);
        served.insert(format!("{prefix}/{FIXTURE_COMMIT}/{path}"), upstream);
    }
    std::fs::create_dir_all(dir.path().join("specs")).expect("mkdir");
    let pin = serde_json::json!({ "files": files });
    std::fs::write(dir.path().join("specs/pin.json"), pin.to_string()).expect("pin");
    (dir, served)
}

fn serve_all(prefix: &str, served: &BTreeMap<String, Vec<u8>>) -> Server {
    Server::start(
        prefix,
        served
            .iter()
            .map(|(k, v)| (k.clone(), Reply::Body(v.clone())))
            .collect(),
    )
}

/// Run by [`the_library_fetches_only_when_asked`] in a child process without `AZURE_REST_API_SPECS`, with the
/// folder in `ARMGEN_TEST_FETCH_DIR` and the mirror in `ARMGEN_SPEC_BASE_URL`.
#[test]
#[ignore = "run by the_library_fetches_only_when_asked, with its own environment"]
fn library_fetch_child() {
    use armgen::pipeline::buildrs::Progress;
    let dir = PathBuf::from(std::env::var_os("ARMGEN_TEST_FETCH_DIR").expect("ARMGEN_TEST_FETCH_DIR"));
    let config = dir.join("armgen.yaml");
    // Off by default: a missing spec root stays an error, and nothing is fetched.
    let off = armgen::Builder::new(&config).generate().expect_err("no spec root");
    assert!(matches!(off, armgen::Error::SpecRootMissing { .. }), "{off}");

    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let out = armgen::Builder::new(&config)
        .fetch_missing_specs(true)
        .progress(move |p| sink.lock().expect("lock").push(p.clone()))
        .cargo_instructions(false)
        .out_dir(dir.join("out"))
        .compile()
        .expect("compile with fetched specs");
    let fetches: Vec<Progress> = seen
        .lock()
        .expect("lock")
        .iter()
        .filter(|p| matches!(p, Progress::Fetch { .. }))
        .cloned()
        .collect();
    let total = FIXTURE_FILES.len();
    let expected: Vec<Progress> = FIXTURE_FILES
        .iter()
        .enumerate()
        .map(|(i, path)| Progress::Fetch {
            index: i + 1,
            total,
            path: path.to_string(),
        })
        .collect();
    assert_eq!(fetches, expected);
    assert!(out.inputs.contains(&dir.join("specs/pin.json")), "{:?}", out.inputs);
    assert!(
        out.cargo_instructions
            .contains(&"cargo:rerun-if-env-changed=ARMGEN_SPEC_BASE_URL".to_string()),
        "{:?}",
        out.cargo_instructions
    );
    // The same output as from the fixture itself.
    let direct = armgen::Builder::new(&config)
        .specs(fixture_root())
        .generate()
        .expect("generate from the fixture");
    assert_eq!(out.generation.files, direct.files);
}

#[test]
fn the_library_fetches_only_when_asked() {
    let (dir, served) = fresh_fixture("");
    let server = serve_all("", &served);
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "library_fetch_child", "--include-ignored"])
        .env_remove("AZURE_REST_API_SPECS")
        .env("ARMGEN_SPEC_BASE_URL", &server.url)
        .env("ARMGEN_TEST_FETCH_DIR", dir.path())
        .output()
        .expect("run the child test");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("1 passed"), "{}", text(&out));
    assert_eq!(server.requests().len(), FIXTURE_FILES.len());
}

#[test]
fn a_truncated_download_leaves_nothing_behind() {
    let (dir, served) = fresh_fixture("");
    let mut routes: BTreeMap<String, Reply> = served
        .iter()
        .map(|(k, v)| (k.clone(), Reply::Body(v.clone())))
        .collect();
    let key = format!("/{FIXTURE_COMMIT}/{}", FIXTURE_FILES[0]);
    routes.insert(key.clone(), Reply::Truncated(served[&key].clone()));
    let server = Server::start("", routes);
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["generate", "--out", "out"],
        Some(&server.url),
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = text(&run);
    assert!(
        message.contains(&format!("cannot fetch {}", FIXTURE_FILES[0])),
        "{message}"
    );
    assert!(message.contains(&format!("{}{key}", server.url)), "{message}");
    assert!(!cache(dir.path()).join(FIXTURE_FILES[0]).exists());
    assert_eq!(temporaries(&cache(dir.path())), Vec::<PathBuf>::new());
}

#[test]
fn a_response_longer_than_pinned_is_refused_with_or_without_a_length() {
    for (how, reply) in [
        ("announced", Reply::Body as fn(Vec<u8>) -> Reply),
        ("unannounced", Reply::NoLength),
    ] {
        let (dir, served) = fresh_fixture("");
        let mut routes: BTreeMap<String, Reply> = served
            .iter()
            .map(|(k, v)| (k.clone(), Reply::Body(v.clone())))
            .collect();
        let key = format!("/{FIXTURE_COMMIT}/{}", FIXTURE_FILES[1]);
        let mut long = served[&key].clone();
        long.extend(std::iter::repeat_n(b' ', 4096));
        routes.insert(key, reply(long));
        let server = Server::start("", routes);
        let run = armgen(
            dir.path(),
            "armgen.yaml",
            &["generate", "--out", "out"],
            Some(&server.url),
        );
        assert_eq!(run.status.code(), Some(2), "{how}: {}", text(&run));
        let message = text(&run);
        let limit = served[&format!("/{FIXTURE_COMMIT}/{}", FIXTURE_FILES[1])].len();
        assert!(
            message.contains(&format!("more than the pinned {limit}"))
                || message.contains(&format!("longer than the pinned {limit} bytes")),
            "{how}: {message}"
        );
        assert!(!cache(dir.path()).join(FIXTURE_FILES[1]).exists(), "{how}");
    }
}

#[test]
fn an_http_error_names_its_status() {
    let (dir, _) = fresh_fixture("");
    let server = Server::start("", BTreeMap::new());
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["generate", "--out", "out"],
        Some(&server.url),
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(text(&run).contains("HTTP 404 Not Found"), "{}", text(&run));
}

#[test]
fn the_flag_wins_over_the_environment_and_only_http_is_fetched() {
    let (dir, served) = fresh_fixture("/mirror");
    let server = serve_all("/mirror", &served);
    // A bad $ARMGEN_SPEC_BASE_URL is an error naming it…
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["generate", "--out", "out"],
        Some("ftp://mirror.invalid/specs"),
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    let message = text(&run);
    assert!(message.contains("$ARMGEN_SPEC_BASE_URL"), "{message}");
    assert!(message.contains("only http and https"), "{message}");
    // …but the flag is used instead when given.
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["generate", "--out", "out", "--spec-base-url", &server.url],
        Some("ftp://mirror.invalid/specs"),
    );
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(server.requests().len(), FIXTURE_FILES.len());
    // A file URL is not fetched.
    let (dir, _) = fresh_fixture("");
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["check", "--spec-base-url", "file:///etc"],
        None,
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run));
    assert!(text(&run).contains("--spec-base-url"), "{}", text(&run));
    assert!(!cache(dir.path()).exists(), "nothing created for a refused URL");
}

#[test]
fn a_folder_armgen_did_not_fetch_is_used_as_it_is() {
    let (dir, _) = fresh_fixture("");
    for path in FIXTURE_FILES {
        let to = cache(dir.path()).join(path);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(fixture_root().join(path), &to).expect("copy");
    }
    // Not the pinned bytes, and no server: a user's own folder is neither checked nor written.
    let types = cache(dir.path()).join(FIXTURE_FILES[1]);
    let mut bytes = std::fs::read(&types).expect("read");
    bytes.push(b'\n');
    std::fs::write(&types, &bytes).expect("write");
    let base = format!("http://127.0.0.1:{}", Server::closed_port());
    let run = armgen(
        dir.path(),
        "armgen.yaml",
        &["generate", "--out", "out", "--spec-base-url", &base],
        None,
    );
    assert!(run.status.success(), "{}", text(&run));
    assert!(!text(&run).contains("fetching"), "{}", text(&run));
    assert_eq!(std::fs::read(&types).expect("read"), bytes, "left as it was");
    assert!(!cache(dir.path()).join(MARKER).exists());
}
