//! What the reconciler serves besides reconciling: the CRD conversion webhook over TLS, and the probes and
//! metrics over plain HTTP.
//!
//! - **Conversion webhook** ([`serve_webhook`]): `POST /convert` ([`armgen_runtime::webhook::router`]) over
//!   HTTPS with the certificate and key in two PEM files, by default where cert-manager and controller-runtime
//!   mount them ([`DEFAULT_CERT_FILE`], [`DEFAULT_KEY_FILE`]). Every [`WebhookOptions::reload_interval`] both files
//!   are read again; when their content changed, new connections get the new certificate and the listener and
//!   open connections stay as they are. A new pair that does not load (not PEM, no certificate, a key that does
//!   not match the certificate — as between the writes of the two files) is logged as an error and the previous
//!   certificate keeps serving; the next change is tried again. TLS is rustls with the `ring` provider (TLS 1.2
//!   and 1.3, ALPN `h2` and `http/1.1`). The webhook runs on every replica, leader or not: the API server calls
//!   any endpoint of the Service. It is unauthenticated (anything that reaches the port can call it), so it is
//!   bounded by [`WebhookOptions::limits`]: bodies over the size limit are refused with `413` before they are read,
//!   reviews beyond the concurrency limit with `429`, slow bodies with `408`, and conversions run on Tokio's
//!   blocking pool, so that the probes and the controllers on the same runtime keep answering (see
//!   [`armgen_runtime::webhook`]). Leader election runs on its own thread
//!   ([`crate::leader::LeaderElector::spawn_dedicated`]), so no webhook load delays the Lease renewals.
//! - **Probes and metrics** ([`serve_probes`], [`probes_router`]): `GET /healthz` answers `200 ok` while the
//!   process serves; `GET /readyz` answers `200 ok` once the caller set the [`Readiness`] flag (controllers
//!   running, or standing by as a non-leader) and `503` before; `GET /metrics` answers [`Metrics::encode`]'s
//!   text (see [`crate::metrics`]).
//!
//! Both servers are started on the caller's Tokio runtime and return a [`Server`]: its address (so `:0` works in
//! tests) and a graceful [`Server::shutdown`]. Dropping a [`Server`] also shuts it down.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use armgen_runtime::conversion::Converter;
use armgen_runtime::webhook::Limits;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum_server::tls_rustls::RustlsConfig;
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::metrics::{self, Metrics};

/// Where cert-manager's Certificate Secret is mounted for controller-runtime webhooks: the certificate.
pub const DEFAULT_CERT_FILE: &str = "/tmp/k8s-webhook-server/serving-certs/tls.crt";
/// The private key next to [`DEFAULT_CERT_FILE`].
pub const DEFAULT_KEY_FILE: &str = "/tmp/k8s-webhook-server/serving-certs/tls.key";
/// How often the binary checks the certificate files for a change.
pub const DEFAULT_RELOAD_INTERVAL: Duration = Duration::from_secs(5);
/// How long a shutdown waits for requests in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A certificate or key file could not be read.
    #[error("reading {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The certificate and key do not make a TLS configuration.
    #[error("TLS certificate {} and key {}: {message}", .cert.display(), .key.display())]
    Tls {
        cert: PathBuf,
        key: PathBuf,
        message: String,
    },
    /// The listen address could not be bound.
    #[error("listening on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    /// The server failed while running (or its task did).
    #[error("{what}: {message}")]
    Serve { what: &'static str, message: String },
}

/// Whether the process is ready (`/readyz`): a shared flag, false until [`Readiness::set`]. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// A flag that is not ready.
    pub fn new() -> Self {
        Readiness::default()
    }

    /// Sets the flag: ready once the controllers run or while standing by as a non-leader; not ready while
    /// starting or shutting down.
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::SeqCst);
    }

    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// The conversion webhook's listener and certificate files.
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    pub listen: SocketAddr,
    /// PEM: the server certificate first, then its chain.
    pub cert_file: PathBuf,
    /// PEM: the private key (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// How often both files are read to detect a new certificate.
    pub reload_interval: Duration,
    /// What one caller can make the webhook spend: body size, concurrent reviews, time to send a body
    /// ([`armgen_runtime::webhook::Limits`]).
    pub limits: Limits,
}

impl WebhookOptions {
    /// The defaults of the binary on `listen`: [`DEFAULT_CERT_FILE`], [`DEFAULT_KEY_FILE`],
    /// [`DEFAULT_RELOAD_INTERVAL`], the default [`Limits`].
    pub fn new(listen: SocketAddr) -> Self {
        WebhookOptions {
            listen,
            cert_file: DEFAULT_CERT_FILE.into(),
            key_file: DEFAULT_KEY_FILE.into(),
            reload_interval: DEFAULT_RELOAD_INTERVAL,
            limits: Limits::default(),
        }
    }
}

/// A running server; dropping it shuts it down too.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    what: &'static str,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<io::Result<()>>,
}

impl Server {
    /// The address the server listens on (the port chosen by the system for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections, waits up to [`SHUTDOWN_GRACE`] for requests in flight, and reports how the
    /// server ended.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            // The task may have ended already; its result below says how.
            let _ = stop.send(());
        }
        let what = self.what;
        match (&mut self.task).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(ServeError::Serve {
                what,
                message: e.to_string(),
            }),
            Err(e) => Err(ServeError::Serve {
                what,
                message: format!("the server task failed: {e}"),
            }),
        }
    }
}

