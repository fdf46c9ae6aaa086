//! The types `build.rs` generated from the fixture spec, in use; and the build script's contract with cargo:
//! it names exactly the files it read in `cargo:rerun-if-changed` (so a second `cargo build` with no input
//! change does not run it), and generating again into the up-to-date output writes nothing.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use armgen_runtime::{Nullable, UnknownFields};
use build_rs_demo::greenhouse::v2::{API_VERSION, arm};
use serde_json::json;

include!("../builder.rs");

fn payload() -> serde_json::Value {
    json!({
        "id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Greenhouse/greenhouses/kew",
        "name": "kew",
        "type": "Microsoft.Greenhouse/greenhouses",
        "location": "uksouth",
        "tags": { "team": "botany" },
        "properties": {
            "climate": "Tropical",
            "glazing": "glass",
            "capacity": 12,
            "heating": { "enabled": true, "targetCelsius": 24 },
            "sensors": [{ "name": "s1", "kind": "Humidity" }, { "name": "s2", "kind": "CO2" }],
            "notes": null,
            "irrigation": { "schedule": "06:30", "litersPerDay": 40 },
            "provisioningState": "Succeeded",
            "solarPanels": 8
        }
    })
}

#[test]
fn a_payload_reads_into_the_generated_types_and_writes_back_unchanged() {
    assert_eq!(API_VERSION, "2025-06-01");
    let g: arm::Greenhouse = serde_json::from_value(payload()).expect("a valid greenhouse");
    assert_eq!(g.location, "uksouth");
    let p = g.properties.as_ref().expect("properties");
    assert_eq!(p.climate, Some(arm::Climate::Tropical));
    // Closed enum, matched case-insensitively and written in the spec's spelling.
    assert_eq!(p.glazing, Some(arm::Glazing::Glass));
    assert_eq!(
        p.heating.as_ref().map(|h| (h.enabled, h.target_celsius)),
        Some((true, Some(24)))
    );
    // `x-nullable`: null is kept apart from absent.
    assert_eq!(p.notes, Some(Nullable::Null));
    // Open enum: a value the spec does not list is kept.
    let kinds: Vec<&str> = p.sensors.iter().flatten().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["Humidity", "CO2"]);
    // New in 2025-06-01, the only version generated.
    assert_eq!(p.irrigation.as_ref().and_then(|i| i.liters_per_day), Some(40));
    // A property the spec does not define is kept and listed.
    let mut unknown = Vec::new();
    g.unknown_fields("", &mut unknown);
    assert_eq!(unknown, ["/properties/sensors/1/kind=CO2", "/properties/solarPanels"]);

    let mut expected = payload();
    expected["properties"]["glazing"] = json!("Glass");
    assert_eq!(serde_json::to_value(&g).expect("serialize"), expected);
}

#[test]
fn a_closed_enum_rejects_values_the_spec_does_not_list() {
    let mut p = payload();
    p["properties"]["glazing"] = json!("Bamboo");
    let err = serde_json::from_value::<arm::Greenhouse>(p).expect_err("Bamboo is not a glazing");
    assert!(err.to_string().contains("Bamboo"), "{err}");
}

#[test]
fn the_extra_derives_apply_to_every_type() {
    let g: arm::Greenhouse = serde_json::from_value(payload()).expect("valid");
    let mut other = g.clone();
    other.location = "westeurope".into();
    // `Eq` and `Hash` come from `.derive("Eq").derive("Hash")`; armgen derives neither on structs.
    let set: HashSet<arm::Greenhouse> = [g.clone(), g.clone(), other].into_iter().collect();
    assert_eq!(set.len(), 2);
    let beds: HashSet<arm::BedProperties> = HashSet::from([arm::BedProperties {
        crop: "tomato".into(),
        ..Default::default()
    }]);
    assert_eq!(beds.len(), 1);
}

#[test]
fn resources_are_discovered_from_the_put_paths() {
    let kinds: Vec<(&str, &[&str], bool)> = arm::RESOURCES
        .iter()
        .map(|r| (r.kind, r.parents, r.long_running))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Greenhouse", &[][..], true),
            ("Bed", &["Microsoft.Greenhouse/greenhouses"][..], false),
        ]
    );
    let bed = json!({ "properties": { "crop": "basil" } }).to_string();
    let rt = arm::round_trip("Bed", &bed).expect("a kind of v2").expect("valid");
    assert!(rt.unknown.is_empty(), "{:?}", rt.unknown);
}

/// The build script's output folder, and cargo's record of what it printed (`output` beside `out/`).
fn build_script_dirs() -> (&'static Path, std::path::PathBuf) {
    let out = Path::new(env!("OUT_DIR"));
    let record = out.parent().map(|p| p.join("output")).unwrap_or_default();
    (out, record)
}

#[test]
fn the_build_script_watches_exactly_the_files_generation_read() {
    let (_, record) = build_script_dirs();
    let text = std::fs::read_to_string(&record)
        .unwrap_or_else(|e| panic!("cargo's record of the build script output {}: {e}", record.display()));
    let watched: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("cargo:rerun-if-changed="))
        .collect();
    // The config, the v2 spec and the common-types file it references; not the v1 spec, which `.versions`
    // leaves out and generation never reads. `--specs` is given, so no `rerun-if-env-changed` either.
    assert_eq!(
        watched,
        BTreeSet::from([
            "armgen.yaml",
            "fixtures/common/types.json",
            "fixtures/greenhouse/2025-06-01/greenhouse.json",
        ]),
        "{text}"
    );
    assert!(!text.contains("rerun-if-env-changed"), "{text}");
    for file in &watched {
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(file).is_file(),
            "{file} does not exist"
        );
    }
}

#[test]
fn generating_again_into_the_up_to_date_output_writes_nothing() {
    let (out, _) = build_script_dirs();
    let file = out.join("greenhouse.rs");
    let before = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .expect("greenhouse.rs");
    let again = greenhouse_builder()
        .out_dir(out)
        .cargo_instructions(false)
        .compile()
        .expect("generation");
    assert!(again.written.is_empty(), "rewrote {:?}", again.written);
    let after = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .expect("greenhouse.rs");
    assert_eq!(before, after);
    // What the build script printed is what generation reads.
    assert_eq!(again.cargo_instructions.len(), 3, "{:?}", again.cargo_instructions);
}

#[test]
fn the_generated_file_has_no_doc_comments() {
    let (out, _) = build_script_dirs();
    let text = std::fs::read_to_string(out.join("greenhouse.rs")).expect("greenhouse.rs");
    assert!(text.contains("pub struct Greenhouse"));
    assert!(!text.contains("///") && !text.contains("#[doc"), "doc comments left in");
}
