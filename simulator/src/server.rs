//! Serving over TCP with hyper, one task per connection, so that a [`crate::Fault::DropConnection`] can close a
//! connection without answering.

use std::net::SocketAddr;

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tower::Service;

use crate::Simulator;

/// A running server; it stops on [`Running::shutdown`] or when dropped.
#[derive(Debug)]
pub struct Running {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The bound address.
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl Running {
    /// Stops accepting, closes open connections and waits for the server task.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// The connection was dropped on purpose.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an injected fault")]
struct Dropped;

impl Simulator {
    /// Serves [`Self::router`] on `addr` (port 0 picks a free one) until the returned [`Running`] stops.
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<Running> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (stop, mut stopped) = watch::channel(false);
        let sim = self.clone();
        let router = self.router();
        let task = tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    _ = stopped.changed() => break,
                    accepted = listener.accept() => match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            tracing::warn!(error = %e, "accept failed");
                            continue;
                        }
                    },
                };
                let sim = sim.clone();
                let router = router.clone();
                let mut conn_stopped = stopped.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                        let sim = sim.clone();
                        let mut router = router.clone();
                        async move {
                            if sim.take_drop(req.method().as_str(), req.uri().path()) {
                                return Err(Dropped);
                            }
                            match router.call(req).await {
                                Ok(response) => Ok(response),
                                Err(never) => match never {},
                            }
                        }
                    });
                    let conn =
                        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    tokio::select! {
                        result = conn => {
                            if let Err(e) = result {
                                tracing::debug!(error = %e, "connection ended");
                            }
                        }
                        _ = conn_stopped.changed() => {}
                    }
                });
            }
        });
        Ok(Running {
            base_url: format!("http://{addr}"),
            addr,
            stop,
            task: Some(task),
        })
    }
}
