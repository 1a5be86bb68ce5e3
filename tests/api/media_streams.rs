//! Large media answers over real HTTP (issue 24, item 5): streamed piece by
//! piece as their clients take them, so slow readers hold little memory and
//! shut nobody out, and an answer under way stops when its poll is erased.
//! The clients are raw sockets with a tiny receive window that read
//! nothing, or little, of what they asked for.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::media::{File, big_noise_picture, multipart, multipart_type, noise_png};
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

/// `each` slow connections for each client of `groups` (forwarded addresses),
/// each connection asking for a range of `path` from its own start (no two
/// answers send the same bytes), and their statuses once polld has had
/// time to answer them.
fn slow_range_readers(server: &Server, path: &str, groups: &[String], each: usize) -> (Vec<TcpStream>, Vec<u16>) {
    let mut readers = Vec::new();
    for (g, xff) in groups.iter().enumerate() {
        for c in 0..each {
            let start = (g * each + c) * 4099;
            readers.push(slow_get(server, path, xff, Some(&format!("bytes={start}-"))));
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    let statuses = readers.iter_mut().map(|s| read_head(s).0).collect();
    (readers, statuses)
}

/// `n` client groups, as forwarded addresses.
fn clients(n: usize) -> Vec<String> {
    (0..n).map(|_| Server::fresh_client_ip()).collect()
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

/// polld's resident memory now, in KiB: all of it (`VmRSS`), and its
/// anonymous part (`RssAnon`: the heap, without the pages of the database
/// file that stream readers map, which are the kernel's cache).
fn rss_kib(server: &Server) -> (u64, u64) {
    let field = |name: &str| common::status_kib(server.pid(), name).unwrap();
    (field("VmRSS:"), field("RssAnon:"))
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
    // A fast client's pace, for the record (streamed: a read per piece).
    let started = std::time::Instant::now();
    for _ in 0..10 {
        assert_eq!(server.get(&path).body.len(), size);
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "10 downloads of {size} bytes by a fast client: {secs:.2} s, {:.0} MB/s",
        10.0 * size as f64 / secs / 1e6
    );
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
    let (readers, statuses) = slow_range_readers(&server, &path, &clients(8), 16);
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

/// A class behind one address (one client group) on a slow uplink: 200
/// answers of one big picture under way at once, each its own range (the
/// media budget allows a group 256): all are answered, and others too;
/// and again once they hung up.
#[test]
fn a_class_behind_one_address_gets_two_hundred_answers_at_once() {
    let server = Server::start();
    let (_, path) = big_noise_picture(&server, (1750, 1700));
    let class = clients(1);
    let (readers, statuses) = slow_range_readers(&server, &path, &class, 200);
    let other = server.get(&path).status;
    eprintln!(
        "one group: {} of 200 answered 206; another client then {other}",
        statuses.iter().filter(|&&s| s == 206).count()
    );
    assert!(statuses.iter().all(|&s| s == 206), "{statuses:?}");
    assert_eq!(other, 200);
    // Answers cut by their clients give their share back: the class can
    // do it again.
    drop(readers);
    std::thread::sleep(Duration::from_millis(500));
    let (_again, statuses) = slow_range_readers(&server, &path, &class, 200);
    assert!(statuses.iter().all(|&s| s == 206), "after the first 200 hung up: {statuses:?}");
}

/// Downloads a big picture slowly as a direct client: 256 KiB, then
/// `meanwhile` erases or replaces it, then the rest until polld ends the
/// connection. The answer must stop short of its
/// Content-Length, and what came must be the file's own start, with no more
/// after `meanwhile` than was in flight (socket buffers, a piece or two).
/// `meanwhile` gets the poll and the file's path.
fn download_around(what: &str, meanwhile: impl FnOnce(&Server, &Created, &str)) {
    // Loopback is no proxy here: a direct client, whose connection's send
    // buffer polld caps. Behind a proxy, what the proxy has taken and the
    // kernel's buffers (megabytes on loopback) are in flight too.
    let server = Server::builder().trusted_proxy("192.0.2.0/24").start();
    let (poll, path) = big_noise_picture(&server, (1750, 1700));
    let file = server.get(&path).body;
    let mut s = slow_get(&server, &path, &Server::fresh_client_ip(), None);
    let (status, length) = read_head(&mut s);
    assert_eq!((status, length), (200, Some(file.len())));
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < 256 * 1024 {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
        std::thread::sleep(Duration::from_millis(1));
    }
    meanwhile(&server, &poll, &path);
    let before = got.len();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    let after = got.len() - before;
    eprintln!("read {before} bytes before the file was {what}, {after} after, of {} announced", file.len());
    assert!(got.len() < file.len(), "the whole file was sent after it was {what}");
    assert!(after < 512 * 1024, "{after} bytes after the file was {what}");
    assert_eq!(got, file[..got.len()], "the bytes sent are the file's own start");
    assert_eq!(server.get(&path).status, 404);
}

/// Test 2 of the brief: a poll deleted while a slow client reads its big
/// file: the answer stops short of its Content-Length, so bytes read after
/// the deletion are never sent.
#[test]
fn a_file_being_sent_stops_when_its_poll_is_deleted() {
    download_around("deleted", |server, poll, _| {
        assert_eq!(server.delete(&poll.id, &poll.token).status, 204);
    });
}

/// A file replaced on the admin page while a slow client reads it: the
/// answer stops too, and never goes on with the new file's bytes.
#[test]
fn a_file_being_sent_stops_when_it_is_replaced() {
    download_around("replaced", |server, poll, _| {
        let resp = server
            .request("POST", &format!("/p/{}/admin?lang=en", poll.id))
            .header("Content-Type", &multipart_type())
            .body(multipart(
                &[("token", &poll.token), ("action", "media-attach"), ("slot", "poll"), ("am-alt", "New")],
                &[File("am", "n.png", "image/png", &noise_png(300, 200))],
            ))
            .send();
        // Done: the admin page again, by a GET that says so.
        let done = server.get(resp.header("location").unwrap_or_else(|| panic!("{}", resp.describe())));
        assert!(done.text().contains("The file was attached."), "{}", resp.describe());
    });
}

/// A file removed on the admin page while a slow client reads it: the
/// answer stops, so bytes of an erased file are not sent on.
#[test]
fn a_file_being_sent_stops_when_it_is_removed() {
    download_around("removed", |server, poll, path| {
        let media = path.trim_start_matches("/media/");
        let resp = server
            .request("POST", &format!("/p/{}/admin?lang=en", poll.id))
            .header("Content-Type", &multipart_type())
            .body(multipart(&[("token", &poll.token), ("action", "media-remove"), ("media", media)], &[]))
            .send();
        let done = server.get(resp.header("location").unwrap_or_else(|| panic!("{}", resp.describe())));
        assert!(done.text().contains("The file was removed and erased."), "{}", resp.describe());
    });
}

/// A poll that expires while a slow client reads its file (its expiry set
/// to today in the database, as the day turning would): each piece is read
/// against the day, so the answer stops.
#[test]
fn a_file_being_sent_stops_when_its_poll_expires() {
    download_around("expired", |server, poll, _| {
        let today = date_from_today(0);
        let n = server.exec_sql("UPDATE sealed_polls SET expires_on = ?1 WHERE id = ?2", [today.as_str(), &poll.id]);
        assert_eq!(n, 1);
    });
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
    let (readers, statuses) = slow_range_readers(&server, &path, &clients(4), 8);
    let during = rss_kib(&server);
    let io_threads = common::threads_named(server.pid(), "anonpoll-io").len();
    let grown = (during.0.saturating_sub(before.0), during.1.saturating_sub(before.1));
    eprintln!(
        "polld with 32 slow readers of a {size}-byte file: VmRSS {} -> {} KiB (+{} KiB), RssAnon {} -> {} KiB \
         (+{} KiB, +{} KiB per reader)",
        before.0,
        during.0,
        grown.0,
        before.1,
        during.1,
        grown.1,
        grown.1 / 32
    );
    assert!(statuses.iter().all(|&s| s == 206), "{statuses:?}");
    assert!(grown.1 < 32 * 1024, "polld's heap grew by {} KiB for 32 slow readers", grown.1);
    assert!(grown.0 < 48 * 1024, "polld grew by {} KiB for 32 slow readers", grown.0);
    // The pieces are read on at most 4 blocking threads beside the 2 I/O
    // threads (there were 14-16 blocking threads, each keeping memory).
    eprintln!("polld's I/O and piece-reading threads: {io_threads}");
    assert!(io_threads <= 6, "{io_threads} I/O and piece-reading threads for 32 slow readers");
    drop(readers);
}
