//! `aks-reconciler`: the controller binary. Every flag also reads an environment variable (shown by `--help`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RequeueBackoff, RetryPolicy};
use aks_reconciler::controller;
use aks_reconciler::credentials::{CredentialConfig, CredentialDefaults, Credentials};
use aks_reconciler::events::{Recorder, Reporter};
use aks_reconciler::leader::{self, LeaderElection, LeaderElector};
use aks_reconciler::metrics::Metrics;
use aks_reconciler::reconcile::{Access, CredentialProvider, Settings, Shared, StaticAccess};
use aks_reconciler::serve::{self, Readiness, WebhookOptions};
use aks_reconciler::sources::CredentialSources;
use armgen_runtime::webhook::Limits;
use clap::{Parser, ValueEnum};

/// Reconciles the generated AKS custom resources against Azure Resource Manager.
///
/// Credentials: the global default comes from the environment (AZURE_SUBSCRIPTION_ID, AZURE_TENANT_ID,
/// AZURE_CLIENT_ID, and AZURE_FEDERATED_TOKEN_FILE for workload identity, AZURE_USE_MANAGED_IDENTITY=true for
/// managed identity, or AZURE_CLIENT_SECRET; AZURE_AUTHORITY_HOST, AZURE_IDENTITY_ENDPOINT). A Secret named
/// `armgen-credential` in a namespace overrides it there, and the annotation `armgen.dev/credential-from:
/// <secret>` on a resource overrides both; a namespace Secret proves only its own identity (AZURE_FEDERATED_TOKEN or
/// AZURE_CLIENT_SECRET), at an authority host from --allowed-authority-hosts. Kubernetes access: in-cluster service
/// account or KUBECONFIG.
///
/// Serving: the CRD conversion webhook (POST /convert) over HTTPS on --webhook-listen, with the certificate files
/// reloaded when they change; /healthz, /readyz and /metrics (Prometheus) over HTTP on --metrics-listen. The
/// webhook is unauthenticated, so it is bounded: bodies over --webhook-max-body-bytes get 413 (before they are
/// read), reviews beyond --webhook-max-concurrent-reviews get 429, and conversions run off the async workers.
#[derive(Debug, Parser)]
#[command(name = "aks-reconciler", version)]
struct Args {
    /// The ARM endpoint: https://management.azure.com (public cloud), https://management.usgovcloudapi.net,
    /// https://management.chinacloudapi.cn, or a simulator's URL.
    #[arg(long, env = "ARM_ENDPOINT", default_value = "https://management.azure.com")]
    arm_endpoint: url::Url,
    /// The token scope for ARM (default: the endpoint followed by `/.default`).
    #[arg(long, env = "ARM_TOKEN_SCOPE")]
    arm_token_scope: Option<String>,
    /// Watch only this namespace (default: all namespaces).
    #[arg(long, env = "WATCH_NAMESPACE")]
    namespace: Option<String>,
    /// Serve an API group at another Kubernetes version than its storage version, e.g.
    /// `containerservice=v1beta1` (repeatable): the reconciler then speaks that version's ARM API version.
    #[arg(
        long = "kube-version",
        env = "KUBE_VERSIONS",
        value_delimiter = ',',
        value_name = "GROUP=VERSION",
        value_parser = parse_pair
    )]
    versions: Vec<(String, String)>,
    /// Seconds between resyncs of an object in sync (one GET each).
    #[arg(long, env = "RESYNC_INTERVAL_SECONDS", default_value_t = 600)]
    resync_interval: u64,
    /// Seconds between polls of a long-running operation when ARM sends no Retry-After.
    #[arg(long, env = "POLL_INTERVAL_SECONDS", default_value_t = 10)]
    poll_interval: u64,
    /// Seconds between retries while waiting for an owner, a reference, a Secret or credentials.
    #[arg(long, env = "WAIT_INTERVAL_SECONDS", default_value_t = 30)]
    wait_interval: u64,
    /// Seconds before retrying after ARM rejected a request or an operation failed.
    #[arg(long, env = "FAILED_RETRY_SECONDS", default_value_t = 300)]
    failed_retry_interval: u64,
    /// Seconds before a spec that ARM answered with a terminal error (the rules' `errors.terminal`: validation
    /// errors, PropertyChangeNotAllowed, QuotaExceeded) is sent again unchanged; 0: only after a spec change. A
    /// spec change (new generation) is always sent at once.
    #[arg(long, env = "TERMINAL_RETRY_SECONDS", default_value_t = 21600)]
    terminal_retry_interval: u64,
    /// A rules document (JSON, the schema of `generated/rules.json`) replacing the built-in AKS rules: what the
    /// services do that their specs do not say (child-owned properties, immutable properties, owner gates,
    /// error classes). Read at start; an invalid file is an error.
    #[arg(long, env = "ARMGEN_RULES_FILE", value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Seconds between refreshes of Secret exports (each costs ARM POSTs); ConfigMap exports follow every GET.
    #[arg(long, env = "EXPORT_REFRESH_SECONDS", default_value_t = 3600)]
    export_refresh_interval: u64,
    /// Seconds between reads of every view (read-only ARM GETs kept in a status: a cluster's upgradeProfile, a
    /// pool's machines), instead of each view's own interval from the config (`views.refreshSeconds`); 0: each its
    /// own. Each read is one ARM GET per view per object.
    #[arg(long, env = "VIEW_REFRESH_SECONDS", default_value_t = 0)]
    view_refresh_interval: u64,
    /// The namespace of the claim Leases that tie each Azure resource to one custom resource (the operator's
    /// own; tenants must not be able to write Leases there). Defaults to the pod's namespace.
    #[arg(long, env = "POD_NAMESPACE", default_value = "aks-reconciler-system")]
    claims_namespace: String,
    /// Concurrent reconciles per kind (0: unbounded).
    #[arg(long, env = "CONCURRENCY", default_value_t = 16)]
    concurrency: u16,
    /// Attempts per ARM request on 429, 5xx and connection errors, the first included.
    #[arg(long, env = "ARM_MAX_ATTEMPTS", default_value_t = 4)]
    max_attempts: u32,
    /// Entra authority hosts a namespace's credential Secret may name in AZURE_AUTHORITY_HOST (comma-separated;
    /// default: the public cloud https://login.microsoftonline.com/). The operator's own AZURE_AUTHORITY_HOST is
    /// always allowed. A Secret naming another host is refused before any token request.
    #[arg(
        long,
        env = "AZURE_ALLOWED_AUTHORITY_HOSTS",
        value_delimiter = ',',
        value_name = "URL",
        default_value = aks_reconciler::credentials::AZURE_PUBLIC_CLOUD
    )]
    allowed_authority_hosts: Vec<url::Url>,
    /// The longest Retry-After (seconds) honoured from ARM (429, 5xx, long-running operations); longer values
    /// are cut to it.
    #[arg(long, env = "MAX_RETRY_AFTER_SECONDS", default_value_t = 600)]
    max_retry_after: u64,
    /// Seconds before the first retry after a transient ARM failure (5xx, connection error) that persisted
    /// through the in-call retries; each further consecutive failure of the object doubles it (with jitter).
    #[arg(long, env = "BACKOFF_BASE_SECONDS", default_value_t = 10)]
    backoff_base: u64,
    /// The longest delay (seconds) between retries after transient ARM failures.
    #[arg(long, env = "BACKOFF_MAX_SECONDS", default_value_t = 600)]
    backoff_max: u64,
    /// Send no bearer token, with this subscription ID (for a local ARM simulator only).
    #[arg(long, env = "ARM_ANONYMOUS_SUBSCRIPTION_ID", value_name = "SUBSCRIPTION_ID")]
    anonymous: Option<String>,
    /// Log filter (tracing EnvFilter syntax), e.g. `info` or `aks_reconciler=debug`.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    log: String,
    /// Log format: `text` (human-readable lines) or `json` (one JSON object per line: timestamp, level, target,
    /// message and fields at the top level).
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Where the CRD conversion webhook (POST /convert, HTTPS) listens.
    #[arg(long, env = "WEBHOOK_LISTEN", default_value = "0.0.0.0:9443")]
    webhook_listen: SocketAddr,
    /// The webhook's TLS certificate (PEM, chain after the certificate); re-read every few seconds, a change
    /// applies to new connections.
    #[arg(long, env = "TLS_CERT_FILE", default_value = serve::DEFAULT_CERT_FILE)]
    tls_cert_file: PathBuf,
    /// The webhook's TLS private key (PEM: PKCS#8, PKCS#1 or SEC1); re-read with the certificate.
    #[arg(long, env = "TLS_KEY_FILE", default_value = serve::DEFAULT_KEY_FILE)]
    tls_key_file: PathBuf,
    /// The largest ConversionReview body the webhook accepts, in bytes (suffixes Ki, Mi, Gi allowed); larger ones
    /// get 413 before being read. The default, 3Mi, is kube-apiserver's own request body limit; raise it only if
    /// unpaged LISTs at a non-storage version need more (the API server converts a LIST in one review).
    #[arg(long, env = "WEBHOOK_MAX_BODY_BYTES", default_value = "3Mi", value_parser = parse_bytes, value_name = "BYTES")]
    webhook_max_body_bytes: usize,
    /// How many ConversionReviews the webhook reads and converts at once; more get 429 (the API server retries).
    /// Memory used by conversions is bounded by about this × --webhook-max-body-bytes × the JSON expansion.
    #[arg(long, env = "WEBHOOK_MAX_CONCURRENT_REVIEWS", default_value_t = DEFAULT_REVIEWS, value_parser = clap::value_parser!(u16).range(1..))]
    webhook_max_concurrent_reviews: u16,
    /// Serve no conversion webhook (when the CRDs serve one version only, or another process converts).
    #[arg(long, env = "DISABLE_WEBHOOK")]
    disable_webhook: bool,
    /// Elect a leader through a Lease, so that only one replica reconciles; the others stand by (ready, serving
    /// the webhook) and take over when the leader stops or loses the lease.
    #[arg(long, env = "LEADER_ELECT")]
    leader_elect: bool,
    /// The Lease's name.
    #[arg(long, env = "LEADER_ELECTION_ID", default_value = "aks-reconciler")]
    leader_election_id: String,
    /// The Lease's namespace (the operator's own; POD_NAMESPACE from the downward API).
    #[arg(long, env = "POD_NAMESPACE", default_value = "aks-reconciler-system")]
    leader_election_namespace: String,
    /// Where /healthz, /readyz and /metrics (plain HTTP) listen.
    #[arg(long, env = "METRICS_LISTEN", default_value = "0.0.0.0:8080")]
    metrics_listen: SocketAddr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// A byte count: digits, optionally followed by `Ki`, `Mi` or `Gi` (powers of 1024).
