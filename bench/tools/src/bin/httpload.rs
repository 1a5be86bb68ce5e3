//! Load generator for the scenarios wrk cannot express: dependent requests.
//! Keep-alive HTTP/1.1 over loopback, one blocking thread per connection,
//! bounded by time, latencies kept exactly (sorted at the end).
//!
//!   httpload detect ADDR IDS_FILE
//!       Exit 0 if GET /p/{id} answers 200 with an HTML form using POST (the
//!       share page with its vote form); prints what it found. Exit 3 if not.
//!   httpload vote ADDR CONNECTIONS SECONDS IDS_FILE
//!       A realistic voter: GET /p/{id}, take the vote form (its action, every
//!       hidden input such as the one-time ballot token, one random option per
//!       radio group), POST it urlencoded. A vote counts when the POST answers
//!       2xx or 3xx. Latency percentiles are of the POST alone; `vote_p50_ms`
//!       and `vote_p99_ms` cover both requests.
//!   httpload post ADDR CONNECTIONS SECONDS IDS_FILE SERVER_PID CLK_TCK
//!       The POST of a vote alone: each connection first fetches and fills in
//!       its share of vote forms (not measured), then all POST them; the
//!       server's CPU (utime + stime of SERVER_PID) is read around the POSTs
//!       only and printed as `polld_cpu_us_per_op`.
//!   httpload mixed ADDR CONNECTIONS SECONDS IDS_FILE
//!       90 % reads (share page, results page, poll JSON, results JSON in
//!       turn), 9 % votes (as above: GET + POST), 1 % creates (POST /api/polls).
//!   httpload fair ADDR CONNECTIONS SECONDS [posts|pages] [nice=N|idle] [warm]
//!       The second audit's starvation scenario (issue 24, item 4): creates a
//!       small poll and a heavy one (20 ranking questions of 12 options,
//!       `duplicateCheck: none`), votes on the small poll from one
//!       connection alone for SECONDS, then again while CONNECTIONS
//!       connections from 6 client groups (`X-Forwarded-For`: polld must
//!       trust 127.0.0.1) vote on the heavy poll as fast as they are
//!       answered. Prints the small poll's POST latency alone and under that
//!       load (`p99_ratio`; `vote_p99_ratio` for its GET + POST), and the
//!       heavy votes taken and refused (429). `posts`: the heavy forms are
//!       fetched first, the load is their POSTs alone; `pages`: the share
//!       page's GETs alone (the workers' load, no vote). `nice=N`: the heavy
//!       load runs in a child process at niceness N, so that on one machine
//!       its own CPU (parsing 109 KB pages) is not taken from polld; `idle`:
//!       in a child process under `SCHED_IDLE` (`chrt -i 0`), the kernel's
//!       lowest weight, which any other thread that wakes preempts, so
//!       that what is left is mostly polld's doing (the attackers may then
//!       send less: compare the heavy counts). `warm`: the small poll's
//!       votes run SECONDS first, unmeasured, so that the alone half begins
//!       with the mix of the votes before it as the loaded half does (polld
//!       mixes at least every 10 s under load; without it only the loaded
//!       half begins with a mix, of the alone half's votes).
//!   httpload seq ADDR N IDS_FILE (post|PATH)
//!       For counting instructions (bench/count.sh): prepares N requests
//!       (`post`: fetches and fills in N vote forms; a PATH such as
//!       `/p/{id}` cycles over the ids), prints `READY`, waits for a line on
//!       stdin (the caller zeroes the server's counters then), and sends
//!       them one after another on one connection.
//!   httpload fill ADDR POLL_ID N CONNECTIONS
//!       N votes (GET + POST, as `vote`) on one poll over CONNECTIONS
//!       connections, as fast as they are answered: to fill a poll
//!       (bench/mix.sh). `ops` is the votes acknowledged.
//!   httpload receipts ADDR POLL_ID N
//!       N votes on one poll, one after another; prints `RECEIPT <receipt>`
//!       for each (the thank-you page's `<code id="receipt">` of a poll with
//!       `voteChanges`).
//!   httpload own ADDR POLL_ID RECEIPT (change|withdraw)
//!       `POST /p/{id}/ballot` with the receipt: `change` sends a random
//!       answer to every question of the share page's form with
//!       `action=change`, `withdraw` sends `action=withdraw`. The form is
//!       read first; only the ballot POST is timed (`p50_ms` = its time).
//!   httpload trickle ADDR PER_SECOND SECONDS IDS_FILE
//!       A steady trickle: one connection votes (GET + POST) every
//!       1/PER_SECOND s on the polls of IDS_FILE in turn, for SECONDS.
//!
//! Prints one line: `RESULT rps=<ops/s> p50_ms= p99_ms= requests=<HTTP
//! requests> ops=<operations> errors=<failed operations> ...`.
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const CREATE_BODY: &str = r#"{"title":"Bench poll","lang":"en","expiryDays":7,"resultsPublic":true,"questions":[{"type":"single","label":"Pick one","options":["A","B","C","D"]},{"type":"single","label":"And one more","options":["Yes","No"]}]}"#;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Client {
    addr: String,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    /// Sent as `X-Forwarded-For`, to stand for another client.
    xff: Option<String>,
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl Client {
    fn new(addr: &str) -> Client {
        Client { addr: addr.to_owned(), stream: None, buf: Vec::with_capacity(64 * 1024), xff: None }
    }

    fn request(&mut self, method: &str, path: &str, ctype: Option<&str>, body: &[u8]) -> std::io::Result<Reply> {
        for attempt in 0..2 {
            if self.stream.is_none() {
                let s = TcpStream::connect(&self.addr)?;
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(Duration::from_secs(10)))?;
                self.stream = Some(s);
                self.buf.clear();
            }
            match self.exchange(method, path, ctype, body) {
                Ok(r) => return Ok(r),
                Err(e) => {
                    self.stream = None;
                    if attempt == 1 {
                        return Err(e);
                    }
                }
            }
        }
        unreachable!()
    }

    fn exchange(&mut self, method: &str, path: &str, ctype: Option<&str>, body: &[u8]) -> std::io::Result<Reply> {
        let s = self.stream.as_mut().expect("connected");
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: anonpoll-bench\r\n", self.addr);
        if let Some(t) = ctype {
            head.push_str(&format!("Content-Type: {t}\r\n"));
        }
        if let Some(x) = &self.xff {
            head.push_str(&format!("X-Forwarded-For: {x}\r\n"));
        }
        if method == "POST" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut out = head.into_bytes();
        out.extend_from_slice(body);
        s.write_all(&out)?;
        self.buf.clear();
        let mut chunk = [0u8; 16384];
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i + 4;
            }
            let n = s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        };
        let text = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        let mut lines = text.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|c| c.parse().ok())
            .ok_or(std::io::ErrorKind::InvalidData)?;
        let headers: Vec<(String, String)> =
            lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned())).collect();
        let mut reply = Reply { status, headers, body: Vec::new() };
        let len: usize = reply.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
        if reply.header("transfer-encoding").is_some() {
            return Err(std::io::Error::other("chunked replies are not supported by httpload"));
        }
        while self.buf.len() < head_end + len {
            let n = s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
        reply.body = self.buf[head_end..head_end + len].to_vec();
        if reply.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            self.stream = None;
        }
        Ok(reply)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The attributes of one tag's text (`<input a="b" c='d' e=f>`), names lowercased.
