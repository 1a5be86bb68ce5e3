//! A test of the crate's layers: every top-level module names only modules
//! of its own layer or of layers below it, and no two modules name each
//! other in a circle.
//!
//! Why it exists: a module that imports one above it ties the lower layer
//! to the upper one (the connection layer once took a constant from the web
//! pages, which took one from it; the HTTP contract implemented a store
//! trait), so a change up there breaks code down here, and nothing said
//! where a shared piece belongs. `web/layering.rs` checks the shape inside
//! the web layer; this one checks the crate. It reads the sources of `src`
//! and finds every `crate::NAME` path outside comments and outside the
//! modules' unit tests (a test may use anything to set up its case).
//!
//! A new top-level module is added to [`LAYERS`]: the test fails until it
//! is, saying so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first, each with the modules in it and what belongs
/// there. A module may name modules of its own layer and of those below.
const LAYERS: [(&str, &[&str]); 8] = [
    (
        "foundations: values and tools that know nothing of polls (secrets, days, client groups, \
         keyed hashes, the key chain, thread priorities, multipart and media parsing)",
        &["client", "day", "harden", "keyed", "keyring", "media", "multipart", "priority", "secret"],
    ),
    ("domain: what a poll is, validated once, and its words in four languages", &["domain", "i18n"]),
    ("contract: the library's error and the request and response every front end speaks", &["error", "http"]),
    ("connections: HTTP/1.1 served and requests admitted, for any handler of the contract's requests", &["server"]),
    ("storage and limits: the store (every engine) and the per-client limits", &["ratelimit", "store"]),
    ("application: each use case once", &["app"]),
    ("front ends: the JSON API, its OpenAPI document, the web pages", &["api", "schema", "web"]),
    ("programs: polld's and pollctl's wiring and options", &["config", "ctl", "daemon"]),
];

/// Files that are no module's code: this test, and the crate root.
const SKIPPED: [&str; 2] = ["layering.rs", "lib.rs"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// The code of `source` that counts: without comment lines, and without a
/// trailing `#[cfg(test)] mod tests` (the unit tests of the file).
fn code_of(source: &str) -> String {
    let mut code = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.trim_start().starts_with("mod tests")) {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
        }
        code.push('\n');
    }
    code
}

/// The top-level modules `code` names through `crate::`.
fn named(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            found.insert(name);
        } else if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::c}`
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

fn sources(root: &Path, dir: &Path, into: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(root, &path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
            // A file of unit tests is a test.
            if SKIPPED.contains(&rel.as_str()) || name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            into.insert(rel, std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
}

/// The top-level module a file under `src` belongs to.
fn module_of(file: &str) -> String {
    file.split('/').next().unwrap_or(file).trim_end_matches(".rs").to_owned()
}

/// Each edge that goes up a layer, each module in no layer, and each
/// circle, in words that say where the code belongs.
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, source) in files {
        let from = module_of(file);
        let Some(from_layer) = layer_of(&from) else {
            problems.push(format!("src/{file}: the module `{from}` is in no layer of src/layering.rs's LAYERS"));
            continue;
        };
        for to in named(&code_of(source)) {
            if to == from {
                continue;
            }
            let Some(to_layer) = layer_of(&to) else { continue };
            if to_layer > from_layer {
                problems.push(format!(
                    "src/{file}: `{from}` ({}) names `{to}`, a layer above ({}); move what it needs \
                     down to where both can name it, or the code up to `{to}`'s layer",
                    LAYERS[from_layer].0, LAYERS[to_layer].0
                ));
            }
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    // Circles within a layer: a depth-first search from each module.
    for start in edges.keys() {
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if next == start {
                    problems.push(format!("a circle: {} -> {start}", path.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    problems
}

#[test]
fn every_module_names_only_its_own_layer_and_those_below_and_none_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 50, "the sources were found: {}", files.len());
    // Every top-level module of lib.rs is in a layer.
    let lib = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ").and_then(|l| l.strip_suffix(';')) {
            assert!(layer_of(name).is_some(), "`{name}` (lib.rs) is in no layer of src/layering.rs's LAYERS");
        }
    }
    let problems = violations(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The test catches what it is for: an arrow up, a circle, a module in no
/// layer; and not a comment, a unit test, or a name that merely ends so.
#[test]
fn an_arrow_up_a_circle_and_an_unknown_module_are_found() {
    let mut files = BTreeMap::new();
    files.insert("server.rs".to_owned(), "use crate::web::media::PIECE;\n".to_owned());
    files.insert("store/mod.rs".to_owned(), "use crate::{day::Day, app::App};\n".to_owned());
    files.insert("error.rs".to_owned(), "fn f() { crate::http::x(); }\n".to_owned());
    files.insert("http.rs".to_owned(), "use crate::error::Error;\n".to_owned());
    files.insert("gadget.rs".to_owned(), "\n".to_owned());
    files.insert(
        "domain/mod.rs".to_owned(),
        "// crate::web in a comment\nlet a = my_crate::web::x;\n#[cfg(test)]\nmod tests {\n    use crate::web::W;\n}\n"
            .to_owned(),
    );
    let problems = violations(&files);
    let joined = problems.join("\n");
    assert!(joined.contains("src/server.rs: `server`"), "{joined}");
    assert!(joined.contains("names `web`, a layer above"), "{joined}");
    assert!(joined.contains("src/store/mod.rs: `store`") && joined.contains("names `app`"), "{joined}");
    assert!(joined.contains("a circle: error -> http -> error"), "{joined}");
    assert!(joined.contains("`gadget` is in no layer"), "{joined}");
    assert!(!joined.contains("src/domain"), "comments, other crates and unit tests do not count: {joined}");
}
