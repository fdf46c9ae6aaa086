//! The scale benchmark: the real `aks-reconciler` binary, in its own process, against the `fake-apiserver` and
//! `arm-simulator` binaries (each in its own process, so the reconciler's memory is measured alone), with
//! `--clusters` ManagedClusters and `--pools` AgentPools per cluster.
//!
//! Phases: (1) create — everything is created from scratch (PUTs, operations polled, children waiting for their
//! owners); (2) resync pass — the reconciler restarts and reconciles every object again, all in sync: the ARM
//! calls per object and the reconciles per second of a full pass; (3) idle — a minute-scale window with nothing to
//! do. Peak RSS (`VmHWM`) of the reconciler process per phase. Prints Markdown.
//!
//! `bench/scale.sh` builds the release binaries and runs it:
//! `target/release/examples/scale --bin-dir target/release --clusters 1000 --pools 3`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

const NS: &str = "fleet";
const SUB: &str = "00000000-0000-0000-0000-00000000beef";

struct Args {
    bin_dir: PathBuf,
    clusters: usize,
    pools: usize,
    concurrency: u16,
    idle_secs: u64,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        bin_dir: "target/release".into(),
        clusters: 1000,
        pools: 3,
        concurrency: 32,
        idle_secs: 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--bin-dir" => a.bin_dir = value()?.into(),
            "--clusters" => a.clusters = value()?.parse().map_err(|e| format!("--clusters: {e}"))?,
            "--pools" => a.pools = value()?.parse().map_err(|e| format!("--pools: {e}"))?,
            "--concurrency" => a.concurrency = value()?.parse().map_err(|e| format!("--concurrency: {e}"))?,
            "--idle-secs" => a.idle_secs = value()?.parse().map_err(|e| format!("--idle-secs: {e}"))?,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// A child process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(bin: PathBuf, args: &[String], env: &[(&str, String)], what: &'static str) -> Result<Proc, String> {
    let mut cmd = Command::new(&bin);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn()
        .map(Proc)
        .map_err(|e| format!("cannot start {what} ({}): {e}", bin.display()))
}

/// (VmRSS, VmHWM) in MiB of a process.
fn rss(pid: u32) -> (f64, f64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(0.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn wait_http(url: &str) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if reqwest::get(url).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!("{url} did not come up"))
}

async fn counts(sim: &str) -> Result<Value, String> {
    reqwest::get(format!("{sim}/_simulator/counts"))
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())
}

/// A request count from `/_simulator/counts`.
fn calls(c: &Value, key: &str) -> u64 {
    c[key].as_u64().unwrap_or(0)
}

/// One Markdown row of the results table from the simulator's counts.
fn row(phase: &str, wall: &str, rate: &str, c: &Value, total: usize, rss: &str) {
    let all: u64 = ["GET", "PUT", "polls", "POST", "DELETE"]
        .iter()
        .map(|k| calls(c, k))
        .sum();
    println!(
        "| {phase} | {wall} | {rate} | {} | {} | {} | {} | {:.2} | {rss} |",
        calls(c, "GET"),
        calls(c, "PUT"),
        calls(c, "polls"),
        calls(c, "POST") + calls(c, "DELETE"),
        all as f64 / total as f64
    );
}

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: "containerservice.armgen.dev".into(),
        version: "v2alpha1".into(),
        api_version: "containerservice.armgen.dev/v2alpha1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The objects whose `Ready` condition is `True`, followed by a watch of each kind.
struct ReadyWatch {
    events: futures::stream::BoxStream<'static, Result<(String, bool), String>>,
    ready: std::collections::HashSet<String>,
}

