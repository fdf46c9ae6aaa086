//! `armctl action`: an action object for every action kind of the registry (`aks_api::ACTIONS`, never a list
//! written here), at every served version and by default at the newest; parameters through `--set` and
//! `--parameters-file`, checked against the CRD schema; the errors (ambiguous and unknown actions, bad keys and
//! values, names); `--list`.

mod common;

use armgen_runtime::ActionInfo;
use common::{armctl, stderr, stdout};
use serde_json::{Value, json};

/// The ARM action in kebab-case, as `armctl action` takes it (independently of armctl's own conversion).
fn kebab(action: &str) -> String {
    let chars: Vec<char> = action.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower) {
                out.push('-');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn target(a: &ActionInfo) -> &'static str {
    a.kind.owner_kind.expect("an action kind has a target kind")
}

fn served() -> impl Iterator<Item = &'static ActionInfo> {
    aks_api::ACTIONS.iter().filter(|a| a.kind.served)
}

/// The registry entry of `kind` at the version `armctl action` picks by default: the newest served one.
fn entry(kind: &str) -> &'static ActionInfo {
    served()
        .filter(|a| a.kind.kind == kind)
        .max_by(|a, b| {
            a.kind
                .arm
                .api_version
                .cmp(b.kind.arm.api_version)
                .then(a.kind.version.cmp(b.kind.version))
        })
        .unwrap_or_else(|| panic!("{kind} in aks_api::ACTIONS"))
}

/// The action kind with this ARM action on this target (the registry's spelling).
fn by_action(action: &str, target_kind: &str) -> &'static ActionInfo {
    served()
        .filter(|a| a.action == action && target(a) == target_kind)
        .max_by(|a, b| {
            a.kind
                .arm
                .api_version
                .cmp(b.kind.arm.api_version)
                .then(a.kind.version.cmp(b.kind.version))
        })
        .unwrap_or_else(|| panic!("{action} on {target_kind} in aks_api::ACTIONS"))
}

fn assert_error(o: &std::process::Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "exit code; stderr: {err}; stdout: {}",
        stdout(o)
    );
    assert!(stdout(o).is_empty(), "nothing on stdout on error: {}", stdout(o));
    assert!(
        err.starts_with("armctl: error: ") || err.starts_with("error: "),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "stderr names {n:?}: {err}");
    }
}

