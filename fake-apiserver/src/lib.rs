//! An in-memory Kubernetes API server for tests, served as a [`tower::Service`] behind a real [`kube::Client`].
//!
//! It depends on no workspace crate (custom resources are served from the CRDs a test installs), so it knows
//! nothing of the kinds it stores.
//!
//! The real kube-rs machinery — [`kube::Api`], [`kube::runtime::Controller`], [`kube::runtime::watcher()`],
//! [`kube::runtime::reflector()`], [`kube::runtime::finalizer()`], [`kube::runtime::events::Recorder`],
//! [`kube::Api::patch_status`] — runs unchanged against it:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), kube::Error> {
//! use fake_apiserver::FakeApiServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! let server = FakeApiServer::new();
//! let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! config_maps.create(&PostParams::default(), &cm).await?;
//! assert!(server.get("v1", "configmaps", Some("default"), "settings").is_some());
//! assert_eq!(server.count("POST", "/configmaps"), 1);
//! # Ok(())
//! # }
//! ```
//!
//! # Semantics
//!
//! The server is generic: there is no per-type code. Objects are JSON values keyed by (group, plural, namespace,
//! name), and the URL tells everything — `/api/v1/namespaces/{ns}/{plural}[/{name}[/status]]`,
//! `/apis/{group}/{version}/namespaces/{ns}/{plural}[/{name}[/status]]`, cluster-scoped
//! `/apis/{group}/{version}/{plural}[/{name}[/status]]` and `/api/v1/{plural}[/{name}]`. A list without a namespace
//! (`/apis/{group}/{version}/{plural}`) lists every namespace. Namespaces need not exist.
//!
//! - **Versions.** Objects of the same group and plural are one resource whatever the version in the URL: the object
//!   is stored as written and answered with `apiVersion` set to the version asked for. There is no field
//!   conversion, unless a converter is set for the group ([`FakeApiServer::set_converter`], standing in for a
//!   CRD's conversion webhook): then objects are stored at their CRD's storage version and converted on every
//!   read and write, as the API server does.
//! - **Storage versions.** Each object of a resource with a CRD records the CRD's storage version at its last
//!   write ([`FakeApiServer::stored_version`]). A write that changes nothing still re-encodes an object recorded at
//!   another version than the current storage version (a new resource version, a `MODIFIED` event): the API server
//!   skips only writes whose newly encoded bytes equal the stored ones, which is what a storage version
//!   migration (reading every object and writing it back) relies on.
//! - **Create** (`POST`): the name comes from `metadata.name` or `metadata.generateName` (plus five random
//!   characters); `409 AlreadyExists` when taken. Sets `uid`, `creationTimestamp`, `resourceVersion` and
//!   `generation: 1`; drops `managedFields`.
//! - **Read** (`GET`): `404 NotFound` `Status` with `details {name, group, kind}` as the API server sends.
//! - **List**: `kind: <Kind>List` and `metadata.resourceVersion`; `labelSelector` (`k=v`, `k==v`, `k!=v`, `k`, `!k`,
//!   `k in (a,b)`, `k notin (a,b)`), `fieldSelector` (`path=v`, `path!=v` on any dotted field path, e.g.
//!   `metadata.name`), `limit` and `continue`. Lists always read the current state (`resourceVersion` and
//!   `resourceVersionMatch` on a list are accepted and ignored).
//! - **Replace** (`PUT`): `409 Conflict` when `metadata.resourceVersion` is given and stale (an update without
//!   one is unconditional); `404` when the object does not exist (no create on update).
//! - **Patch**: `application/merge-patch+json` (RFC 7386), `application/json-patch+json` (RFC 6902, atomic; a `test`
//!   of `null` at a missing path succeeds, as in the API server), `application/strategic-merge-patch+json`
//!   (treated as a merge patch: lists are replaced, not merged by key, and `$patch` directives are not
//!   understood), `application/apply-patch+yaml` (server-side apply approximated as a merge patch of the fields
//!   given, on a JSON or YAML body; creates the object when absent; `fieldManager` is required as in the API
//!   server, `force` is accepted; no field ownership or conflicts). A `metadata.resourceVersion` in a patch is a
//!   precondition.
//! - **No-op writes** (the result equals the stored object) keep the resource version and send no watch event.
//! - **Status subresource**: `GET`, `PUT` and `PATCH` on `.../{name}/status` change only `.status`. Every resource
//!   outside the core group (`/apis/...`) is treated as a custom resource with a status subresource: writes to the
//!   main resource keep the stored `.status`, and a create drops it. Core (`/api/v1`) resources take `.status`
//!   from main-resource writes.
//! - **Metadata**: `uid`, `creationTimestamp` (seconds), `resourceVersion` (one global counter, as a string),
//!   `generation` (1 at creation, incremented when anything outside `metadata` and `status` changes, and when
//!   deletion starts on an object with finalizers). `name`, `namespace`, `uid`, `creationTimestamp` and
//!   `deletionTimestamp` cannot be changed by writes. `managedFields` are dropped; empty metadata lists and maps
//!   are omitted, as the API server does.
//! - **Delete**: an object with `metadata.finalizers` gets `deletionTimestamp` (and `deletionGracePeriodSeconds:
//!   0`) and stays until a write removes its last finalizer; otherwise it is removed at once. The answer is the
//!   object's last state. `preconditions` (`uid`, `resourceVersion`) give `409 Conflict`. `DELETE` on a collection
//!   deletes what its selectors match.
//! - **Garbage collection**: removing an object deletes (background cascading) the objects whose
//!   `metadata.ownerReferences` name its `uid` and have no other existing owner. `propagationPolicy: Orphan`
//!   removes the owner reference from dependents instead. `Foreground` is treated as `Background`.
//! - **Watch** (`?watch=true` or `watch=1`): newline-delimited `{"type", "object"}` events. Without
//!   `resourceVersion` (or with `0`) the current objects come first as `ADDED`; with `sendInitialEvents=true`
//!   they are followed by a `BOOKMARK` annotated `k8s.io/initial-events-end`; with a `resourceVersion` the changes
//!   since then are replayed (`410 Expired` as an `ERROR` event when older than the last 10 000 changes). An
//!   object that starts or stops matching the selectors is `ADDED` or `DELETED`. `allowWatchBookmarks` sends a
//!   `BOOKMARK` every second; `timeoutSeconds` ends the stream. A watch that falls behind is ended, and the
//!   client resumes from its last resource version. This is what kube-runtime's `watcher` needs, with either
//!   initial list strategy.
//! - Leases (`coordination.k8s.io/v1`), Events (`/api/v1/.../events` and `/apis/events.k8s.io/v1/.../events`) and
//!   everything else are plain objects.
//! - **Discovery** (`src/discovery.rs`): `/api`, `/api/v1`, `/apis`, `/apis/{group}` and `/apis/{group}/{version}`
//!   (the legacy documents; aggregated discovery is not offered, and clients fall back) list the built-in resources
//!   it knows (ConfigMaps, Secrets, Events, Pods, Services, ServiceAccounts, Namespaces, Nodes, Endpoints, PVs and
//!   PVCs, Leases, Deployments, StatefulSets, ReplicaSets, DaemonSets, Jobs, CronJobs, CRDs) and every served version
//!   of every stored CustomResourceDefinition (scope, names, short names, categories, status subresource);
//!   `/openapi/v2` is an empty document (protobuf for kubectl, else JSON), `/openapi/v3` is `404`. That is what
//!   `kubectl` needs: `kubectl apply -f`, `get`, `wait`, `api-resources` and `delete` work against the binary
//!   (`tests/kubectl.rs`), with no client-side schema validation and JSON merge patches for custom resources.
//!   `kubectl get` prints `NAME` and `AGE` only (no server-side `Table`s).
//! - **CustomResourceDefinitions** are checked as the API server does where discovery depends on it (`422` without
//!   `spec.group`, `spec.names.plural`/`kind`, a valid `spec.scope`, exactly one storage version, or with a name
//!   other than `<plural>.<group>`) and are `Established` at once: every write sets `status.acceptedNames`,
//!   `NamesAccepted` and `Established` conditions and `storedVersions` (the storage version added to those recorded).
//!   `status.storedVersions` is checked as the API server checks it: a status write must keep at least one version,
//!   each in `spec.versions`, the storage version among them; a spec write cannot drop from `spec.versions` a version
//!   still in `storedVersions` (`422`). Custom resources are served whether their
//!   CRD exists or not (discovery lists only those with one), and deleting a CRD leaves its objects.
//! - `GET /version` answers a version `Info` (v1.33). `dryRun` is rejected with `400`.
//! - Unknown paths are `404`, methods not allowed on a path `405`, malformed bodies and queries `400`, unknown
//!   patch types `415`, invalid objects and patches that cannot apply `422` — `Status` errors, never a panic.
//!
//! For tests: every request is recorded ([`FakeApiServer::requests`]), failures can be injected
//! ([`FakeApiServer::fail_next`]) and the store can be read and written directly ([`FakeApiServer::insert`],
//! [`FakeApiServer::get`], [`FakeApiServer::list`], [`FakeApiServer::delete`]).
//!
//! # Limits
//!
//! No admission, validation against schemas, defaulting, field conversion between versions without a converter
//! (and no calls to conversion webhooks: a converter is a function in the test), field ownership (`managedFields`), authentication or authorization, aggregated discovery,
//! OpenAPI schemas, server-side `Table` printing, subresources other than `status` and `scale` (which maps `.spec.replicas`
//! and `.status.replicas` of any custom resource, whatever its CRD says), namespace lifecycle, or grace
//! periods. `strategic-merge-patch` is a merge patch.
//!
//! # The binary
//!
//! [`FakeApiServer::serve`] serves a server over plain HTTP/1.1 on a listener, for a client in another process
//! (e.g. a binary under test, with its converter set in the test).
//! `fake-apiserver [--listen 127.0.0.1:6443] [--kubeconfig FILE]` serves the same over plain HTTP/1.1 and prints
//! its URL (`--listen 127.0.0.1:0` picks a free port); `--kubeconfig` writes a kubeconfig for it (context
//! `fake-apiserver`, namespace `default`, no credentials), so that `KUBECONFIG=FILE kubectl apply -f crd.yaml`
//! works, as does the real `aks-reconciler` (`bench/scale.sh`, `bench/webhook.sh`).