impl ReadyWatch {
    fn new(clusters: &Api<DynamicObject>, pools: &Api<DynamicObject>) -> Self {
        use futures::StreamExt;
        use kube::runtime::{WatchStreamExt, watcher};
        let follow = |api: &Api<DynamicObject>| {
            watcher(api.clone(), watcher::Config::default())
                .default_backoff()
                .touched_objects()
                .map(|o| {
                    let o = o.map_err(|e| e.to_string())?;
                    let key = format!(
                        "{}/{}",
                        o.types.map(|t| t.kind).unwrap_or_default(),
                        o.metadata.name.unwrap_or_default()
                    );
                    Ok((key, is_ready(&o.data)))
                })
        };
        ReadyWatch {
            events: futures::stream::select(follow(clusters), follow(pools)).boxed(),
            ready: Default::default(),
        }
    }

    fn count(&self) -> usize {
        self.ready.len()
    }

    /// Waits for the next change of an object.
    async fn next(&mut self) -> Result<(), String> {
        use futures::StreamExt;
        let (key, ready) = self.events.next().await.ok_or("the watch ended")??;
        if ready {
            self.ready.insert(key);
        } else {
            self.ready.remove(&key);
        }
        Ok(())
    }
}

fn is_ready(data: &Value) -> bool {
    data.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn start_reconciler(a: &Args, kubeconfig: &std::path::Path, sim: &str) -> Result<Proc, String> {
    spawn(
        a.bin_dir.join("aks-reconciler"),
        &[
            "--arm-endpoint".into(),
            sim.into(),
            "--anonymous".into(),
            SUB.into(),
            "--namespace".into(),
            NS.into(),
            "--poll-interval".into(),
            "1".into(),
            "--wait-interval".into(),
            "5".into(),
            "--resync-interval".into(),
            "3600".into(),
            "--concurrency".into(),
            a.concurrency.to_string(),
            "--disable-webhook".into(),
            "--metrics-listen".into(),
            "127.0.0.1:0".into(),
        ],
        &[
            ("KUBECONFIG", kubeconfig.display().to_string()),
            ("RUST_LOG", "warn".into()),
        ],
        "aks-reconciler",
    )
}

#[tokio::main]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("scale: {e}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let a = args()?;
    let total = a.clusters * (1 + a.pools);
    let (api_port, sim_port) = (free_port()?, free_port()?);
    let api_url = format!("http://127.0.0.1:{api_port}");
    let sim_url = format!("http://127.0.0.1:{sim_port}");
    let _api = spawn(
        a.bin_dir.join("fake-apiserver"),
        &["--listen".into(), format!("127.0.0.1:{api_port}")],
        &[],
        "fake-apiserver",
    )?;
    let _sim = spawn(
        a.bin_dir.join("arm-simulator"),
        &[
            "--listen".into(),
            format!("127.0.0.1:{sim_port}"),
            "--retry-after".into(),
            "1".into(),
            "--operation-polls".into(),
            "2".into(),
            "--no-traffic".into(),
        ],
        &[("RUST_LOG", "warn".into())],
        "arm-simulator",
    )?;
    wait_http(&format!("{api_url}/version")).await?;
    wait_http(&format!("{sim_url}/_simulator/counts")).await?;

    let dir = std::env::temp_dir().join(format!("armgen-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{api_url}\"}}}}]\n\
             users: [{{name: bench, user: {{}}}}]\ncontexts: [{{name: fake, context: {{cluster: fake, user: bench, namespace: {NS}}}}}]\n\
             current-context: fake\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    let config = kube::Config::new(api_url.parse().map_err(|e| format!("{e}"))?);
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    let clusters: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), NS, &resource("ManagedCluster", "managedclusters"));
    let pools: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &resource("AgentPool", "agentpools"));

    let created = Instant::now();
    for c in 0..a.clusters {
        let name = format!("c{c:04}");
        let cluster = json!({
            "apiVersion": "containerservice.armgen.dev/v2alpha1", "kind": "ManagedCluster",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"owner": {"name": format!("rg-{}", c % 50)}, "location": "westeurope", "dnsPrefix": name,
                "kubernetesVersion": "1.31", "identity": {"type": "SystemAssigned"},
                "agentPoolProfiles": [{"name": "system", "count": 3, "vmSize": "Standard_D4s_v5", "mode": "System"}]},
        });
        let object: DynamicObject = serde_json::from_value(cluster).map_err(|e| e.to_string())?;
        clusters
            .create(&PostParams::default(), &object)
            .await
            .map_err(|e| e.to_string())?;
        for p in 0..a.pools {
            let pool = json!({
                "apiVersion": "containerservice.armgen.dev/v2alpha1", "kind": "AgentPool",
                "metadata": {"name": format!("{name}-p{p}"), "namespace": NS},
                "spec": {"owner": {"name": name}, "azureName": format!("pool{p}"), "count": 2,
                    "vmSize": "Standard_D8s_v5", "mode": "User"},
            });
            let object: DynamicObject = serde_json::from_value(pool).map_err(|e| e.to_string())?;
            pools
                .create(&PostParams::default(), &object)
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    eprintln!("created {total} objects in {:.1} s", created.elapsed().as_secs_f64());

    println!(
        "## Scale: {} ManagedClusters + {} AgentPools\n",
        a.clusters,
        a.clusters * a.pools
    );
    println!(
        "`aks-reconciler` (release) in its own process, `--concurrency {}` per kind, against `fake-apiserver` and \
         `arm-simulator` (operations finish after 2 polls, `Retry-After: 1`) in their own processes.\n",
        a.concurrency
    );
    println!("| phase | wall s | reconciles/s | ARM GET | PUT | polls | other | ARM calls per object | peak RSS MiB |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");

    // Phase 1: create everything. Readiness is followed by a watch per kind (not by listing every object
    // again and again, which at 40,000 objects cost the API server and this driver a core between them).
    let mut ready = ReadyWatch::new(&clusters, &pools);
    let reconciler = start_reconciler(&a, &kubeconfig, &sim_url)?;
    let pid = reconciler.0.id();
    let start = Instant::now();
    let deadline = start + Duration::from_secs(1800);
    while ready.count() < total {
        match tokio::time::timeout_at(deadline.into(), ready.next()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(format!("only {} of {total} ready after 30 minutes", ready.count())),
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let c = counts(&sim_url).await?;
    let (_, hwm) = rss(pid);
    row("create", &format!("{wall:.1}"), "—", &c, total, &format!("{hwm:.1}"));
    drop(reconciler);

    // Phase 2: a full resync pass after a restart: every object reconciled once, all in sync.
    reqwest::Client::new()
        .delete(format!("{sim_url}/_simulator/traffic"))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let reconciler = start_reconciler(&a, &kubeconfig, &sim_url)?;
    let pid = reconciler.0.id();
    let start = Instant::now();
    let mut done_at = None;
    loop {
        let c = counts(&sim_url).await?;
        if calls(&c, "GET") >= total as u64 && done_at.is_none() {
            done_at = Some(start.elapsed());
        }
        if let Some(at) = done_at
            && start.elapsed() > at + Duration::from_secs(2)
        {
            break;
        }
        if start.elapsed() > Duration::from_secs(600) {
            return Err(format!("resync pass incomplete after 10 minutes: {c}"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let wall = done_at.unwrap_or_default().as_secs_f64();
    let c = counts(&sim_url).await?;
    let (_, hwm) = rss(pid);
    let rate = format!("{:.0}", total as f64 / wall.max(0.001));
    row(
        "resync pass (restart)",
        &format!("{wall:.1}"),
        &rate,
        &c,
        total,
        &format!("{hwm:.1}"),
    );

    // Phase 3: idle, in sync.
    reqwest::Client::new()
        .delete(format!("{sim_url}/_simulator/traffic"))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_secs(a.idle_secs)).await;
    let c = counts(&sim_url).await?;
    let (rss_now, hwm) = rss(pid);
    let idle = a.idle_secs.to_string();
    row(
        &format!("idle {idle} s"),
        &idle,
        "0",
        &c,
        total,
        &format!("{hwm:.1} (now {rss_now:.1})"),
    );
    drop(reconciler);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