fn attrs(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = tag.as_bytes();
    let mut i = tag.find(|c: char| c.is_whitespace()).unwrap_or(tag.len());
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/' || b[i] == b'>') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'>' {
            i += 1;
        }
        if start == i {
            break;
        }
        let name = tag[start..i].to_ascii_lowercase();
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                i = vs;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                value = tag[vs..i.min(b.len())].to_owned();
                i += 1;
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'>' {
                    i += 1;
                }
                value = tag[vs..i].to_owned();
            }
        }
        out.push((name, unescape(&value)));
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn get<'a>(a: &'a [(String, String)], name: &str) -> Option<&'a str> {
    a.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// The vote form of a share page: its action and the fields to send.
struct Form {
    action: String,
    hidden: Vec<(String, String)>,
    radios: Vec<(String, Vec<String>)>,
}

fn vote_form(html: &str, page_path: &str) -> Option<Form> {
    let lower = html.to_ascii_lowercase();
    let mut pos = 0;
    while let Some(i) = lower[pos..].find("<form") {
        let start = pos + i;
        let tag_end = start + lower[start..].find('>')?;
        let fa = attrs(&html[start..tag_end]);
        let end = lower[tag_end..].find("</form").map_or(html.len(), |e| tag_end + e);
        pos = end;
        if !get(&fa, "method").is_some_and(|m| m.eq_ignore_ascii_case("post")) {
            continue;
        }
        let mut form = Form { action: get(&fa, "action").unwrap_or("").to_owned(), hidden: vec![], radios: vec![] };
        let mut p = tag_end;
        while let Some(j) = lower[p..end].find("<input") {
            let s = p + j;
            let e = s + lower[s..].find('>')?;
            let a = attrs(&html[s..e]);
            p = e;
            let (Some(name), kind) = (get(&a, "name"), get(&a, "type").unwrap_or("text").to_ascii_lowercase()) else {
                continue;
            };
            let value = get(&a, "value").unwrap_or("").to_owned();
            match kind.as_str() {
                "hidden" => form.hidden.push((name.to_owned(), value)),
                "radio" => match form.radios.iter_mut().find(|(n, _)| n == name) {
                    Some((_, vs)) => vs.push(value),
                    None => form.radios.push((name.to_owned(), vec![value])),
                },
                _ => {}
            }
        }
        if form.radios.is_empty() && !form.hidden.iter().any(|(n, _)| n == "ballot") {
            continue; // not the vote form (e.g. a language switch)
        }
        if form.action.is_empty() {
            form.action = page_path.to_owned();
        } else if let Some(rest) = form.action.strip_prefix("http://").or_else(|| form.action.strip_prefix("https://"))
        {
            form.action = rest.find('/').map_or("/".to_owned(), |k| rest[k..].to_owned());
        }
        return Some(form);
    }
    None
}

fn urlencode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[derive(Default)]
struct Stats {
    lat: Vec<u32>,      // per measured request (µs)
    vote_lat: Vec<u32>, // per whole vote (µs)
    requests: u64,
    ops: u64,
    errors: u64,
    first_error: Option<String>,
}

impl Stats {
    fn fail(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }
}

