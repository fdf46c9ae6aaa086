//! An Azure Resource Manager simulator for tests and demos, driven by the generated resource registry
//! ([`aks_api::KINDS`]): every ARM resource type and API version there is served, with nothing listed by hand
//! except a small table of server defaults ([`defaults`]).
//!
//! It speaks ARM over HTTP: `PUT`/`GET`/`DELETE` of resources (bodies validated by the generated types), list
//! `GET` of collections, long-running operations with `Azure-AsyncOperation`/`Location` polling, `409` while an
//! operation runs, `POST listClusterAdminCredential`/`listClusterUserCredential`, every POST action of
//! [`aks_api::ACTIONS`] (`stop`, `runCommand`, `upgradeNodeImageVersion`, …: see below), every view of
//! [`aks_api::VIEWS`] (upgrade profiles, a pool's machines: see below), optional bearer-token
//! authentication with fake Entra ID and IMDS token endpoints, injected faults, and a traffic log in the format
//! `oav validate-traffic` reads.
//!
//! An action is `POST <ID of a held resource>/<action>?api-version=V` for an [`armgen_runtime::ActionInfo`] of the
//! resource's ARM type and API version. A target not held answers `404 ResourceNotFound`; a busy target (an
//! operation in flight, its owner's or a gated child's too, as for PUTs) `409 OperationNotAllowed`, except for an
//! action that cancels (`abort`); a body the action takes but that is missing or that its action kind's generated
//! `parameters` type refuses `400 InvalidRequestContent`, naming the path. A long-running action answers `202`
//! with `Azure-AsyncOperation` and `Location`; it advances by polls like any operation, its target in a running
//! state meanwhile; once it succeeded the `Location` URL answers `200` with its result (`204` without one), as ARM's
//! `final-state-via: location`. Other actions answer at once, `200` with a result or `204`; only statuses the spec
//! declares ([`armgen_runtime::ActionInfo::statuses`]) are sent. What each action does to its target, and its
//! result, is a table with the public source of each behaviour (`actions.rs`); [`Simulator::actions_run`] lists the
//! actions that succeeded on a resource, for effects its `GET` does not show. A [`Fault::FailOperation`] whose rule
//! matches the POST makes the action's operation end `Failed`.
//!
//! A view is `GET <ID of a held resource>/<path>?api-version=V` for an [`armgen_runtime::ViewInfo`] of
//! [`aks_api::VIEWS`] (a read-only GET of the spec under the resource, no PUT on that path: a cluster's
//! `upgradeProfiles/default` and `availableAgentPoolVersions`, a pool's `upgradeProfiles/default` and `machines`).
//! Its `200` body is spec-shaped and computed from the target's current state by a table with the public source of
//! each behaviour (`views.rs`): the versions that run and what they can upgrade to, a pool's newest node image (the
//! one `upgradeNodeImageVersion` installs), one machine per node of a pool with stable names. Every body is read
//! through the generated type of its API version before it is sent. A pageable view (`x-ms-pageable`) answers at
//! most [`SimulatorConfig::page_size`] items per page, with a `nextLink` back to the simulator (`$skipToken`) while
//! more follow. A target not held answers `404 ResourceNotFound`, as for actions; a view of the registry the table
//! lacks `501 NotImplemented` naming it. View GETs are counted apart from the resource's own GETs
//! ([`Simulator::count_views`], [`Simulator::views_read`], [`Simulator::views_read_on`]; not in
//! [`Simulator::count`]), never advance an operation, and are recorded in the traffic log like every exchange.
//!
//! A test double: it depends on the generated registry and `armgen-runtime`, never on the reconciler, so the
//! reconciler's tests cannot pass by sharing its code.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use arm_simulator::{Fault, FaultRule, Simulator, SimulatorConfig};
//! let sim = Simulator::new(SimulatorConfig { retry_after_secs: 0, ..Default::default() });
//! sim.inject(FaultRule::new(Fault::Throttle { retry_after_secs: 1 }).method("GET").times(2));
//! let running = sim.serve("127.0.0.1:0".parse().expect("address")).await?;
//! println!("ARM at {}", running.base_url);
//! # Ok(()) }
//! ```
//!
//! The simulator also refuses what AKS refuses beyond its spec — pools added through the cluster, changed
//! immutable properties, child writes while the owner is busy, pools newer than the control plane — driven by a
//! rules document ([`armgen_runtime::rules::Rules`], by default the generated [`aks_api::rules()`];
//! [`SimulatorConfig::rules`] replaces it): see [`rules`] for each rule and its public source.
//!
//! Asynchronous operations advance by polling, not by time: the first [`SimulatorConfig::operation_polls`] polls
//! of an operation answer `InProgress`, the next one ends it. A poll is a `GET` of its `Azure-AsyncOperation` or
//! `Location` URL, or a `GET` of the resource it concerns.
//!
//! Resources of every scope are served (see `registry.rs` for how paths match): resource-group-scoped resources
//! and their children (`/subscriptions/{s}/resourceGroups/{rg}/providers/...`), resource groups themselves
//! (`/subscriptions/{s}/resourcegroups/{rg}`, ARM type `Microsoft.Resources/resourceGroups`, listed by `GET
//! /subscriptions/{s}/resourcegroups`), and extension resources, whose template starts with `{scope}`
//! (`/{scope}/providers/Microsoft.Authorization/roleAssignments/{name}`): `{scope}` is any resource ID, from
//! `/subscriptions/{s}` to a child resource, and the ID is `<scope>/providers/...` (only paths under
//! `/subscriptions/` are served: no management group or tenant scopes). Deleting a resource deletes what is below
//! its ID: its child resources and the extension resources scoped to it or to its children; so deleting a
//! resource group deletes every resource in it, as Azure does ("When you delete a resource group, all of its
//! resources are also deleted",
//! <https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/delete-resource-group>).
//!
//! Resource groups need not exist unless [`SimulatorConfig::require_resource_groups`] is set: then a PUT of a
//! resource in a resource group the simulator does not hold is refused with `404 ResourceGroupNotFound`
//! ("Resource group 'rg' could not be found."), and a PUT of an extension resource whose scope it does not
//! hold with `404 ResourceNotFound` naming the scope (`ResourceGroupNotFound` when the scope's resource group is
//! missing; a subscription always exists).

