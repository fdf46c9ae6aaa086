//! A tiny HTTP/1.1 server for tests: `GET` only, one connection at a time, `Connection: close`, fixed replies
//! by path; it records the path of every request. Started on a free port of 127.0.0.1 and stopped when dropped.
//! A few lines on `std::net` rather than axum: the tests need replies a framework does not make (a body shorter
//! than its announced length, a body without a length), and the generator does not depend on a runtime.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the server answers for a path.
#[derive(Clone)]
pub enum Reply {
    /// 200 with this body and its `Content-Length`.
    Body(Vec<u8>),
    /// 200 announcing this body's length, then half of it and the connection closed.
    Truncated(Vec<u8>),
    /// 200 with this body and no `Content-Length`: the body ends when the connection closes.
    NoLength(Vec<u8>),
}

pub struct Server {
    /// The base URL: `http://127.0.0.1:<port><prefix>`.
    pub url: String,
    routes: Arc<BTreeMap<String, Reply>>,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `routes` (by request path, which starts with `prefix`); other paths are 404.
    pub fn start(prefix: &str, routes: BTreeMap<String, Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let routes = Arc::new(routes);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (routes, requests, stop) = (routes.clone(), requests.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &routes, &requests);
                    }
                }
            })
        };
        Server {
            url: format!("http://{addr}{prefix}"),
            routes,
            requests,
            stop,
            addr,
            thread: Some(thread),
        }
    }

    /// A port nothing listens on (bound, then released).
    pub fn closed_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }

    /// The paths served.
    pub fn routes(&self) -> impl Iterator<Item = &String> {
        self.routes.keys()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(mut stream: TcpStream, routes: &BTreeMap<String, Reply>, requests: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 65536 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.split_whitespace();
    let (Some(_method), Some(path)) = (words.next(), words.next()) else {
        return;
    };
    requests.lock().expect("lock").push(path.to_string());
    let (status, length, body): (&str, Option<usize>, &[u8]) = match routes.get(path) {
        Some(Reply::Body(b)) => ("200 OK", Some(b.len()), b),
        Some(Reply::Truncated(b)) => ("200 OK", Some(b.len()), &b[..b.len() / 2]),
        Some(Reply::NoLength(b)) => ("200 OK", None, b),
        None => ("404 Not Found", Some(0), b""),
    };
    let mut response = format!("HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: application/json\r\n");
    if let Some(n) = length {
        response.push_str(&format!("Content-Length: {n}\r\n"));
    }
    response.push_str("\r\n");
    let _ = stream.write_all(response.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}
