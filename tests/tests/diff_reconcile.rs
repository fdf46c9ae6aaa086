//! Change detection as the reconciler will use it:
//!
//! - comparing two equal full ManagedCluster specs allocates nothing (a global allocator counting the
//!   allocations of each thread, so other tests running meanwhile do not disturb the count);
//! - `status.operatorStatus.knownDifferences`: a fake ARM service that normalizes a value on PUT; the first
//!   reconcile PUTs, the second does not, a later user change (or drift in Azure) PUTs again.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use aks_api::containerservice::v2alpha1::{ManagedClusterSpec, arm};
use armgen_runtime::diff::{Differences, diff, forget_resolved, needs_put, update_known_differences};
use armgen_runtime::kube::{ArmIdsOnly, OperatorStatus};
use common::examples::all_payloads;

struct Counting;

thread_local! {
    /// Allocations (and reallocations) made by this thread.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the thread-local may be gone while the thread exits.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let out = f();
    (out, ALLOCATIONS.with(Cell::get) - before)
}

/// The largest ManagedCluster request body of the v2alpha1 examples, as a spec (a fixture: the typed comparison
/// needs one version's types; 2025-10-01 has the most examples).
fn largest_cluster_spec() -> ManagedClusterSpec {
    let aks = common::aks_group();
    let json = all_payloads(&common::spec_root())
        .into_iter()
        .filter(|p| p.request && p.group == aks.name && p.kind == "ManagedCluster" && p.version == "v2alpha1")
        .map(|p| p.json)
        .max_by_key(|j| j.to_string().len())
        .expect("a ManagedCluster request among the examples");
    let body: arm::ManagedCluster = serde_json::from_value(json).expect("example request");
    ManagedClusterSpec::from_arm(&body)
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn equal_specs_compare_without_allocating() {
    let desired = largest_cluster_spec();
    let actual = desired.clone();
    let (d, n) = allocations(|| diff(&desired, &actual));
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(n, 0, "comparing equal specs allocated {n} times");

    // One difference: allocations only to record it (the path and the two values).
    let mut changed = actual.clone();
    let pools = changed.agent_pool_profiles.as_mut().expect("pools");
    pools[0].count = Some(pools[0].count.unwrap_or(0) + 1);
    let (d, n) = allocations(|| diff(&desired, &changed));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(n > 0 && n < 16, "one difference allocated {n} times");
}

/// A fake ARM service for one ManagedCluster: a PUT stores the body, normalizing `kubernetesVersion` `X.Y` to the
/// patch version it picks (`X.Y.7`), as AKS does; a GET returns what is stored.
#[derive(Default)]
struct FakeArm {
    stored: Option<arm::ManagedCluster>,
    puts: usize,
}

impl FakeArm {
    fn put(&mut self, mut body: arm::ManagedCluster) {
        if let Some(p) = body.properties.as_mut()
            && let Some(v) = p.kubernetes_version.as_mut()
            && v.matches('.').count() == 1
        {
            v.push_str(".7");
        }
        self.stored = Some(body);
        self.puts += 1;
    }

    fn get(&self) -> ManagedClusterSpec {
        self.stored
            .as_ref()
            .map(ManagedClusterSpec::from_arm)
            .unwrap_or_default()
    }
}

/// One reconcile, as the reconciler will run it: resolve the desired spec, GET, compare, PUT only when a
/// difference is not known, then record what remains after the PUT. Returns whether it PUT.
fn reconcile(spec: &ManagedClusterSpec, status: &mut OperatorStatus, service: &mut FakeArm) -> bool {
    let body = spec.to_arm(&ArmIdsOnly).expect("to_arm");
    let desired = ManagedClusterSpec::from_arm(&body);
    let before: Differences = diff(&desired, &service.get());
    if !needs_put(&before, &status.known_differences) {
        forget_resolved(status, &before);
        return false;
    }
    service.put(body);
    let after = diff(&desired, &service.get());
    update_known_differences(status, &before, &after);
    true
}

#[test]
fn known_differences_stop_repeated_puts_but_not_user_changes() {
    let mut spec: ManagedClusterSpec = serde_json::from_value(serde_json::json!({
        "location": "westeurope",
        "kubernetesVersion": "1.30",
        "dnsPrefix": "demo",
        "agentPoolProfiles": [{"name": "nodepool1", "count": 3, "vmSize": "Standard_DS2_v2", "mode": "System"}],
    }))
    .expect("spec");
    let mut status = OperatorStatus::default();
    let mut service = FakeArm::default();

    // First reconcile: nothing in Azure yet, so it PUTs; the service keeps 1.30.7, a known difference.
    assert!(reconcile(&spec, &mut status, &mut service));
    let known: Vec<(&str, Option<&str>, Option<&str>)> = status
        .known_differences
        .iter()
        .map(|k| (k.path.as_str(), k.desired.as_deref(), k.actual.as_deref()))
        .collect();
    assert_eq!(
        known,
        [("spec.kubernetesVersion", Some("\"1.30\""), Some("\"1.30.7\""))]
    );

    // Second and third: in sync but for the known difference, no PUT.
    assert!(!reconcile(&spec, &mut status, &mut service));
    assert!(!reconcile(&spec, &mut status, &mut service));
    assert_eq!(service.puts, 1);

    // A user change PUTs again; the normalized version stays known.
    spec.agent_pool_profiles.as_mut().expect("pools")[0].count = Some(5);
    assert!(reconcile(&spec, &mut status, &mut service));
    assert!(!reconcile(&spec, &mut status, &mut service));
    assert_eq!(service.puts, 2);
    assert_eq!(status.known_differences.len(), 1);

    // A change of the field with a known difference is a change too.
    spec.kubernetes_version = Some("1.31".into());
    assert!(reconcile(&spec, &mut status, &mut service));
    assert_eq!(status.known_differences[0].actual.as_deref(), Some("\"1.31.7\""));
    assert!(!reconcile(&spec, &mut status, &mut service));

    // Drift in Azure (someone scaled the pool by hand) PUTs the desired state back.
    let stored = service.stored.as_mut().expect("stored");
    let props = stored.properties.as_mut().expect("properties");
    props.agent_pool_profiles.as_mut().expect("pools")[0].count = Some(9);
    assert!(reconcile(&spec, &mut status, &mut service));
    assert_eq!(service.puts, 4);

    // The user asks for the exact patch version Azure has: in sync, no PUT, and the known difference is gone.
    spec.kubernetes_version = Some("1.31.7".into());
    assert!(!reconcile(&spec, &mut status, &mut service));
    assert!(status.known_differences.is_empty());
    assert_eq!(service.puts, 4);
}

#[test]
fn a_known_difference_that_resolves_is_forgotten() {
    let spec: ManagedClusterSpec = serde_json::from_value(
        serde_json::json!({"location": "westeurope", "kubernetesVersion": "1.30", "dnsPrefix": "demo"}),
    )
    .expect("spec");
    let mut status = OperatorStatus::default();
    let mut service = FakeArm::default();
    assert!(reconcile(&spec, &mut status, &mut service));
    assert_eq!(status.known_differences.len(), 1);
    // Azure now reports exactly what was asked (the service stopped normalizing): no PUT, nothing known.
    let stored = service.stored.as_mut().expect("stored");
    stored.properties.as_mut().expect("properties").kubernetes_version = Some("1.30".into());
    assert!(!reconcile(&spec, &mut status, &mut service));
    assert!(status.known_differences.is_empty());
    // So that a later drift of the same field is seen.
    let stored = service.stored.as_mut().expect("stored");
    stored.properties.as_mut().expect("properties").kubernetes_version = Some("1.30.7".into());
    assert!(reconcile(&spec, &mut status, &mut service));
}
