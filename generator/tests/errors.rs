//! Bad input: every error names where the problem is — the spec file and the JSON pointer in it (in the
//! original document's terms, `#/definitions/…` for Swagger 2.0), or the config file and key.
//!
//! The specs are small fixtures in `tests/fixtures/errors/` (that folder is the spec root); `widget.json` is
//! the valid spec the broken ones are variations of, and `ok.yaml` the valid config the others extend.

use std::path::{Path, PathBuf};

use armgen::discover::discover;
use armgen::load::SpecSet;
use armgen::passes::lower::lower;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/errors")
}

/// Loads `file` (relative to the fixtures folder), discovers its resources and lowers them.
fn pipeline(file: &str) -> armgen::Result<armgen::ir::Ir> {
    let specs = SpecSet::load(&fixtures(), &[PathBuf::from(file)])?;
    let resources = discover(&specs)?;
    lower(&specs, &resources, "2024-01-01")
}

/// The message of the error the pipeline must fail with on `file`.
fn pipeline_error(file: &str) -> String {
    match pipeline(file) {
        Ok(ir) => panic!(
            "{file}: expected an error, but lowering produced {} types",
            ir.types.len()
        ),
        Err(e) => e.to_string(),
    }
}

/// The message of the error generation with the config `config` (in the fixtures folder) must fail with.
fn generate_error(config: &str) -> String {
    match armgen::Builder::new(fixtures().join(config))
        .specs(fixtures())
        .generate()
    {
        Ok(g) => panic!(
            "{config}: expected an error, but generation produced {} files",
            g.files.len()
        ),
        Err(e) => e.to_string(),
    }
}

