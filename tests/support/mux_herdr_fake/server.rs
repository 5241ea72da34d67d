//! The fake's socket plumbing: one thread per connection, one request line, one reply line
//! (or the misbehaviour `Mode` asks for).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{handle, Mode, State};

pub(super) fn accept_loop(listener: UnixListener, state: Arc<Mutex<State>>, stop: Arc<AtomicBool>) {
    let mut workers = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((conn, _)) => {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let (st, sp) = (state.clone(), stop.clone());
                workers.push(std::thread::spawn(move || serve(conn, st, sp)));
                workers.retain(|w: &JoinHandle<()>| !w.is_finished());
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

fn serve(conn: UnixStream, state: Arc<Mutex<State>>, stop: Arc<AtomicBool>) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let (mode, tick, started) = {
        let st = state.lock().unwrap();
        (st.mode, st.tick, st.started)
    };
    // Some methods wait for the next tick of the server's loop, as Herdr 0.8.2's do.
    if let Some(period) = tick.filter(|p| !p.is_zero()) {
        let method = serde_json::from_str::<serde_json::Value>(line.trim_end())
            .ok()
            .and_then(|v| v["method"].as_str().map(str::to_string));
        let method = method.unwrap_or_default();
        let mut wait = Duration::ZERO;
        if super::TICK_METHODS.contains(&method.as_str()) {
            let since = started.elapsed().as_nanos();
            let p = period.as_nanos();
            wait = Duration::from_nanos((p - since % p) as u64);
            std::thread::sleep(wait);
        }
        state.lock().unwrap().tick_waits.push((method, wait));
    }
    let reply = match mode {
        Mode::Stall => {
            let end = Instant::now() + Duration::from_secs(10);
            while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
            return;
        }
        Mode::Garbage => "this is not json".to_string(),
        Mode::WrongId => json!({"id": "someone-else", "result": {"type": "ok"}}).to_string(),
        Mode::Normal => handle(&line, &mut state.lock().unwrap()).to_string(),
    };
    let mut w = conn;
    let _ = w.write_all(reply.as_bytes());
    let _ = w.write_all(b"\n");
}