/// Reads a certificate and key pair into a rustls server configuration (`ring` provider; ALPN `h2`,
/// `http/1.1`).
pub fn load_tls_config(cert_file: &Path, key_file: &Path) -> Result<Arc<ServerConfig>, ServeError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| ServeError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    tls_config(&read(cert_file)?, &read(key_file)?, cert_file, key_file)
}

fn tls_config(cert_pem: &[u8], key_pem: &[u8], cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, ServeError> {
    let fail = |message: String| ServeError::Tls {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        message,
    };
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(format!("the certificate file is not PEM: {e}")))?;
    if chain.is_empty() {
        return Err(fail("the certificate file has no CERTIFICATE block".into()));
    }
    let private_key =
        PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| fail(format!("the key file has no private key: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, private_key)
        .map_err(|e| fail(format!("the key does not go with the certificate: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, ServeError> {
    let listener = std::net::TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
    listener
        .set_nonblocking(true)
        .map_err(|source| ServeError::Bind { addr, source })?;
    Ok(listener)
}

/// Starts the conversion webhook for `converter` on `options.listen` over TLS, and the certificate reloader.
/// Fails when the certificate files do not load now or the address cannot be bound. Call it inside a Tokio
/// runtime.
pub fn serve_webhook(options: &WebhookOptions, converter: Arc<dyn Converter>) -> Result<Server, ServeError> {
    let cert_pem = std::fs::read(&options.cert_file).map_err(|source| ServeError::Read {
        path: options.cert_file.clone(),
        source,
    })?;
    let key_pem = std::fs::read(&options.key_file).map_err(|source| ServeError::Read {
        path: options.key_file.clone(),
        source,
    })?;
    let tls = RustlsConfig::from_config(tls_config(&cert_pem, &key_pem, &options.cert_file, &options.key_file)?);
    let listener = bind(options.listen)?;
    let addr = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: options.listen,
        source,
    })?;
    let handle = axum_server::Handle::new();
    let server = axum_server::from_tcp_rustls(listener, tls.clone())
        .map_err(|source| ServeError::Bind { addr, source })?
        .handle(handle.clone());
    let reloader = tokio::spawn(reload_certificates(tls, options.clone(), (cert_pem, key_pem)));
    let app = armgen_runtime::webhook::router_with_limits(converter, options.limits);
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(async move {
        let serving = server.serve(app.into_make_service());
        tokio::pin!(serving);
        let result = tokio::select! {
            result = &mut serving => result,
            _ = stopped => {
                handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
                serving.await
            }
        };
        reloader.abort();
        result
    });
    tracing::info!(%addr, cert = %options.cert_file.display(), "serving the conversion webhook over TLS");
    Ok(Server {
        addr,
        what: "the conversion webhook",
        stop: Some(stop),
        task,
    })
}

/// Reads both files every `reload_interval`; on a change, loads them and swaps the certificate, or logs why
/// not and keeps the current one. `seen` is the content currently tried.
async fn reload_certificates(tls: RustlsConfig, options: WebhookOptions, mut seen: (Vec<u8>, Vec<u8>)) {
    let mut unreadable: Option<String> = None;
    let mut ticks = tokio::time::interval(options.reload_interval.max(Duration::from_millis(10)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let read = async {
            let cert = tokio::fs::read(&options.cert_file)
                .await
                .map_err(|e| format!("reading {}: {e}", options.cert_file.display()))?;
            let key = tokio::fs::read(&options.key_file)
                .await
                .map_err(|e| format!("reading {}: {e}", options.key_file.display()))?;
            Ok::<_, String>((cert, key))
        };
        let current = match read.await {
            Ok(current) => current,
            Err(message) => {
                if unreadable.as_ref() != Some(&message) {
                    tracing::error!("TLS certificate reload: {message}; keeping the current certificate");
                    unreadable = Some(message);
                }
                continue;
            }
        };
        unreadable = None;
        if current == seen {
            continue;
        }
        match tls_config(&current.0, &current.1, &options.cert_file, &options.key_file) {
            Ok(config) => {
                tls.reload_from_config(config);
                tracing::info!(cert = %options.cert_file.display(), "TLS certificate reloaded");
            }
            Err(e) => tracing::error!("TLS certificate reload: {e}; keeping the current certificate"),
        }
        seen = current;
    }
}

/// The probes and metrics routes: `GET /healthz`, `GET /readyz`, `GET /metrics`.
pub fn probes_router(readiness: Readiness, metrics: Metrics) -> Router {
    Router::new()
        .route("/healthz", get(|| async { (StatusCode::OK, "ok") }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state((readiness, metrics))
}

async fn readyz(State((readiness, _)): State<(Readiness, Metrics)>) -> Response {
    if readiness.is_ready() {
        (StatusCode::OK, "ok").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready").into_response()
    }
}

async fn metrics_text(State((_, metrics)): State<(Readiness, Metrics)>) -> Response {
    match metrics.encode() {
        Ok(text) => ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("encoding the metrics failed: {e}"),
        )
            .into_response(),
    }
}

/// Starts the probes and metrics server ([`probes_router`]) on `listen` over plain HTTP. Call it inside a Tokio
/// runtime.
pub fn serve_probes(listen: SocketAddr, readiness: Readiness, metrics: Metrics) -> Result<Server, ServeError> {
    let listener =
        tokio::net::TcpListener::from_std(bind(listen)?).map_err(|source| ServeError::Bind { addr: listen, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr: listen, source })?;
    let app = probes_router(readiness, metrics);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    tracing::info!(%addr, "serving /healthz, /readyz and /metrics");
    Ok(Server {
        addr,
        what: "the probes and metrics server",
        stop: Some(stop),
        task,
    })
}
