//! `arm-simulator`: serves the ARM simulator over HTTP for demos.

use std::net::SocketAddr;
use std::path::PathBuf;

use arm_simulator::{AuthConfig, Simulator, SimulatorConfig};
use armgen_runtime::rules::Rules;
use clap::Parser;

/// An Azure Resource Manager simulator serving every resource type and API version of the generated AKS
/// registry. Admin endpoints: POST /_simulator/faults (a JSON fault rule), GET /_simulator/traffic,
/// GET /_simulator/resources, GET /_simulator/counts (requests by method, polls, view GETs, stored resources).
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// The address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// How many polls of an asynchronous operation answer InProgress before it ends.
    #[arg(long, default_value_t = 2)]
    operation_polls: u32,
    /// The Retry-After header (seconds) of asynchronous operations.
    #[arg(long, default_value_t = 1)]
    retry_after: u64,
    /// On Ctrl-C, write the traffic here, one `oav validate-traffic` JSON file per exchange.
    #[arg(long)]
    traffic_dir: Option<PathBuf>,
    /// Keep no traffic log (request counts only, GET /_simulator/counts): for long runs such as benchmarks.
    #[arg(long, conflicts_with = "traffic_dir")]
    no_traffic: bool,
    /// The location of operations for resources without one.
    #[arg(long, default_value = "westeurope")]
    location: String,
    /// Require bearer tokens, issued by fake token endpoints for this Entra ID tenant (needs --client-id).
    #[arg(long, requires = "client_id")]
    tenant_id: Option<String>,
    /// The client ID the token endpoints accept.
    #[arg(long, requires = "tenant_id")]
    client_id: Option<String>,
    /// The client secret the Entra ID token endpoint accepts.
    #[arg(long, requires = "tenant_id")]
    client_secret: Option<String>,
    /// The federated token (client assertion) the Entra ID token endpoint accepts.
    #[arg(long, requires = "tenant_id")]
    federated_token: Option<String>,
    /// Issue tokens from the fake IMDS endpoint (managed identity).
    #[arg(long, requires = "tenant_id")]
    managed_identity: bool,
    /// A rules document (JSON, the schema of the generated `generated/rules.json`) to enforce instead of the
    /// generated one; `{"groups": []}` enforces none.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Refuse a PUT of a resource whose resource group was not created here (404 ResourceGroupNotFound), or of an
    /// extension resource (a role assignment) whose scope was not (404 ResourceNotFound).
    #[arg(long)]
    require_resource_groups: bool,
    /// The most items a page of a pageable view (the machines of a pool) holds; more follow through `nextLink`.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    page_size: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let auth = match (args.tenant_id, args.client_id) {
        (Some(tenant_id), Some(client_id)) => Some(AuthConfig {
            tenant_id,
            client_id,
            federated_token: args.federated_token,
            client_secret: args.client_secret,
            managed_identity: args.managed_identity,
        }),
        _ => None,
    };
    let rules = match &args.rules {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("--rules {}: {e}", path.display()))?;
            Some(Rules::from_json(&text).map_err(|e| format!("--rules {}: {e}", path.display()))?)
        }
        None => None,
    };
    let sim = Simulator::new(SimulatorConfig {
        operation_polls: args.operation_polls,
        retry_after_secs: args.retry_after,
        auth,
        location_default: args.location,
        record_traffic: !args.no_traffic,
        rules,
        require_resource_groups: args.require_resource_groups,
        page_size: usize::try_from(args.page_size).unwrap_or(usize::MAX),
    });
    if let Err(e) = sim.rules() {
        return Err(e.into());
    }
    let running = sim.serve(args.listen).await?;
    tracing::info!(base_url = %running.base_url, "ARM simulator listening; Ctrl-C stops");
    tokio::signal::ctrl_c().await?;
    running.shutdown().await;
    if let Some(dir) = args.traffic_dir {
        let n = sim.write_traffic(&dir)?;
        tracing::info!(files = n, dir = %dir.display(), "traffic written");
    }
    Ok(())
}
