//! `aks-reconciler`: the controller binary. Every flag also reads an environment variable (shown by `--help`).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RetryPolicy};
use aks_reconciler::controller;
use aks_reconciler::credentials::{CredentialConfig, CredentialDefaults, Credentials};
use aks_reconciler::reconcile::{Access, CredentialProvider, Settings, Shared, StaticAccess};
use aks_reconciler::sources::CredentialSources;
use clap::Parser;
use kube::runtime::events::{Recorder, Reporter};

/// Reconciles the generated AKS custom resources against Azure Resource Manager.
///
/// Credentials: the global default comes from the environment (AZURE_SUBSCRIPTION_ID, AZURE_TENANT_ID,
/// AZURE_CLIENT_ID, and AZURE_FEDERATED_TOKEN_FILE for workload identity, AZURE_USE_MANAGED_IDENTITY=true for
/// managed identity, or AZURE_CLIENT_SECRET; AZURE_AUTHORITY_HOST, AZURE_IDENTITY_ENDPOINT). A Secret named
/// `armgen-credential` in a namespace overrides it there, and the annotation `armgen.azure.com/credential-from:
/// <secret>` on a resource overrides both. Kubernetes access: in-cluster service account or KUBECONFIG.
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
    #[arg(long = "kube-version", value_name = "GROUP=VERSION", value_parser = parse_pair)]
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
    /// Attempts per ARM request on 429, 5xx and connection errors, the first included.
    #[arg(long, env = "ARM_MAX_ATTEMPTS", default_value_t = 4)]
    max_attempts: u32,
    /// Send no bearer token, with this subscription ID (for a local ARM simulator only).
    #[arg(long, value_name = "SUBSCRIPTION_ID")]
    anonymous: Option<String>,
    /// Log filter (tracing EnvFilter syntax), e.g. `info` or `aks_reconciler=debug`.
    #[arg(long, env = "RUST_LOG", default_value = "info")]
    log: String,
}

fn parse_pair(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("{s:?} is not GROUP=VERSION"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(&args.log))
        .init();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let kinds = controller::served_kinds(&args.versions);
    for (group, version) in &args.versions {
        if !aks_api::KINDS
            .iter()
            .any(|k| (k.kube_group == group || k.group == group) && k.version == version)
        {
            return Err(format!(
                "--version {group}={version}: no such group and version in this build"
            ));
        }
    }
    let client = kube::Client::try_default()
        .await
        .map_err(|e| format!("Kubernetes client: {e}"))?;
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
    );
    let credentials: Arc<dyn CredentialProvider> = match &args.anonymous {
        Some(subscription_id) => Arc::new(StaticAccess(Access {
            subscription_id: subscription_id.clone(),
            bearer: None,
        })),
        None => {
            let env = |k: &str| std::env::var(k).ok();
            let defaults = CredentialDefaults::from_env(env).map_err(|e| e.to_string())?;
            let global = CredentialConfig::from_env(env)
                .map_err(|e| {
                    tracing::warn!("no global credentials ({e}); only namespaces with a credential Secret work")
                })
                .ok();
            Arc::new(CredentialSources::new(Credentials::new(http), global, defaults))
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
            ..Settings::default()
        },
    });
    tracing::info!(endpoint = %args.arm_endpoint, kinds = kinds.len(), "starting");
    controller::run(shared, kinds, args.namespace).await;
    Ok(())
}
