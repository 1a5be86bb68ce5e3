//! The connection layer from outside: real sockets against `Server`.

use super::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Mutex;

/// Sends one request (`METHOD PATH`, extra header lines) and reads the
/// whole answer.
fn send(addr: SocketAddr, line: &str, headers: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "{line} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn get(addr: SocketAddr, path: &str) -> String {
    send(addr, &format!("GET {path}"), "")
}

#[test]
fn a_panicking_handler_answers_500_and_the_server_keeps_serving() {
    let config = ServerConfig::new(1, TrustedProxies::loopback(), 1024);
    let server = Server::bind("127.0.0.1:0", config).unwrap();
    let addr = server.address().tcp().unwrap();
    let stop = server.shutdown_handle();
    let t = std::thread::spawn(move || {
        server.run(|| {
            Ok(|r: &Request| {
                if r.path == "/boom" {
                    panic!("deliberate test panic");
                }
                Response::new(200).with_body(b"fine".to_vec())
            })
        })
    });
    let boom = get(addr, "/boom");
    assert!(boom.starts_with("HTTP/1.1 500"), "{boom}");
    assert!(boom.contains("application/problem+json"), "{boom}");
    assert!(!boom.contains("deliberate"), "panic text must not reach the client: {boom}");
    // The server survived the panic, with a fresh handler state.
    for _ in 0..3 {
        let ok = get(addr, "/ok");
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(ok.to_ascii_lowercase().contains("x-content-type-options: nosniff"), "{ok}");
    }
    stop.trigger();
    t.join().unwrap().unwrap();
}

fn get_as(addr: SocketAddr, path: &str, client: &str) -> String {
    send(addr, &format!("GET {path}"), &format!("X-Forwarded-For: {client}\r\n"))
}

/// The gate from outside: with one request running
/// at a time, a client whose requests took much CPU waits behind a
/// quiet client's request, though its own came first.
#[test]
fn a_busy_clients_requests_wait_behind_a_quiet_clients() {
    let mut config = ServerConfig::new(1, TrustedProxies::loopback(), 1024);
    config.blocking = true; // one request at a time, on a thread that may wait
    let server = Server::bind("127.0.0.1:0", config).unwrap();
    let addr = server.address().tcp().unwrap();
    let stop = server.shutdown_handle();
    let (seen_tx, seen) = std::sync::mpsc::channel::<String>();
    let (go_tx, go) = std::sync::mpsc::channel::<()>();
    let go = Arc::new(Mutex::new(go));
    let t = std::thread::spawn(move || {
        server.run(move || {
            let (seen, go) = (seen_tx.clone(), go.clone());
            Ok(move |r: &Request| {
                seen.send(r.path.clone()).unwrap();
                if r.path == "/heavy" {
                    // Past BUSY_FROM of CPU.
                    let t0 = handlers_cpu_now();
                    while handlers_cpu_now() < t0 + BUSY_FROM * 2 {}
                }
                if r.path == "/hold" {
                    // Held until the test has queued the others.
                    go.lock().unwrap().recv().unwrap();
                }
                Response::new(200)
            })
        })
    });
    assert!(get_as(addr, "/heavy", "198.51.100.1").starts_with("HTTP/1.1 200"));
    assert_eq!(seen.recv_timeout(Duration::from_secs(10)).unwrap(), "/heavy");
    let busy = std::thread::spawn(move || get_as(addr, "/hold", "198.51.100.1"));
    assert_eq!(seen.recv_timeout(Duration::from_secs(10)).unwrap(), "/hold");
    // While it runs: the busy client's next two, then a quiet client's.
    let mut waiting = Vec::new();
    for (path, client) in [("/busy-1", "198.51.100.1"), ("/busy-2", "198.51.100.1"), ("/quiet", "198.51.100.2")] {
        waiting.push(std::thread::spawn(move || get_as(addr, path, client)));
        std::thread::sleep(Duration::from_millis(200));
    }
    go_tx.send(()).unwrap();
    let order: Vec<String> = (0..3).map(|_| seen.recv_timeout(Duration::from_secs(10)).unwrap()).collect();
    assert_eq!(order, ["/quiet", "/busy-1", "/busy-2"], "the quiet client's request first");
    for w in waiting.into_iter().chain([busy]) {
        assert!(w.join().unwrap().starts_with("HTTP/1.1 200"));
    }
    stop.trigger();
    t.join().unwrap().unwrap();
}