mod actions;
mod auth;
pub mod defaults;
mod registry;
pub mod rules;
mod server;
mod service;
mod traffic;
mod util;
mod validate;
mod views;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use armgen_runtime::rules::Rules;
use armgen_runtime::{KindInfo, RoundTrip};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use server::Running;
pub use traffic::{Exchange, ExchangeRequest, ExchangeResponse};
pub use util::ArmError;

/// How the simulator behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulatorConfig {
    /// How many polls of an asynchronous operation answer `InProgress` before it ends (default 2).
    pub operation_polls: u32,
    /// The `Retry-After` (seconds) of asynchronous operations (default 1; tests use 0).
    pub retry_after_secs: u64,
    /// Bearer-token authentication; `None` (the default) requires none.
    pub auth: Option<AuthConfig>,
    /// The location of operations for resources without one (default `westeurope`).
    pub location_default: String,
    /// Whether exchanges are kept for [`Simulator::traffic`] (default `true`); counts are kept either way. Off for
    /// long runs such as the scale benchmark, where the log would only grow.
    pub record_traffic: bool,
    /// The service rules enforced ([`rules`]): `None` (the default) is the generated document,
    /// [`aks_api::rules()`]; `Some(Rules::default())` enforces none.
    pub rules: Option<Rules>,
    /// Whether a PUT needs what contains the resource (default `false`: resources may be created in resource
    /// groups that were never created): its resource group (`404 ResourceGroupNotFound`), and for an extension
    /// resource its scope (`404 ResourceNotFound`; a scope of just `/subscriptions/{s}` always exists). Seeds
    /// ([`Simulator::seed`]) are not checked.
    pub require_resource_groups: bool,
    /// The most items a page of a pageable view (`x-ms-pageable`, the machines of a pool) holds (default 10; 0
    /// counts as 1); a page with more after it has a `nextLink` back to the simulator with a `$skipToken`.
    pub page_size: usize,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        Self {
            operation_polls: 2,
            retry_after_secs: 1,
            auth: None,
            location_default: "westeurope".into(),
            record_traffic: true,
            rules: None,
            require_resource_groups: false,
            page_size: 10,
        }
    }
}