#![forbid(unsafe_code)]

mod discovery;
mod error;
mod selector;
mod service;
mod store;

use std::collections::hash_map::RandomState;
use std::convert::Infallible;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response};
use serde_json::Value;

use crate::error::{ApiError, reason_for_code};
use crate::store::{DeleteOptions, ObjectKey, ResourceId, State, UpdateMode, split_api_version};

pub use crate::store::Converter;

/// The body of the server's responses: a JSON document, or a stream of watch events.
pub type ResponseBody = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

/// One request the server received, for assertions.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The HTTP method (`http::Method` compares with `&str`: `request.method == "PATCH"`).
    pub method: Method,
    /// The URL path, e.g. `/api/v1/namespaces/default/configmaps/settings`.
    pub path: String,
    /// The raw (still percent-encoded) query string, if any, e.g. `watch=true&resourceVersion=12`.
    pub query: Option<String>,
    /// The body parsed as JSON (or YAML, for apply patches), if there was one and it parsed.
    pub body: Option<Value>,
}

impl RecordedRequest {
    /// The decoded value of a query parameter.
    pub fn query_param(&self, key: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_deref().unwrap_or_default().as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }
}

#[derive(Debug)]
struct Fault {
    method: String,
    path_contains: String,
    status_code: u16,
    remaining: usize,
}

