//! `hatshop server start|stop|kill|pause|resume|status|logs|wipe`.

use anyhow::{Result, bail};

use crate::cli::{NodeArgs, ServerAction, ServerArgs};
use crate::cluster::{self, Home, SERVERS, ServerDeclarations, StartOptions, process};
use crate::console::{note, say};
use crate::interrupt;
use crate::report::table::{Cell, Column, Table, Value, terminal};
use crate::workload::NodeAction;

/// The server named, or with `--all` every server that has a folder.
fn chosen(
    home: &Home,
    kind: Option<&'static ServerDeclarations>,
    all: bool,
) -> Result<Vec<&'static ServerDeclarations>> {
    match kind {
        Some(kind) => Ok(vec![kind]),
        None if all => Ok(cluster::known(home).into_iter().map(|(k, _)| k).collect()),
        None => bail!("name a server or pass --all"),
    }
}

fn node_action(home: &Home, args: &NodeArgs, action: NodeAction) -> Result<()> {
    act_on_node(home, args.kind, args.node, action)
}

fn act_on_node(
    home: &Home,
    kind: &'static ServerDeclarations,
    node: usize,
    action: NodeAction,
) -> Result<()> {
    say!("{}: {}", kind.name, cluster::act(home, kind, node, action)?);
    Ok(())
}

/// `hatshop server`: start, stop, kill, pause, resume, wipe, status and logs of the
/// servers hatshop runs.
pub fn run(args: &ServerArgs) -> Result<()> {
    // Starting Cassandra takes a while: Ctrl-C stops the start and the half-started server.
    let _listening = interrupt::Listening::new();
    let home = Home::resolve(args.home.as_deref())?;
    match &args.action {
        ServerAction::Start {
            kind,
            node: Some(node),
            ..
        } => act_on_node(&home, kind, *node, NodeAction::Start)?,
        ServerAction::Start {
            kind,
            nodes,
            dcs,
            node: None,
            version,
            heap,
            port,
            persistence,
            install,
            config,
            source,
            cpu_per_node,
            memory_per_node,
            tls,
        } => {
            check_start_flags(kind, config, source.as_deref())?;
            let options = StartOptions {
                tls: *tls,
                budget: cluster::NodeBudget {
                    cores: cpu_per_node.map(cluster::budget::cpu::check).transpose()?,
                    memory: memory_per_node
                        .as_deref()
                        .map(cluster::budget::memory::check)
                        .transpose()?,
                },
                config: config.clone(),
                version: version.clone(),
                heap: heap.clone(),
                port: *port,
                persistence: persistence.clone(),
                nodes: *nodes,
                dcs: *dcs,
                install: *install,
                source: source.clone(),
            };
            start(&home, kind, &options)?;
        }
        ServerAction::Stop {
            kind: Some(kind),
            node: Some(node),
            ..
        } => act_on_node(&home, kind, *node, NodeAction::Stop)?,
        ServerAction::Stop { kind, all, .. } => {
            for kind in chosen(&home, *kind, *all)? {
                if cluster::stop(&home, kind)? {
                    say!("{}: stopped", kind.name);
                } else {
                    say!("{}: not running", kind.name);
                }
            }
        }
        ServerAction::Kill(node) => node_action(&home, node, NodeAction::Kill)?,
        ServerAction::Pause(node) => node_action(&home, node, NodeAction::Pause)?,
        ServerAction::Resume(node) => node_action(&home, node, NodeAction::Resume)?,
        ServerAction::Wipe { kind, all } => {
            for kind in chosen(&home, *kind, *all)? {
                cluster::wipe(&home, kind)?;
                say!("{}: wiped", kind.name);
            }
        }
        ServerAction::Status => status(&home),
        ServerAction::Logs { kind, node, lines } => logs(&home, kind, *node, *lines)?,
    }
    Ok(())
}

/// `--set` and `--source` only where the server takes them.
fn check_start_flags(
    kind: &'static ServerDeclarations,
    config: &[(String, String)],
    source: Option<&str>,
) -> Result<()> {
    if !config.is_empty() && kind.settings_file.is_none() {
        bail!(
            "--set is for {} only",
            servers_where(|s| s.settings_file.is_some())
        );
    }
    if source.is_some() && !kind.from_source {
        bail!("--source is for {} only", servers_where(|s| s.from_source));
    }
    Ok(())
}

/// Starts the server (or finds it running) and prints the URL to give `--db`.
fn start(home: &Home, kind: &'static ServerDeclarations, options: &StartOptions) -> Result<()> {
    let (record, started) = cluster::start(home, kind, options)?;
    let pids: Vec<String> = record.nodes.iter().map(|n| n.pid.to_string()).collect();
    if started {
        note!(
            "{} ({}) started (pid {})",
            kind.name,
            record.version,
            pids.join(", ")
        );
    } else {
        note!("{} is already running (pid {})", kind.name, pids.join(", "));
    }
    say!("{}", record.url);
    Ok(())
}

/// The end of one node's log.
fn logs(home: &Home, kind: &'static ServerDeclarations, node: usize, lines: usize) -> Result<()> {
    let Some(record) = home.record(kind) else {
        bail!(
            "{} has never been started under {}",
            kind.name,
            home.root.display()
        );
    };
    let Some(node) = record.nodes.iter().find(|n| n.node == node) else {
        bail!(
            "node {node} is out of range: {} has {} nodes",
            kind.name,
            record.nodes.len()
        );
    };
    say!("{}", process::tail_file(&node.log_file, lines));
    Ok(())
}

