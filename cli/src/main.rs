//! `armctl`: the command-line tool over the generated custom resources of every API group of `azure-arm.yaml`
//! (in the spirit of Azure Service Operator's `asoctl`). Groups, versions and kinds come from the generated
//! registry (`aks_api::VERSIONS`, `aks_api::KINDS`; see `registry.rs`): each group has its own versions and
//! storage version, and a kind is looked up in every group (`--group` picks one when a kind is in several).
//!
//! - `armctl import ARM_ID... [--children]` GETs existing Azure resources and prints custom resources (YAML) that
//!   reconcile with zero differences; `armctl import --from-file ARM.json --kind KIND` does the same for a body;
//!   each kind at `--version` (a version of the kind's group), by default at the newest version that has it;
//! - `armctl export -f CR.yaml` prints the ARM PUT body (JSON) the reconciler would send for a custom resource,
//!   with secret references left as `$secret:name/key` placeholders;
//! - `armctl convert --to VERSION -f OBJ.yaml` converts custom resources between the served versions, through
//!   the code the conversion webhook runs;
//! - `armctl action ACTION --owner NAME [--set KEY=VALUE]...` prints an action object (an ARM POST action the
//!   reconciler runs once on a custom resource, e.g. `rotate-cluster-certificates` on a ManagedCluster) for
//!   `kubectl apply -f -`; `armctl action --list` lists the actions of the registry (see `action.rs`);
//! - `armctl crds [--group GROUP] [--kind KIND]` prints the CRD manifests (all, one group's, or one kind's);
//! - `armctl diff -f CR.yaml --actual ARM.json` prints the differences between a custom resource and an ARM GET
//!   body (exit code 1 when there are some; see `diff.rs`);
//! - `armctl migrate-storage [--namespace NS] [--group GROUP] [--kind KIND] [--dry-run]` rewrites every stored object of our CRDs at
//!   the current storage version and reduces each CRD's `status.storedVersions` to it (see `migrate.rs`).
//!
//! Errors (unknown kind, group or version, a kind in several groups without `--group`, malformed or unreadable
//! input) go to stderr with exit code 2.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use armgen_runtime::kube::{ArmIdsOnly, SECRET_PLACEHOLDER};
use clap::{Parser, Subcommand};
use serde_json::Value;

mod action;
mod convert;
mod import_ids;
mod crds {
    include!(concat!(env!("OUT_DIR"), "/crds.rs"));
}
mod diff;
mod migrate;
mod registry;

use registry::Group;