fn handlers_cpu_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[test]
fn a_handler_that_cannot_be_made_stops_the_server_at_once() {
    let server = Server::bind("127.0.0.1:0", ServerConfig::new(2, TrustedProxies::loopback(), 1024)).unwrap();
    let err = server.run(|| -> anyhow::Result<fn(&Request) -> Response> { Err(anyhow!("no database")) }).unwrap_err();
    assert!(err.to_string().contains("no database"), "{err}");
}

fn post(addr: SocketAddr, path: &str) -> String {
    send(addr, &format!("POST {path}"), "Content-Length: 0\r\n")
}

/// A request that is not `inline` (here: every POST) waits on a blocking
/// thread, never on a thread that reads connections: with more such
/// requests waiting than there are cores, a read is still answered.
#[test]
fn requests_that_wait_do_not_hold_the_threads_that_read_connections() {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let held = cores + 1;
    let server = Server::bind("127.0.0.1:0", ServerConfig::new(held, TrustedProxies::loopback(), 1024)).unwrap();
    let addr = server.address().tcp().unwrap();
    let stop = server.shutdown_handle();
    let (started_tx, started) = std::sync::mpsc::channel::<()>();
    let release = Arc::new((Mutex::new(false), std::sync::Condvar::new()));
    let t = std::thread::spawn({
        let release = release.clone();
        move || {
            server.run(move || {
                let (started, release) = (started_tx.clone(), release.clone());
                Ok(move |r: &Request| {
                    if r.method == Method::Post {
                        started.send(()).unwrap();
                        let (lock, cv) = &*release;
                        let mut go = lock.lock().unwrap();
                        while !*go {
                            go = cv.wait(go).unwrap();
                        }
                    }
                    Response::new(200)
                })
            })
        }
    });
    let posts: Vec<_> = (0..held).map(|_| std::thread::spawn(move || post(addr, "/write"))).collect();
    for _ in 0..held {
        started.recv_timeout(Duration::from_secs(10)).expect("every POST runs at once, on a blocking thread");
    }
    // More requests wait than there are cores, and a read is answered.
    assert!(get(addr, "/read").starts_with("HTTP/1.1 200"));
    let (lock, cv) = &*release;
    *lock.lock().unwrap() = true;
    cv.notify_all();
    for p in posts {
        assert!(p.join().unwrap().starts_with("HTTP/1.1 200"));
    }
    stop.trigger();
    t.join().unwrap().unwrap();
}

/// A busy client's requests run apart, on threads at a lower priority,
/// once another client is about; before that, and a quiet client's
/// always, on the thread that read them.
#[test]
fn a_busy_clients_requests_run_apart_at_a_lower_priority_while_others_are_about() {
    let server = Server::bind("127.0.0.1:0", ServerConfig::new(2, TrustedProxies::loopback(), 1024)).unwrap();
    let addr = server.address().tcp().unwrap();
    let stop = server.shutdown_handle();
    let t = std::thread::spawn(move || {
        server.run(|| {
            Ok(|r: &Request| {
                if r.path == "/heavy" {
                    let t0 = handlers_cpu_now();
                    while handlers_cpu_now() < t0 + BUSY_FROM * 2 {}
                }
                let name = std::thread::current().name().unwrap_or("").to_owned();
                let nice = crate::priority::own().unwrap_or(0);
                Response::new(200).with_body(format!("{name} {nice}").into_bytes())
            })
        })
    });
    let ran_on = |path: &str, client: &str| {
        let answer = get_as(addr, path, client);
        let body = answer.rsplit("\r\n\r\n").next().unwrap().to_owned();
        let (name, nice) = body.split_once(' ').unwrap();
        (name.to_owned(), nice.parse::<i32>().unwrap())
    };
    let (busy, quiet) = ("198.51.100.7", "198.51.100.8");
    let (first, nice) = ran_on("/heavy", busy);
    assert_eq!(first, "anonpoll-io", "a new client runs inline");
    assert_eq!(ran_on("/light", busy).0, "anonpoll-io", "busy, but alone: inline");
    assert_eq!(ran_on("/light", quiet).0, "anonpoll-io", "a quiet client runs inline");
    let (apart, lowered) = ran_on("/light", busy);
    assert_eq!(apart, "anonpoll-busy", "busy while another client is about: apart");
    let allowed = std::thread::spawn(|| crate::priority::shift_own(BUSY_NICE).is_ok()).join().unwrap();
    if allowed {
        assert_eq!(lowered, (nice + BUSY_NICE).min(19), "at a lower priority");
    }
    assert_eq!(ran_on("/light", quiet).0, "anonpoll-io", "the quiet client still inline");
    stop.trigger();
    t.join().unwrap().unwrap();
}
