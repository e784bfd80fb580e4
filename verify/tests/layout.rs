//! The crate's layout rule, checked on its source: no two files import each other (directly
//! or round a longer loop), and imports point one way between the crate's floors.
//!
//! Floors, from the top: `ui` and `http` (the adapters) → `admin` and `auth` (the facade) →
//! the pure domain (`variants`, `import`, `access`) and `store` → `model` and `error`.
//! The rules this test holds (see the crate docs' "Layout"):
//!
//! * the core (everything but `http` and `ui`) never imports `http` or `ui`;
//! * `ui` never imports `http` (both call the facade);
//! * the domain never imports `store` or `admin`;
//! * `store` never imports the domain or `admin`;
//! * `model` imports nothing above it.
//!
//! Imports are read as text: every `use` tree and every inline `crate::…`/`super::…` path,
//! outside comments and `#[cfg(test)]` modules. A module and its own ancestors or
//! descendants may name each other (a parent declares and re-exports its children; a child
//! uses its parent's shared items): only imports between files of different branches count
//! for the circle check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `src/`, by its module path (`src/admin/keys.rs` → `admin::keys`,
/// `src/store/mod.rs` → `store`, `src/lib.rs` → the crate root).
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            let file = parts.pop().unwrap();
            let stem = file.trim_end_matches(".rs");
            if !(stem == "mod" || (parts.is_empty() && stem == "lib")) {
                parts.push(stem.to_owned());
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The text of a file without comments and without its `#[cfg(test)]` modules.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // `#[cfg(test)] mod tests { … }`: skip to the line that closes it (a `}` at the
            // attribute's indentation); `#[cfg(test)] mod tests;` is one line.
            let indent = line.len() - trimmed.len();
            if let Some(next) = lines.peek()
                && next.trim_start().starts_with("mod ")
                && next.trim_end().ends_with('{')
            {
                for inner in lines.by_ref() {
                    let t = inner.trim_start();
                    if inner.len() - t.len() == indent && t.starts_with('}') {
                        break;
                    }
                }
            } else {
                lines.next();
            }
            continue;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let line = match line.find("//") {
            // Not inside a string, as far as a quick look can tell: `"http://…"` stays.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The paths a `use` tree names: `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`; a
/// renamed one as `path=>alias`.
fn use_paths(tree: &str) -> Vec<String> {
    let tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree: String = tree
        .replace(" as ", "=>")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let mut out = Vec::new();
    expand("", &tree, &mut out);
    out
}

fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    match tree.find('{') {
        None => out.push(format!("{prefix}{tree}")),
        Some(open) => {
            let head = &tree[..open];
            let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
            let inner = &tree[open + 1..close];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&format!("{prefix}{head}"), &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if start < inner.len() {
                expand(&format!("{prefix}{head}"), &inner[start..], out);
            }
        }
    }
}

/// Every path starting with `crate::`, `super::` or `self::` in `code`, and every path of a
/// `use` tree (which may start with a child module's name).
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `use` statements, possibly over several lines.
    for statement in use_statements(code, "use ") {
        out.extend(
            use_paths(&statement)
                .into_iter()
                .map(|p| p.split("=>").next().unwrap_or("").to_owned()),
        );
    }
    // Inline paths.
    for anchor in ["crate::", "super::"] {
        let mut rest = code;
        while let Some(at) = rest.find(anchor) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            out.push(tail[..end].trim_end_matches(':').to_owned());
            rest = &tail[end..];
        }
    }
    out
}

/// The `use` trees of `code`: each statement that starts a line (after white space and a
/// visibility such as `pub(crate) `), up to its `;`, possibly over several lines. Text in
/// string literals never starts a line with `use `, so it is not mistaken for one.
fn use_statements(code: &str, keyword: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let mut t = line.trim_start();
        if let Some(rest) = t.strip_prefix("pub") {
            let rest = match rest.strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, after)| after),
                None => rest,
            };
            t = rest.trim_start();
        }
        let Some(tree) = t.strip_prefix(keyword) else {
            continue;
        };
        let mut statement = tree.to_owned();
        while !statement.contains(';') {
            match lines.next() {
                Some(next) => {
                    statement.push(' ');
                    statement.push_str(next);
                }
                None => break,
            }
        }
        let end = statement.find(';').unwrap_or(statement.len());
        out.push(statement[..end].to_owned());
    }
    out
}

