//! Real loopback servers for the probe tests: each binds 127.0.0.1:0 and plays one behaviour.
//!
//! Servers run on their own multi-thread runtime so client timing is not disturbed by them.
//! A `Tracker` counts accepted-and-open connections from the kernel's view (TCP_INFO state),
//! which stays exact even when the server's own tasks lag behind the client's closes.

#![allow(dead_code)]

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What a server does with each connection.
#[derive(Clone)]
pub enum Behaviour {
    /// Read the request, write these bytes, close.
    Respond(Vec<u8>),
    /// Read the request, wait, then respond.
    RespondAfter(Duration, Vec<u8>),
    /// Read the request and never answer; hold the connection until the client goes.
    Silent,
    /// Write `head` at once, then `body` one byte per `every`.
    Drip {
        head: Vec<u8>,
        body: Vec<u8>,
        every: Duration,
    },
    /// Reset the connection right after accepting (SO_LINGER 0, close).
    Reset,
    /// Close right after accepting, without a byte.
    CloseAtOnce,
}

/// One running server.
pub struct Server {
    pub port: u16,
    /// Connections accepted.
    pub accepted: Arc<AtomicUsize>,
    /// Request heads received (complete `\r\n\r\n`).
    pub requests: Arc<AtomicUsize>,
    /// The last request head, as text.
    pub last_request: Arc<Mutex<String>>,
}

/// Counts connections that are accepted and still open (both directions not yet closed).
#[derive(Default)]
pub struct Tracker {
    open: Mutex<Vec<std::net::TcpStream>>,
    peak: AtomicUsize,
}

impl Tracker {
    /// Most connections open at once, sampled at every accept.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// Connections open now.
    pub fn open_now(&self) -> usize {
        let mut open = self.open.lock().unwrap();
        open.retain(still_open);
        open.len()
    }

    fn add(&self, s: std::net::TcpStream) {
        let mut open = self.open.lock().unwrap();
        open.retain(still_open);
        open.push(s);
        self.peak.fetch_max(open.len(), Ordering::SeqCst);
    }
}

/// ESTABLISHED or FIN_WAIT (we closed, the client has not): the client still holds it.
fn still_open(s: &std::net::TcpStream) -> bool {
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a valid fd, a correctly sized out-buffer and its length.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut libc::tcp_info as *mut libc::c_void,
            &mut len,
        )
    };
    // 1 ESTABLISHED, 2 SYN_SENT, 3 SYN_RECV, 4 FIN_WAIT1, 5 FIN_WAIT2.
    rc == 0 && matches!(info.tcpi_state, 1 | 3 | 4 | 5)
}

/// A runtime hosting servers; dropping it stops them all.
pub struct Servers {
    rt: tokio::runtime::Runtime,
}

impl Default for Servers {
    fn default() -> Self {
        Self::new()
    }
}

impl Servers {
    pub fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        Servers { rt }
    }

    /// Servers on one current-thread runtime whose clock is paused: the code under test runs on
    /// it too (`block_on`), so every timer (a server's wait or drip, a probe's deadline, a
    /// batch's budget) fires in the order of a virtual clock that jumps when all are idle. A
    /// budget or deadline is then exact, whatever the machine's load. Only for outcomes that
    /// do not depend on a reply arriving before a timer: an idle runtime moves on to the next
    /// timer at once, without waiting for a real socket.
    pub fn paused() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        Servers { rt }
    }

    /// Run `f` on the servers' runtime (with `paused`, the only way they run).
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Start one server; `tracker` (not allowed with `Reset`, whose close must be real) counts
    /// open connections.
    pub fn start(&self, behaviour: Behaviour, tracker: Option<Arc<Tracker>>) -> Server {
        assert!(
            !(matches!(behaviour, Behaviour::Reset) && tracker.is_some()),
            "a tracked clone would keep the socket from resetting"
        );
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let port = std_listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let last_request = Arc::new(Mutex::new(String::new()));
        let server = Server {
            port,
            accepted: accepted.clone(),
            requests: requests.clone(),
            last_request: last_request.clone(),
        };
        self.rt.spawn(async move {
            let listener = TcpListener::from_std(std_listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                accepted.fetch_add(1, Ordering::SeqCst);
                let stream = match &tracker {
                    Some(t) => {
                        let std_stream = stream.into_std().unwrap();
                        t.add(std_stream.try_clone().unwrap());
                        TcpStream::from_std(std_stream).unwrap()
                    }
                    None => stream,
                };
                let b = behaviour.clone();
                let (req, last) = (requests.clone(), last_request.clone());
                tokio::spawn(serve(stream, b, req, last));
            }
        });
        server
    }
}

async fn read_request(s: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    let fut = async {
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 8192 {
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        true
    };
    match tokio::time::timeout(Duration::from_secs(3), fut).await {
        Ok(true) => Some(String::from_utf8_lossy(&buf).into_owned()),
        _ => None,
    }
}

async fn serve(
    mut s: TcpStream,
    b: Behaviour,
    requests: Arc<AtomicUsize>,
    last: Arc<Mutex<String>>,
) {
    match b {
        Behaviour::Reset => {
            // SO_LINGER 0 turns close into a RST (tokio's own setter is deprecated).
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: a valid fd and a correctly sized option value.
            unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    &linger as *const libc::linger as *const libc::c_void,
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                );
            }
            drop(s);
            return;
        }
        Behaviour::CloseAtOnce => {
            let _ = s.shutdown().await;
            return;
        }
        _ => {}
    }
    let Some(head) = read_request(&mut s).await else {
        return;
    };
    requests.fetch_add(1, Ordering::SeqCst);
    *last.lock().unwrap() = head;
    match b {
        Behaviour::Respond(bytes) => {
            let _ = s.write_all(&bytes).await;
            let _ = s.shutdown().await;
        }
        Behaviour::RespondAfter(wait, bytes) => {
            tokio::time::sleep(wait).await;
            let _ = s.write_all(&bytes).await;
            let _ = s.shutdown().await;
        }
        Behaviour::Silent => {
            // Hold until the client closes (bounded, so nothing outlives the test for long).
            let mut sink = [0u8; 256];
            let _ = tokio::time::timeout(Duration::from_secs(10), async {
                while let Ok(n) = s.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            })
            .await;
        }
        Behaviour::Drip { head, body, every } => {
            if s.write_all(&head).await.is_err() {
                return;
            }
            for byte in body {
                tokio::time::sleep(every).await;
                if s.write_all(&[byte]).await.is_err() {
                    return;
                }
            }
            let _ = s.shutdown().await;
        }
        Behaviour::Reset | Behaviour::CloseAtOnce => {}
    }
}

/// A full HTTP/1.1 response with Content-Length.
pub fn http(status: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The healthy answer of the pi whose session id is `sid`.
pub fn healthy(sid: &str) -> Behaviour {
    Behaviour::Respond(http(
        "200 OK",
        "",
        &format!(r#"{{"version":1,"sessionId":"{sid}"}}"#),
    ))
}

/// Ports that were just bound and released: connecting to them is refused.
pub fn closed_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<_> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// The system clock in ms, for `now_ms` arguments.
pub fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
