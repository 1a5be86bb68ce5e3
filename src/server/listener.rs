//! Where polld listens: a TCP address, or a Unix socket for the proxy in
//! front on the same machine (`--listen unix:/run/anonpoll/polld.sock`).
//!
//! Why: the proxy tells polld who the client is (`X-Forwarded-For`), and
//! every per-client limit rests on that. Over loopback TCP, any local
//! process can reach polld's port and claim a new address per request; a
//! Unix socket is reached only by the processes its file's permissions let
//! in (polld's user and group: Caddy's user is put in that group), so the
//! shipped setup believes forwarded addresses from the socket alone, and
//! needs no `--trusted-proxy`.
//!
//! Promises:
//! - a socket's peer is always a trusted proxy ([`Peer::Unix`]); a request
//!   over it without a forwarded address counts as one local client;
//! - the socket file is made with mode 0660 (owner and group); a stale
//!   socket file (nothing listening) is replaced, a live one or any other
//!   file is refused; the file is removed when the server stops;
//! - TCP peers are trusted only as `--trusted-proxy` names them.

use std::fmt;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use anyhow::{Context as _, bail};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What `--listen` names: `HOST:PORT`, or `unix:PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl Address {
    /// The TCP address, if it is one.
    pub fn tcp(&self) -> Option<SocketAddr> {
        match self {
            Address::Tcp(a) => Some(*a),
            Address::Unix(_) => None,
        }
    }
}

/// `127.0.0.1:8080`, or `unix:/run/anonpoll/polld.sock`: as `--listen` takes it.
impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "{a}"),
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// A bound listener, before the runtime takes it.
pub(super) enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

/// The other end of a connection.
#[derive(Clone, Copy, Debug)]
pub(super) enum Peer {
    Tcp(SocketAddr),
    /// A process on this machine allowed to open the socket: the proxy.
    Unix,
}

impl Listener {
    /// Binds `listen` (`HOST:PORT` or `unix:PATH`), non-blocking.
    pub(super) fn bind(listen: &str) -> anyhow::Result<(Listener, Address)> {
        if let Some(path) = listen.strip_prefix("unix:") {
            let path = PathBuf::from(path);
            if !path.is_absolute() {
                bail!("cannot listen on {listen}: the socket's path must be absolute");
            }
            clear_stale(&path).with_context(|| format!("cannot listen on {listen}"))?;
            let listener =
                std::os::unix::net::UnixListener::bind(&path).with_context(|| format!("cannot listen on {listen}"))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660))
                .with_context(|| format!("cannot set the mode of {}", path.display()))?;
            listener.set_nonblocking(true)?;
            return Ok((Listener::Unix(listener), Address::Unix(path)));
        }
        let listener = std::net::TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        Ok((Listener::Tcp(listener), Address::Tcp(addr)))
    }

    /// The listener on the runtime (must be called on it).
    pub(super) fn into_async(self) -> std::io::Result<Accepting> {
        Ok(match self {
            Listener::Tcp(l) => Accepting::Tcp(tokio::net::TcpListener::from_std(l)?),
            Listener::Unix(l) => Accepting::Unix(tokio::net::UnixListener::from_std(l)?),
        })
    }
}

/// A socket file left by a polld that did not stop cleanly is removed; a
/// socket something still listens on, or a file of another kind, is not.
fn clear_stale(path: &Path) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        bail!("{} exists and is not a socket", path.display());
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        bail!("another process listens on {}", path.display());
    }
    std::fs::remove_file(path)?;
    Ok(())
}

/// The listener, on the runtime.
pub(super) enum Accepting {
    Tcp(tokio::net::TcpListener),
    Unix(tokio::net::UnixListener),
}

impl Accepting {
    pub(super) async fn accept(&self) -> std::io::Result<(Stream, Peer)> {
        match self {
            Accepting::Tcp(l) => {
                let (stream, peer) = l.accept().await?;
                let _ = stream.set_nodelay(true);
                Ok((Stream::Tcp(stream), Peer::Tcp(peer)))
            }
            Accepting::Unix(l) => {
                let (stream, _) = l.accept().await?;
                Ok((Stream::Unix(stream), Peer::Unix))
            }
        }
    }
}

/// A connection of either kind.
pub(super) enum Stream {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Unix(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            Stream::Unix(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_socket_is_replaced_a_live_one_or_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("polld.sock");
        let listen = format!("unix:{}", path.display());
        let (live, address) = Listener::bind(&listen).unwrap();
        assert_eq!(address, Address::Unix(path.clone()));
        assert_eq!(address.to_string(), listen);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o660, "owner and group only");
        let err = Listener::bind(&listen).err().expect("a live socket is kept");
        assert!(format!("{err:#}").contains("another process listens"), "{err:#}");
        drop(live); // the file stays: stale
        assert!(path.exists());
        Listener::bind(&listen).expect("a stale socket is replaced");
        let file = dir.path().join("data");
        std::fs::write(&file, b"keep").unwrap();
        let err = Listener::bind(&format!("unix:{}", file.display())).err().expect("not a socket");
        assert!(format!("{err:#}").contains("not a socket"), "{err:#}");
        assert_eq!(std::fs::read(&file).unwrap(), b"keep");
        assert!(Listener::bind("unix:relative.sock").is_err(), "a relative path is refused");
    }
}