#[derive(Parser)]
#[command(
    name = "armctl",
    version,
    about = "Import, export and inspect the generated Azure custom resources (every API group of azure-arm.yaml)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print custom resources (YAML) for existing Azure resources, by ARM resource ID (read with a GET), or for
    /// an ARM GET or PUT body in a file. Applied, they reconcile with zero differences.
    Import {
        /// ARM resource IDs: a resource in a resource group or a child of one
        /// (`/subscriptions/…/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/prod`), a
        /// resource group (`/subscriptions/…/resourceGroups/rg`), or an extension resource
        /// (`<scope ID>/providers/Microsoft.Authorization/roleAssignments/<GUID>`).
        #[arg(
            value_name = "ARM_ID",
            required_unless_present = "from_file",
            conflicts_with = "from_file"
        )]
        ids: Vec<String>,
        /// Also import the child resources of each ID (a cluster's agent pools, maintenance configurations, …).
        #[arg(long, requires = "ids")]
        children: bool,
        /// The ARM endpoint for IDs.
        #[arg(long, env = "ARM_ENDPOINT", default_value = "https://management.azure.com")]
        arm_endpoint: String,
        /// Send no bearer token (a local ARM simulator). Otherwise credentials come from the environment
        /// (AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_SECRET, or
        /// AZURE_USE_MANAGED_IDENTITY=true; AZURE_SUBSCRIPTION_ID is required but IDs carry their own).
        #[arg(long)]
        anonymous: bool,
        /// The ARM body (JSON); `-` reads stdin.
        #[arg(long = "from-file", short = 'f', value_name = "ARM.json", requires = "kind")]
        from_file: Option<PathBuf>,
        /// The kind of the body in --from-file, e.g. `ManagedCluster` (case-insensitive), looked up in every API
        /// group.
        #[arg(long)]
        kind: Option<String>,
        /// The API group of --kind (`network` or `network.armgen.dev`); needed only when the kind is in several.
        #[arg(long, requires = "kind")]
        group: Option<String>,
        /// The Kubernetes version of the custom resources (a version of each kind's API group); default: for each
        /// kind, the newest served version that has it.
        #[arg(long)]
        version: Option<String>,
        /// `metadata.namespace` (omitted when not given).
        #[arg(long)]
        namespace: Option<String>,
        /// `metadata.name` (--from-file only); defaults to the ARM body's `name`.
        #[arg(long, requires = "from_file")]
        name: Option<String>,
        /// `spec.owner` (--from-file only): for a kind in a resource group, the resource group's name
        /// (`spec.owner.name`) or ARM ID (`spec.owner.armId`); for a child kind, the parent custom resource's name;
        /// for an extension kind (RoleAssignment), the ARM ID of the resource it extends, or its custom resource as
        /// `KIND[.GROUP]/NAME`. Subscription-scoped kinds (ResourceGroup) have no owner.
        #[arg(long, requires = "from_file")]
        owner: Option<String>,
    },
    /// Print the ARM PUT body (JSON) for a custom resource; secrets stay as `$secret:name/key` placeholders.
    Export {
        /// The custom resource: one YAML or JSON document; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "CR.yaml")]
        file: PathBuf,
    },
    /// Convert custom resources to another served version, as the conversion webhook does (like `kubectl
    /// convert`); what the target version cannot hold travels in the `armgen.dev/property-bag`
    /// annotation.
    Convert {
        /// The custom resources: YAML documents (or JSON), each an object or a `List`; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "OBJ.yaml")]
        file: PathBuf,
        /// The version to convert to: `containerservice.armgen.dev/v1beta1`, or a bare `v1beta1` (each object in
        /// its own API group, which must have that version).
        #[arg(long, value_name = "VERSION")]
        to: String,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value = "yaml")]
        output: convert::Output,
    },
    /// Print the differences between a custom resource and an ARM GET body; exit code 1 when there are some.
    Diff {
        /// The custom resource (desired state): one YAML or JSON document; `-` reads stdin.
        #[arg(long = "file", short = 'f', value_name = "CR.yaml")]
        file: PathBuf,
        /// The ARM GET body of the resource (actual state), JSON.
        #[arg(long, value_name = "ARM.json")]
        actual: PathBuf,
        /// `text`: one line per difference; `json`: an array of `{path, desired, actual}`.
        #[arg(long, short = 'o', value_enum, default_value = "text")]
        output: diff::Output,
    },
    /// Rewrite every stored object of our CRDs at the current storage version, then set each CRD's
    /// status.storedVersions to just that version (the cluster from KUBECONFIG or the in-cluster config).
    MigrateStorage {
        /// Only the objects of this namespace; status.storedVersions is then left as it is.
        #[arg(long)]
        namespace: Option<String>,
        /// Only the CRD of this kind (repeatable, case-insensitive).
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Only the CRDs of this API group (`network` or `network.armgen.dev`); also picks the group of a --kind
        /// that is in several.
        #[arg(long)]
        group: Option<String>,
        /// Print what would be rewritten and patched; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Print an action object (YAML) for `kubectl apply -f -`: the reconciler runs the ARM POST action once on
    /// the target custom resource and records the outcome in the object's status. `armctl action --list` lists
    /// the actions.
    #[command(
        long_about = "Print an action object (YAML, or JSON with -o json) for `kubectl apply -f -`: a custom resource \
of an action kind (ManagedClusterStop, ManagedClusterRunCommand, AgentPoolUpgradeNodeImageVersion, …), which the \
reconciler runs once — one ARM POST on the target custom resource (spec.owner) — recording the outcome in its \
status. The actions are those of the generated registry; `armctl action --list` (or `armctl action list`) prints \
them with their target kind, kind and whether they take parameters.",
        after_help = "Examples:
  armctl action rotate-cluster-certificates --cluster prod | kubectl apply -f -
  armctl action run-command --cluster prod --set command=\"kubectl get pods -A\" | kubectl apply -f -
  armctl action run-command --cluster prod --set command=\"kubectl get nodes\" \\
      --set clusterToken.name=aad-token --set clusterToken.key=token
  armctl action abort --target-kind AgentPool --owner prod-pool1 -n team-a
  armctl action reset-service-principal-profile --cluster prod --set clientId=00000000-0000-0000-0000-000000000000 \\
      --set secret.name=sp-secret --set secret.key=password
  armctl action --list

Secrets in parameters are references to a Secret in the object's namespace, {name, key}: set both with dotted keys
(--set clusterToken.name=my-secret --set clusterToken.key=token); the reconciler reads the value when it runs."
    )]
    Action {
        /// The action: the ARM action in kebab-case (`rotate-cluster-certificates`, `run-command`), as the spec
        /// spells it (`rotateClusterCertificates`), or the action kind (`ManagedClusterStop`); case-insensitive.
        /// `list` lists the actions.
        #[arg(value_name = "ACTION", required_unless_present = "list")]
        action: Option<String>,
        /// List every action: its target kind, kind, whether it takes parameters, and its served versions.
        #[arg(long, conflicts_with = "action")]
        list: bool,
        /// The custom resource the action runs on (spec.owner.name), in the same namespace; `--cluster` is the
        /// same flag (for the actions on a ManagedCluster).
        #[arg(long, visible_alias = "cluster", value_name = "NAME")]
        owner: Option<String>,
        /// The kind the action runs on (case-insensitive), needed when the action is on several kinds (`abort`:
        /// ManagedCluster and AgentPool).
        #[arg(long, value_name = "KIND")]
        target_kind: Option<String>,
        /// The API group of the action (`containerservice` or `containerservice.armgen.dev`); needed only when an
        /// action and target kind are in several groups.
        #[arg(long)]
        group: Option<String>,
        /// `metadata.namespace`, that of the target too (omitted when not given: kubectl's current namespace).
        #[arg(long, short = 'n')]
        namespace: Option<String>,
        /// `metadata.name` (a DNS-1123 label); default: `<owner>-<action>-<UTC yyyymmddhhmmss>`, cut to 63
        /// characters.
        #[arg(long)]
        name: Option<String>,
        /// The Kubernetes version of the action object (`v1beta1`); default: the newest served version that has
        /// the action kind.
        #[arg(long)]
        version: Option<String>,
        /// A parameter of the action (repeatable): a dotted key under spec (`command`, `clusterToken.name`) and a
        /// value, JSON when it parses as JSON (`true`, `3`, `["a","b"]`), else a string (where the field is a
        /// string, the text as written). Applied after --parameters-file.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// The parameters as a YAML or JSON object (the fields of spec, without owner), merged under spec; `-`
        /// reads stdin.
        #[arg(long = "parameters-file", short = 'f', value_name = "FILE")]
        parameters_file: Option<PathBuf>,
        /// Output format.
        #[arg(long, short = 'o', value_enum, default_value = "yaml")]
        output: convert::Output,
    },
    /// Print the CRD manifests (multi-document YAML).
    Crds {
        /// Only the CRD of this kind (case-insensitive).
        #[arg(long)]
        kind: Option<String>,
        /// Only the CRDs of this API group (`network` or `network.armgen.dev`); also picks the group of a --kind
        /// that is in several.
        #[arg(long)]
        group: Option<String>,
    },
}