/// The one client (application or managed identity) the fake token endpoints accept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// The Entra ID tenant (`POST /{tenant}/oauth2/v2.0/token`).
    pub tenant_id: String,
    /// The application (client) ID.
    pub client_id: String,
    /// The federated token (workload identity) accepted as `client_assertion`.
    pub federated_token: Option<String>,
    /// The client secret accepted as `client_secret`.
    pub client_secret: Option<String>,
    /// Whether the fake IMDS endpoint (`GET /metadata/identity/oauth2/token`) issues tokens.
    pub managed_identity: bool,
}

/// A fault to inject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Fault {
    /// `429 TooManyRequests` with `Retry-After`.
    Throttle { retry_after_secs: u64 },
    /// `500 InternalServerError`.
    ServerError,
    /// `404 NotFound`, as if what the request names did not exist (a view the service no longer has, say).
    NotFound,
    /// The connection closes with no HTTP response (only through [`Simulator::serve`]).
    DropConnection,
    /// The next asynchronous operation started by a matching request ends `Failed` with this error.
    FailOperation { code: String, message: String },
    /// The next asynchronous operation started by a matching request ends `Canceled`.
    CancelOperation,
}

/// A fault and the requests it applies to: those with the method (any when `None`, case-insensitive) whose path
/// contains `path_contains` (case-insensitive), the first `times` of them. Faults apply to resource requests and
/// operation polls, never to token or `/_simulator/` calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultRule {
    pub fault: Fault,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub path_contains: Option<String>,
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

impl FaultRule {
    /// A rule for every request, once.
    pub fn new(fault: Fault) -> Self {
        Self {
            fault,
            method: None,
            path_contains: None,
            times: 1,
        }
    }

    /// Only requests with this method.
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_string());
        self
    }

    /// Only requests whose path contains this (case-insensitive).
    pub fn path_contains(mut self, fragment: &str) -> Self {
        self.path_contains = Some(fragment.to_string());
        self
    }

    /// The first `n` matching requests.
    pub fn times(mut self, n: u32) -> Self {
        self.times = n;
        self
    }

    fn matches(&self, method: &str, path: &str) -> bool {
        self.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self
                .path_contains
                .as_deref()
                .is_none_or(|f| path.to_lowercase().contains(&f.to_lowercase()))
    }
}

/// A view path as the view counts key it: lower case, without leading or trailing `/`.
fn view_path(path: &str) -> String {
    path.trim_matches('/').to_lowercase()
}

/// The service's rewrite of a stored body after a PUT (e.g. `kubernetesVersion` `1.30` → `1.30.7`). It runs while
/// the simulator is locked: it must not call the [`Simulator`].
pub type Normalizer = Arc<dyn Fn(&mut Value) + Send + Sync>;

/// Reads a JSON body as the generated ARM type of a kind, given by `(group, version, kind, json)`, and writes it
/// back out, listing what the type does not model; `None` when there is no such kind. The signature of
/// [`aks_api::arm_round_trip`], which [`Simulator::new`] uses.
pub type RoundTripFn = fn(&str, &str, &str, &str) -> Option<Result<RoundTrip, armgen_runtime::json::Error>>;

/// The ARM simulator. Cheap to clone: clones share state.
#[derive(Clone)]
pub struct Simulator {
    inner: Arc<Inner>,
}

struct Inner {
    config: SimulatorConfig,
    /// The rules enforced; an error when the generated document does not parse (every write then answers 500).
    rules: Result<Rules, String>,
    registry: registry::Registry,
    /// Reads bodies as the generated types of the registry's kinds.
    round_trip: RoundTripFn,
    start: Instant,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// By lower-case ID.
    resources: BTreeMap<String, Stored>,
    operations: HashMap<String, Operation>,
    faults: Vec<FaultRule>,
    traffic: Vec<Exchange>,
    /// Resource requests by upper-case method (view GETs and polls aside).
    counts: HashMap<String, usize>,
    /// View GETs by (lower-case ARM type, lower-case view path, lower-case ID of the resource).
    view_reads: BTreeMap<(String, String, String), usize>,
    polls: usize,
    tokens: HashSet<String>,
    issued_tokens: usize,
    authenticated: usize,
    /// By lower-case ARM type.
    normalizers: HashMap<String, Normalizer>,
    /// The actions that succeeded, by lower-case ID of their target, oldest first ([`Simulator::actions_run`]).
    action_log: HashMap<String, Vec<String>>,
}

