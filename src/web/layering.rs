//! A test of the web layer's shape: no page module imports
//! another page module, and nothing below the pages imports a page.
//!
//! Why it exists: the page modules once imported each other in a circle
//! (admin took the QR code from create, create took it from admin, poll took
//! a path from own, own took the poll facts from poll…), so a change to one
//! page could break another, and nothing said where a shared piece lived.
//! The shared pieces now live in `parts` (and the older shared modules:
//! `layout`, `form`, `media`…), below the pages; only the router (`mod.rs`)
//! names the pages. This test reads the sources of `src/web` and resolves
//! every `super::…`, `self::…` and `crate::…` path (the only ways one
//! module of `web` can name another) to the top module of `web` it lands in.

use std::collections::BTreeMap;
use std::path::Path;

/// The page modules: each answers routes of its own (see `Route` in
/// `mod.rs`) and is a leaf of the layer. They are listed here, not found,
/// because what makes a module a page is the router's choice; a new page
/// must be added here, or it could import the others unseen.
const PAGES: [&str; 6] = ["admin", "create", "own", "poll", "privacy", "results"];

/// Files of `src/web` that are no module of the layer's shape: this test
/// itself, whose examples name pages in strings.
const SKIPPED: [&str; 1] = ["layering.rs"];

/// The module path of a file under `src/web` (`create/draft.rs` is
/// `create::draft`; `mod.rs` is the layer's root, the router).
fn module_of(file: &str) -> Vec<String> {
    let file = file.strip_suffix(".rs").unwrap_or(file);
    let mut path: Vec<String> = file.split('/').map(str::to_owned).collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// Every place where the source of `file` names a module of `web`: the
/// line and the top module of `web` named (`*` for a glob of the root,
/// which brings in every page). Lines of comments are skipped; an inline
/// `mod name {` at the line's start (rustfmt's layout, as for `mod tests`)
/// lasts until the next `}` at a line's start.
fn references(file: &str, source: &str) -> Vec<(usize, String)> {
    let module = module_of(file);
    let mut found = Vec::new();
    // The code without comments, and the module each line is in.
    let mut code = String::new();
    let mut line_module = Vec::new();
    let mut inline: Option<String> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if let Some(name) = line.strip_prefix("mod ").or_else(|| line.strip_prefix("pub mod ")) {
            if let Some(name) = name.strip_suffix(" {") {
                inline = Some(name.trim().to_owned());
            }
        } else if line.starts_with('}') {
            inline = None;
        }
        let mut here = module.clone();
        here.extend(inline.clone());
        line_module.push(here);
        if !trimmed.starts_with("//") {
            code.push_str(line);
        }
        code.push('\n');
    }
    let line_of = |at: usize| code[..at].matches('\n').count();
    for start in ["super::", "self::", "crate::"] {
        for (at, _) in code.match_indices(start) {
            // Only the start of a path: `super::super::` is read once.
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let line = line_of(at);
            let Some(here) = line_module.get(line) else { continue };
            let mut rest = &code[at..];
            let named = if start == "crate::" {
                from_crate(&rest[start.len()..])
            } else {
                // Leading `self` and `super` segments move from this module.
                let mut base = here.clone();
                loop {
                    if let Some(r) = rest.strip_prefix("super::") {
                        if base.pop().is_none() {
                            break;
                        }
                        rest = r;
                    } else if let Some(r) = rest.strip_prefix("self::") {
                        rest = r;
                    } else {
                        break;
                    }
                }
                match base.first() {
                    Some(top) => vec![top.clone()],
                    None => firsts(rest),
                }
            };
            for top in named {
                found.push((line + 1, top));
            }
        }
    }
    found
}

/// What a path from the crate's root names of `web`: `crate::web::…` as
/// from the root of `web`, the `web…` items of a `crate::{…}` group alike,
/// and `web` itself (`use crate::web;`, through which every page can be
/// named) as `*`.
fn from_crate(rest: &str) -> Vec<String> {
    let items = match rest.strip_prefix('{') {
        Some(group) => group_items(group),
        None => vec![rest.to_owned()],
    };
    let mut named = Vec::new();
    for item in &items {
        match item.trim().strip_prefix("web") {
            Some(r) if r.starts_with("::") => named.extend(firsts(&r[2..])),
            Some(r) if !r.starts_with(|c: char| c.is_alphanumeric() || c == '_') => named.push("*".to_owned()),
            _ => {}
        }
    }
    named
}