fn vote(c: &mut Client, id: &str, rng: &mut Rng, st: &mut Stats) {
    let t0 = Instant::now();
    let page = format!("/p/{id}");
    st.requests += 1;
    let r = match c.request("GET", &page, None, b"") {
        Ok(r) if r.status == 200 => r,
        Ok(r) => return st.fail(format!("GET {page}: {}", r.status)),
        Err(e) => return st.fail(format!("GET {page}: {e}")),
    };
    let Some(form) = vote_form(&String::from_utf8_lossy(&r.body), &page) else {
        return st.fail("no vote form on the share page".into());
    };
    let mut fields: Vec<String> =
        form.hidden.iter().map(|(n, v)| format!("{}={}", urlencode(n), urlencode(v))).collect();
    for (n, vs) in &form.radios {
        // An option, never the "no answer" radio (value ""): a form with
        // nothing answered is refused.
        let options: Vec<&String> = vs.iter().filter(|v| !v.is_empty()).collect();
        if !options.is_empty() {
            fields.push(format!("{}={}", urlencode(n), urlencode(options[rng.below(options.len())])));
        }
    }
    let body = fields.join("&");
    let t1 = Instant::now();
    st.requests += 1;
    match c.request("POST", &form.action, Some("application/x-www-form-urlencoded"), body.as_bytes()) {
        Ok(r) if (200..400).contains(&r.status) => {
            st.lat.push(t1.elapsed().as_micros() as u32);
            st.vote_lat.push(t0.elapsed().as_micros() as u32);
            st.ops += 1;
        }
        Ok(r) => st.fail(format!(
            "POST {}: {} {}",
            form.action,
            r.status,
            String::from_utf8_lossy(&r.body).chars().take(200).collect::<String>()
        )),
        Err(e) => st.fail(format!("POST {}: {e}", form.action)),
    }
}

fn simple(c: &mut Client, method: &str, path: &str, ctype: Option<&str>, body: &[u8], st: &mut Stats) {
    let t0 = Instant::now();
    st.requests += 1;
    match c.request(method, path, ctype, body) {
        Ok(r) if (200..400).contains(&r.status) => {
            st.lat.push(t0.elapsed().as_micros() as u32);
            st.ops += 1;
        }
        Ok(r) => st.fail(format!("{method} {path}: {}", r.status)),
        Err(e) => st.fail(format!("{method} {path}: {e}")),
    }
}