/// A user-facing error: printed after `armctl: error: `, exit code 2.
struct Failure(String);

impl<T: Into<String>> From<T> for Failure {
    fn from(message: T) -> Self {
        Failure(message.into())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Diff { file, actual, output } => return diff::run(&file, &actual, output),
        Command::Import {
            ids,
            children,
            arm_endpoint,
            anonymous,
            from_file,
            kind,
            group,
            version,
            namespace,
            name,
            owner,
        } => match (from_file, kind) {
            (Some(from_file), Some(kind)) => import(
                &from_file,
                &kind,
                group.as_deref(),
                version.as_deref(),
                namespace.as_deref(),
                name.as_deref(),
                owner.as_deref(),
            ),
            _ => import_ids::run(
                &ids,
                children,
                &arm_endpoint,
                anonymous,
                version.as_deref(),
                namespace.as_deref(),
            ),
        },
        Command::Export { file } => export(&file),
        Command::Convert { file, to, output } => convert::convert(&file, &to, output),
        Command::Crds { kind, group } => crds(kind.as_deref(), group.as_deref()),
        Command::Action {
            action,
            list,
            owner,
            target_kind,
            group,
            namespace,
            name,
            version,
            set,
            parameters_file,
            output,
        } => action::run(&action::Options {
            action,
            list,
            owner,
            target_kind,
            group,
            namespace,
            name,
            version,
            set,
            parameters_file,
            output,
        }),
        Command::MigrateStorage {
            namespace,
            kinds,
            group,
            dry_run,
        } => migrate::run(&migrate::Options {
            namespace,
            kinds,
            group,
            dry_run,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("armctl: error: {message}");
            ExitCode::from(2)
        }
    }
}

/// The kind as spelled in `version`'s kinds (matched case-insensitively), or an error listing them.
fn kind_of(kind: &str, version: &armgen_runtime::VersionInfo) -> Result<&'static str, Failure> {
    version
        .kinds
        .iter()
        .find(|k| k.eq_ignore_ascii_case(kind))
        .copied()
        .ok_or_else(|| {
            Failure(format!(
                "unknown kind `{kind}` in {}/{}; known kinds: {}",
                version.kube_group,
                version.version,
                version.kinds.join(", ")
            ))
        })
}

fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

fn read_input(path: &Path) -> Result<String, Failure> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))
    }
}

/// Writes to stdout; a closed pipe (`armctl crds | head`) is not an error.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure(format!("cannot write to stdout: {e}"))),
    }
}

/// The version `armctl import` writes `kind` at in `group`: `version` when given (a version of the group), else the
/// newest served version of the group that has the kind.
fn import_version(
    group: Group,
    kind: &str,
    version: Option<&str>,
) -> Result<&'static armgen_runtime::VersionInfo, Failure> {
    let version = match version {
        Some(version) => version,
        None => armgen_runtime::newest(aks_api::KINDS, |k| k.group == group.key && k.served && k.kind == kind)
            .map(|k| k.version)
            .ok_or_else(|| {
                format!(
                    "{kind} has no served version in {}; give one with --version (known versions: {})",
                    group.kube,
                    registry::known_versions(group)
                )
            })?,
    };
    registry::version_of(group, version)
}

/// `spec.owner` for `--owner`, by where the kind lives (`KindInfo::arm.scope`): a child names its parent custom
/// resource; a kind in a resource group names the group, or gives its ARM ID; an extension resource gives the ARM
/// ID of the resource it extends, or names its custom resource as `KIND[.GROUP]/NAME`; a subscription- or
/// tenant-scoped kind has no owner.
fn owner_of(info: &armgen_runtime::KindInfo, owner: &str) -> Result<Value, Failure> {
    use armgen_runtime::Scope;
    let kind = info.kind;
    if info.owner_kind.is_some() {
        return Ok(serde_json::json!({ "name": owner }));
    }
    match info.arm.scope {
        Scope::ResourceGroup if owner.starts_with('/') => Ok(serde_json::json!({ "armId": owner })),
        Scope::ResourceGroup => Ok(serde_json::json!({ "name": owner })),
        Scope::Extension if owner.starts_with('/') => Ok(serde_json::json!({ "armId": owner })),
        Scope::Extension => {
            let Some((target, name)) = owner.split_once('/').filter(|(t, n)| !t.is_empty() && !n.is_empty()) else {
                return Err(format!(
                    "--owner {owner}: {kind} extends another resource; give that resource's ARM ID \
                     (/subscriptions/…) or its custom resource as KIND[.GROUP]/NAME"
                )
                .into());
            };
            // `Kind.group` (either name of the group) or a bare kind, looked up in every group.
            let (target_kind, target_group) = match target.split_once('.') {
                Some((k, g)) => (k, Some(registry::group(g)?.kube)),
                None => (target, None),
            };
            let (group, target_kind) =
                registry::find_kind(&registry::kinds(), target_kind, target_group, "--owner KIND.GROUP/NAME")
                    .map_err(|Failure(m)| Failure(format!("--owner {owner}: {m}")))?;
            Ok(serde_json::json!({ "group": group, "kind": target_kind, "name": name }))
        }
        Scope::Subscription | Scope::Tenant => Err(format!(
            "--owner {owner}: {kind} is not in a resource group and has no owner (no spec.owner); leave out --owner"
        )
        .into()),
    }
}

