//! Resource discovery on the real specs of every configured group: every PUT path of the resources the group
//! generates (loaded and selected as generation does: its opaque entries, `resources.include`, named after
//! `resources.rename`), with ARM type, scope, parents and whether the PUT is long-running. A snapshot per group
//! and version, so that a new API version's or group's resources show up in review.

use crate::common;

use armgen::Config;

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn resources_of_every_configured_version() {
    let root = common::spec_root();
    let config = Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    for (group_name, group) in &config.groups {
        for (kube, version) in &group.versions {
            let (_, resources) = armgen::pipeline::builder::load_version(&root, group, version)
                .unwrap_or_else(|e| panic!("{group_name}/{kube}: {e}"));
            insta::assert_yaml_snapshot!(format!("{group_name}-{kube}"), resources);
        }
    }
}
