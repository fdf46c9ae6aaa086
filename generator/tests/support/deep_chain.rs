//! A spec root with one resource whose properties are a chain of `depth` nested definitions (`Level0` →
//! `Level1` → …), each with a multi-sentence description, for the deep-chain test and benchmark.

use std::path::Path;

use serde_json::{Value, json};

/// Writes `azure-arm.yaml` and `deep.json` into `dir` (the spec root and the config's folder).
pub fn write(dir: &Path, depth: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("deep.json"), spec(depth).to_string())?;
    std::fs::write(
        dir.join("azure-arm.yaml"),
        "output:\n  crateName: deep-api\ngroups:\n  test:\n    provider: Microsoft.Test\n    specFolder: .\n    \
         versions:\n      v1:\n        armApiVersion: \"2024-01-01\"\n        specFiles: [deep.json]\n        \
         storage: true\n",
    )
}

/// The spec: `Widget.properties` (flattened) is `Level0`; `LevelN` has a string `value` and `next: LevelN+1`.
pub fn spec(depth: usize) -> Value {
    let mut definitions = serde_json::Map::new();
    definitions.insert(
        "Widget".into(),
        json!({
            "type": "object",
            "description": "A widget. It holds a chain of levels.",
            "properties": {"properties": {"$ref": "#/definitions/Level0", "x-ms-client-flatten": true}}
        }),
    );
    for i in 0..depth {
        let mut properties = json!({
            "value": {
                "type": "string",
                "description": format!("The value at level {i}. It is a string. More words follow here.")
            }
        });
        if i + 1 < depth {
            properties["next"] = json!({
                "$ref": format!("#/definitions/Level{}", i + 1),
                "description": format!("The level after {i}. Deeper still. And more text to trim.")
            });
        }
        definitions.insert(
            format!("Level{i}"),
            json!({
                "type": "object",
                "description": format!("Level {i} of the chain. Each level holds a value and the next level."),
                "properties": properties
            }),
        );
    }
    widget_document("Deep", Value::Object(definitions))
}

/// A Swagger 2.0 document with one resource, `Microsoft.Test/widgets` (PUT of a `Widget`), and `definitions`
/// (which must define `Widget`): the fixture shape the generator's spec-root and deep-chain tests share.
pub fn widget_document(title: &str, definitions: Value) -> Value {
    let path = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Test/widgets/{widgetName}";
    json!({
        "swagger": "2.0",
        "info": {"title": title, "version": "2024-01-01"},
        "paths": {
            path: {
                "put": {
                    "operationId": "Widgets_CreateOrUpdate",
                    "parameters": [
                        {"name": "subscriptionId", "in": "path", "required": true, "type": "string"},
                        {"name": "resourceGroupName", "in": "path", "required": true, "type": "string"},
                        {"name": "widgetName", "in": "path", "required": true, "type": "string"},
                        {"name": "parameters", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Widget"}}
                    ],
                    "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/Widget"}}}
                }
            }
        },
        "definitions": definitions
    })
}
