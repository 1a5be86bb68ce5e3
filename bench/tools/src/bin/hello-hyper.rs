//! Baseline: a bare "hello" server on the same hyper/tokio versions and the
//! same connection settings as polld (2 I/O threads, HTTP/1.1 keep-alive,
//! TCP_NODELAY), answering inline with no worker hand-off and no database.
//! Usage: hello-hyper ADDR
use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};

fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:0".into());
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&addr).await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap());
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            tokio::spawn(async move {
                let service = service_fn(|_req| async {
                    Ok::<_, Infallible>(
                        hyper::Response::builder()
                            .header("Content-Type", "text/plain")
                            .body(Full::new(Bytes::from_static(b"hello")))
                            .unwrap(),
                    )
                });
                let _ = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}
