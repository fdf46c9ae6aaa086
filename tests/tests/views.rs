//! Every read-only GET of the configured spec files under a generated resource (no PUT on its path, not a child
//! resource's list) is accounted for: a view of the generated registry (`aks_api::VIEWS`, a typed status field the
//! reconciler fills), excluded by `azure-arm.yaml` (`kubernetes.resources.<Kind>.views.exclude`, with a reason), or
//! under a resource the group does not generate. None is dropped silently: a new GET in a new API version fails
//! here until it is read or excluded (the generator also lists it in `REPORT.md`).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{config, normalize_route as normalize, spec_root};

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_read_only_get_under_a_resource_is_a_view_or_excluded() {
    let root = spec_root();
    let config = config();
    let (mut read, mut excluded, mut elsewhere) = (0, 0, 0);
    for (group_name, group) in &config.groups {
        for (version, v) in &group.versions {
            let kinds: Vec<&armgen_runtime::KindInfo> = aks_api::KINDS
                .iter()
                .filter(|k| k.group == group_name.as_str() && k.version == version.as_str())
                .collect();
            assert!(!kinds.is_empty(), "{group_name}/{version}: no kinds in the registry");
            let views: BTreeSet<String> = aks_api::VIEWS
                .iter()
                .filter(|x| x.group == group_name.as_str() && x.version == version.as_str())
                .map(|x| normalize(x.route))
                .collect();
            for file in &v.spec_files {
                let path = root.join(&group.spec_folder).join(file);
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let paths = doc.get("paths").and_then(Value::as_object).cloned().unwrap_or_default();
                let puts: BTreeSet<String> = paths
                    .iter()
                    .filter(|(_, i)| i.get("put").is_some())
                    .map(|(r, _)| normalize(r))
                    .collect();
                let gets = paths
                    .iter()
                    .filter(|(_, i)| i.get("get").is_some() && i.get("put").is_none());
                for (route, _) in gets {
                    let get = normalize(route);
                    let at = format!("{group_name}/{version}: GET {route} ({})", file.display());
                    // The deepest resource it is under; a child collection (`…/agentPools`) is its kind's list.
                    let Some(under) = puts
                        .iter()
                        .filter(|r| get.starts_with(&format!("{r}/")))
                        .max_by_key(|r| r.len())
                    else {
                        continue;
                    };
                    if puts.contains(&format!("{get}/{{}}")) {
                        continue;
                    }
                    if views.contains(&get) {
                        read += 1;
                        continue;
                    }
                    let Some(kind) = kinds.iter().find(|k| normalize(k.arm.path) == *under) else {
                        assert!(
                            !group.resources.include.is_empty(),
                            "{at}: under no generated resource, though the group generates every resource of its \
                             spec files"
                        );
                        elsewhere += 1;
                        continue;
                    };
                    let name = route
                        .split('/')
                        .skip(kind.arm.path.split('/').count())
                        .collect::<Vec<_>>()
                        .join("/");
                    let because = group
                        .kubernetes
                        .resources
                        .get(kind.kind)
                        .and_then(|r| r.views.exclude.get(&name));
                    assert!(
                        because.is_some_and(|b| !b.trim().is_empty()),
                        "{at}: under {} but neither a view (aks_api::VIEWS) nor in \
                         kubernetes.resources.{}.views.exclude",
                        kind.kind,
                        kind.kind
                    );
                    excluded += 1;
                }
            }
        }
    }
    assert!(
        read > 0 && excluded > 0,
        "views {read}, excluded {excluded}, elsewhere {elsewhere}"
    );
}

#[test]
fn every_view_is_a_typed_status_field_of_its_kinds_crd() {
    assert!(!aks_api::VIEWS.is_empty());
    for v in aks_api::VIEWS {
        let kind = aks_api::KINDS
            .iter()
            .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind)
            .unwrap_or_else(|| panic!("{}/{} {}: no such kind", v.group, v.version, v.kind));
        assert!(
            normalize(v.route).starts_with(&format!("{}/", normalize(kind.arm.path))),
            "{}: {} is not under {}",
            v.kind,
            v.route,
            kind.arm.path
        );
        let crd = aks_api::custom_resource_definition(kind.kube_group, kind.kind)
            .unwrap_or_else(|| panic!("{}: no CRD", kind.kind))
            .unwrap_or_else(|e| panic!("{}: CRD: {e}", kind.kind));
        let version = crd
            .spec
            .versions
            .iter()
            .find(|x| x.name == v.version)
            .unwrap_or_else(|| panic!("{}: no version {}", kind.kind, v.version));
        let schema =
            serde_json::to_value(version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref())).expect("schema");
        let field = schema
            .pointer(&format!("/properties/status/properties/{}", v.field))
            .unwrap_or_else(|| panic!("{} {}: no status.{}", kind.kind, v.version, v.field));
        let want = if v.pageable { "array" } else { "object" };
        assert_eq!(field["type"], want, "{} {}: status.{}", kind.kind, v.version, v.field);
        assert!(
            schema
                .pointer(&format!("/properties/spec/properties/{}", v.field))
                .is_none(),
            "{}: a view is never in the spec",
            v.field
        );
    }
}
