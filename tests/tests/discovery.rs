//! Resource discovery on the real AKS specs: every PUT path, with ARM type, scope, parents and whether the
//! PUT is long-running. A snapshot, so that a new API version's resources show up in review.

mod common;

use std::path::PathBuf;

use armgen::Config;
use armgen::discover::discover;
use armgen::load::SpecSet;

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn resources_of_every_configured_version() {
    let root = common::spec_root();
    let config = Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    for (group_name, group) in &config.groups {
        for (kube, version) in &group.versions {
            let files: Vec<PathBuf> = version.spec_files.iter().map(|f| group.spec_folder.join(f)).collect();
            let specs = SpecSet::load(&root, &files).expect("load");
            let resources = discover(&specs).expect("discover");
            insta::assert_yaml_snapshot!(format!("{group_name}-{kube}"), resources);
        }
    }
}