/// One vote form of a share page, filled in: where to POST it and the body.
fn fill_form(c: &mut Client, id: &str, rng: &mut Rng) -> Result<(String, String), String> {
    let page = format!("/p/{id}");
    let r = match c.request("GET", &page, None, b"") {
        Ok(r) if r.status == 200 => r,
        Ok(r) => return Err(format!("GET {page}: {}", r.status)),
        Err(e) => return Err(format!("GET {page}: {e}")),
    };
    let form = vote_form(&String::from_utf8_lossy(&r.body), &page).ok_or("no vote form on the share page")?;
    let mut fields: Vec<String> =
        form.hidden.iter().map(|(n, v)| format!("{}={}", urlencode(n), urlencode(v))).collect();
    for (n, vs) in &form.radios {
        // An option, never the "no answer" radio (value ""): a form with
        // nothing answered is refused.
        let options: Vec<&String> = vs.iter().filter(|v| !v.is_empty()).collect();
        if !options.is_empty() {
            fields.push(format!("{}={}", urlencode(n), urlencode(options[rng.below(options.len())])));
        }
    }
    Ok((form.action, fields.join("&")))
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat`).
fn cpu_ticks(pid: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the server's /proc/PID/stat");
    let after = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    f[11].parse::<u64>().expect("utime") + f[12].parse::<u64>().expect("stime")
}

/// Forms fetched per second of POSTs measured: a ceiling on the POST rate
/// (if polld is faster, the forms run out early and the rate is over the
/// time actually spent).
const FORMS_PER_SEC: f64 = 40_000.0;

/// `post` mode: every connection first fetches its share of filled-in vote
/// forms (not measured), then all POST them at once; the server's CPU is read
/// around the POSTs alone.
fn post_only(addr: &str, conns: usize, secs: f64, ids: &[String], pid: &str, hz: f64) {
    let per_conn = ((FORMS_PER_SEC * secs) / conns as f64).ceil() as usize;
    let ready = std::sync::Arc::new(std::sync::Barrier::new(conns + 1));
    let go = std::sync::Arc::new(std::sync::Barrier::new(conns + 1));
    let deadline = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let handles: Vec<_> = (0..conns)
        .map(|t| {
            let (addr, ids) = (addr.to_owned(), ids.to_vec());
            let (ready, go, deadline) = (ready.clone(), go.clone(), deadline.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&addr);
                let mut rng = Rng(0x5A5A_0000 + t as u64 * 104_729);
                let mut st = Stats::default();
                let mut forms = Vec::with_capacity(per_conn);
                while forms.len() < per_conn && st.errors < 100 {
                    match fill_form(&mut c, &ids[rng.below(ids.len())], &mut rng) {
                        Ok(f) => forms.push(f),
                        Err(e) => st.fail(e),
                    }
                }
                st.errors = 0;
                ready.wait();
                go.wait();
                let end = *deadline.get().expect("deadline set before go");
                for (action, body) in &forms {
                    if Instant::now() >= end {
                        break;
                    }
                    simple(&mut c, "POST", action, Some("application/x-www-form-urlencoded"), body.as_bytes(), &mut st);
                }
                (st, Instant::now())
            })
        })
        .collect();
    ready.wait();
    let c0 = cpu_ticks(pid);
    let start = Instant::now();
    let _ = deadline.set(start + Duration::from_secs_f64(secs));
    go.wait();
    let mut all = Stats::default();
    let mut last = start;
    for h in handles {
        let (st, done) = h.join().expect("load thread");
        last = last.max(done);
        all.lat.extend(st.lat);
        all.requests += st.requests;
        all.ops += st.ops;
        all.errors += st.errors;
        if all.first_error.is_none() {
            all.first_error = st.first_error;
        }
    }
    let c1 = cpu_ticks(pid);
    let el = (last - start).as_secs_f64();
    all.lat.sort_unstable();
    let cpu_us = if all.ops > 0 { (c1 - c0) as f64 * 1e6 / hz / all.ops as f64 } else { 0.0 };
    println!(
        "RESULT rps={:.1} p50_ms={:.3} p99_ms={:.3} requests={} ops={} errors={} polld_cpu_us_per_op={cpu_us:.1} forms={}",
        all.ops as f64 / el,
        pct(&all.lat, 0.5),
        pct(&all.lat, 0.99),
        all.requests,
        all.ops,
        all.errors,
        per_conn * conns,
    );
    if let Some(e) = all.first_error {
        eprintln!("httpload: first error: {e}");
    }
}

/// The heavy poll of `fair`: 20 ranking questions of 12 options, no duplicate check.
fn heavy_poll() -> String {
    let options: Vec<String> = (0..12).map(|o| format!("\"Option {o}\"")).collect();
    let questions: Vec<String> = (0..20)
        .map(|q| format!(r#"{{"type":"ranked","label":"Rank these {q}","options":[{}]}}"#, options.join(",")))
        .collect();
    format!(
        r#"{{"title":"Heavy poll","lang":"en","expiryDays":7,"resultsPublic":true,"duplicateCheck":"none","questions":[{}]}}"#,
        questions.join(",")
    )
}

/// Creates a poll from `body`; its id.
fn create(c: &mut Client, body: &str) -> String {
    let r = c.request("POST", "/api/polls", Some("application/json"), body.as_bytes()).expect("POST /api/polls");
    assert_eq!(r.status, 201, "POST /api/polls: {}", String::from_utf8_lossy(&r.body));
    let v: serde_json::Value = serde_json::from_slice(&r.body).expect("a JSON answer");
    v["id"].as_str().expect("an id").to_owned()
}

/// A heavy vote's form: GET the share page, rank every option of every
/// question in a random order. Where to POST it and the body.
fn heavy_form(c: &mut Client, id: &str, rng: &mut Rng) -> Option<(String, String)> {
    let page = format!("/p/{id}");
    let r = c.request("GET", &page, None, b"").ok().filter(|r| r.status == 200)?;
    let form = vote_form(&String::from_utf8_lossy(&r.body), &page)?;
    let mut fields: Vec<String> =
        form.hidden.iter().map(|(n, v)| format!("{}={}", urlencode(n), urlencode(v))).collect();
    for q in 0..20 {
        let mut ranks: Vec<usize> = (1..=12).collect();
        for i in (1..ranks.len()).rev() {
            ranks.swap(i, rng.below(i + 1));
        }
        fields.extend(ranks.iter().enumerate().map(|(j, r)| format!("q{q}r{j}={r}")));
    }
    Some((form.action, fields.join("&")))
}

/// POSTs a filled-in form; `Some(status)`.
fn post_form(c: &mut Client, (action, body): &(String, String)) -> Option<u16> {
    c.request("POST", action, Some("application/x-www-form-urlencoded"), body.as_bytes()).ok().map(|r| r.status)
}

/// The small poll's votes from one connection until `end`: POST latencies (µs).
fn small_votes(addr: &str, id: &str, end: Instant) -> Stats {
    let mut c = Client::new(addr);
    let mut rng = Rng(0x00F0_0D00);
    let mut st = Stats::default();
    // Each vote from another voter, as on a real poll: no throttle in the way.
    let mut voter = 0u32;
    while Instant::now() < end {
        voter += 1;
        c.xff = Some(format!("198.19.{}.{}", voter / 256 % 256, voter % 256));
        vote(&mut c, id, &mut rng, &mut st);
    }
    st.lat.sort_unstable();
    st
}

/// Where the heavy load of `fair` runs.
#[derive(Clone, Copy)]
enum Attackers {
    /// Threads of this process.
    Here,
    /// A child process at this niceness (`nice -n`).
    Nice(i32),
    /// A child process under `SCHED_IDLE` (`chrt -i 0`).
    Idle,
}

impl Attackers {
    fn parse(args: &[String]) -> Attackers {
        if args.iter().any(|a| a == "idle") {
            return Attackers::Idle;
        }
        args.iter().find_map(|m| m.strip_prefix("nice=")?.parse().ok()).map_or(Attackers::Here, Attackers::Nice)
    }
}

/// `fair` mode: see the module's documentation and [`Load`]. In a child
/// process ([`Attackers`]), the heavy load runs at a lower priority, so
/// that on a machine shared with the load generator polld's CPU is not
/// taken by the attackers' own page parsing, as it would not be were they
/// elsewhere.
fn fair(addr: &str, conns: usize, secs: f64, load: Load, attackers: Attackers, warm: bool) {
    let mut c = Client::new(addr);
    c.xff = Some("198.19.0.2".into());
    let small = create(&mut c, CREATE_BODY);
    let heavy = create(&mut c, &heavy_poll());
    let span = Duration::from_secs_f64(secs);
    if warm {
        // Not measured: so that the alone half, too, begins with the mix
        // of the votes before it (polld mixes every 10 s under load), as
        // the loaded half begins with the alone half's.
        small_votes(addr, &small, Instant::now() + span);
    }
    let alone = small_votes(addr, &small, Instant::now() + span);
    let (loaded, (taken, refused, failed)) = match attackers {
        Attackers::Here => {
            let ready = std::sync::Arc::new(std::sync::Barrier::new(2));
            let go = ready.clone();
            let (addr2, heavy) = (addr.to_owned(), heavy.clone());
            let load = std::thread::spawn(move || {
                heavy_load(&addr2, &heavy, conns, secs, load, || {
                    go.wait();
                    go.wait();
                })
            });
            ready.wait();
            ready.wait();
            let loaded = small_votes(addr, &small, Instant::now() + span);
            (loaded, load.join().expect("load thread"))
        }
        Attackers::Nice(_) | Attackers::Idle => {
            use std::io::BufRead;
            let me = std::env::current_exe().expect("own path");
            // `nice -n N` or `chrt -i 0`, then this program in fair-load mode.
            let (command, mut args) = match attackers {
                Attackers::Nice(n) => ("nice", vec!["-n".to_owned(), n.to_string()]),
                _ => ("chrt", vec!["-i".to_owned(), "0".to_owned()]),
            };
            args.extend([
                me.display().to_string(),
                "fair-load".into(),
                addr.into(),
                heavy.clone(),
                conns.to_string(),
                secs.to_string(),
                load.word().into(),
            ]);
            let mut child = std::process::Command::new(command)
                .args(&args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{command} httpload fair-load: {e}"));
            let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
            let mut line = String::new();
            while !line.starts_with("READY") {
                line.clear();
                if out.read_line(&mut line).expect("child output") == 0 {
                    panic!("fair-load ended before READY");
                }
            }
            let mut stdin = child.stdin.take().expect("stdin");
            writeln!(stdin, "go").expect("start the load");
            let loaded = small_votes(addr, &small, Instant::now() + span);
            line.clear();
            out.read_line(&mut line).expect("child result");
            let _ = child.wait();
            let field = |k: &str| -> u64 {
                line.split_whitespace().find_map(|f| f.strip_prefix(k)?.strip_prefix('=')?.parse().ok()).unwrap_or(0)
            };
            (loaded, (field("taken"), field("refused"), field("failed")))
        }
    };
    let (a99, l99) = (pct(&alone.lat, 0.99), pct(&loaded.lat, 0.99));
    let (va99, vl99) = {
        let (mut a, mut l) = (alone.vote_lat.clone(), loaded.vote_lat.clone());
        a.sort_unstable();
        l.sort_unstable();
        (pct(&a, 0.99), pct(&l, 0.99))
    };
    println!(
        "RESULT alone_p50_ms={:.3} alone_p99_ms={a99:.3} loaded_p50_ms={:.3} loaded_p99_ms={l99:.3} loaded_max_ms={:.3} \
         p99_ratio={:.2} vote_alone_p99_ms={va99:.3} vote_loaded_p99_ms={vl99:.3} vote_p99_ratio={:.2} \
         small_votes_alone={} small_votes_loaded={} small_errors={} heavy_taken={taken} \
         heavy_refused={refused} heavy_failed={failed}",
        pct(&alone.lat, 0.5),
        pct(&loaded.lat, 0.5),
        pct(&loaded.lat, 1.0),
        if a99 > 0.0 { l99 / a99 } else { 0.0 },
        if va99 > 0.0 { vl99 / va99 } else { 0.0 },
        alone.ops,
        loaded.ops,
        alone.errors + loaded.errors,
    );
    if let Some(e) = alone.first_error.or(loaded.first_error) {
        eprintln!("httpload: first error: {e}");
    }
}

/// The heavy load of `fair`: `conns` connections from 6 client groups vote
/// on `heavy` for `secs` seconds once `start` returns (called when every
/// connection is ready). Votes taken, refused (429) and failed.
fn heavy_load(addr: &str, heavy: &str, conns: usize, secs: f64, load: Load, start: impl FnOnce()) -> (u64, u64, u64) {
    // Forms per heavy connection when they are fetched first.
    let forms = if load == Load::Posts { 150 } else { 0 };
    let ready = std::sync::Arc::new(std::sync::Barrier::new(conns + 1));
    let go = std::sync::Arc::new(std::sync::Barrier::new(conns + 1));
    let end = std::sync::Arc::new(std::sync::OnceLock::<Instant>::new());
    let threads: Vec<_> = (0..conns)
        .map(|t| {
            let (addr, heavy) = (addr.to_owned(), heavy.to_owned());
            let (ready, go, end) = (ready.clone(), go.clone(), end.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&addr);
                c.xff = Some(format!("198.18.{}.1", t % 6));
                let mut rng = Rng(0xBEEF_0000 + t as u64 * 104_729);
                let mut filled: Vec<(String, String)> =
                    (0..forms).filter_map(|_| heavy_form(&mut c, &heavy, &mut rng)).collect();
                ready.wait();
                go.wait();
                let end = *end.get().expect("set before the start");
                let (mut taken, mut refused, mut failed) = (0u64, 0u64, 0u64);
                while Instant::now() < end {
                    let form = if load == Load::Posts { filled.pop() } else { heavy_form(&mut c, &heavy, &mut rng) };
                    let Some(form) = form else { break };
                    if load == Load::Pages {
                        taken += 1;
                        continue;
                    }
                    match post_form(&mut c, &form) {
                        Some(s) if (200..400).contains(&s) => taken += 1,
                        Some(429) => refused += 1,
                        _ => failed += 1,
                    }
                }
                (taken, refused, failed)
            })
        })
        .collect();
    ready.wait();
    start();
    let _ = end.set(Instant::now() + Duration::from_secs_f64(secs));
    go.wait();
    let (mut taken, mut refused, mut failed) = (0, 0, 0);
    for h in threads {
        let (t, r, f) = h.join().expect("load thread");
        (taken, refused, failed) = (taken + t, refused + r, failed + f);
    }
    (taken, refused, failed)
}

/// What the heavy connections of `fair` send.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Load {
    /// GET the share page, POST the vote: as the audit did.
    Votes,
    /// The POSTs alone (forms fetched first): the writer's load.
    Posts,
    /// The share pages alone (GET, no POST): the workers' load.
    Pages,
}

impl Load {
    fn parse(args: &[String]) -> Load {
        if args.iter().any(|a| a == "posts") {
            Load::Posts
        } else if args.iter().any(|a| a == "pages") {
            Load::Pages
        } else {
            Load::Votes
        }
    }

    fn word(self) -> &'static str {
        match self {
            Load::Votes => "votes",
            Load::Posts => "posts",
            Load::Pages => "pages",
        }
    }
}

/// `seq` mode: N requests one after another, sent once the caller says so.
fn sequential(addr: &str, n: usize, ids: &[String], target: &str) {
    let mut c = Client::new(addr);
    let mut rng = Rng(0x5EC0_0001);
    let mut reqs: Vec<(&str, String, String)> = Vec::with_capacity(n);
    for i in 0..n {
        let id = &ids[i % ids.len()];
        if target == "post" {
            match fill_form(&mut c, id, &mut rng) {
                Ok((action, body)) => reqs.push(("POST", action, body)),
                Err(e) => {
                    eprintln!("httpload: {e}");
                    std::process::exit(1)
                }
            }
        } else {
            reqs.push(("GET", target.replace("{id}", id), String::new()));
        }
    }
    println!("READY");
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    let mut st = Stats::default();
    let start = Instant::now();
    for (method, path, body) in &reqs {
        let ctype = (*method == "POST").then_some("application/x-www-form-urlencoded");
        simple(&mut c, method, path, ctype, body.as_bytes(), &mut st);
    }
    println!(
        "RESULT requests={} ops={} errors={} seconds={:.3}",
        st.requests,
        st.ops,
        st.errors,
        start.elapsed().as_secs_f64()
    );
    if let Some(e) = st.first_error {
        eprintln!("httpload: first error: {e}");
    }
}

/// One vote (GET + POST) on `id`: the POST's reply, or why it failed.
fn vote_reply(c: &mut Client, id: &str, rng: &mut Rng) -> Result<(Reply, Duration), String> {
    let (action, body) = fill_form(c, id, rng)?;
    let t = Instant::now();
    match c.request("POST", &action, Some("application/x-www-form-urlencoded"), body.as_bytes()) {
        Ok(r) if (200..400).contains(&r.status) => Ok((r, t.elapsed())),
        Ok(r) => Err(format!(
            "POST {action}: {} {}",
            r.status,
            String::from_utf8_lossy(&r.body).chars().take(200).collect::<String>()
        )),
        Err(e) => Err(format!("POST {action}: {e}")),
    }
}

/// `fill ADDR POLL_ID N CONNECTIONS`: N votes on one poll.
fn fill(addr: &str, id: &str, n: usize, conns: usize) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let left = std::sync::Arc::new(AtomicUsize::new(n));
    let start = Instant::now();
    let handles: Vec<_> = (0..conns.max(1))
        .map(|t| {
            let (addr, id, left) = (addr.to_owned(), id.to_owned(), left.clone());
            std::thread::spawn(move || {
                let mut c = Client::new(&addr);
                let mut rng = Rng(0x5EED_0000 + t as u64 * 7_919);
                let mut st = Stats::default();
                while left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |l| l.checked_sub(1)).is_ok() {
                    st.requests += 2;
                    match vote_reply(&mut c, &id, &mut rng) {
                        Ok((_, took)) => {
                            st.lat.push(took.as_micros() as u32);
                            st.ops += 1;
                        }
                        Err(e) => {
                            st.fail(e);
                            // A refused vote is tried again, after a pause (429: the pace).
                            left.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(200));
                            if st.errors > 1000 {
                                break;
                            }
                        }
                    }
                }
                st
            })
        })
        .collect();
    let mut all = Stats::default();
    for h in handles {
        let st = h.join().expect("fill thread");
        all.lat.extend(st.lat);
        all.requests += st.requests;
        all.ops += st.ops;
        all.errors += st.errors;
        if all.first_error.is_none() {
            all.first_error = st.first_error;
        }
    }
    all.lat.sort_unstable();
    let el = start.elapsed().as_secs_f64();
    println!(
        "RESULT rps={:.1} p50_ms={:.3} p99_ms={:.3} requests={} ops={} errors={}",
        all.ops as f64 / el,
        pct(&all.lat, 0.5),
        pct(&all.lat, 0.99),
        all.requests,
        all.ops,
        all.errors
    );
    if let Some(e) = all.first_error {
        eprintln!("httpload: first error: {e}");
    }
}

/// `receipts ADDR POLL_ID N`: N votes, each one's receipt printed.
fn receipts(addr: &str, id: &str, n: usize) {
    let mut c = Client::new(addr);
    let mut rng = Rng(0xCAFE_F00D);
    let mut lat = Vec::new();
    for _ in 0..n {
        let (r, took) = vote_reply(&mut c, id, &mut rng).unwrap_or_else(|e| panic!("vote: {e}"));
        let html = String::from_utf8_lossy(&r.body);
        let receipt = html
            .find("id=\"receipt\"")
            .and_then(|i| html[i..].find('>').map(|j| i + j + 1))
            .and_then(|s| html[s..].find('<').map(|e| html[s..s + e].trim().to_owned()))
            .unwrap_or_else(|| panic!("no receipt on the thank-you page (status {})", r.status));
        println!("RECEIPT {receipt}");
        lat.push(took.as_micros() as u32);
    }
    lat.sort_unstable();
    println!("RESULT p50_ms={:.3} p99_ms={:.3} ops={} errors=0", pct(&lat, 0.5), pct(&lat, 0.99), lat.len());
}

/// `own ADDR POLL_ID RECEIPT (change|withdraw)`: one change or withdrawal.
fn own(addr: &str, id: &str, receipt: &str, action: &str) {
    let mut c = Client::new(addr);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rng(0xD1CE_0000 ^ seed | 1);
    let mut fields = vec![format!("receipt={}", urlencode(receipt)), format!("action={}", urlencode(action))];
    if action == "change" {
        let page = format!("/p/{id}");
        let r = c.request("GET", &page, None, b"").unwrap_or_else(|e| panic!("GET {page}: {e}"));
        let form = vote_form(&String::from_utf8_lossy(&r.body), &page).expect("the share page's vote form");
        for (n, vs) in &form.radios {
            let options: Vec<&String> = vs.iter().filter(|v| !v.is_empty()).collect();
            if !options.is_empty() {
                fields.push(format!("{}={}", urlencode(n), urlencode(options[rng.below(options.len())])));
            }
        }
    } else if action != "withdraw" {
        panic!("own: the action is change or withdraw");
    }
    let body = fields.join("&");
    let path = format!("/p/{id}/ballot");
    // The connection is opened first: only the POST is timed.
    let _ = c.request("GET", "/healthz", None, b"");
    let t = Instant::now();
    let r = c
        .request("POST", &path, Some("application/x-www-form-urlencoded"), body.as_bytes())
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    let took = t.elapsed();
    let html = String::from_utf8_lossy(&r.body);
    let done = r.status == 200 && (action == "change" || html.contains("data-forget-poll"));
    println!(
        "RESULT status={} p50_ms={:.3} ops={} errors={}",
        r.status,
        took.as_secs_f64() * 1e3,
        u8::from(done),
        u8::from(!done)
    );
    if !done {
        eprintln!("httpload: {action}: {} {}", r.status, html.chars().take(300).collect::<String>());
    }
}

/// `trickle ADDR PER_SECOND SECONDS IDS_FILE`: a vote every 1/PER_SECOND s.
fn trickle(addr: &str, per_second: f64, secs: f64, ids: &[String]) {
    let mut c = Client::new(addr);
    let mut rng = Rng(0x7121_C41E);
    let mut st = Stats::default();
    let every = Duration::from_secs_f64(1.0 / per_second);
    let start = Instant::now();
    let mut next = start;
    let mut k = 0usize;
    while next < start + Duration::from_secs_f64(secs) {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        vote(&mut c, &ids[k % ids.len()], &mut rng, &mut st);
        k += 1;
        next += every;
    }
    let el = start.elapsed().as_secs_f64();
    st.lat.sort_unstable();
    st.vote_lat.sort_unstable();
    println!(
        "RESULT rps={:.2} p50_ms={:.3} p99_ms={:.3} max_ms={:.3} requests={} ops={} errors={} vote_p50_ms={:.3} vote_p99_ms={:.3}",
        st.ops as f64 / el,
        pct(&st.lat, 0.5),
        pct(&st.lat, 0.99),
        pct(&st.lat, 1.0),
        st.requests,
        st.ops,
        st.errors,
        pct(&st.vote_lat, 0.5),
        pct(&st.vote_lat, 0.99)
    );
    if let Some(e) = st.first_error {
        eprintln!("httpload: first error: {e}");
    }
}

fn pct(v: &[u32], p: f64) -> f64 {
    v.get(((v.len() as f64 - 1.0) * p).max(0.0) as usize).copied().unwrap_or(0) as f64 / 1000.0
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let usage = "usage: httpload detect ADDR IDS_FILE | (vote|mixed) ADDR CONNECTIONS SECONDS IDS_FILE \
                 | post ADDR CONNECTIONS SECONDS IDS_FILE SERVER_PID CLK_TCK | seq ADDR N IDS_FILE (post|PATH) \
                 | fair ADDR CONNECTIONS SECONDS [posts|pages] [nice=N|idle] [warm] \
                 | fill ADDR POLL_ID N CONNECTIONS | receipts ADDR POLL_ID N \
                 | own ADDR POLL_ID RECEIPT (change|withdraw) | trickle ADDR PER_SECOND SECONDS IDS_FILE";
    let mode = a.get(1).map(String::as_str).unwrap_or("");
    let arg = |i: usize| a.get(i).map(String::as_str).unwrap_or_else(|| panic!("{usage}"));
    match mode {
        "fill" => return fill(arg(2), arg(3), arg(4).parse().expect("N"), arg(5).parse().expect("connections")),
        "receipts" => return receipts(arg(2), arg(3), arg(4).parse().expect("N")),
        "own" => return own(arg(2), arg(3), arg(4), arg(5)),
        "trickle" => {
            let ids: Vec<String> = std::fs::read_to_string(arg(5))
                .expect("ids file")
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect();
            return trickle(arg(2), arg(3).parse().expect("per second"), arg(4).parse().expect("seconds"), &ids);
        }
        _ => {}
    }
    if mode == "fair" {
        let (addr, conns, secs) = (a.get(2), a.get(3), a.get(4));
        let (Some(addr), Some(conns), Some(secs)) = (addr, conns, secs) else { panic!("{usage}") };
        return fair(
            addr,
            conns.parse().expect("connections"),
            secs.parse().expect("seconds"),
            Load::parse(&a[5..]),
            Attackers::parse(&a[5..]),
            a[5..].iter().any(|w| w == "warm"),
        );
    }
    if mode == "fair-load" {
        // The child of `fair ... nice=N|idle`: READY once its connections are
        // ready, the load once a line arrives on stdin, then its counts.
        let (Some(addr), Some(heavy), Some(conns), Some(secs)) = (a.get(2), a.get(3), a.get(4), a.get(5)) else {
            panic!("{usage}")
        };
        let load = Load::parse(&a[6..]);
        let (t, r, f) =
            heavy_load(addr, heavy, conns.parse().expect("connections"), secs.parse().expect("seconds"), load, || {
                println!("READY");
                let _ = std::io::stdout().flush();
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
            });
        println!("LOAD taken={t} refused={r} failed={f}");
        return;
    }
    let ids_path = match mode {
        "detect" => a.get(3),
        "seq" => a.get(4),
        _ => a.get(5),
    }
    .unwrap_or_else(|| panic!("{usage}"));
    let ids: Vec<String> = std::fs::read_to_string(ids_path)
        .expect("ids file")
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let addr = a[2].clone();
    if mode == "detect" {
        let mut c = Client::new(&addr);
        let page = format!("/p/{}", ids[0]);
        match c.request("GET", &page, None, b"") {
            Ok(r) if r.status == 200 => match vote_form(&String::from_utf8_lossy(&r.body), &page) {
                Some(f) => {
                    let hidden: Vec<&str> = f.hidden.iter().map(|(n, _)| n.as_str()).collect();
                    println!(
                        "share page found: form action {} hidden {:?} radio groups {}",
                        f.action,
                        hidden,
                        f.radios.len()
                    );
                    std::process::exit(0)
                }
                None => println!("GET {page}: 200 but no POST form with radio inputs"),
            },
            Ok(r) => println!("GET {page}: {}", r.status),
            Err(e) => println!("GET {page}: {e}"),
        }
        std::process::exit(3);
    }
    if mode == "seq" {
        let n: usize = a[3].parse().expect("N");
        return sequential(&addr, n, &ids, a.get(5).map_or("post", String::as_str));
    }
    let conns: usize = a[3].parse().expect("connections");
    let secs: f64 = a[4].parse().expect("seconds");
    if mode == "post" {
        let pid = a.get(6).unwrap_or_else(|| panic!("{usage}"));
        let hz: f64 = a.get(7).unwrap_or_else(|| panic!("{usage}")).parse().expect("CLK_TCK");
        return post_only(&addr, conns, secs, &ids, pid, hz);
    }
    if mode != "vote" && mode != "mixed" {
        panic!("{usage}");
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let handles: Vec<_> = (0..conns)
        .map(|t| {
            let addr = addr.clone();
            let ids = ids.clone();
            let mode = mode.to_owned();
            std::thread::spawn(move || {
                let mut c = Client::new(&addr);
                let mut rng = Rng(0xA5A5_0000 + t as u64 * 104_729);
                let mut st = Stats::default();
                let mut turn = 0usize;
                while Instant::now() < deadline {
                    let id = &ids[rng.below(ids.len())];
                    if mode == "vote" {
                        vote(&mut c, id, &mut rng, &mut st);
                        continue;
                    }
                    match rng.below(100) {
                        0 => simple(
                            &mut c,
                            "POST",
                            "/api/polls",
                            Some("application/json"),
                            CREATE_BODY.as_bytes(),
                            &mut st,
                        ),
                        1..=9 => vote(&mut c, id, &mut rng, &mut st),
                        _ => {
                            turn += 1;
                            let path = match turn % 4 {
                                0 => format!("/p/{id}"),
                                1 => format!("/p/{id}/results"),
                                2 => format!("/api/polls/{id}"),
                                _ => format!("/api/polls/{id}/results"),
                            };
                            simple(&mut c, "GET", &path, None, b"", &mut st)
                        }
                    }
                }
                st
            })
        })
        .collect();
    let mut all = Stats::default();
    for h in handles {
        let st = h.join().expect("load thread");
        all.lat.extend(st.lat);
        all.vote_lat.extend(st.vote_lat);
        all.requests += st.requests;
        all.ops += st.ops;
        all.errors += st.errors;
        if all.first_error.is_none() {
            all.first_error = st.first_error;
        }
    }
    let el = start.elapsed().as_secs_f64();
    all.lat.sort_unstable();
    all.vote_lat.sort_unstable();
    println!(
        "RESULT rps={:.1} p50_ms={:.3} p99_ms={:.3} requests={} ops={} errors={} http_rps={:.1} vote_p50_ms={:.3} vote_p99_ms={:.3}",
        all.ops as f64 / el,
        pct(&all.lat, 0.5),
        pct(&all.lat, 0.99),
        all.requests,
        all.ops,
        all.errors,
        all.requests as f64 / el,
        pct(&all.vote_lat, 0.5),
        pct(&all.vote_lat, 0.99),
    );
    if let Some(e) = all.first_error {
        eprintln!("httpload: first error: {e}");
    }
}