struct Stored {
    arm_type: &'static str,
    /// The kind and version of the last PUT (or seed): its rules apply.
    kind: &'static KindInfo,
    body: Value,
    state: String,
    /// Whether the generated type has `properties.provisioningState` (else it is kept out of the body).
    models_state: bool,
    location: String,
    operation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Succeed,
    Fail { code: String, message: String },
    Cancel,
}

struct Operation {
    resource_key: String,
    /// Resources whose state follows the operation's (child resources of a cluster PUT or DELETE).
    linked: Vec<String>,
    delete: bool,
    polls: u32,
    outcome: Outcome,
    status: &'static str,
    start: String,
    end: Option<String>,
    /// The action this operation runs (`POST <resource ID>/<action>`), when it runs one.
    action: Option<ActionRun>,
}

/// An action in flight: what ends it, and once it succeeded its result.
#[derive(Clone)]
struct ActionRun {
    info: &'static armgen_runtime::ActionInfo,
    behaviour: &'static actions::Behaviour,
    /// The request body.
    request: Option<Value>,
    /// The target's `provisioningState` once it succeeded (`Canceled` after an abort that canceled something).
    final_state: &'static str,
    /// The result, once it succeeded (for actions with one).
    result: Option<Value>,
}

impl Simulator {
    /// A simulator with no resources, serving the generated registry ([`aks_api::KINDS`]).
    pub fn new(config: SimulatorConfig) -> Self {
        Self::with_kinds(config, aks_api::KINDS, aks_api::arm_round_trip)
    }