/// `hatshop server status`: a row per server (state, version, nodes up, since when,
/// settings), then for each one running its URL and a row per node (address, state,
/// pid, memory, CPU and memory budgets, data folder), and a ring's view of itself.
fn status(home: &Home) {
    let known = cluster::known(home);
    if known.is_empty() {
        say!("no servers under {}", home.root.display());
        return;
    }
    let mut servers = Table::new(vec![
        Column::text("server", "server"),
        Column::text("state", "state"),
        Column::text("version", "version"),
        Column::text("nodes up", "nodes_up"),
        Column::text("since", "started_at"),
        Column::text("settings", "settings"),
    ]);
    let mut rows = Vec::new();
    for (kind, record) in &known {
        let Some(record) = record else {
            rows.push(vec![
                Cell::text(kind.name),
                Cell::text("stopped"),
                Cell::text(""),
                Cell::text(""),
                Cell::text(""),
                Cell::text(""),
            ]);
            continue;
        };
        let running = record.nodes.iter().filter(|n| n.alive()).count();
        let settings: Vec<String> = record
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        rows.push(vec![
            Cell::text(kind.name),
            Cell::text(if running > 0 { "running" } else { "stopped" }),
            Cell::text(record.version.as_str()),
            Cell::text(format!("{running} of {}", record.nodes.len())),
            Cell::text(record.started_at.as_str()),
            Cell::text(settings.join(" ")),
        ]);
    }
    servers.section(rows);
    crate::console::out(&terminal(&servers));
    for (kind, record) in known {
        let Some(record) = record.filter(|r| r.nodes.iter().any(|n| n.alive())) else {
            continue;
        };
        say!("\n{} at {}", kind.name, record.url);
        crate::console::out(&terminal(&nodes_table(kind, &record)));
        if kind.nodetool && record.nodes.len() > 1 {
            match cluster::ring_status(home, &record) {
                Some(ring) => say!("{}", ring),
                None => say!("(nodetool did not answer)"),
            }
        }
    }
}

/// A running server's nodes, a row each.
fn nodes_table(kind: &'static ServerDeclarations, record: &cluster::ServerRecord) -> Table {
    let mut nodes = Table::new(vec![
        Column::number("node", None, "node"),
        Column::text("address", "address"),
        Column::text("state", "state"),
        Column::number("pid", None, "pid"),
        Column::number("MiB", None, "rss_mib"),
        Column::text("budget", "budget"),
        // Not always under the home: a server run as another user keeps its data
        // where that user can reach it.
        Column::text("data", "data_dir"),
    ]);
    nodes.section(
        record
            .nodes
            .iter()
            .map(|node| {
                let state = if !node.alive() {
                    "down"
                } else if process::paused(node.pid) {
                    "paused"
                } else {
                    "up"
                };
                let rss = process::rss_mib(node.pid).filter(|_| node.alive());
                vec![
                    Cell::count(node.node as u64),
                    Cell::text(node.address()),
                    Cell::text(state),
                    // A pid is a name, not a quantity: no separators.
                    Cell::shown_as(node.pid.to_string(), Value::Count(u64::from(node.pid))),
                    rss.map_or(Cell::text("-"), Cell::count),
                    Cell::text(budget_used(kind, record, node)),
                    Cell::text(node.data_dir.display().to_string()),
                ]
            })
            .collect(),
    );
    nodes
}

/// The servers `has` holds for, with what `--set` sets where it sets anything:
/// "cassandra (cassandra.yaml) and voldemort (quorums)".
fn servers_where(has: impl Fn(&cluster::ServerDeclarations) -> bool) -> String {
    let names: Vec<String> = SERVERS
        .iter()
        .filter(|meta| has(meta))
        .map(|meta| match meta.settings_file {
            Some(file) => format!("{} ({file})", meta.name),
            None => meta.name.to_string(),
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    crate::db::listed(&names)
}

/// What a node's budget let it use, for its status row: how far its CPU quota held
/// it back, and what it holds of its memory.
fn budget_used(
    kind: &'static ServerDeclarations,
    record: &cluster::ServerRecord,
    node: &cluster::NodeRecord,
) -> String {
    use crate::numbers::thousands;
    use cluster::budget::{cpu, memory};
    let budget = record.budget();
    let mut said = Vec::new();
    if let Some(cores) = budget.cores {
        said.push(match cpu::throttled(kind.name, node.node, node.pid) {
            Some(t) if t.periods > 0 => format!(
                "{cores} core: held back in {} of {} periods ({:.1} s)",
                thousands(t.throttled_periods),
                thousands(t.periods),
                t.throttled_s
            ),
            _ => format!("{cores} core"),
        });
    }
    if let Some(bytes) = budget.memory {
        said.push(match memory::used(kind.name, node.node, node.pid) {
            Some(used) => format!(
                "{} of {} memory ({} page cache)",
                memory::said(used.bytes),
                memory::said(bytes),
                memory::said(used.cache_bytes)
            ),
            None => format!("{} memory", memory::said(bytes)),
        });
    }
    said.join("; ")
}
