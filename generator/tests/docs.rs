//! The documentation's examples stay true.

use std::path::Path;

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new("."))
}

/// The fenced `yaml` blocks of a Markdown file.
fn yaml_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, l) if l.starts_with("```yaml") => current = Some(String::new()),
            (Some(_), l) if l.starts_with("```") => blocks.extend(current.take()),
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn the_config_reference_example_parses() {
    let path = workspace().join("docs/config.md");
    let doc = std::fs::read_to_string(&path).expect("docs/config.md");
    let blocks = yaml_blocks(&doc);
    assert_eq!(blocks.len(), 1, "docs/config.md should have one yaml example");
    let config = armgen::Config::parse(&blocks[0], &path).expect("the documented example is a valid config");
    let group = &config.groups["containerservice"];
    assert_eq!(group.versions.len(), 2);
    assert!(group.overrides.types.contains_key("ManagedClusterSKU"));
}

#[test]
fn the_workspace_config_parses() {
    let path = workspace().join("azure-arm.yaml");
    armgen::Config::load(&path).expect("azure-arm.yaml is valid");
}
