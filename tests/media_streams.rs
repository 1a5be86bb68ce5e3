//! Large media answers over real HTTP (issue 24, item 5): streamed piece by
//! piece as their clients take them, so slow readers hold little memory and
//! shut nobody out, and an answer under way stops when its poll is erased.
//! The clients are raw sockets with a tiny receive window that read
//! nothing, or little, of what they asked for.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::media::big_noise_picture;
use common::*;

/// A connection that reads nothing unless told, with a small receive
/// window, so that a large answer waits on polld's side.
fn slow_reader(addr: &str) -> TcpStream {
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let s = socket.connect(addr.parse().unwrap()).await.unwrap().into_std().unwrap();
        s.set_nonblocking(false).unwrap();
        s
    })
}

/// Sends `GET path` on a new slow connection, as client `xff`, with `range`.
fn slow_get(server: &Server, path: &str, xff: &str, range: Option<&str>) -> TcpStream {
    let mut s = slow_reader(&server.addr);
    let range = range.map(|r| format!("Range: {r}\r\n")).unwrap_or_default();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: {xff}\r\n{range}\r\n").unwrap();
    s
}

/// `groups` x `each` slow connections, each group a client of its own,
/// each connection asking for a range of `path` from its own start (no two
/// answers send the same bytes); once polld has had time to answer them.
fn slow_range_readers(server: &Server, path: &str, groups: usize, each: usize) -> Vec<TcpStream> {
    let mut readers = Vec::new();
    for g in 0..groups {
        let xff = Server::fresh_client_ip();
        for c in 0..each {
            let start = (g * each + c) * 4099;
            readers.push(slow_get(server, path, &xff, Some(&format!("bytes={start}-"))));
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    readers
}

/// Reads an answer's head: its status and Content-Length.
fn read_head(s: &mut TcpStream) -> (u16, Option<usize>) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let status = head[9..12].parse().unwrap();
    let length = head.lines().find_map(|l| l.strip_prefix("content-length:")).map(|v| v.trim().parse().unwrap());
    (status, length)
}

/// polld's resident memory now, in KiB.
fn rss_kib(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The finding: a 9 MiB picture read slowly by 4 addresses x 8 connections
/// held one copy per response and spent the media budget, and everyone else
/// got 503. Each answer now holds a piece or two while it waits for its
/// client, so the same readers hold a few MiB.
#[test]
fn slow_readers_of_a_big_picture_do_not_make_others_wait() {
    let server = Server::start();
    let (_, path) = big_noise_picture(&server, (1750, 1700));
    let size = server.get(&path).body.len();
    assert!(size > 8 * 1024 * 1024, "{size}");
    let mut readers = Vec::new();
    for _ in 0..4 {
        let xff = Server::fresh_client_ip();
        readers.extend((0..8).map(|_| slow_get(&server, &path, &xff, None)));
    }
    std::thread::sleep(Duration::from_secs(2));
    let statuses: Vec<u16> = readers.iter_mut().map(|s| read_head(s).0).collect();
    let others: Vec<u16> = (0..3).map(|_| server.get(&path).status).collect();
    assert!(statuses.iter().all(|&s| s == 200), "{statuses:?}");
    assert_eq!(others, [200, 200, 200], "slow readers spent the media budget");
}

/// Test 1 of the brief: slow readers from 8 client groups, 16 connections
/// each, every one reading a different range (no two answers send the same
/// bytes, so none could share a copy): 128 answers of 4 MiB each, 512 MiB
/// if each held its bytes. Everyone else is still served: the file itself,
/// a range of it and the poll's page, 200 and 206, never 503.
#[test]
fn slow_readers_of_different_ranges_from_eight_groups_leave_room_for_everyone_else() {
    let server = Server::start();
    let (poll, path) = big_noise_picture(&server, (1750, 1700));
    let mut readers = slow_range_readers(&server, &path, 8, 16);
    let statuses: Vec<u16> = readers.iter_mut().map(|s| read_head(s).0).collect();
    let busy = statuses.iter().filter(|&&s| s == 503).count();
    let file = server.get(&path);
    let range = server.request("GET", &path).xff(&Server::fresh_client_ip()).header("Range", "bytes=1000-").send();
    let page = server.request("GET", &poll.path()).xff(&Server::fresh_client_ip()).send();
    eprintln!(
        "slow readers: {} of {} answered 206 ({busy} 503); others then got {}, {}, {}",
        statuses.iter().filter(|&&s| s == 206).count(),
        statuses.len(),
        file.status,
        range.status,
        page.status
    );
    assert!(statuses.iter().all(|&s| s == 206), "{statuses:?}");
    assert_eq!((file.status, range.status, page.status), (200, 206, 200), "slow readers spent the media budget");
    assert_eq!(range.body, file.body[1000..1000 + range.body.len()]);
    drop(readers);
}

/// Test 2 of the brief: a poll deleted while a slow client reads its big
/// file: the answer stops short of its Content-Length (what was sent is
/// the file's start), so bytes read after the deletion are never sent.
#[test]
fn a_file_being_sent_stops_when_its_poll_is_deleted() {
    // A direct client (loopback is no proxy here), whose connection's send
    // buffer polld caps: behind a proxy, what the proxy has taken and the
    // kernel's buffers (megabytes on loopback) are in flight too.
    let server = Server::builder().trusted_proxy("192.0.2.0/24").start();
    let (poll, path) = big_noise_picture(&server, (1750, 1700));
    let file = server.get(&path).body;
    let mut s = slow_get(&server, &path, &Server::fresh_client_ip(), None);
    let (status, length) = read_head(&mut s);
    assert_eq!((status, length), (200, Some(file.len())));
    // Read a little, slowly, then the poll is deleted.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < 256 * 1024 {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(server.delete(&poll.id, &poll.token).status, 204);
    let before = got.len();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    eprintln!("read {before} bytes before the deletion, {} after, of {} announced", got.len() - before, file.len());
    assert!(got.len() < file.len(), "the whole file was sent after its poll was deleted");
    // What was sent was in flight (socket buffers, a piece or two), not
    // the rest of the file.
    assert!(got.len() - before < 512 * 1024, "{} bytes after the deletion", got.len() - before);
    assert_eq!(got, file[..got.len()], "the bytes sent are the file's own start");
    assert_eq!(server.get(&path).status, 404);
}

/// Test 3 of the brief: polld's resident memory while 32 slow connections
/// read a 9 MiB file (in 4 client groups, each connection its own range
/// so that no two answers send the same bytes): it grows by far less than
/// what the answers send (32 x 4 MiB; 32 x 9 MiB for whole files).
#[test]
fn slow_readers_of_a_big_file_hold_a_few_pieces_each() {
    let server = Server::start();
    let (_, path) = big_noise_picture(&server, (1750, 1700));
    let size = server.get(&path).body.len();
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(&server);
    let mut readers = slow_range_readers(&server, &path, 4, 8);
    let statuses: Vec<u16> = readers.iter_mut().map(|s| read_head(s).0).collect();
    let during = rss_kib(&server);
    let grown = during.saturating_sub(before);
    eprintln!(
        "polld VmRSS {before} KiB before, {during} KiB with 32 slow readers of a {size}-byte file: +{grown} KiB \
         (+{} KiB per reader)",
        grown / 32
    );
    assert!(statuses.iter().all(|&s| s == 206), "{statuses:?}");
    assert!(grown < 32 * 1024, "polld grew by {grown} KiB for 32 slow readers");
    drop(readers);
}