/// The module a path names, from `module` (the file it is written in): the longest prefix
/// that is a module of the crate.
fn resolve(module: &Module, path: &str, known: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let mut parts = path.split("::").filter(|p| !p.is_empty());
    let first = parts.next()?;
    let mut base: Module = match first {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => {
            let mut m = module.clone();
            m.pop();
            m
        }
        // A `use` of a child module (`use keys::expired;` in `admin/mod.rs`).
        name => {
            let mut m = module.clone();
            m.push(name.to_owned());
            if !known.contains_key(&m) {
                return None;
            }
            m
        }
    };
    let mut found = known.contains_key(&base).then(|| base.clone());
    for part in parts {
        if part == "super" {
            base.pop();
            found = Some(base.clone());
            continue;
        }
        base.push(part.to_owned());
        if known.contains_key(&base) {
            found = Some(base.clone());
        } else {
            break;
        }
    }
    found
}

fn related(a: &Module, b: &Module) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn floor(module: &Module) -> &str {
    module.first().map_or("lib", String::as_str)
}

/// The names the crate root re-exports (`pub use admin::ToggleAdmin;`), with the module
/// each comes from: `crate::ToggleAdmin` is an import of `admin`.
fn root_exports(known: &BTreeMap<Module, PathBuf>) -> BTreeMap<String, Module> {
    let root = Module::new();
    let Some(lib) = known.get(&root) else {
        return BTreeMap::new();
    };
    let text = code(&std::fs::read_to_string(lib).unwrap());
    let mut out = BTreeMap::new();
    for statement in use_statements(&text, "use ") {
        for path in use_paths(&statement) {
            let (path, name) = match path.split_once("=>") {
                Some((p, alias)) => (p.to_owned(), alias.to_owned()),
                None => (
                    path.clone(),
                    path.rsplit("::").next().unwrap_or("").to_owned(),
                ),
            };
            if let Some(module) = resolve(&root, &path, known)
                && !module.is_empty()
            {
                out.insert(name, module);
            }
        }
    }
    out
}

fn imports() -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../src");
    let known = modules(&src);
    let exports = root_exports(&known);
    let mut graph = BTreeMap::new();
    for (module, path) in &known {
        let name = path.file_name().unwrap().to_string_lossy();
        // Test modules that live in files of their own.
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let targets: BTreeSet<Module> = paths(&code(&text))
            .iter()
            .filter_map(|p| {
                // `crate::ToggleAdmin`: the module the root re-exports it from.
                let via_root = p
                    .strip_prefix("crate::")
                    .and_then(|rest| exports.get(rest.split("::").next().unwrap_or("")));
                via_root.cloned().or_else(|| resolve(module, p, &known))
            })
            .filter(|t| t != module)
            .collect();
        graph.insert(module.clone(), targets);
    }
    graph
}

fn show(m: &Module) -> String {
    if m.is_empty() {
        "crate".to_owned()
    } else {
        m.join("::")
    }
}

#[test]
fn no_two_files_import_each_other() {
    let graph = imports();
    // Tarjan's strongly connected components over the edges between unrelated modules.
    struct Walk<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on_stack: BTreeSet<Module>,
        components: Vec<Vec<Module>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, m: &Module) {
            let i = self.index.len();
            self.index.insert(m.clone(), i);
            self.low.insert(m.clone(), i);
            self.stack.push(m.clone());
            self.on_stack.insert(m.clone());
            let targets: Vec<Module> = self.graph.get(m).into_iter().flatten().cloned().collect();
            for t in targets.iter().filter(|t| !related(m, t)) {
                if !self.graph.contains_key(t) {
                    continue;
                }
                if !self.index.contains_key(t) {
                    self.visit(t);
                    let low = self.low[m].min(self.low[t]);
                    self.low.insert(m.clone(), low);
                } else if self.on_stack.contains(t) {
                    let low = self.low[m].min(self.index[t]);
                    self.low.insert(m.clone(), low);
                }
            }
            if self.low[m] == self.index[m] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(&top);
                    let done = &top == m;
                    component.push(top);
                    if done {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.components.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for m in graph.keys() {
        if !walk.index.contains_key(m) {
            walk.visit(m);
        }
    }
    let circles: Vec<String> = walk
        .components
        .iter()
        .map(|c| c.iter().map(show).collect::<Vec<_>>().join(" ↔ "))
        .collect();
    assert!(
        circles.is_empty(),
        "files that import each other (directly or round a loop):\n{}",
        circles.join("\n")
    );
}

#[test]
fn imports_point_one_way_between_floors() {
    let forbidden: &[(&[&str], &[&str], &str)] = &[
        (
            &[
                "lib", "admin", "auth", "access", "error", "import", "model", "names", "store",
                "variants",
            ],
            &["http", "ui"],
            "the core never imports an adapter",
        ),
        (
            &["ui"],
            &["http"],
            "the admin page calls the facade, not the HTTP API",
        ),
        (
            &["variants", "import", "access"],
            &["store", "admin"],
            "the domain is pure",
        ),
        (
            &["store"],
            &["admin", "variants", "import", "access"],
            "stores know records, not operations",
        ),
        (
            &["model"],
            &["admin", "auth", "variants", "import", "access", "store"],
            "wire types import nothing above them",
        ),
    ];
    let graph = imports();
    let mut wrong = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            for (froms, tos, why) in forbidden {
                if froms.contains(&floor(from)) && tos.contains(&floor(to)) {
                    wrong.push(format!("{} → {} ({why})", show(from), show(to)));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layout rule:\n{}",
        wrong.join("\n")
    );
}

/// The reader above finds what it should: without these, a parser that found nothing would
/// pass both tests.
#[test]
fn the_reader_finds_known_imports() {
    let graph = imports();
    let of = |m: &str| -> BTreeSet<String> {
        graph[&m.split("::").map(str::to_owned).collect::<Module>()]
            .iter()
            .map(show)
            .collect()
    };
    assert!(of("admin").contains("store"), "admin imports store");
    assert!(
        of("http::variants").contains("admin"),
        "http imports the facade"
    );
    assert!(
        use_paths("a::{b, c::{d, e}}") == ["a::b", "a::c::d", "a::c::e"],
        "use trees expand"
    );
}

/// The source of every `.rs` file directly in `src/<dir>/` (and its subfolders), by path.
fn sources(dir: &str) -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../src")
        .join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, code(&text)));
            }
        }
    }
    out.sort();
    out
}

