//! Who is asking, as far as abuse limits need to know, and no further.
//!
//! The client address is resolved here (the TCP peer, or the last
//! `X-Forwarded-For` entry when the peer is a trusted proxy) and immediately
//! reduced to a [`ClientGroup`]: the IPv4 address or the IPv6 /64. Limiters
//! only ever keep a keyed HMAC of the group, in memory. No address is stored or
//! logged anywhere.
//!
//! Forwarding headers are believed only from the proxies the operator named
//! (`--trusted-proxy`); by default none, since any local process could
//! otherwise claim a fresh identity per request.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use ipnet::IpNet;

/// Networks whose `X-Forwarded-For` header is believed.
#[derive(Clone, Debug)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// No proxy: every client is its TCP peer (the default).
    pub fn none() -> TrustedProxies {
        TrustedProxies(Vec::new())
    }

    /// Loopback: what a Caddy on the same machine needs (the shipped setup).
    pub fn loopback() -> TrustedProxies {
        TrustedProxies(vec![
            IpNet::new_assert(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)), 8),
            IpNet::new_assert(IpAddr::V6(Ipv6Addr::LOCALHOST), 128),
        ])
    }

    pub fn new(nets: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(nets)
    }

    pub fn trusts(&self, peer: IpAddr) -> bool {
        let peer = canonical(peer);
        self.0.iter().any(|n| n.contains(&peer))
    }
}

/// Parses a `--trusted-proxy` value: a CIDR or a single address.
pub fn parse_net(s: &str) -> Result<IpNet, String> {
    let s = s.trim();
    IpNet::from_str(s)
        .or_else(|_| IpAddr::from_str(s).map(IpNet::from))
        .map_err(|_| format!("'{s}' is not an IP address or CIDR network"))
}

/// IPv4-mapped IPv6 addresses count as the IPv4 address they carry.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The client's address: the peer, unless the peer is a trusted proxy that
/// names the client as the last `X-Forwarded-For` entry.
pub fn client_ip(peer: IpAddr, forwarded_for: Option<&str>, trusted: bool) -> IpAddr {
    if !trusted {
        return canonical(peer);
    }
    forwarded_for.and_then(|h| h.rsplit(',').next()).and_then(parse_forwarded_addr).map_or(canonical(peer), canonical)
}

/// Accepts `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1` and `[2001:db8::1]:5678`.
fn parse_forwarded_addr(s: &str) -> Option<IpAddr> {
    let s = s.trim();
    if let Ok(ip) = IpAddr::from_str(s) {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next().and_then(|a| Ipv6Addr::from_str(a).ok()).map(IpAddr::V6);
    }
    s.rsplit_once(':').and_then(|(a, _)| IpAddr::from_str(a).ok())
}

/// A client as abuse limits see it: an IPv4 address or an IPv6 /64, as 17
/// bytes (a family tag and the masked address). Never stored as such.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientGroup([u8; 17]);

impl ClientGroup {
    pub fn of(ip: IpAddr) -> ClientGroup {
        let mut b = [0u8; 17];
        match canonical(ip) {
            IpAddr::V4(v4) => {
                b[0] = 4;
                b[1..5].copy_from_slice(&v4.octets());
            }
            IpAddr::V6(v6) => {
                b[0] = 6;
                b[1..9].copy_from_slice(&v6.octets()[..8]);
            }
        }
        ClientGroup(b)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for ClientGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientGroup(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        IpAddr::from_str(s).unwrap()
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_peers() {
        let via = |peer: &str, forwarded: Option<&str>, t: &TrustedProxies| {
            client_ip(ip(peer), forwarded, t.trusts(ip(peer)))
        };
        let t = TrustedProxies::loopback();
        assert_eq!(via("127.0.0.1", Some("198.51.100.1, 203.0.113.9"), &t), ip("203.0.113.9"));
        assert_eq!(via("::1", Some("[2001:db8::5]:443"), &t), ip("2001:db8::5"));
        assert_eq!(via("127.0.0.1", Some("garbage"), &t), ip("127.0.0.1"));
        assert_eq!(via("198.51.100.7", Some("203.0.113.9"), &t), ip("198.51.100.7"));
        let none = TrustedProxies::new(vec![parse_net("10.0.0.0/8").unwrap()]);
        assert_eq!(via("127.0.0.1", Some("203.0.113.9"), &none), ip("127.0.0.1"));
        assert_eq!(via("::ffff:10.1.2.3", Some("203.0.113.9"), &none), ip("203.0.113.9"));
        let nobody = TrustedProxies::none();
        assert_eq!(via("127.0.0.1", Some("203.0.113.9"), &nobody), ip("127.0.0.1"));
        assert!(!nobody.trusts(ip("::1")));
    }

    #[test]
    fn ipv6_groups_by_64_and_ipv4_by_address() {
        assert!(ClientGroup::of(ip("2001:db8::1")) == ClientGroup::of(ip("2001:db8::ffff:2")));
        assert!(ClientGroup::of(ip("2001:db8::1")) != ClientGroup::of(ip("2001:db8:0:1::1")));
        assert!(ClientGroup::of(ip("192.0.2.1")) != ClientGroup::of(ip("192.0.2.2")));
        assert!(ClientGroup::of(ip("::ffff:192.0.2.1")) == ClientGroup::of(ip("192.0.2.1")));
        assert!(parse_net("not a net").is_err());
        assert!(parse_net("192.0.2.1").unwrap().contains(&ip("192.0.2.1")));
    }
}
