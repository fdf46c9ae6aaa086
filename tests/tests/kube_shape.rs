//! The Kubernetes shape of every resource on the real specs: spec and status root fields, with their ARM
//! paths. A snapshot, so that reviewers see what a regeneration changes for cluster users.

use crate::common;

use armgen::shape::{KubeField, KubeRef, Special};

fn render(t: &KubeRef) -> String {
    let short = |id: &str| id.rsplit('/').next().unwrap_or(id).to_string();
    match t {
        KubeRef::Kube(id) => short(id),
        KubeRef::ArmEnum(id) => format!("enum {}", short(id)),
        KubeRef::ArmUnion(id) => format!("union {}", short(id)),
        KubeRef::Primitive(p) => format!("{p:?}").to_lowercase(),
        KubeRef::Array(inner) => format!("[{}]", render(inner)),
        KubeRef::Map(inner) => format!("{{string: {}}}", render(inner)),
        KubeRef::Json => "json".into(),
        KubeRef::Secret => "SecretReference".into(),
        KubeRef::ResourceRef => "ResourceReference".into(),
        KubeRef::ConfigMapRef => "ConfigMapReference".into(),
        KubeRef::RefKeys(_) => "[ResourceReference] (ARM ID keys)".into(),
    }
}

fn describe(f: &KubeField) -> String {
    let ty = match f.special {
        Special::None => render(&f.ty),
        s => format!("{s:?}"),
    };
    let mut flags = Vec::new();
    if f.required {
        flags.push("required");
    }
    if f.immutable {
        flags.push("immutable");
    }
    if f.omit_empty {
        flags.push("omit-empty");
    }
    format!("{} <- {} : {ty} {}", f.json_name, f.arm_path.join("."), flags.join(" "))
        .trim_end()
        .to_string()
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn spec_and_status_of_every_resource() {
    let root = common::spec_root();
    let generation = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(root)
        .generate()
        .expect("generate");
    for (key, kube) in &generation.kubes {
        let mut out = Vec::new();
        for r in &kube.resources {
            out.push(format!(
                "{} ({}/{}, owner {:?})",
                r.kind, kube.group, kube.version, r.owner
            ));
            if r.template {
                out.push(format!("  template kind: {}Template", r.kind));
            }
            if !r.exports.secrets.is_empty() {
                for (name, e) in &r.exports.secrets {
                    out.push(format!(
                        "  secret export: {name} <- POST {} at {}{}",
                        e.action,
                        e.value,
                        if e.base64 { " (base64)" } else { "" }
                    ));
                }
            }
            for (name, path) in &r.exports.config_maps {
                out.push(format!("  config map export: {name} <- {path}"));
            }
            out.push("  spec:".to_string());
            out.extend(r.spec_fields.iter().map(|f| format!("    {}", describe(f))));
            out.push("  status:".to_string());
            out.extend(r.status_fields.iter().map(|f| format!("    {}", describe(f))));
        }
        out.push("diagnostics:".to_string());
        out.extend(kube.diagnostics.iter().map(|d| format!("  {}: {}", d.at, d.message)));
        insta::assert_snapshot!(key.replace('/', "-"), out.join("\n"));
    }
}