struct Inner {
    state: Mutex<State>,
    requests: Mutex<Vec<RecordedRequest>>,
    faults: Mutex<Vec<Fault>>,
}

/// The in-memory API server. Cheap to clone: clones share the same store, request log and faults.
///
/// It is a [`tower::Service`] taking `http::Request<kube::client::Body>`; [`FakeApiServer::client`] puts a
/// [`kube::Client`] in front of it.
#[derive(Clone)]
pub struct FakeApiServer {
    inner: Arc<Inner>,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("resource_version", &self.state().resource_version())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FakeApiServer {
    /// An empty server.
    pub fn new() -> Self {
        let seed = RandomState::new().hash_one(std::process::id());
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(State::new(seed)),
                requests: Mutex::new(Vec::new()),
                faults: Mutex::new(Vec::new()),
            }),
        }
    }

    /// A [`kube::Client`] talking to this server, with `default` as its default namespace.
    ///
    /// Must be called within a Tokio runtime (the client spawns its buffer task).
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }

    pub(crate) fn record(&self, request: RecordedRequest) {
        lock(&self.inner.requests).push(request);
    }

    /// Consumes one injected failure matching the request, if any.
    pub(crate) fn take_fault(&self, method: &Method, path: &str) -> Option<ApiError> {
        let mut faults = lock(&self.inner.faults);
        let index = faults.iter().position(|fault| {
            (fault.method == "*" || fault.method.eq_ignore_ascii_case(method.as_str()))
                && path.contains(&fault.path_contains)
        })?;
        let fault = &mut faults[index];
        let status_code = fault.status_code;
        fault.remaining -= 1;
        if fault.remaining == 0 {
            faults.remove(index);
        }
        let message = format!(
            "injected failure: {} ({status_code}) for {method} {path}",
            reason_for_code(status_code)
        );
        Some(ApiError::new(status_code, message))
    }

    /// Every request received so far, oldest first (watch requests included, also those answered by an injected
    /// failure).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner.requests).clone()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        lock(&self.inner.requests).clear();
    }

    /// How many recorded requests have this method (case-insensitive; `"*"` for any) and a path containing
    /// `path_contains`.
    pub fn count(&self, method: &str, path_contains: &str) -> usize {
        lock(&self.inner.requests)
            .iter()
            .filter(|r| {
                (method == "*" || r.method.as_str().eq_ignore_ascii_case(method)) && r.path.contains(path_contains)
            })
            .count()
    }

    /// Makes the next `times` requests with this method (case-insensitive; `"*"` for any) and a path containing
    /// `path_contains` fail with `status_code`, as a Kubernetes `Status` error (`reason` from the code:
    /// `Conflict` for 409, `InternalError` for 500, ...). Faults are checked in the order they were added; the
    /// request is still recorded.
    pub fn fail_next(&self, method: &str, path_contains: &str, status_code: u16, times: usize) {
        if times == 0 {
            return;
        }
        lock(&self.inner.faults).push(Fault {
            method: method.to_string(),
            path_contains: path_contains.to_string(),
            status_code,
            remaining: times,
        });
    }

    /// Drops the injected failures not yet consumed.
    pub fn clear_faults(&self) {
        lock(&self.inner.faults).clear();
    }

    /// The current (global) resource version.
    pub fn resource_version(&self) -> u64 {
        self.state().resource_version()
    }

    /// Declares the kind of a resource (`api_version` is `group/version` or `v1`), for the `kind` of lists and
    /// bookmarks before any object was seen, and for the plural [`FakeApiServer::insert`] uses. Well-known
    /// kinds and those seen in requests need no declaration; otherwise the plural is guessed from the kind
    /// (`Widget` → `widgets`, `Policy` → `policies`).
    pub fn register_kind(&self, api_version: &str, kind: &str, plural: &str) {
        let (group, _) = split_api_version(api_version);
        let resource = ResourceId {
            group: group.to_string(),
            plural: plural.to_string(),
        };
        self.state().register_kind(&resource, kind);
    }

    fn key(api_version: &str, plural: &str, namespace: Option<&str>, name: &str) -> ObjectKey {
        let (group, _) = split_api_version(api_version);
        ObjectKey {
            resource: ResourceId {
                group: group.to_string(),
                plural: plural.to_string(),
            },
            namespace: namespace.unwrap_or_default().to_string(),
            name: name.to_string(),
        }
    }

    /// Creates or replaces an object directly, as a test fixture: metadata is assigned as on create (or kept, for
    /// an existing object, whose resource version and generation advance as on update); `.status` is taken as
    /// given (no status subresource rule); watches see the change. The resource is found from `apiVersion` and
    /// `kind` (see [`FakeApiServer::register_kind`]); the namespace from `metadata.namespace` (none: cluster
    /// scope). Returns the stored object.
    ///
    /// # Panics
    ///
    /// When `object` has no `apiVersion`, `kind`, or `metadata.name`/`generateName`: a bug in the test.
    pub fn insert(&self, object: Value) -> Value {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("FakeApiServer::insert: the object has no apiVersion: {object}"))
            .to_string();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("FakeApiServer::insert: the object has no kind: {object}"))
            .to_string();
        let (group, _) = split_api_version(&api_version);
        let namespace = store::meta_str(&object, "namespace").unwrap_or_default().to_string();
        let name = store::meta_str(&object, "name").unwrap_or_default().to_string();
        let mut state = self.state();
        let resource = ResourceId {
            group: group.to_string(),
            plural: state.plural_of(group, &kind),
        };
        let key = ObjectKey {
            resource: resource.clone(),
            namespace: namespace.clone(),
            name,
        };
        let result = if !key.name.is_empty() && state.get(&key).is_some() {
            state.update(&key, &api_version, object, UpdateMode::Direct)
        } else {
            state
                .create(&resource, &api_version, &namespace, object, false)
                .map(|(_, o)| o)
        };
        result.unwrap_or_else(|e| panic!("FakeApiServer::insert: {}", e.message))
    }

    /// The stored object, with `apiVersion` set to `api_version` (converted, with a converter; see
    /// [`FakeApiServer::set_converter`]).
    ///
    /// # Panics
    ///
    /// When the converter fails: the test sees the conversion error.
    pub fn get(&self, api_version: &str, plural: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        let key = Self::key(api_version, plural, namespace, name);
        let state = self.state();
        state.get(&key).map(|object| present(&state, object, api_version))
    }

    /// Makes the server convert the custom resources of `group` (e.g. `example.com`) between versions, as the
    /// API server does through a CRD's conversion webhook: once the resource's CRD is stored, objects are stored
    /// at its storage version (writes are converted to it) and read at the version asked for (reads, lists,
    /// watches and write responses are converted from it). `convert(object, "group/version")` returns the
    /// object at that version, or a message; a failure is a `500` naming it, as a failing webhook is. Without a
    /// converter, objects are stored as written and only relabelled on reads.
    pub fn set_converter(
        &self,
        group: &str,
        convert: impl Fn(Value, &str) -> Result<Value, String> + Send + Sync + 'static,
    ) {
        self.state().set_converter(group, Arc::new(convert));
    }

    /// The version an object was encoded at by its last write: the storage version of its CRD at that time
    /// (what the API server keeps in etcd). `None` for objects without a CRD, or absent ones. A write that
    /// changes nothing re-encodes an object whose encoding is not the current storage version, as in the API
    /// server (that is what a storage version migration relies on).
    pub fn stored_version(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<String> {
        let key = Self::key(api_version, plural, namespace, name);
        self.state().encoded_version(&key).map(str::to_string)
    }

    /// Serves this server over plain HTTP/1.1 on `listener` until the future is dropped (as the binary does), so
    /// that a client in another process — `kubectl`, or a binary under test — talks to the same store.
    pub async fn serve(self, listener: tokio::net::TcpListener) {
        use http_body_util::BodyExt;
        use tower::Service;
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let server = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let mut server = server.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let request = hyper::Request::from_parts(parts, kube::client::Body::from(bytes));
                        let response = match server.call(request).await {
                            Ok(r) => r,
                            Err(never) => match never {},
                        };
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    }

    /// Every stored object of a resource, in all namespaces, ordered by namespace and name.
    pub fn list(&self, api_version: &str, plural: &str) -> Vec<Value> {
        let (group, _) = split_api_version(api_version);
        let filter = store::Filter {
            resource: ResourceId {
                group: group.to_string(),
                plural: plural.to_string(),
            },
            namespace: None,
            name: None,
            labels: Default::default(),
            fields: Default::default(),
        };
        let state = self.state();
        state
            .list(&filter)
            .map(|(_, object)| present(&state, object, api_version))
            .collect()
    }

    /// Deletes an object as an API `DELETE` would (finalizers, garbage collection, watch events). Returns its
    /// last state, `None` when absent.
    pub fn delete(&self, api_version: &str, plural: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        let key = Self::key(api_version, plural, namespace, name);
        let mut state = self.state();
        let object = state.delete(&key, &DeleteOptions::default()).ok()?;
        Some(present(&state, &object, api_version))
    }
}

/// A stored object at `api_version`, for the test helpers: a conversion failure is a panic naming it.
fn present(state: &State, object: &Value, api_version: &str) -> Value {
    state
        .present(object, api_version)
        .unwrap_or_else(|e| panic!("FakeApiServer: converting to {api_version}: {}", e.message))
}

impl tower::Service<Request<kube::client::Body>> for FakeApiServer {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<kube::client::Body>) -> Self::Future {
        let server = self.clone();
        Box::pin(async move { Ok(service::handle(server, request).await) })
    }
}