fn import(
    file: &Path,
    kind: &str,
    group: Option<&str>,
    version: Option<&str>,
    namespace: Option<&str>,
    name: Option<&str>,
    owner: Option<&str>,
) -> Result<(), Failure> {
    let wanted = match group {
        Some(g) => Some(registry::group(g)?.kube),
        None => None,
    };
    let (kube_group, kind) = registry::find_kind(&registry::kinds(), kind, wanted, "--group")?;
    let group = registry::group_of_kube(kube_group).ok_or("a kind's group is not in the registry")?;
    let version = import_version(group, kind, version)?;
    let kind = kind_of(kind, version)?;
    let info = registry::kind_info(version, kind).ok_or_else(|| {
        format!(
            "{kind} has no custom resource in {}/{}",
            version.kube_group, version.version
        )
    })?;
    let owner = owner.map(|o| owner_of(info, o)).transpose()?;
    let text = read_input(file)?;
    let shown = display(file);
    let body: Value = serde_json::from_str(&text).map_err(|e| format!("{shown}: not valid JSON: {e}"))?;
    if !body.is_object() {
        return Err(format!("{shown}: an ARM body must be a JSON object").into());
    }
    let name = match name {
        Some(n) => n.to_string(),
        None => match body.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(format!(
                    "{shown}: the ARM body has no `name`; give the custom resource's name with --name"
                )
                .into());
            }
        },
    };
    let api_version = version.api_version;
    let mut cr = match aks_api::import_custom_resource(group.key, version.version, kind, &text, &name, namespace) {
        Some(Ok(cr)) => cr,
        Some(Err(e)) => {
            return Err(format!("{shown}: not a valid {kind} ARM body (API version {api_version}): {e}").into());
        }
        None => {
            return Err(format!(
                "{kind} has no custom resource in {}/{}",
                version.kube_group, version.version
            )
            .into());
        }
    };
    if let Some(owner) = owner {
        let spec = cr
            .get_mut("spec")
            .and_then(Value::as_object_mut)
            .ok_or("the imported custom resource has no spec")?;
        spec.insert("owner".into(), owner);
    }
    let yaml = serde_yaml_ng::to_string(&cr).map_err(|e| format!("cannot write the custom resource as YAML: {e}"))?;
    emit(&yaml)
}

/// The version and kind of a custom resource, from its `apiVersion` and `kind` (exactly, as the API server
/// has them); errors name `shown` and list the known API versions or the version's kinds.
fn version_and_kind(cr: &Value, shown: &str) -> Result<(&'static armgen_runtime::VersionInfo, &'static str), Failure> {
    let api_version = cr.get("apiVersion").and_then(Value::as_str).ok_or_else(|| {
        format!(
            "{shown}: no `apiVersion` (a string such as `{}`)",
            registry::example_api_version()
        )
    })?;
    let version = registry::api_version(api_version).ok_or_else(|| {
        format!(
            "{shown}: unknown apiVersion `{api_version}`; known: {}",
            registry::known_api_versions()
        )
    })?;
    let kind = cr.get("kind").and_then(Value::as_str).ok_or_else(|| {
        format!(
            "{shown}: no `kind` (a string such as `{}`)",
            version.kinds.first().unwrap_or(&"")
        )
    })?;
    match version.kinds.iter().find(|k| **k == kind) {
        Some(k) => Ok((version, k)),
        None => Err(format!(
            "{shown}: unknown kind `{kind}` in {api_version}; known kinds: {}",
            version.kinds.join(", ")
        )
        .into()),
    }
}