/// `--webhook-max-concurrent-reviews`' default: the webhook's.
const DEFAULT_REVIEWS: u16 = armgen_runtime::webhook::DEFAULT_MAX_CONCURRENT_REVIEWS as u16;

fn parse_bytes(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => s.split_at(at),
        None => (s, ""),
    };
    let shift = match unit {
        "" => 0,
        "Ki" => 10,
        "Mi" => 20,
        "Gi" => 30,
        _ => {
            return Err(format!(
                "{s:?}: expected a number of bytes, optionally with Ki, Mi or Gi"
            ));
        }
    };
    let number: usize = digits
        .parse()
        .map_err(|_| format!("{s:?}: expected a number of bytes, optionally with Ki, Mi or Gi"))?;
    match number.checked_mul(1 << shift) {
        Some(bytes) if bytes > 0 => Ok(bytes),
        Some(_) => Err(format!("{s:?}: must be more than 0 bytes")),
        None => Err(format!("{s:?}: too large")),
    }
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("{s:?} is not GROUP=VERSION"))
}

fn main() -> ExitCode {
    tune_allocator();
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(async_main()),
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            ExitCode::from(2)
        }
    }
}

/// Fixes glibc malloc's thresholds at their initial defaults instead of letting them grow: mallopt(3) documents
/// that setting `M_MMAP_THRESHOLD` or `M_TRIM_THRESHOLD` turns their dynamic adjustment off. With it, the
/// first large buffer freed (a watch list page, a connection's read buffer) raises the mmap threshold to its size
/// and the trim threshold to twice that, after which such buffers come from the heap and the memory they leave
/// free is kept by the process: at 10,000 ManagedClusters and 30,000 AgentPools that was tens of MiB of resident
/// memory nothing used (BENCHMARKS.md, "Reconciler at scale"). Fixed: allocations of 128 KiB and more are
/// mapped and unmapped, and free memory over 256 KiB at the top of the heap goes back to the system. Other
/// allocators (musl, a `#[global_allocator]`) are not glibc's: nothing to do there.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets allocator parameters; it is called before any other thread exists.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 * 1024);
        }
    }
}