/// Only the flow (`admin/flow.rs`) talks to the store's commit: every write operation reads,
/// decides and commits through it, so which reads become preconditions is never an author's
/// care. The rule allows one more file, and no operation file.
#[test]
fn store_commits_come_from_the_flow() {
    let committing: Vec<String> = sources("admin")
        .into_iter()
        .filter(|(_, code)| {
            code.contains("store.commit(")
                || code.contains("store.submit(")
                || code.contains(".commit(changes")
        })
        .map(|(path, _)| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        committing.len() <= 2 && committing.iter().any(|f| f == "flow.rs"),
        "only the flow (and at most one more file) may commit to the store; these do: {committing:?}"
    );
    let operation_files = [
        "features.rs",
        "projects.rs",
        "variants.rs",
        "keys.rs",
        "import.rs",
    ];
    for file in &committing {
        assert!(
            !operation_files.contains(&file.as_str()),
            "{file} commits to the store itself; write through `ToggleAdmin::change`"
        );
    }
}

/// The methods of `impl ToggleAdmin` blocks under `src/admin/`: (public, crate-private).
fn facade_methods() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut public, mut private) = (BTreeSet::new(), BTreeSet::new());
    for (_, code) in sources("admin") {
        let mut inside = false;
        for line in code.lines() {
            if line.starts_with("impl ToggleAdmin {") {
                inside = true;
                continue;
            }
            if line == "}" {
                inside = false;
            }
            // A method starts at the block's indentation: `[pub[(…)]] [async] fn name`.
            let Some(item) = line.strip_prefix("    ").filter(|_| inside) else {
                continue;
            };
            let mut words = item.split_whitespace().peekable();
            let visibility = match words.peek() {
                Some(w) if w.starts_with("pub") => words.next().unwrap_or_default(),
                _ => "",
            };
            if words.peek() == Some(&"async") {
                words.next();
            }
            if words.next() != Some("fn") {
                continue;
            }
            let name: String = words
                .next()
                .unwrap_or_default()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if visibility == "pub" {
                public.insert(name);
            } else {
                private.insert(name);
            }
        }
    }
    (public, private)
}

/// One door: the HTTP layer and the admin page call only the facade's public methods, the
/// same ones an embedding application has (a permission decided before a body is read is a
/// public `permit…`, not a crate-private shortcut). Both name the facade `admin`
/// (`ui.admin` on the page).
#[test]
fn adapters_call_only_public_facade_methods() {
    let (public, private) = facade_methods();
    assert!(public.contains("permit"), "the door is public: {public:?}");
    assert!(private.contains("change"), "the flow is found: {private:?}");
    let private: Vec<&String> = private.difference(&public).collect();
    let mut calls = Vec::new();
    for dir in ["http", "ui"] {
        for (path, code) in sources(dir) {
            let joined: String = code.chars().filter(|c| !c.is_whitespace()).collect();
            for name in &private {
                if joined.contains(&format!("admin.{name}(")) {
                    calls.push(format!("{} calls {name}", path.display()));
                }
            }
        }
    }
    assert!(
        calls.is_empty(),
        "crate-private facade methods called from the adapters: {calls:#?}"
    );
}