/// The first segments a path names after the root of `web`: one ident, the
/// first ident of each item of a `{…}` group (`self`, `web` itself, as
/// `*`), or `*` for a glob.
fn firsts(rest: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    if rest.starts_with('*') {
        return vec!["*".to_owned()];
    }
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let named = group_items(group).into_iter().map(|i| ident(i.trim())).filter(|i| !i.is_empty());
    named.map(|i| if i == "self" { "*".to_owned() } else { i }).collect()
}

/// The items of a `{…}` group (`group` starts after its `{`): up to its
/// closing brace, split at the commas of its own depth.
fn group_items(group: &str) -> Vec<String> {
    let (mut depth, mut items, mut item) = (0usize, Vec::new(), String::new());
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    items
}

/// The imports of `files` (path under `src/web`, source) that break the
/// layer's shape, as `file:line: names page`.
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (file, source) in files {
        if SKIPPED.contains(&file.as_str()) {
            continue;
        }
        let module = module_of(file);
        // The router names every page: that is its job.
        let Some(own_top) = module.first() else { continue };
        let is_page = PAGES.contains(&own_top.as_str());
        for (line, top) in references(file, source) {
            if top == "*" {
                out.push(format!("{file}:{line}: imports all of web (every page with it)"));
            } else if PAGES.contains(&top.as_str()) && &top != own_top {
                let what = if is_page { "page" } else { "part below the pages" };
                out.push(format!("{file}:{line}: {what} `{own_top}` imports page `{top}`"));
            }
        }
    }
    out
}

/// The `.rs` files under `dir`, by their path relative to `root`.
fn sources(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { panic!("cannot read {}", dir.display()) };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let Ok(text) = std::fs::read_to_string(&path) else { panic!("cannot read {}", path.display()) };
            let Ok(rel) = path.strip_prefix(root) else { continue };
            into.insert(rel.to_string_lossy().replace('\\', "/"), text);
        }
    }
}

#[test]
fn no_page_module_imports_another_and_no_part_imports_a_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > PAGES.len(), "found only {:?}", files.keys());
    for page in PAGES {
        assert!(
            files.contains_key(&format!("{page}.rs")) || files.contains_key(&format!("{page}/mod.rs")),
            "the page `{page}` is gone: update PAGES"
        );
    }
    let found = violations(&files);
    assert!(found.is_empty(), "the web layer's shape is broken:\n{}", found.join("\n"));
}

#[test]
fn the_check_finds_every_way_a_module_can_name_a_page() {
    let files: BTreeMap<String, String> = [
        ("admin.rs", "use super::create::{SlotField, alt_text};\n"),
        ("own.rs", "use super::{WebWorker, poll::facts};\nfn f() { super::results::results_section(); }\n"),
        // A multi-line group.
        ("poll.rs", "use super::{\n    layout::Ctx,\n    settings,\n    own,\n};\n"),
        ("results.rs", "use crate::web::poll::facts;\n"),
        // A file of a page's own folder: `super::super` is the root.
        ("create/draft.rs", "use super::Draft;\nfn f() { super::super::admin::qr(); }\n"),
        // A part below the pages.
        ("parts/facts.rs", "use super::super::poll::Entered;\n"),
        // A glob of the root brings in every page.
        ("privacy.rs", "use super::*;\n"),
        // Within a page's tests, `super::super` is the root too.
        (
            "layout.rs",
            "fn a() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    fn b() { super::super::own::path(); }\n}\n",
        ),
        // Paths from the crate's root: a group, and `web` itself.
        ("own/more.rs", "use crate::{domain::Poll, web::poll::facts};\n"),
        ("results/more.rs", "use crate::web;\nuse crate::domain::{self, Poll};\n"),
        // None of these is an import of another page.
        ("mod.rs", "mod admin;\nfn g() { admin::prompt(); }\n"),
        ("own_ok.rs", "// super::poll::facts in a comment\nuse super::layout::Ctx;\nuse crate::app::Links;\n"),
    ]
    .into_iter()
    .map(|(f, s)| (f.to_owned(), s.to_owned()))
    .collect();
    let found = violations(&files);
    let expected = [
        "admin.rs:1: page `admin` imports page `create`",
        "create/draft.rs:2: page `create` imports page `admin`",
        "layout.rs:5: part below the pages `layout` imports page `own`",
        "own.rs:1: page `own` imports page `poll`",
        "own.rs:2: page `own` imports page `results`",
        "own/more.rs:1: page `own` imports page `poll`",
        "parts/facts.rs:1: part below the pages `parts` imports page `poll`",
        "poll.rs:1: page `poll` imports page `own`",
        "privacy.rs:1: imports all of web (every page with it)",
        "results.rs:1: page `results` imports page `poll`",
        "results/more.rs:1: imports all of web (every page with it)",
    ];
    assert_eq!(found, expected);
}