fn config_error(text: &str) -> String {
    match armgen::Config::parse(text, Path::new("conf/azure-arm.yaml")) {
        Ok(_) => panic!("expected a config error for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn assert_contains(message: &str, expected: &[&str]) {
    for e in expected {
        assert!(message.contains(e), "expected {e:?} in the error message:\n{message}");
    }
}

// The valid fixtures the broken ones derive from really are valid, so each error below is caused by what
// its fixture changes.

#[test]
fn the_valid_fixture_spec_lowers() {
    let ir = pipeline("widget.json").expect("widget.json is valid");
    assert_eq!(ir.resources.len(), 1);
    assert_eq!(ir.resources[0].arm_type, "Microsoft.Test/widgets");
    let names: Vec<&str> = ir.types.values().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Bar", "Widget"]);
}

#[test]
fn the_valid_fixture_config_generates() {
    let generation = armgen::Builder::new(fixtures().join("ok.yaml"))
        .specs(fixtures())
        .generate()
        .expect("ok.yaml is valid");
    assert!(
        generation
            .files
            .keys()
            .any(|p| p.ends_with("src/test/v1/arm/widget.rs")),
        "{:?}",
        generation.files.keys().collect::<Vec<_>>()
    );
}

// Malformed JSON.

#[test]
fn malformed_json_names_the_file_line_and_column() {
    let message = pipeline_error("malformed.json");
    assert_eq!(
        message,
        "malformed.json#: invalid JSON: trailing comma (line 9, column 5)"
    );
}

// Dangling and cyclic `$ref`s: the error names the `$ref` site, and the reference as written.

#[test]
fn ref_to_a_missing_definition() {
    let message = pipeline_error("dangling_definition.json");
    assert_eq!(
        message,
        "dangling_definition.json#/definitions/Widget/properties/bar: cannot resolve $ref \
         \"#/definitions/Missing\": no such schema"
    );
}

#[test]
fn ref_to_a_missing_definition_in_another_file() {
    let message = pipeline_error("dangling_definition_in_other_file.json");
    assert_eq!(
        message,
        "dangling_definition_in_other_file.json#/definitions/Widget/properties/bar: cannot resolve $ref \
         \"./widget.json#/definitions/Missing\": no such schema"
    );
}

#[test]
fn ref_to_a_missing_file() {
    let message = pipeline_error("dangling_file.json");
    assert_contains(
        &message,
        &[
            "dangling_file.json#/definitions/Widget/properties/bar: cannot resolve $ref \
             \"./missing.json#/definitions/Bar\": cannot read missing.json: ",
        ],
    );
}

#[test]
fn ref_to_a_missing_put_body() {
    let message = pipeline_error("dangling_body.json");
    assert_eq!(
        message,
        "dangling_body.json#/paths/~1subscriptions~1{subscriptionId}~1resourceGroups~1{resourceGroupName}\
         ~1providers~1Microsoft.Test~1widgets~1{widgetName}/put/parameters/3/schema: cannot resolve $ref \
         \"#/definitions/Missing\": no such schema"
    );
}

#[test]
fn ref_cycle_without_a_schema() {
    let message = pipeline_error("ref_cycle.json");
    assert_eq!(
        message,
        "ref_cycle.json#/definitions/Widget/properties/bar: cannot resolve $ref \"#/definitions/A\": a cycle of \
         $refs that never reaches a schema: ref_cycle.json#/definitions/A -> ref_cycle.json#/definitions/B -> \
         ref_cycle.json#/definitions/A"
    );
}

// Malformed structure.

#[test]
fn schema_that_is_a_string() {
    let message = pipeline_error("schema_string.json");
    assert_eq!(
        message,
        "schema_string.json#/definitions/Bar: a schema must be an object, found a string"
    );
}

#[test]
fn paths_that_is_an_array() {
    let message = pipeline_error("paths_array.json");
    assert_eq!(message, "paths_array.json#/paths: expected an object, found an array");
}

#[test]
fn swagger_discriminator_that_is_not_a_string() {
    let message = pipeline_error("discriminator_object.json");
    assert_eq!(
        message,
        "discriminator_object.json#/definitions/Bar/discriminator: a Swagger 2.0 discriminator must be a property \
         name (a string), found an object"
    );
}

#[test]
fn unknown_type() {
    let message = pipeline_error("unknown_type.json");
    assert_eq!(
        message,
        "unknown_type.json#/definitions/Bar/properties/size/type: unknown type \"int\" (expected one of array, \
         boolean, file, integer, number, object, string)"
    );
}

// What the `openapiv3` model rejects is found below where serde loses track (a flattened operation or
// schema), and named in the original document's terms even where upconversion moved it.

const ROUTE: &str = "/paths/~1subscriptions~1{subscriptionId}~1resourceGroups~1{resourceGroupName}~1providers\
                     ~1Microsoft.Test~1widgets~1{widgetName}";

#[test]
fn operation_id_that_is_not_a_string() {
    let message = pipeline_error("operation_id_object.json");
    assert_eq!(
        message,
        format!("operation_id_object.json#{ROUTE}/put/operationId: invalid type: map, expected a string")
    );
}

#[test]
fn required_that_is_not_a_list() {
    let message = pipeline_error("required_string.json");
    assert_eq!(
        message,
        "required_string.json#/definitions/Bar/required: invalid type: string \"size\", expected a sequence"
    );
}

#[test]
fn parameter_keyword_of_the_wrong_type() {
    // The body parameter before it leaves the parameter list in OpenAPI 3.0, and `minLength` moves under
    // `schema`: the pointer is still the one in the Swagger 2.0 file.
    let message = pipeline_error("parameter_min_length.json");
    assert_eq!(
        message,
        format!(
            "parameter_min_length.json#{ROUTE}/put/parameters/4/minLength: invalid type: string \"one\", expected usize"
        )
    );
}

#[test]
fn ref_beside_other_keys_to_a_missing_definition() {
    // Upconversion wraps such a `$ref` in `allOf`; the error names the schema that holds it.
    let message = pipeline_error("dangling_ref_with_siblings.json");
    assert_eq!(
        message,
        "dangling_ref_with_siblings.json#/definitions/Widget/properties/bar: cannot resolve $ref \
         \"#/definitions/Missing\": no such schema"
    );
}

#[test]
fn all_of_beside_a_ref_to_a_missing_definition() {
    // Upconversion puts the `$ref` first in `allOf`, so the member that was `allOf/0` becomes `allOf/1`; the
    // error names it as written.
    let message = pipeline_error("allof_beside_ref.json");
    assert_eq!(
        message,
        "allof_beside_ref.json#/definitions/Widget/properties/bar/allOf/0: cannot resolve $ref \
         \"#/definitions/Missing\": no such schema"
    );
}

// The config.

const CONFIG: &str = "output:
  crateName: widgets-api
groups:
  test:
    provider: Microsoft.Test
    specFolder: .
    versions:
      v1:
        armApiVersion: \"2024-01-01\"
        specFiles: [widget.json]
        storage: true
";

#[test]
fn the_config_text_used_below_is_valid() {
    armgen::Config::parse(CONFIG, Path::new("conf/azure-arm.yaml")).expect("valid");
}

#[test]
fn unknown_config_key_in_a_version() {
    let message = config_error(&CONFIG.replace("specFiles:", "specFile:"));
    assert_contains(
        &message,
        &[
            "conf/azure-arm.yaml: config key `groups.test.versions.v1.specFile`: unknown field `specFile`, expected \
             one of `armApiVersion`, `specFiles`, `storage`",
            "(line 10, column 9)",
        ],
    );
}

#[test]
fn unknown_config_key_at_the_top() {
    let message = config_error(&format!("{CONFIG}outputs: {{}}\n"));
    assert_contains(
        &message,
        &["conf/azure-arm.yaml: config key `outputs`: unknown field `outputs`, expected `output` or `groups`"],
    );
}

#[test]
fn unknown_config_key_in_a_property_override() {
    let text = format!(
        "{CONFIG}    overrides:\n      types:\n        Widget:\n          properties:\n            name:\n              \
         readonly: true\n"
    );
    let message = config_error(&text);
    assert_contains(
        &message,
        &[
            "conf/azure-arm.yaml: config key `groups.test.overrides.types.Widget.properties.name.readonly`: unknown \
           field `readonly`",
        ],
    );
}

#[test]
fn config_type_override_that_matches_nothing() {
    let message = generate_error("override_type.yaml");
    let file = fixtures().join("override_type.yaml");
    assert_eq!(
        message,
        format!(
            "{}: config key `groups.test.overrides.types.Gadget`: matches nothing in any version of the specs; \
             remove or fix it",
            file.display()
        )
    );
}

#[test]
fn config_property_override_that_matches_nothing() {
    let message = generate_error("override_property.yaml");
    assert_contains(
        &message,
        &[
            "override_property.yaml: config key `groups.test.overrides.types.Widget.properties.colour`: matches \
             nothing in any version of the specs",
        ],
    );
}

#[test]
fn config_exclusion_that_matches_nothing() {
    let message = generate_error("exclude_nothing.yaml");
    assert_contains(
        &message,
        &["exclude_nothing.yaml: config key `groups.test.resources.exclude.Microsoft.Test/gadgets`: matches nothing"],
    );
}

// The spec root.

#[test]
fn missing_spec_root_names_all_three_places() {
    let base = tempfile::tempdir().expect("tempdir");
    let explicit = base.path().join("no-such-specs");
    let message = match armgen::resolve_spec_root(Some(&explicit), base.path()) {
        Ok(root) => panic!("expected an error, got {}", root.display()),
        Err(e) => e.to_string(),
    };
    assert_contains(
        &message,
        &[
            "--specs",
            "AZURE_REST_API_SPECS",
            "specs/azure-rest-api-specs",
            &format!("--specs {} (not a directory)", explicit.display()),
        ],
    );
}

// Found by the fuzz test (tests/fuzz.rs); kept as regressions.

#[test]
fn an_alias_that_contains_itself_is_an_error_not_a_stack_overflow() {
    let message = pipeline_error("self_alias.json");
    assert_contains(
        &message,
        &[
            "self_alias.json#/definitions/WindowList",
            "an array or map alias that contains itself",
        ],
    );
}

#[test]
fn two_resources_sharing_one_body_type_emit_parseable_modules() {
    let specs = SpecSet::load(&fixtures(), &[PathBuf::from("shared_body.json")]).expect("load");
    let resources = discover(&specs).expect("discover");
    assert_eq!(resources.len(), 2, "both PUT paths are resources");
    let mut ir = lower(&specs, &resources, "2024-01-01").expect("lower");
    armgen::passes::run_all(&mut ir, &Default::default());
    let modules: std::collections::BTreeSet<String> = ir.types.values().map(|t| t.module.clone()).collect();
    assert_eq!(
        modules.into_iter().collect::<Vec<_>>(),
        ["shared"],
        "every type is shared by the two resources"
    );
    let outputs = [armgen::emit::VersionOutput {
        group: "test",
        provider: "Microsoft.Test",
        kube_version: "v1",
        storage: true,
        ir: &ir,
        kube: None,
        renames: &Default::default(),
    }];
    let files =
        armgen::emit::crate_files("widgets-api", "test", &outputs, armgen::emit::CrateLayout::One).expect("emits");
    assert!(files.contains_key(Path::new("src/test/v1/arm/shared.rs")));
    assert!(
        !files.keys().any(|p| p.ends_with("widget.rs")),
        "no empty resource module is written"
    );
}
