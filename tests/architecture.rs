//! The layers of `docs/architecture.md`, held against the sources: every `crate::` and
//! `super::` path in `src/` is read, and an import that runs to the same or a higher
//! layer, or a circle between files, fails with the file and line. The table is read
//! from the doc itself, so the doc and this test cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A file of `src/` as a module path: `src/db/mysql/conns.rs` is `["db", "mysql", "conns"]`.
type ModPath = Vec<String>;

struct Source {
    path: PathBuf,
    module: ModPath,
    /// The file is the face of a folder (`mod.rs`, `lib.rs`).
    is_folder: bool,
    code: String,
}

/// One import: from which file and line, to which file, through which path.
struct Import {
    from: usize,
    line: usize,
    to: usize,
    path: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sources() -> Vec<Source> {
    let mut files = Vec::new();
    collect(&root().join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|path| !path.ends_with("src/main.rs")) // a crate of its own, over `hatshop::`
        .map(|path| {
            let rel = path.strip_prefix(root().join("src")).unwrap();
            let mut module: ModPath = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let is_folder = matches!(module.last().map(String::as_str), Some("mod" | "lib"));
            if is_folder {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            Source {
                path: rel.to_path_buf(),
                module,
                is_folder,
                code: code_only(&text),
            }
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text with comments, strings and character literals blanked (newlines kept, so
/// line numbers hold): a path in a doc comment or a message is no import.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_char(prev(&chars, i)) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let start = i + 2 + hashes;
            let rest: String = chars[start..].iter().collect();
            let len = rest.find(&close).map_or(rest.len(), |end| {
                rest[..end].chars().count() + close.chars().count()
            });
            for &ch in &chars[i..(start + len).min(chars.len())] {
                out.push(blank(ch));
            }
            i = start + len;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal; a lifetime (`'a`) has no closing quote.
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '\'' && (chars[j - 1] != '\\' || chars[j - 2] == '\\'))
                .unwrap_or(chars.len() - 1);
            for _ in i..=end {
                out.push(' ');
            }
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev(chars: &[char], i: usize) -> char {
    if i == 0 { ' ' } else { chars[i - 1] }
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path that starts with `crate::` or `super::`, as (line, absolute segments);
/// a `{…}` group gives one path per top-level item in it.
fn paths(source: &Source) -> Vec<(usize, Vec<String>)> {
    let code = &source.code;
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = next_root(code, at) {
        let line = code[..offset].matches('\n').count() + 1;
        let (mut segments, end) = segments_at(code, offset);
        at = end.max(offset + 1);
        // Resolve `super` and `crate` to an absolute module path; inside an inline
        // `mod tests { … }` the first `super` is the file's own module.
        let mut base: ModPath = source.module.clone();
        base.extend(inline_modules(code, offset));
        while let Some(head) = segments.first().cloned() {
            match head.as_str() {
                "crate" => base.clear(),
                "super" => {
                    base.pop();
                }
                _ => break,
            }
            segments.remove(0);
        }
        if end < bytes.len() && bytes[end] == b'{' {
            for item in group_items(code, end) {
                let mut full = base.clone();
                full.extend(segments.iter().cloned());
                full.extend(item);
                found.push((line, full));
            }
        } else {
            base.extend(segments);
            found.push((line, base));
        }
    }
    found
}

/// The names of the inline `mod name { … }` blocks around `offset`, outermost first.
fn inline_modules(code: &str, offset: usize) -> Vec<String> {
    let bytes = code.as_bytes();
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(hit) = code[from..offset].find("mod ") {
        let start = from + hit;
        from = start + 4;
        if start > 0 && ident_char(bytes[start - 1] as char) {
            continue;
        }
        let rest = &code[from..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|&c| ident_char(c))
            .collect();
        let after = rest.trim_start()[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        let close = (open..bytes.len()).find(|&i| {
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        if close.is_none_or(|close| close > offset) {
            names.push(name);
        }
    }
    names
}

/// The next `crate::` or `super::` at a word start, from `at`.
fn next_root(code: &str, at: usize) -> Option<usize> {
    let bytes = code.as_bytes();
    let mut from = at;
    loop {
        let rest = &code[from..];
        let hit = ["crate::", "super::"]
            .iter()
            .filter_map(|word| rest.find(word))
            .min()?;
        let offset = from + hit;
        if offset == 0 || !ident_char(bytes[offset - 1] as char) && bytes[offset - 1] != b':' {
            return Some(offset);
        }
        from = offset + 1;
    }
}

/// The `a::b::c` segments at `offset` and where they end (on a `{` for a group).
fn segments_at(code: &str, offset: usize) -> (Vec<String>, usize) {
    let bytes = code.as_bytes();
    let mut segments = Vec::new();
    let mut i = offset;
    loop {
        let start = i;
        while i < bytes.len() && ident_char(bytes[i] as char) {
            i += 1;
        }
        if i > start {
            segments.push(code[start..i].to_string());
        }
        if code[i..].starts_with("::") {
            i += 2;
            while i < bytes.len() && (bytes[i] as char).is_whitespace() {
                i += 1;
            }
            if i < bytes.len() && bytes[i] == b'{' {
                return (segments, i);
            }
        } else {
            return (segments, i);
        }
    }
}

/// The top-level items of the `{…}` group that opens at `open`, as segments.
fn group_items(code: &str, open: usize) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut depth = 0;
    let mut items = Vec::new();
    let mut item_start = open + 1;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    items.push(item_start);
                    break;
                }
            }
            b',' if depth == 1 => {
                items.push(item_start);
                item_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items
        .into_iter()
        .filter_map(|start| {
            let mut j = start;
            while j < bytes.len() && (bytes[j] as char).is_whitespace() {
                j += 1;
            }
            let (segments, _) = segments_at(code, j);
            (!segments.is_empty()).then_some(segments)
        })
        .collect()
}

fn imports(sources: &[Source]) -> Vec<Import> {
    let by_module: BTreeMap<&ModPath, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.module, i))
        .collect();
    let mut found = Vec::new();
    for (from, source) in sources.iter().enumerate() {
        for (line, path) in paths(source) {
            let to = (0..=path.len())
                .rev()
                .find_map(|k| by_module.get(&path[..k].to_vec()).copied())
                .unwrap_or(0);
            if to != from {
                found.push(Import {
                    from,
                    line,
                    to,
                    path: path.join("::"),
                });
            }
        }
    }
    found
}

/// The layer table of `docs/architecture.md`: top-level module (`lib` for lib.rs) to
/// its layer, from the rows `| N | `a`, `b` | … |`.
fn layers() -> BTreeMap<String, usize> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md"))
        .expect("docs/architecture.md holds the layer table");
    let mut layers = BTreeMap::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 {
            continue;
        }
        let Ok(layer) = cells[1].parse::<usize>() else {
            continue;
        };
        for name in cells[2].split(',') {
            let name = name.trim().trim_matches('`').trim_end_matches(".rs");
            assert!(!name.is_empty(), "an empty module name in the layer table");
            layers.insert(name.trim_end_matches('/').to_string(), layer);
        }
    }
    assert!(!layers.is_empty(), "docs/architecture.md has no layer rows");
    layers
}

/// The top-level module a file belongs to (`lib` for lib.rs).
fn top(source: &Source) -> String {
    source
        .module
        .first()
        .cloned()
        .unwrap_or_else(|| "lib".to_string())
}

fn place(source: &Source, line: usize) -> String {
    format!("src/{}:{line}", source.path.display())
}

#[test]
fn architecture_every_module_has_a_layer() {
    let layers = layers();
    let missing: BTreeSet<String> = sources()
        .iter()
        .map(top)
        .filter(|name| !layers.contains_key(name))
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a row in docs/architecture.md: {missing:?}"
    );
}

#[test]
fn architecture_imports_run_down_the_layers() {
    let layers = layers();
    let sources = sources();
    let mut wrong = Vec::new();
    for import in imports(&sources) {
        let (from, to) = (&sources[import.from], &sources[import.to]);
        let (from_top, to_top) = (top(from), top(to));
        if from_top == to_top {
            continue;
        }
        let (Some(&a), Some(&b)) = (layers.get(&from_top), layers.get(&to_top)) else {
            continue; // the test above names modules without a layer
        };
        if b >= a {
            wrong.push(format!(
                "{}: {from_top} (layer {a}) uses {} of {to_top} (layer {b})",
                place(from, import.line),
                import.path
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports the layer table of docs/architecture.md does not allow (a module uses only lower layers):\n{}",
        wrong.join("\n")
    );
}

/// The command a file of `src/commands/` belongs to (`commands/sweep/targets.rs`: sweep).
fn command_of(source: &Source) -> Option<&str> {
    match source.module.as_slice() {
        [top, command, ..] if top == "commands" => Some(command),
        _ => None,
    }
}

#[test]
fn architecture_no_command_calls_another() {
    let sources = sources();
    let mut wrong = Vec::new();
    for import in imports(&sources) {
        let (from, to) = (&sources[import.from], &sources[import.to]);
        if let (Some(a), Some(b)) = (command_of(from), command_of(to))
            && a != b
        {
            wrong.push(format!(
                "{}: command {a} uses {} of command {b}",
                place(from, import.line),
                import.path
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "a command calls another (what two commands share belongs to `lifecycle` or below):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn architecture_no_circle_between_files() {
    let sources = sources();
    // A folder's mod.rs is its face: it declares and re-exports its files, and they
    // use what it holds; those ties are the folder's inside, not circles.
    let inside = |folder: &Source, file: &Source| {
        folder.is_folder && file.module.starts_with(&folder.module)
    };
    let mut edges: BTreeMap<usize, BTreeMap<usize, (usize, String)>> = BTreeMap::new();
    for import in imports(&sources) {
        let (a, b) = (&sources[import.from], &sources[import.to]);
        if inside(a, b) || inside(b, a) {
            continue;
        }
        edges
            .entry(import.from)
            .or_default()
            .entry(import.to)
            .or_insert((import.line, import.path));
    }
    let mut circles = Vec::new();
    for component in strongly_connected(sources.len(), &edges) {
        if component.len() < 2 {
            continue;
        }
        let members: BTreeSet<usize> = component.iter().copied().collect();
        let mut ties = Vec::new();
        for &a in &component {
            for (&b, (line, path)) in edges.get(&a).into_iter().flatten() {
                if members.contains(&b) {
                    ties.push(format!(
                        "  {} uses {path} of src/{}",
                        place(&sources[a], *line),
                        sources[b].path.display()
                    ));
                }
            }
        }
        circles.push(ties.join("\n"));
    }
    assert!(
        circles.is_empty(),
        "files that import each other, around a circle:\n{}",
        circles.join("\n\n")
    );
}

/// Tarjan's strongly connected components of the file graph.
fn strongly_connected(
    count: usize,
    edges: &BTreeMap<usize, BTreeMap<usize, (usize, String)>>,
) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a BTreeMap<usize, BTreeMap<usize, (usize, String)>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(state: &mut State, v: usize) {
        state.index[v] = Some(state.next);
        state.low[v] = state.next;
        state.next += 1;
        state.stack.push(v);
        state.on_stack[v] = true;
        let targets: Vec<usize> = state
            .edges
            .get(&v)
            .map(|m| m.keys().copied().collect())
            .unwrap_or_default();
        for w in targets {
            match state.index[w] {
                None => {
                    visit(state, w);
                    state.low[v] = state.low[v].min(state.low[w]);
                }
                Some(index) if state.on_stack[w] => state.low[v] = state.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(state.low[v]) == state.index[v] {
            let mut component = Vec::new();
            while let Some(w) = state.stack.pop() {
                state.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            state.found.push(component);
        }
    }
    let mut state = State {
        edges,
        index: vec![None; count],
        low: vec![0; count],
        on_stack: vec![false; count],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..count {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn architecture_scanner_finds_what_it_must() {
    let source = Source {
        path: PathBuf::from("db/mysql/conns.rs"),
        module: vec!["db".into(), "mysql".into(), "conns".into()],
        is_folder: false,
        code: code_only(
            "use crate::{report::write_csv, stats::{A, B}};\n\
             // use crate::cli::Cli;\n\
             let s = \"crate::config\"; let c = '\"'; fn f<'a>() {}\n\
             use super::connect::login;\n\
             use super::super::workload::Order;\n",
        ),
    };
    let found: Vec<(usize, String)> = paths(&source)
        .into_iter()
        .map(|(line, path)| (line, path.join("::")))
        .collect();
    assert_eq!(
        found,
        vec![
            (1, "report::write_csv".to_string()),
            (1, "stats".to_string()),
            (4, "db::mysql::connect::login".to_string()),
            (5, "db::workload::Order".to_string()),
        ]
    );
}

/// Test modules are left out: a test may name the store it sets up.
fn before_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// The `stores!` list in `db/mod.rs`: each line's module and type (`Variant => module::Type`).
fn store_list() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("src/db/mod.rs")).unwrap();
    let list = &text[text
        .find("stores! {")
        .expect("the stores! list in src/db/mod.rs")..];
    let list = &list["stores! {".len()..list.find('}').unwrap()];
    list.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| {
            let (_, path) = line.split_once("=>").expect("Variant => module::Type");
            let (module, name) = path.trim().trim_end_matches(',').split_once("::").unwrap();
            (line.to_string(), module.to_string(), name.to_string())
        })
        .collect()
}

#[test]
fn architecture_every_store_is_in_the_one_list() {
    let listed: Vec<String> = store_list().into_iter().map(|(_, _, name)| name).collect();
    let mut files = Vec::new();
    collect(&root().join("src/db"), &mut files);
    let mut missing = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for part in text.split("impl DeclaredStore for ").skip(1) {
            let name: String = part.chars().take_while(|&c| ident_char(c)).collect();
            if !listed.contains(&name) {
                missing.push(format!("{name} ({})", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "stores that implement DeclaredStore but are not in stores!: {missing:?}"
    );
}

/// A newcomer reads which stores there are in docs/stores.md: each store's URL opens a
/// row of its first table.
#[test]
fn architecture_every_store_has_a_row_in_the_docs() {
    let docs = std::fs::read_to_string(root().join("docs/stores.md")).unwrap();
    let missing: Vec<&str> = hatshop::db::STORES
        .iter()
        .map(|store| store.scheme)
        .filter(|scheme| !docs.contains(&format!("| `{scheme}://")))
        .collect();
    assert!(
        missing.is_empty(),
        "stores with no row in docs/stores.md's table of stores: {missing:?}"
    );
}

/// The members of `trait name` in `file` (its `fn`s and `const`s), as written there.
fn trait_members(file: &str, name: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let start = text
        .find(&format!("pub trait {name}"))
        .unwrap_or_else(|| panic!("no trait {name} in {file}"));
    let body = &text[start..];
    let body = &body[..body.find("\n}\n").expect("the trait's end")];
    body.lines()
        .filter_map(|line| {
            let line = line.strip_prefix("    ")?;
            let rest = line
                .strip_prefix("fn ")
                .or_else(|| line.strip_prefix("async fn "))
                .or_else(|| line.strip_prefix("const "))?;
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            Some(rest[..end].to_string())
        })
        .collect()
}

/// The public fields of `struct name` in `file`.
fn struct_fields(file: &str, name: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let start = text
        .find(&format!("pub struct {name} {{"))
        .unwrap_or_else(|| panic!("no struct {name} in {file}"));
    let body = &text[start..];
    let body = &body[..body.find("\n}\n").expect("the struct's end")];
    body.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("    pub ")?;
            Some(rest[..rest.find(':')?].to_string())
        })
        .collect()
}

/// A new store meets the contract docs/stores.md's "Adding a store" table gives: it
/// names every member of the store traits, every field of a store's declaration and
/// every call note a store makes, and no member that is not one, so a member added to the code and not to the table (or
/// the other way) fails here.
#[test]
fn architecture_the_store_contract_in_the_docs_is_the_code() {
    let mut members = BTreeSet::new();
    for (file, name) in [
        ("src/db/mod.rs", "Store"),
        ("src/db/mod.rs", "DeclaredStore"),
        ("src/db/bulk.rs", "BulkLoad"),
        ("src/db/timing.rs", "DbTiming"),
    ] {
        members.extend(trait_members(file, name));
    }
    // What a store declares, as the fields of its one declaration.
    members.extend(struct_fields("src/db/stores.rs", "StoreDeclarations"));
    // The call notes a store makes: the functions of call_notes.rs its code calls.
    let notes = std::fs::read_to_string(root().join("src/db/call_notes.rs")).unwrap();
    let mut files = Vec::new();
    collect(&root().join("src/db"), &mut files);
    let store_code: String = files
        .iter()
        .filter(|path| path.parent() != Some(root().join("src/db").as_path()))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    for line in notes.lines() {
        let Some(rest) = line
            .strip_prefix("pub fn ")
            .or_else(|| line.strip_prefix("pub async fn "))
        else {
            continue;
        };
        let name = &rest[..rest.find(['(', '<']).unwrap()];
        if store_code.contains(&format!("{name}(")) {
            members.insert(name.to_string());
        }
    }
    let docs = std::fs::read_to_string(root().join("docs/stores.md")).unwrap();
    let section = &docs[docs.find("## Adding a store").unwrap()..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map_or(section.len(), |at| at + 3)];
    let table: String = section
        .lines()
        .filter(|line| line.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n");
    let named: BTreeSet<String> = table
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| {
            !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
        .map(String::from)
        .collect();
    let undocumented: Vec<&String> = members.iter().filter(|m| !named.contains(*m)).collect();
    assert!(
        undocumented.is_empty(),
        "members of the store contract docs/stores.md's \"Adding a store\" does not name: {undocumented:?}"
    );
    let looks_like_a_member = |word: &&String| {
        word.contains('_') || word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
    };
    let unknown: Vec<&String> = named
        .iter()
        .filter(looks_like_a_member)
        .filter(|word| !members.contains(*word))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/stores.md's \"Adding a store\" names what no store trait or call note has: {unknown:?}"
    );
}

/// Adding a store touches its folder (or file) and one line: no other code in `src/`
/// names its module or type.
#[test]
fn architecture_a_store_is_its_folder_and_one_line() {
    let list = store_list();
    assert!(list.len() >= 7, "the stores! list: {list:?}");
    let mut files = Vec::new();
    collect(&root().join("src"), &mut files);
    let mut found = Vec::new();
    for (list_line, module, name) in &list {
        let own_folder = root().join("src/db").join(module);
        let own_file = own_folder.with_extension("rs");
        for file in &files {
            if file.starts_with(&own_folder) || *file == own_file {
                continue;
            }
            // Outside db/ a store's module is private; a `cassandra::` there is a server's.
            let path = if file.starts_with(root().join("src/db")) {
                format!("{module}::")
            } else {
                format!("db::{module}::")
            };
            let text = std::fs::read_to_string(file).unwrap();
            for (number, line) in code_only(&text).lines().enumerate() {
                let names_it = mentions(line, name) || mentions(line, &path);
                if names_it && line.trim() != list_line {
                    let rel = file.strip_prefix(root()).unwrap();
                    found.push(format!("{}:{}: {}", rel.display(), number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a store named outside its folder and its line in stores!:\n{}",
        found.join("\n")
    );
}

/// Whether `line` holds `word` with no identifier character just before it or after it.
fn mentions(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        // A path (`mysql::`) may run on into what it names; a type name may not.
        let runs_on = after.is_some_and(ident_char) && !word.ends_with(':');
        !before.is_some_and(ident_char) && !runs_on
    })
}

#[test]
fn architecture_no_scheme_name_outside_db() {
    let schemes: Vec<&str> = hatshop::db::STORES
        .iter()
        .flat_map(|store| std::iter::once(store.scheme).chain(store.aliases.iter().copied()))
        .collect();
    let mut found = Vec::new();
    let mut files = Vec::new();
    collect(&root().join("src"), &mut files);
    for file in files {
        let rel = file.strip_prefix(root()).unwrap().to_path_buf();
        // A store answers for itself in db/; a server names the store it serves. The
        // studies name the servers they compare in their files (studies/*.toml).
        if rel.starts_with("src/db") || rel.starts_with("src/cluster") {
            continue;
        }
        // A module's tests in a file of their own (`#[cfg(test)] mod tests;`) are
        // test code, as the tests at the end of a file are.
        if file.file_name().is_some_and(|name| name == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in before_tests(&text).lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for scheme in &schemes {
                // The scheme alone, or a URL literal that starts with it.
                if line.contains(&format!("\"{scheme}\""))
                    || line.contains(&format!("\"{scheme}://"))
                {
                    found.push(format!("{}:{}: {}", rel.display(), number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a scheme name outside src/db/ (ask the store instead, through DbUrl::store()):\n{}",
        found.join("\n")
    );
}

/// Every public item outside test modules says in one `///` line why it is there; a
/// `pub mod` is said by its file's `//!`.
#[test]
fn architecture_every_public_item_has_a_doc_line() {
    const ITEMS: [&str; 8] = [
        "pub fn ",
        "pub async fn ",
        "pub struct ",
        "pub enum ",
        "pub trait ",
        "pub const ",
        "pub type ",
        "pub static ",
    ];
    let mut files = Vec::new();
    collect(&root().join("src"), &mut files);
    let mut undocumented = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(root()).unwrap().to_path_buf();
        if !text.starts_with("//!") && !text.starts_with("#![") {
            undocumented.push(format!(
                "{}:1: no //! line saying the file's job",
                rel.display()
            ));
        }
        let lines: Vec<&str> = before_tests(&text).lines().collect();
        for (at, line) in lines.iter().enumerate() {
            if !ITEMS.iter().any(|item| line.trim_start().starts_with(item)) {
                continue;
            }
            let above = lines[..at]
                .iter()
                .rev()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#["));
            if !above.is_some_and(|l| l.starts_with("///")) {
                undocumented.push(format!("{}:{}: {}", rel.display(), at + 1, line.trim()));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "public items without a /// line:\n{}",
        undocumented.join("\n")
    );
}

/// Words retired for a clearer one, each with the word that replaced it: none comes back
/// into the code or the docs (the changelog keeps history).
const RETIRED: &[(&str, &str)] = &[
    ("StoreKind", "DeclaredStore"),
    ("StoreMeta", "StoreDeclarations"),
    ("store_meta", "store_declarations"),
    ("ServerKind", "DeclaredServer"),
    ("ServerMeta", "ServerDeclarations"),
    ("server_meta", "server_declarations"),
];

#[test]
fn retired_words_stay_retired() {
    let mut files = Vec::new();
    for dir in ["src", "tests", "docs", "bench"] {
        collect_text(&root().join(dir), &mut files);
    }
    files.push(root().join("README.md"));
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (at, line) in text.lines().enumerate() {
            for (old, new) in RETIRED {
                let whole_word = line.match_indices(old).any(|(i, _)| {
                    let before = line[..i].chars().next_back();
                    let after = line[i + old.len()..].chars().next();
                    !before.is_some_and(ident_char) && !after.is_some_and(ident_char)
                });
                // This file names them to keep them out.
                if whole_word && !file.ends_with("tests/architecture.rs") {
                    let rel = file.strip_prefix(root()).unwrap();
                    found.push(format!("{}:{}: {old} (now {new})", rel.display(), at + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "retired words:\n{}", found.join("\n"));
}

/// Every Rust, Markdown and shell file under `dir`.
fn collect_text(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_text(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "md" || e == "sh")
        {
            out.push(path);
        }
    }
}
