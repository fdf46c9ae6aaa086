//! `armctl convert`: custom resources between the served versions, through the webhook's code.

mod common;

use common::{armctl, sample_custom_resource, stderr, stdout};
use serde_json::Value;

const OBJECTS: &str = r#"
apiVersion: containerservice.armgen.dev/v1beta1
kind: ManagedCluster
metadata: {name: c1, namespace: default}
spec:
  location: westus2
  owner: {name: rg1}
  enablePodSecurityPolicy: true
---
apiVersion: v1
kind: List
items:
- apiVersion: containerservice.armgen.dev/v2alpha1
  kind: AgentPool
  metadata: {name: p1, namespace: default}
  spec: {owner: {name: c1}, count: 3, messageOfTheDay: aGk=}
"#;

fn docs(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| serde::Deserialize::deserialize(d).expect("yaml"))
        .collect()
}

#[test]
fn several_documents_and_lists_convert_and_come_back() {
    let up = armctl(&["convert", "--to", "v2alpha1", "-f", "-"], Some(OBJECTS));
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let hub = docs(&stdout(&up));
    assert_eq!(hub.len(), 2, "one output document per input document");
    assert_eq!(hub[0]["apiVersion"], "containerservice.armgen.dev/v2alpha1");
    assert_eq!(
        hub[0]["metadata"]["annotations"]["armgen.dev/property-bag"],
        r#"{"/spec/enablePodSecurityPolicy":true}"#
    );
    assert_eq!(hub[1]["kind"], "List");
    assert_eq!(hub[1]["items"][0]["spec"]["messageOfTheDay"], "aGk=");

    let down = armctl(
        &[
            "convert",
            "--to",
            "containerservice.armgen.dev/v1beta1",
            "-f",
            "-",
            "-o",
            "json",
        ],
        Some(&stdout(&up)),
    );
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    let list: Value = serde_json::from_str(&stdout(&down)).expect("json");
    assert_eq!(list["kind"], "List", "several documents print as a List in JSON");
    let original = docs(OBJECTS);
    assert_eq!(list["items"][0], original[0], "the v1beta1-only property is back");
    let pool = &list["items"][1];
    assert_eq!(pool["apiVersion"], "containerservice.armgen.dev/v1beta1");
    assert!(
        pool["spec"].get("messageOfTheDay").is_none(),
        "v1beta1 has no messageOfTheDay"
    );

    let again = armctl(
        &["convert", "--to", "v2alpha1", "-f", "-", "-o", "json"],
        Some(&stdout(&down)),
    );
    let list: Value = serde_json::from_str(&stdout(&again)).expect("json");
    assert_eq!(
        list["items"][1], original[1]["items"][0],
        "v2alpha1 → v1beta1 → v2alpha1"
    );
}

#[test]
fn errors_name_the_document_object_and_field() {
    let bad =
        "apiVersion: containerservice.armgen.dev/v1beta1\nkind: AgentPool\nmetadata: {name: p1}\nspec: {count: many}\n";
    let o = armctl(
        &["convert", "--to", "v2alpha1", "-f", "-"],
        Some(&format!("{OBJECTS}---\n{bad}")),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("document 3 (AgentPool p1, containerservice.armgen.dev/v1beta1)"),
        "{err}"
    );
    assert!(err.contains("spec.count"), "{err}");
    assert!(stdout(&o).is_empty(), "nothing is printed when an object fails");

    let o = armctl(&["convert", "--to", "v9", "-f", "-"], Some(OBJECTS));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown version `v9`"), "{}", stderr(&o));

    let o = armctl(&["convert", "--to", "v1beta1", "-f", "-"], Some("- 1\n- 2\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("must be an object"), "{}", stderr(&o));
}

/// Versions are per API group. A bare `--to VERSION` converts each object within its own group: every kind of every
/// group converts to each version of its group that has it; an object whose group lacks the version is an error
/// naming it. `--to GROUP/VERSION` must name a version of a group of ours.
#[test]
fn a_bare_version_converts_each_object_within_its_own_group() {
    for from in aks_api::KINDS.iter().filter(|k| k.served) {
        let object = serde_json::to_string(&sample_custom_resource(from)).expect("json");
        for to in aks_api::KINDS
            .iter()
            .filter(|k| k.served && k.kube_group == from.kube_group && k.kind == from.kind)
        {
            let o = armctl(&["convert", "--to", to.version, "-f", "-", "-o", "json"], Some(&object));
            assert_eq!(
                o.status.code(),
                Some(0),
                "{} {} → {}: {}",
                from.kind,
                from.version,
                to.version,
                stderr(&o)
            );
            let converted: Value = serde_json::from_str(&stdout(&o)).expect("json");
            assert_eq!(
                converted["apiVersion"],
                to.api_version(),
                "{} {}",
                from.kind,
                from.version
            );
        }
    }
    // A version one group has and another lacks: the other group's object is named.
    let (has, lacks) = aks_api::VERSIONS
        .iter()
        .flat_map(|a| aks_api::VERSIONS.iter().map(move |b| (a, b)))
        .find(|(a, b)| {
            a.kube_group != b.kube_group
                && !aks_api::VERSIONS
                    .iter()
                    .any(|v| v.kube_group == b.kube_group && v.version == a.version)
        })
        .expect("a version that some group lacks");
    let kind_of = |v: &armgen_runtime::VersionInfo| {
        aks_api::KINDS
            .iter()
            .find(|k| k.group == v.group && k.version == v.version && k.served)
            .expect("a served kind")
    };
    let (a, b) = (kind_of(has), kind_of(lacks));
    let input = format!(
        "{}---\n{}",
        serde_yaml_ng::to_string(&sample_custom_resource(a)).expect("yaml"),
        serde_yaml_ng::to_string(&sample_custom_resource(b)).expect("yaml")
    );
    let o = armctl(&["convert", "--to", has.version, "-f", "-"], Some(&input));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let needle = format!(
        "document 2 ({}): cannot convert: unknown version `{}` of {}",
        b.kind, has.version, b.kube_group
    );
    assert!(err.contains(&needle), "{needle}: {err}");
    assert!(stdout(&o).is_empty(), "nothing is printed when an object fails");
    // GROUP/VERSION: the group's own versions only.
    let o = armctl(
        &[
            "convert",
            "--to",
            &format!("{}/{}", lacks.kube_group, has.version),
            "-f",
            "-",
        ],
        Some(&input),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("unknown version `{}` of {}", has.version, lacks.kube_group)),
        "{}",
        stderr(&o)
    );
    let o = armctl(&["convert", "--to", "compute.armgen.dev/v1", "-f", "-"], Some(&input));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a version of an API group of ours"),
        "{}",
        stderr(&o)
    );
}
