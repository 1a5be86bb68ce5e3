//! Turns bench/run.sh's raw results into a Markdown report and an SVG chart.
//!
//!   report RESULTS_TSV META_FILE OUT_MD OUT_SVG
//!
//! RESULTS_TSV: one row per measurement, tab-separated:
//!   section scenario dataset rps p50_ms p99_ms cpu_us rss_kb db_bytes baseline note
//! (`-` for a figure that does not apply). `baseline` names the scenario of a
//! row in section `baseline` (comma-separated for several); the ratio is this
//! row's rps over that row's. META_FILE: `key=value` lines shown as is.
use std::fmt::Write as _;

#[derive(Clone, Debug)]
struct Row {
    section: String,
    scenario: String,
    dataset: String,
    rps: Option<f64>,
    p50: Option<f64>,
    p99: Option<f64>,
    cpu: Option<f64>,
    rss: Option<f64>,
    dbb: Option<f64>,
    baseline: Vec<String>,
    note: String,
}

fn num(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

fn f(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |v| format!("{v:.digits$}"))
}

fn thousands(v: Option<f64>) -> String {
    let Some(v) = v else { return "–".into() };
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    assert!(a.len() == 5, "usage: report RESULTS_TSV META_FILE OUT_MD OUT_SVG");
    let rows: Vec<Row> = std::fs::read_to_string(&a[1])
        .expect("results")
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            let g = |i: usize| c.get(i).copied().unwrap_or("-");
            Row {
                section: g(0).into(),
                scenario: g(1).into(),
                dataset: g(2).into(),
                rps: num(g(3)),
                p50: num(g(4)),
                p99: num(g(5)),
                cpu: num(g(6)),
                rss: num(g(7)),
                dbb: num(g(8)),
                baseline: g(9).split(',').filter(|s| *s != "-" && !s.is_empty()).map(str::to_owned).collect(),
                note: if g(10) == "-" { String::new() } else { g(10).to_owned() },
            }
        })
        .collect();
    let meta = std::fs::read_to_string(&a[2]).unwrap_or_default();
    let base = |name: &str| rows.iter().find(|r| r.section == "baseline" && r.scenario == name);
    let ratio = |r: &Row, name: &str| -> Option<f64> { Some(r.rps? / base(name)?.rps?) };
    let ratios = |r: &Row| -> String {
        let parts: Vec<String> =
            r.baseline.iter().filter_map(|b| ratio(r, b).map(|x| format!("{:.0} % of {b}", x * 100.0))).collect();
        if parts.is_empty() { "–".into() } else { parts.join("; ") }
    };

    let mut md = String::new();
    let _ = writeln!(md, "# anonpoll benchmark results\n");
    let _ = writeln!(md, "Written by `bench/run.sh` (method: docs/PERFORMANCE.md). A noisy, shared machine: compare");
    let _ =
        writeln!(md, "ratios against baselines from the same run, and CPU time per request, rather than raw rates.\n");
    let _ = writeln!(md, "| Run | |\n|---|---|");
    for l in meta.lines().filter_map(|l| l.split_once('=')) {
        let _ = writeln!(md, "| {} | {} |", l.0, l.1.replace('|', "/"));
    }
    let header = "| Scenario | Data | Req/s | p50 ms | p99 ms | CPU µs/req | Peak RSS MiB | DB bytes/resp | Ratio to baseline | Note |\n|---|---|--:|--:|--:|--:|--:|--:|---|---|";
    let line = |r: &Row| {
        format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.scenario,
            r.dataset,
            thousands(r.rps),
            f(r.p50, 2),
            f(r.p99, 2),
            f(r.cpu, 1),
            f(r.rss.map(|k| k / 1024.0), 1),
            thousands(r.dbb),
            ratios(r),
            r.note
        )
    };
    for (section, title) in
        [("baseline", "Baselines (same run)"), ("scenario", "polld scenarios"), ("skipped", "Not measured in this run")]
    {
        let sel: Vec<&Row> = rows.iter().filter(|r| r.section == section).collect();
        if sel.is_empty() {
            continue;
        }
        let _ = writeln!(md, "\n## {title}\n");
        if section == "skipped" {
            for r in sel {
                let _ = writeln!(md, "- **{}** ({}): {}", r.scenario, r.dataset, r.note);
            }
            continue;
        }
        let _ = writeln!(md, "{header}");
        for r in sel {
            let _ = writeln!(md, "{}", line(r));
        }
    }

    // Targets of issue 6.
    let _ = writeln!(md, "\n## Targets (issue 6)\n");
    let _ = writeln!(md, "| Target | Measured | Ratio | Met |\n|---|---|--:|---|");
    let target = |md: &mut String, label: &str, scen: &str, bname: &str, goal: f64| {
        let found: Vec<&Row> = rows.iter().filter(|r| r.section == "scenario" && r.scenario == scen).collect();
        if found.is_empty() {
            let _ = writeln!(md, "| {label} | not measured (see above) | – | – |");
        }
        for r in found {
            if let (Some(x), Some(b)) = (ratio(r, bname), base(bname)) {
                let _ = writeln!(
                    md,
                    "| {label} | {} {}/s at {} vs {} {}/s | {:.0} % | {} |",
                    scen,
                    thousands(r.rps),
                    r.dataset,
                    bname,
                    thousands(b.rps),
                    x * 100.0,
                    if x >= goal { "yes" } else { "**no**" }
                );
            }
        }
    };
    target(&mut md, "vote path ≥ 60 % of batched SQLite", "vote (HTTP)", "sqlite 100/tx", 0.6);
    target(
        &mut md,
        "vote path ≥ 60 % of batched SQLite (POST alone, page fetched before)",
        "vote POST only (HTTP)",
        "sqlite 100/tx",
        0.6,
    );
    target(
        &mut md,
        "vote path ≥ 60 % of batched SQLite (store only, no HTTP)",
        "vote (Store::cast)",
        "sqlite 100/tx",
        0.6,
    );
    target(&mut md, "share page ≥ 50 % of bare tiny_http", "share page", "hello tiny_http", 0.5);
    target(&mut md, "share page ≥ 50 % of bare hyper", "share page", "hello hyper", 0.5);
    target(&mut md, "(for reference) poll JSON vs bare tiny_http", "poll JSON", "hello tiny_http", 0.5);

    // Scaling pivot.
    let mut datasets: Vec<String> = Vec::new();
    let mut scens: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.section == "scenario" && r.dataset.contains("resp")) {
        if !datasets.contains(&r.dataset) {
            datasets.push(r.dataset.clone());
        }
        if !scens.contains(&r.scenario) {
            scens.push(r.scenario.clone());
        }
    }
    if datasets.len() > 1 {
        let _ = writeln!(md, "\n## Scaling: requests/s and CPU µs per request as data grows\n");
        let _ = write!(md, "| Scenario |");
        for d in &datasets {
            let _ = write!(md, " {d} |");
        }
        let _ = write!(md, "\n|---|");
        for _ in &datasets {
            let _ = write!(md, "--:|");
        }
        let _ = writeln!(md);
        for s in &scens {
            let _ = write!(md, "| {s} |");
            for d in &datasets {
                match rows.iter().find(|r| r.section == "scenario" && &r.scenario == s && &r.dataset == d) {
                    Some(r) => {
                        let _ = write!(md, " {} req/s, {} µs |", thousands(r.rps), f(r.cpu, 1));
                    }
                    None => {
                        let _ = write!(md, " – |");
                    }
                }
            }
            let _ = writeln!(md);
        }
    }
    std::fs::write(&a[3], md).expect("write md");
    std::fs::write(&a[4], svg(&rows)).expect("write svg");
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Two panels of horizontal bars: requests/s (log scale) and CPU µs/request.
fn svg(rows: &[Row]) -> String {
    let bars: Vec<&Row> = rows.iter().filter(|r| r.section != "skipped" && r.rps.is_some()).collect();
    let (label_w, panel_w, gap, bar_h, top) = (300.0, 330.0, 40.0, 16.0, 56.0);
    let width = label_w + 2.0 * panel_w + gap + 30.0;
    let height = top + bars.len() as f64 * (bar_h + 4.0) + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#fff"/>"##);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14" font-weight="bold">anonpoll bench: requests/s (log scale) and polld CPU µs per request</text>"#
    );
    let x0 = label_w;
    let x1 = label_w + panel_w + gap;
    let (lmin, lmax) = (2.0_f64, 5.3_f64); // 100 .. 200k req/s
    // A round axis end: the next multiple of 50 µs above the largest bar.
    let cpu_max = ((bars.iter().filter_map(|r| r.cpu).fold(10.0_f64, f64::max) * 1.05) / 50.0).ceil() * 50.0;
    let _ = writeln!(s, r#"<text x="{x0}" y="{}" font-weight="bold">requests/s</text>"#, top - 22.0);
    let _ = writeln!(
        s,
        r#"<text x="{x1}" y="{}" font-weight="bold">server CPU µs per request (per vote for votes)</text>"#,
        top - 22.0
    );
    for e in [2, 3, 4, 5] {
        let x = x0 + (e as f64 - lmin) / (lmax - lmin) * panel_w;
        let _ = writeln!(s, r##"<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="#ddd"/>"##, top - 8.0, height - 30.0);
        let _ = writeln!(
            s,
            r##"<text x="{x}" y="{}" text-anchor="middle" fill="#555">{}</text>"##,
            top - 10.0,
            ["100", "1k", "10k", "100k"][e - 2]
        );
    }
    for i in 0..=5 {
        let v = cpu_max * i as f64 / 5.0;
        let x = x1 + v / cpu_max * panel_w;
        let _ = writeln!(s, r##"<line x1="{x}" x2="{x}" y1="{}" y2="{}" stroke="#ddd"/>"##, top - 8.0, height - 30.0);
        let _ = writeln!(s, r##"<text x="{x}" y="{}" text-anchor="middle" fill="#555">{v:.0}</text>"##, top - 10.0);
    }
    for (i, r) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar_h + 4.0);
        let color = match r.section.as_str() {
            "baseline" => "#9aa5b1",
            _ if r.dataset.contains("1M") => "#1f5fa8",
            _ if r.dataset.contains("100k") => "#3f86d0",
            _ => "#7fb3e6",
        };
        let label = if r.dataset == "-" { r.scenario.clone() } else { format!("{} · {}", r.scenario, r.dataset) };
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            label_w - 8.0,
            y + bar_h - 4.0,
            esc(&label)
        );
        let rps = r.rps.unwrap_or(0.0).max(1.0);
        let w = ((rps.log10() - lmin) / (lmax - lmin)).clamp(0.0, 1.0) * panel_w;
        let _ = writeln!(s, r#"<rect x="{x0}" y="{y}" width="{w:.1}" height="{bar_h}" fill="{color}"/>"#);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{}">{}</text>"#, x0 + w + 3.0, y + bar_h - 4.0, super_thousands(rps));
        if let Some(c) = r.cpu {
            let w = (c / cpu_max).clamp(0.0, 1.0) * panel_w;
            let _ = writeln!(s, r#"<rect x="{x1}" y="{y}" width="{w:.1}" height="{bar_h}" fill="{color}"/>"#);
            let _ = writeln!(s, r#"<text x="{:.1}" y="{}">{c:.1}</text>"#, x1 + w + 3.0, y + bar_h - 4.0);
        }
    }
    let _ = writeln!(
        s,
        r##"<text x="10" y="{}" fill="#555">grey: baselines; blue, light to dark: 1k, 100k, 1M stored responses. Figures: bench/results/latest.md</text>"##,
        height - 10.0
    );
    s.push_str("</svg>\n");
    s
}

fn super_thousands(v: f64) -> String {
    thousands(Some(v))
}