fn export(file: &Path) -> Result<(), Failure> {
    let text = read_input(file)?;
    let shown = display(file);
    let cr: Value =
        serde_yaml_ng::from_str(&text).map_err(|e| format!("{shown}: not a valid YAML or JSON document: {e}"))?;
    if !cr.is_object() {
        return Err(format!("{shown}: a custom resource must be a YAML or JSON object").into());
    }
    let (version, kind) = version_and_kind(&cr, &shown)?;
    let api_version = format!("{}/{}", version.kube_group, version.version);
    let arm = match aks_api::export_custom_resource(version.group, version.version, kind, &cr, &ArmIdsOnly) {
        Some(Ok(arm)) => arm,
        Some(Err(e)) if e.path.is_empty() => {
            return Err(format!("{shown}: not a valid {kind} custom resource: {}", e.message).into());
        }
        Some(Err(e)) => return Err(format!("{shown}: cannot build the ARM body: {}: {}", e.path, e.message).into()),
        None => return Err(format!("{kind} has no custom resource in {api_version}").into()),
    };
    let mut json = serde_json::to_string_pretty(&arm).map_err(|e| format!("cannot write the ARM body as JSON: {e}"))?;
    json.push('\n');
    emit(&json)?;
    let mut secrets = Vec::new();
    secret_placeholders(&arm, String::new(), &mut secrets);
    if !secrets.is_empty() {
        let mut note = format!(
            "armctl: note: {} secret(s) left as references, written as `{SECRET_PLACEHOLDER}<secret name>/<key>`; \
             the reconciler replaces them with the Secret's value:\n",
            secrets.len()
        );
        for (path, reference) in &secrets {
            note.push_str(&format!("  {path}: {SECRET_PLACEHOLDER}{reference}\n"));
        }
        eprint!("{note}");
    }
    Ok(())
}

/// The JSON pointers of the strings in `value` that are secret placeholders, with the `name/key` they name.
fn secret_placeholders(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => {
            if let Some(reference) = s.strip_prefix(SECRET_PLACEHOLDER) {
                out.push((path, reference.to_string()));
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                secret_placeholders(v, format!("{path}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                secret_placeholders(v, armgen_runtime::pointer::child(&path, k), out);
            }
        }
        _ => {}
    }
}

/// The CRD manifests armctl carries, with their (Kubernetes API group, kind): `spec.group`, `spec.names.kind`.
pub(crate) fn manifests() -> Result<Vec<(String, String, &'static str)>, Failure> {
    let mut out = Vec::new();
    for (_, yaml) in crds::CRDS {
        let doc: Value =
            serde_yaml_ng::from_str(yaml).map_err(|e| format!("a CRD manifest armctl carries does not parse: {e}"))?;
        let group = doc.pointer("/spec/group").and_then(Value::as_str);
        let kind = doc.pointer("/spec/names/kind").and_then(Value::as_str);
        if let (Some(group), Some(kind)) = (group, kind) {
            out.push((group.to_string(), kind.to_string(), *yaml));
        }
    }
    Ok(out)
}

/// The (Kubernetes API group, kind) pairs of the manifests that `kinds` (case-insensitive, each looked up in
/// every group) and `group` (either name of a group) select: all of them when neither is given.
pub(crate) fn select_manifests(
    manifests: &[(String, String, &'static str)],
    kinds: &[String],
    group: Option<&str>,
) -> Result<Vec<(String, String)>, Failure> {
    let group = match group {
        Some(g) => Some(registry::group(g)?.kube),
        None => None,
    };
    let candidates: Vec<(&str, &str)> = manifests.iter().map(|(g, k, _)| (g.as_str(), k.as_str())).collect();
    let mut selected = Vec::new();
    if kinds.is_empty() {
        for (g, k) in &candidates {
            if group.is_none_or(|want| want == *g) {
                selected.push((g.to_string(), k.to_string()));
            }
        }
    }
    for kind in kinds {
        let (g, k) = registry::find_kind(&candidates, kind, group, "--group")?;
        if !selected.iter().any(|(sg, sk)| sg == g && sk == k) {
            selected.push((g.to_string(), k.to_string()));
        }
    }
    Ok(selected)
}

fn crds(kind: Option<&str>, group: Option<&str>) -> Result<(), Failure> {
    let all = manifests()?;
    let kinds: Vec<String> = kind.map(str::to_string).into_iter().collect();
    let chosen = select_manifests(&all, &kinds, group)?;
    let selected: Vec<&str> = all
        .iter()
        .filter(|(g, k, _)| chosen.iter().any(|(cg, ck)| cg == g && ck == k))
        .map(|(_, _, yaml)| *yaml)
        .collect();
    let mut out = String::new();
    for (i, yaml) in selected.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(yaml);
        if !yaml.ends_with('\n') {
            out.push('\n');
        }
    }
    emit(&out)
}