    /// A simulator with no resources, serving `kinds` (whose bodies `round_trip` reads) instead of the generated
    /// registry: for tests of resource shapes the generated registry may lack. The rules are still
    /// [`SimulatorConfig::rules`] (by default the generated document, whose kinds `kinds` may not have).
    pub fn with_kinds(config: SimulatorConfig, kinds: &'static [KindInfo], round_trip: RoundTripFn) -> Self {
        let rules = match &config.rules {
            Some(rules) => Ok(rules.clone()),
            None => aks_api::rules().map_err(|e| format!("the generated rules document (aks_api::RULES_JSON) {e}")),
        };
        if let Err(e) = &rules {
            tracing::error!(error = %e, "no rules: every PUT and DELETE answers 500");
        }
        Self {
            inner: Arc::new(Inner {
                config,
                rules,
                registry: registry::Registry::new(kinds, aks_api::VIEWS),
                round_trip,
                start: Instant::now(),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SimulatorConfig {
        &self.inner.config
    }

    /// The rules enforced ([`SimulatorConfig::rules`]); an error naming the problem when the generated document
    /// does not parse.
    pub fn rules(&self) -> Result<&Rules, &str> {
        self.inner.rules.as_ref().map_err(String::as_str)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a fault rule; rules are tried in the order added.
    pub fn inject(&self, rule: FaultRule) {
        if rule.times > 0 {
            self.state().faults.push(rule);
        }
    }

    /// Removes every fault rule not yet used up.
    pub fn clear_faults(&self) {
        self.state().faults.clear();
    }

    /// The recorded exchanges (resource requests and operation polls), oldest first.
    pub fn traffic(&self) -> Vec<Exchange> {
        self.state().traffic.clone()
    }

    /// Forgets the recorded exchanges and resets [`Self::count`], [`Self::count_polls`] and the view counts
    /// ([`Self::count_views`]).
    pub fn clear_traffic(&self) {
        let mut st = self.state();
        st.traffic.clear();
        st.counts.clear();
        st.view_reads.clear();
        st.polls = 0;
    }

    /// How many requests with `method` reached resource URLs (resources, collections, actions; any outcome,
    /// dropped connections included) since the start or [`Self::clear_traffic`]. Not counted: `GET`s of views
    /// ([`Self::count_views`]) and of operation URLs ([`Self::count_polls`]), so an in-sync resource costs one
    /// `GET` here whatever views its reconciler reads.
    pub fn count(&self, method: &str) -> usize {
        self.state()
            .counts
            .get(&method.to_ascii_uppercase())
            .copied()
            .unwrap_or(0)
    }

    /// The actions (`POST <id>/<action>` of [`aks_api::ACTIONS`], as the spec spells them, e.g. `rotateClusterCertificates`)
    /// that succeeded on the resource `id` (case-insensitive), oldest first: for actions whose effect the resource's
    /// `GET` does not show. Kept after the resource is deleted.
    pub fn actions_run(&self, id: &str) -> Vec<String> {
        self.state()
            .action_log
            .get(&id.to_lowercase())
            .cloned()
            .unwrap_or_default()
    }

    /// How many `GET`s of views (`<resource ID>/<view path>` of [`aks_api::VIEWS`], every page of a pageable one)
    /// arrived, any outcome (a `404`, a `501`, a dropped connection), since the start or [`Self::clear_traffic`].
    pub fn count_views(&self) -> usize {
        self.state().view_reads.values().sum()
    }

    /// How many `GET`s of the view `path` (as [`armgen_runtime::ViewInfo::path`], e.g. `upgradeProfiles/default`)
    /// of resources of `arm_type` (e.g. `Microsoft.ContainerService/managedClusters`) arrived, as
    /// [`Self::count_views`] counts them; both case-insensitive.
    pub fn views_read(&self, arm_type: &str, path: &str) -> usize {
        let (arm_type, path) = (arm_type.to_lowercase(), view_path(path));
        self.state()
            .view_reads
            .iter()
            .filter(|((t, p, _), _)| *t == arm_type && *p == path)
            .map(|(_, n)| n)
            .sum()
    }

    /// How many `GET`s of the view `path` of the resource `id` arrived, as [`Self::count_views`] counts them; both
    /// case-insensitive.
    pub fn views_read_on(&self, id: &str, path: &str) -> usize {
        let (id, path) = (id.to_lowercase(), view_path(path));
        self.state()
            .view_reads
            .iter()
            .filter(|((_, p, i), _)| *i == id && *p == path)
            .map(|(_, n)| n)
            .sum()
    }

    /// How many `GET`s of operation status (`Azure-AsyncOperation`) or result (`Location`) URLs arrived.
    pub fn count_polls(&self) -> usize {
        self.state().polls
    }

    /// The resource as a `GET` returns it, by ID (case-insensitive).
    pub fn resource(&self, id: &str) -> Option<Value> {
        self.state().resources.get(&id.to_lowercase()).map(|s| s.body.clone())
    }

    /// Every stored resource, as `GET` returns it, ordered by ID.
    pub fn resources(&self) -> Vec<Value> {
        self.state().resources.values().map(|s| s.body.clone()).collect()
    }

    /// How many resources are stored.
    pub fn resource_count(&self) -> usize {
        self.state().resources.len()
    }

    /// Stores a resource as if a PUT with `api_version` had created it and its operation had succeeded
    /// (`provisioningState` `Succeeded`, server defaults applied, normalizer run); returns the stored body.
    /// The body is validated as a PUT body is; parents are not required.
    pub fn seed(&self, id: &str, api_version: &str, body: Value) -> Result<Value, ArmError> {
        let mut st = self.state();
        self.seed_locked(&mut st, id, api_version, body)
    }

    /// Sets the normalizer of an ARM type (case-insensitive), replacing any earlier one.
    pub fn set_normalizer(&self, arm_type: &str, normalizer: Normalizer) {
        self.state().normalizers.insert(arm_type.to_lowercase(), normalizer);
    }

    /// Writes the traffic, one `oav validate-traffic` JSON file per exchange, into `dir`; returns how many.
    pub fn write_traffic(&self, dir: impl AsRef<std::path::Path>) -> std::io::Result<usize> {
        let traffic = self.traffic();
        traffic::write(dir.as_ref(), &traffic)
    }

    /// How many tokens the fake token endpoints issued.
    pub fn issued_tokens(&self) -> usize {
        self.state().issued_tokens
    }

    /// How many ARM requests carried a valid issued bearer token.
    pub fn authenticated_requests(&self) -> usize {
        self.state().authenticated
    }

    /// The ARM types served and their API versions, from the registry ([`aks_api::KINDS`] unless
    /// [`Self::with_kinds`] named others).
    pub fn resource_types(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        self.inner
            .registry
            .types
            .iter()
            .map(|t| (t.arm_type, t.versions.iter().map(|k| k.arm.api_version).collect()))
            .collect()
    }
}
