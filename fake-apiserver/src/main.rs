//! `fake-apiserver`: the in-memory API server over plain HTTP, for benchmarks and demos that run the real
//! `aks-reconciler` binary in its own process, and for `kubectl` (it serves discovery): point a kubeconfig's
//! `server:` at the printed URL, or let `--kubeconfig FILE` write one. Not a real API server: no authentication,
//! no TLS, no validation — see the crate documentation.

use std::net::SocketAddr;

use fake_apiserver::FakeApiServer;

fn usage() -> ! {
    eprintln!(
        "usage: fake-apiserver [--listen 127.0.0.1:6443] [--kubeconfig FILE]\n\
         Serves an in-memory Kubernetes API over HTTP and prints its URL. --kubeconfig writes a kubeconfig for it\n\
         (context `fake-apiserver`, no credentials), e.g. for KUBECONFIG=FILE kubectl apply -f crd.yaml."
    );
    std::process::exit(2)
}

/// A kubeconfig for `url` without credentials.
fn kubeconfig(url: &str) -> String {
    const TEMPLATE: &str = "apiVersion: v1
kind: Config
clusters:
- name: fake-apiserver
  cluster:
    server: URL
contexts:
- name: fake-apiserver
  context:
    cluster: fake-apiserver
    user: fake-apiserver
    namespace: default
current-context: fake-apiserver
users:
- name: fake-apiserver
  user: {}
";
    TEMPLATE.replace("URL", url)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let mut listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 6443));
    let mut kubeconfig_file: Option<std::path::PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => match args.next().and_then(|a| a.parse().ok()) {
                Some(addr) => listen = addr,
                None => usage(),
            },
            "--kubeconfig" => match args.next() {
                Some(path) => kubeconfig_file = Some(path.into()),
                None => usage(),
            },
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fake-apiserver: cannot listen on {listen}: {e}");
            std::process::exit(1)
        }
    };
    let addr = listener.local_addr().unwrap_or(listen);
    let url = format!("http://{addr}");
    if let Some(path) = &kubeconfig_file
        && let Err(e) = std::fs::write(path, kubeconfig(&url))
    {
        eprintln!("fake-apiserver: cannot write the kubeconfig {}: {e}", path.display());
        std::process::exit(1)
    }
    println!("{url}");
    tokio::select! {
        () = FakeApiServer::new().serve(listener) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