async fn async_main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::new(&args.log);
    match args.log_format {
        LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
        LogFormat::Json => tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_env_filter(filter)
            .init(),
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let mut kinds = controller::served_kinds(&args.versions);
    kinds.extend(aks_reconciler::actions::served_actions(&args.versions));
    for (group, version) in &args.versions {
        if !aks_api::KINDS
            .iter()
            .any(|k| (k.kube_group == group || k.group == group) && k.version == version)
        {
            return Err(format!(
                "--kube-version {group}={version}: no such group and version in this build"
            ));
        }
        if aks_api::KINDS
            .iter()
            .any(|k| (k.kube_group == group || k.group == group) && k.version == version && !k.served)
        {
            return Err(format!(
                "--kube-version {group}={version}: the version is not served (kept only to convert stored objects)"
            ));
        }
    }
    let metrics = Metrics::new();
    let readiness = Readiness::new();
    let probes = serve::serve_probes(args.metrics_listen, readiness.clone(), metrics.clone())
        .map_err(|e| format!("probes and metrics: {e}"))?;
    let webhook = if args.disable_webhook {
        None
    } else {
        let options = WebhookOptions {
            cert_file: args.tls_cert_file.clone(),
            key_file: args.tls_key_file.clone(),
            limits: Limits {
                max_body_bytes: args.webhook_max_body_bytes,
                max_concurrent_reviews: usize::from(args.webhook_max_concurrent_reviews),
                ..Limits::default()
            },
            ..WebhookOptions::new(args.webhook_listen)
        };
        let webhook = serve::serve_webhook(&options, Arc::new(aks_api::Converter))
            .map_err(|e| format!("conversion webhook: {e} (see --tls-cert-file, --tls-key-file, --disable-webhook)"))?;
        Some(webhook)
    };
    let kube_config = kube::Config::infer()
        .await
        .map_err(|e| format!("Kubernetes client configuration: {e}"))?;
    let client = kube::Client::try_from(kube_config.clone()).map_err(|e| format!("Kubernetes client: {e}"))?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let arm = ArmClient::new(
        http.clone(),
        args.arm_endpoint.clone(),
        RetryPolicy {
            max_attempts: args.max_attempts.max(1),
            ..RetryPolicy::default()
        },
    )
    .with_metrics(metrics.clone())
    .with_max_retry_after(Duration::from_secs(args.max_retry_after));
    let arm = match &args.arm_token_scope {
        Some(scope) => arm.with_token_scope(scope.clone()),
        None => arm,
    };
    let credentials: Arc<dyn CredentialProvider> = match &args.anonymous {
        Some(subscription_id) => Arc::new(StaticAccess(Access {
            subscription_id: subscription_id.clone(),
            bearer: None,
        })),
        None => {
            let env = |k: &str| std::env::var(k).ok();
            let defaults = CredentialDefaults::from_env(env)
                .and_then(|d| {
                    d.with_allowed_authority_hosts(args.allowed_authority_hosts.clone(), "--allowed-authority-hosts")
                })
                .map_err(|e| e.to_string())?;
            let global = CredentialConfig::from_env(env)
                .map_err(|e| {
                    tracing::warn!("no global credentials ({e}); only namespaces with a credential Secret work")
                })
                .ok();
            Arc::new(CredentialSources::new(Credentials::new(http), global, defaults))
        }
    };
    let rules = match &args.rules {
        None => aks_api::rules().map_err(|e| format!("the built-in rules document: {e}"))?,
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("--rules {}: {e}", path.display()))?;
            armgen_runtime::rules::Rules::from_json(&text).map_err(|e| format!("--rules {}: {e}", path.display()))?
        }
    };
    let reporter = Reporter {
        controller: "aks-reconciler".into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let shared = Arc::new(Shared {
        recorder: Some(Recorder::new(client.clone(), reporter)),
        client,
        arm,
        credentials,
        settings: Settings {
            resync: Duration::from_secs(args.resync_interval),
            wait: Duration::from_secs(args.wait_interval),
            poll: Duration::from_secs(args.poll_interval),
            failed: Duration::from_secs(args.failed_retry_interval),
            export_refresh: Duration::from_secs(args.export_refresh_interval),
            backoff: RequeueBackoff::new(
                Duration::from_secs(args.backoff_base),
                Duration::from_secs(args.backoff_max),
            ),
            claims: aks_reconciler::claims::Claims::new(args.claims_namespace.clone()),
            rules: Arc::new(rules),
            terminal_retry: Duration::from_secs(args.terminal_retry_interval),
            view_refresh: (args.view_refresh_interval > 0).then(|| Duration::from_secs(args.view_refresh_interval)),
            views: Default::default(),
        },
        metrics,
    });
    tracing::info!(endpoint = %args.arm_endpoint, kinds = kinds.len(), "starting");
    // Ready while running, and while standing by as a non-leader (the webhook serves either way).
    readiness.set(true);
    let mut outcome = Ok(());
    let leader = if args.leader_elect {
        // Unique per process (`<pod or host name>_<uuid>`): two replicas on one host never share an identity.
        let identity = leader::default_identity();
        let config = LeaderElection::new(
            &args.leader_election_id,
            &args.leader_election_namespace,
            identity.clone(),
        );
        // On its own thread, runtime and client: the Lease is renewed whatever load the webhook or the controllers
        // put on the main runtime.
        let handle = LeaderElector::spawn_dedicated(config, move || kube::Client::try_from(kube_config))
            .await
            .map_err(|e| e.to_string())?;
        tracing::info!(%identity, "waiting to become the leader");
        let acquired = tokio::select! {
            acquired = handle.acquired() => acquired,
            _ = shutdown_signal() => false,
        };
        if !acquired {
            readiness.set(false);
            handle.shutdown().await;
            return stop_servers(webhook, probes).await;
        }
        Some(handle)
    } else {
        None
    };
    let shutdown: futures::future::BoxFuture<'static, ()> = match &leader {
        Some(handle) => {
            let status = handle.status();
            Box::pin(async move {
                tokio::select! {
                    _ = shutdown_signal() => {}
                    _ = status.lost() => {}
                }
            })
        }
        None => Box::pin(shutdown_signal()),
    };
    let options = controller::RunOptions {
        namespace: args.namespace,
        concurrency: args.concurrency,
        shutdown: Some(shutdown),
    };
    controller::run(shared, kinds, options).await;
    readiness.set(false);
    if let Some(handle) = leader {
        if !handle.is_leader() {
            // Lost the lease: exit non-zero so the Deployment restarts this replica as a fresh candidate.
            outcome = Err("leadership lost; exiting so that another replica takes over".to_string());
        }
        handle.shutdown().await;
    }
    let stopped = stop_servers(webhook, probes).await;
    outcome.and(stopped)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn stop_servers(webhook: Option<serve::Server>, probes: serve::Server) -> Result<(), String> {
    let mut result = Ok(());
    for server in webhook.into_iter().chain([probes]) {
        if let Err(e) = server.shutdown().await {
            tracing::error!("{e}");
            result = Err(e.to_string());
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn byte_counts_with_binary_suffixes() {
        assert_eq!(parse_bytes("3Mi"), Ok(3 * 1024 * 1024));
        assert_eq!(parse_bytes("512Ki"), Ok(512 * 1024));
        assert_eq!(parse_bytes("1Gi"), Ok(1 << 30));
        assert_eq!(parse_bytes(" 1048576 "), Ok(1_048_576));
        for bad in ["", "0", "0Mi", "3MB", "3 Mi", "-1", "Mi", "99999999999999999999Gi"] {
            assert!(parse_bytes(bad).is_err(), "{bad:?}");
        }
    }
}
