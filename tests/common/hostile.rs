//! Helpers for the hostile-client tests: connections from chosen loopback
//! source addresses (127.x.y.z are all this machine, and polld tells them
//! apart as clients), and rank statistics for the ballot-order scan.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::OnceLock;

/// A blocking connection to `addr` from the local address `from`.
pub fn connect_from(from: IpAddr, addr: &str) -> std::io::Result<TcpStream> {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_io().build().expect("a tokio runtime for connecting")
    });
    let target: SocketAddr = addr.parse().map_err(std::io::Error::other)?;
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(from, 0))?;
        socket.connect(target).await
    })?;
    let stream = stream.into_std()?;
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// The loopback address 127.a.b.c.
pub fn loopback(a: u8, b: u8, c: u8) -> IpAddr {
    IpAddr::from([127, a, b, c])
}

/// Spearman's rank correlation of `ys` against their index (0, 1, 2, ...);
/// `ys` must be distinct.
pub fn rank_correlation(ys: &[usize]) -> f64 {
    let n = ys.len();
    if n < 2 {
        return 0.0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| ys[i]);
    let mut rank = vec![0.0; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r as f64;
    }
    let mean = (n as f64 - 1.0) / 2.0;
    let num: f64 = (0..n).map(|i| (i as f64 - mean) * (rank[i] - mean)).sum();
    let den: f64 = (0..n).map(|i| (i as f64 - mean).powi(2)).sum();
    num / den
}
