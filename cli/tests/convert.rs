//! `armctl convert`: custom resources between the served versions, through the webhook's code.

mod common;

use common::{armctl, stderr, stdout};
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