/// The object printed (YAML by default); the run must succeed.
fn object(o: &std::process::Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    serde_yaml_ng::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// The smallest parameters the action kind's CRD schema accepts at its version (its required fields), without
/// the owner: what a run of an action that needs parameters is given.
fn sample_parameters(a: &ActionInfo) -> Value {
    let crd = aks_api::custom_resource_definition(a.kind.kube_group, a.kind.kind)
        .expect("a CRD per action kind")
        .expect("the CRD parses");
    let mut spec = armgen_runtime::sample::sample_spec_of(&crd, a.kind.version, 0)
        .expect("the version is in its CRD")
        .unwrap_or_else(|e| panic!("{}: {e}", a.kind.kind));
    if let Some(m) = spec.as_object_mut() {
        m.remove("owner");
    }
    spec
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

/// Checks the printed object of `a` on owner `x` and that it is what the generated type makes of it.
fn assert_action_object(cr: &Value, a: &ActionInfo, owner: &str) {
    let what = format!("{} {}", a.kind.api_version(), a.kind.kind);
    assert_eq!(cr["apiVersion"], json!(a.kind.api_version()), "{what}: {cr}");
    assert_eq!(cr["kind"], json!(a.kind.kind), "{what}: {cr}");
    assert_eq!(cr["spec"]["owner"], json!({"name": owner}), "{what}: {cr}");
    let name = cr["metadata"]["name"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: metadata.name: {cr}"));
    assert!(name.len() <= 63, "{what}: {name}");
    let normalized = aks_api::normalize_custom_resource(cr.clone()).unwrap_or_else(|e| panic!("{what}: {e:?}"));
    assert_eq!(&normalized, cr, "{what}: the object is what its generated type writes");
}

/// Every served entry of the registry, at its version (`--version`), in YAML and JSON: the object parses, has
/// the kind's apiVersion, kind and owner, and round-trips through the generated type. An action that takes
/// parameters is given the smallest its schema accepts (`-f`), one that takes none nothing.
#[test]
fn every_served_action_at_every_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut runs = 0;
    for a in served() {
        let action = kebab(a.action);
        let mut args = vec![
            "action".to_string(),
            action.clone(),
            "--owner".into(),
            "x".into(),
            "--target-kind".into(),
            target(a).into(),
            "--group".into(),
            a.kind.kube_group.into(),
            "--version".into(),
            a.kind.version.into(),
        ];
        if a.body {
            let f = write(
                &dir,
                &format!("{}-{}.yaml", a.kind.kind, a.kind.version),
                &serde_yaml_ng::to_string(&sample_parameters(a)).expect("yaml"),
            );
            args.extend(["-f".to_string(), f]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cr = object(&armctl(&args, None));
        assert_action_object(&cr, a, "x");
        let name = cr["metadata"]["name"].as_str().unwrap_or_default();
        assert!(name.starts_with(&format!("x-{action}-")), "{name}");
        assert!(cr["metadata"].get("namespace").is_none(), "{cr}");

        let mut json_args = args.clone();
        json_args.extend(["-o", "json", "-n", "team-a", "--name", "run-1"]);
        let o = armctl(&json_args, None);
        assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
        let cr: Value = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
        assert_action_object(&cr, a, "x");
        assert_eq!(cr["metadata"], json!({"name": "run-1", "namespace": "team-a"}));
        runs += 1;
    }
    assert!(runs > 0, "the registry has served actions");
}

/// `armctl action <kebab> --owner x --target-kind <target>`, no version: the newest served version that has the
/// action kind (`armgen_runtime::newest`), whatever the spelling of the action.
#[test]
fn every_action_defaults_to_its_newest_served_version() {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for a in served() {
        if seen.contains(&(a.kind.kube_group, a.kind.kind)) {
            continue;
        }
        seen.push((a.kind.kube_group, a.kind.kind));
        let kinds: Vec<armgen_runtime::KindInfo> = served()
            .filter(|b| b.kind.kube_group == a.kind.kube_group && b.kind.kind == a.kind.kind)
            .map(|b| b.kind)
            .collect();
        let newest = armgen_runtime::newest(&kinds, |_| true).expect("a served version");
        let newest = served()
            .find(|b| {
                b.kind.kube_group == a.kind.kube_group && b.kind.kind == a.kind.kind && b.kind.version == newest.version
            })
            .expect("its entry");
        for spelling in [kebab(a.action), a.action.to_string(), a.kind.kind.to_string()] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut args = vec!["action", &spelling, "--owner", "x", "--target-kind", target(a)];
            let f;
            if a.body {
                f = write(&dir, "p.json", &sample_parameters(newest).to_string());
                args.extend(["--parameters-file", &f]);
            }
            let cr = object(&armctl(&args, None));
            assert_action_object(&cr, newest, "x");
        }
    }
}

#[test]
fn run_command_with_set() {
    let a = by_action("runCommand", "ManagedCluster");
    let o = armctl(
        &[
            "action",
            "run-command",
            "--cluster",
            "prod",
            "-n",
            "team-a",
            "--set",
            "command=kubectl get pods",
            "--set",
            "clusterToken.name=aad-token",
            "--set",
            "clusterToken.key=token",
        ],
        None,
    );
    let cr = object(&o);
    assert_action_object(&cr, a, "prod");
    assert_eq!(cr["spec"]["command"], json!("kubectl get pods"));
    assert_eq!(cr["spec"]["clusterToken"], json!({"name": "aad-token", "key": "token"}));
    assert_eq!(cr["metadata"]["namespace"], json!("team-a"));
    let name = cr["metadata"]["name"].as_str().unwrap_or_default();
    let stamp = name
        .strip_prefix("prod-run-command-")
        .unwrap_or_else(|| panic!("{name}"));
    assert_eq!(stamp.len(), 14, "{name}");
    assert!(stamp.chars().all(|c| c.is_ascii_digit()), "{name}");

    // A value that parses as JSON is JSON, except where the field is a string; a file first, --set after.
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(&dir, "p.yaml", "command: ls\ncontext: UEsFBg==\n");
    let o = armctl(
        &[
            "action",
            "runCommand",
            "--owner",
            "prod",
            "-f",
            &f,
            "--set",
            "command=42",
            "--name",
            "rc",
        ],
        None,
    );
    let cr = object(&o);
    assert_eq!(cr["spec"]["command"], json!("42"));
    assert_eq!(cr["spec"]["context"], json!("UEsFBg=="));
    assert_eq!(cr["metadata"]["name"], json!("rc"));

    // stdin as the parameters file.
    let o = armctl(
        &["action", "run-command", "--owner", "prod", "-f", "-"],
        Some("{\"command\": \"date\"}"),
    );
    assert_eq!(object(&o)["spec"]["command"], json!("date"));

    // A misspelt parameter is refused before `kubectl apply` (the CRD does not require the request body's own
    // required properties, such as `command`: ARM's 400 names them; README, "Actions").
    let o = armctl(
        &["action", "run-command", "--owner", "prod", "--set", "comand=ls"],
        None,
    );
    assert_error(&o, &["spec.comand"]);
}

#[test]
fn an_action_on_several_kinds_needs_target_kind() {
    // Every action name the registry has on several target kinds (`abort`: ManagedCluster and AgentPool).
    let mut names: Vec<(&str, Vec<&str>)> = Vec::new();
    for a in served() {
        match names.iter_mut().find(|(n, _)| *n == a.action) {
            Some((_, targets)) if !targets.contains(&target(a)) => targets.push(target(a)),
            Some(_) => {}
            None => names.push((a.action, vec![target(a)])),
        }
    }
    let several: Vec<&(&str, Vec<&str>)> = names.iter().filter(|(_, t)| t.len() > 1).collect();
    assert!(
        !several.is_empty(),
        "the registry has an action on several kinds (abort)"
    );
    assert!(several.iter().any(|(n, _)| *n == "abort"), "{several:?}");
    for (action, targets) in several {
        let o = armctl(&["action", &kebab(action), "--owner", "x"], None);
        let mut needles = vec!["--target-kind", "several kinds"];
        needles.extend(targets.iter().copied());
        assert_error(&o, &needles);
        for t in targets {
            let cr = object(&armctl(
                &["action", &kebab(action), "--owner", "x", "--target-kind", t],
                None,
            ));
            assert_eq!(cr["kind"], json!(by_action(action, t).kind.kind));
            // Case-insensitively.
            let cr = object(&armctl(
                &[
                    "action",
                    &kebab(action),
                    "--owner",
                    "x",
                    "--target-kind",
                    &t.to_lowercase(),
                ],
                None,
            ));
            assert_eq!(cr["kind"], json!(by_action(action, t).kind.kind));
        }
        // A target kind the action does not run on.
        let o = armctl(
            &[
                "action",
                &kebab(action),
                "--owner",
                "x",
                "--target-kind",
                "VirtualMachine",
            ],
            None,
        );
        assert_error(&o, &["--target-kind VirtualMachine", targets[0]]);
    }
}

#[test]
fn an_unknown_action_lists_the_known_ones() {
    let o = armctl(&["action", "reboot", "--owner", "x"], None);
    let mut needles: Vec<String> = vec!["unknown action `reboot`".into()];
    for a in served() {
        needles.push(kebab(a.action));
        needles.push(target(a).to_string());
    }
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    assert_error(&o, &needles);
}

#[test]
fn bad_parameters_name_the_field_and_the_flag() {
    // A typo in a key: the field, the flag, and the fields there are.
    let o = armctl(
        &["action", "run-command", "--owner", "prod", "--set", "comand=ls"],
        None,
    );
    assert_error(
        &o,
        &[
            "spec.comand",
            "unknown field",
            "--set comand=ls",
            "command",
            "clusterToken",
        ],
    );
    // A nested typo.
    let o = armctl(
        &[
            "action",
            "run-command",
            "--owner",
            "prod",
            "--set",
            "command=ls",
            "--set",
            "clusterToken.nam=s",
        ],
        None,
    );
    assert_error(&o, &["spec.clusterToken.nam", "--set clusterToken.nam=s"]);
    // Half a secret reference.
    let o = armctl(
        &[
            "action",
            "run-command",
            "--owner",
            "prod",
            "--set",
            "command=ls",
            "--set",
            "clusterToken.name=s",
        ],
        None,
    );
    assert_error(&o, &["spec.clusterToken.key", "required"]);
    // A wrong type, from a file.
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(&dir, "p.yaml", "command: [ls]\n");
    let o = armctl(&["action", "run-command", "--owner", "prod", "-f", &f], None);
    assert_error(&o, &["spec.command", "expected string", "--parameters-file"]);
    let f = write(&dir, "list.yaml", "- a\n");
    let o = armctl(&["action", "run-command", "--owner", "prod", "-f", &f], None);
    assert_error(&o, &["--parameters-file", "must be an object"]);
    // A wrong type for a boolean field of another action kind (reset-aad-profile: `managed`).
    let aad = served().find(|a| a.action == "resetAADProfile");
    if let Some(aad) = aad {
        let o = armctl(
            &[
                "action",
                "reset-aad-profile",
                "--owner",
                "prod",
                "--target-kind",
                target(aad),
                "--set",
                "managed=yes",
            ],
            None,
        );
        assert_error(&o, &["spec.managed", "expected boolean", "--set managed=yes"]);
    }
    // Not KEY=VALUE, an empty key, a bad path, the owner.
    let o = armctl(&["action", "run-command", "--owner", "prod", "--set", "command"], None);
    assert_error(&o, &["--set command", "KEY=VALUE"]);
    let o = armctl(&["action", "run-command", "--owner", "prod", "--set", "=ls"], None);
    assert_error(&o, &["--set =ls", "empty"]);
    let o = armctl(&["action", "run-command", "--owner", "prod", "--set", "a..b=1"], None);
    assert_error(&o, &["--set a..b=1"]);
    let o = armctl(
        &[
            "action",
            "run-command",
            "--owner",
            "prod",
            "--set",
            "command=ls",
            "--set",
            "owner.name=y",
        ],
        None,
    );
    assert_error(&o, &["spec.owner", "--owner"]);
    // Parameters for an action that takes none.
    let stop = served().find(|a| !a.body).expect("an action without parameters");
    let o = armctl(
        &[
            "action",
            &kebab(stop.action),
            "--owner",
            "x",
            "--target-kind",
            target(stop),
            "--set",
            "command=ls",
        ],
        None,
    );
    assert_error(&o, &["takes no parameters", "--set command=ls"]);
}

#[test]
fn names_are_validated() {
    let a = entry("ManagedClusterStop");
    for bad in ["Bad", "bad_name", "-bad", "bad-", "a.b", &"a".repeat(64)] {
        // `--name=-bad`: clap takes a value that starts with `-` only in this form.
        let o = armctl(&["action", "stop", "--cluster", "prod", &format!("--name={bad}")], None);
        assert_error(&o, &[&format!("--name {bad}"), "DNS-1123"]);
    }
    let cr = object(&armctl(
        &["action", "stop", "--cluster", "prod", "--name", &"a".repeat(63)],
        None,
    ));
    assert_action_object(&cr, a, "prod");
    // A long owner: the default name is cut to 63 characters and keeps the timestamp.
    let owner = "p".repeat(60);
    let cr = object(&armctl(&["action", "stop", "--cluster", &owner], None));
    let name = cr["metadata"]["name"].as_str().unwrap_or_default();
    assert!(name.len() <= 63, "{name}");
    assert!(name.starts_with("ppp"), "{name}");
    let stamp = name.rsplit('-').next().unwrap_or_default();
    assert_eq!(stamp.len(), 14, "{name}");
    // An owner with dots (a valid object name) gives a default name without them.
    let cr = object(&armctl(&["action", "stop", "--cluster", "prod.eu"], None));
    assert_eq!(cr["spec"]["owner"]["name"], json!("prod.eu"));
    assert!(
        cr["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .starts_with("prod-eu-stop-"),
        "{cr}"
    );
    // Bad owner and namespace names, a missing owner.
    let o = armctl(&["action", "stop", "--cluster", "Prod"], None);
    assert_error(&o, &["--owner Prod"]);
    let o = armctl(&["action", "stop", "--cluster", "prod", "-n", "Team_A"], None);
    assert_error(&o, &["--namespace Team_A"]);
    let o = armctl(&["action", "stop"], None);
    assert_error(&o, &["--owner", "--cluster", target(a)]);
}

#[test]
fn versions() {
    let a = entry("ManagedClusterStop");
    let o = armctl(&["action", "stop", "--cluster", "prod", "--version", "v9"], None);
    let mut needles = vec!["--version v9".to_string()];
    needles.extend(
        served()
            .filter(|b| b.kind.kind == a.kind.kind)
            .map(|b| b.kind.version.to_string()),
    );
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    assert_error(&o, &needles);
}

#[test]
fn list_prints_every_action() {
    let o = armctl(&["action", "--list"], None);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("ACTION"), "{text}");
    for a in served() {
        let line = text
            .lines()
            .find(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&kebab(a.action).as_str()) && cells.contains(&a.kind.kind)
            })
            .unwrap_or_else(|| panic!("{} in {text}", a.kind.kind));
        assert!(line.contains(target(a)), "{line}");
        assert!(line.contains(if a.body { " yes " } else { " no " }), "{line}");
        assert!(line.contains(a.kind.version), "{line}");
    }
    assert_eq!(stdout(&armctl(&["action", "list"], None)), text);

    let o = armctl(&["action", "--list", "-o", "json"], None);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    let rows: Vec<Value> = serde_json::from_str(&stdout(&o)).expect("a JSON array");
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for a in served() {
        if !kinds.contains(&(a.kind.kube_group, a.kind.kind)) {
            kinds.push((a.kind.kube_group, a.kind.kind));
        }
        let row = rows
            .iter()
            .find(|r| r["kind"] == json!(a.kind.kind) && r["group"] == json!(a.kind.kube_group))
            .unwrap_or_else(|| panic!("{} in {rows:?}", a.kind.kind));
        assert_eq!(row["action"], json!(kebab(a.action)));
        assert_eq!(row["armAction"], json!(a.action));
        assert_eq!(row["targetKind"], json!(target(a)));
        assert_eq!(row["parameters"], json!(a.body));
        assert!(
            row["versions"]
                .as_array()
                .is_some_and(|v| v.contains(&json!(a.kind.version))),
            "{row}"
        );
    }
    assert_eq!(rows.len(), kinds.len());

    let o = armctl(&["action", "--list", "--owner", "x"], None);
    assert_error(&o, &["--list"]);
}

#[test]
fn help_documents_the_command() {
    let o = armctl(&["action", "--help"], None);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    for needle in [
        "armctl action rotate-cluster-certificates --cluster prod | kubectl apply -f -",
        "run-command",
        "--set",
        "--parameters-file",
        "--target-kind",
        "clusterToken.name",
        "--list",
    ] {
        assert!(text.contains(needle), "{needle} in {text}");
    }
    let o = armctl(&["--help"], None);
    assert!(stdout(&o).contains("action"), "{}", stdout(&o));
}
