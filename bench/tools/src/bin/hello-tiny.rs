//! Baseline: a bare tiny_http 0.12 "hello" server (the design card's original
//! choice), 8 threads calling `recv()` as polld's old layer did.
//! Usage: hello-tiny ADDR
use std::sync::Arc;

fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into());
    let server = Arc::new(tiny_http::Server::http(&addr).unwrap());
    println!("listening on {}", server.server_addr());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let server = server.clone();
            std::thread::spawn(move || {
                while let Ok(req) = server.recv() {
                    let _ = req.respond(tiny_http::Response::from_string("hello"));
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}
