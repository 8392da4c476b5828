//! What a cell's own record (run.json, or load.json) says of where and how it ran: the
//! "here" column of a study's setup table, and the CPU budgets its nodes had.

use std::collections::BTreeMap;

use crate::cluster::NodeBudget;
use crate::numbers::thousands;
use crate::observe::resources::MetricsRow;
use crate::result_dir::load_record::LoadRecord;
use crate::result_dir::{DatabaseRecord, Host, RunRecord};
use crate::workload::EventSource;

/// A fact a cell's run.json holds; a study file names it as [`Fact::NAMES`] do.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    /// The client machine: CPU model and cores.
    Machine,
    /// What the server said it is.
    ServerVersion,
    /// Nodes of the server the cell ran on.
    Nodes,
    /// A setting of the server hatshop started (`heap`, `cpu_per_node`, …).
    ServerSetting(String),
    /// A store setting of the cell's URL or flags (`rf`, `cl`, `connections`, …).
    StoreSetting(String),
    /// Operations in flight.
    Concurrency,
    /// Measured events.
    Events,
    /// Warm-up: events, or a time.
    Warmup,
    /// Orders and records loaded before anything is measured.
    Loaded,
    /// Bytes of each key-value record.
    ValueSize,
    /// Each node's memory budget, page cache included.
    NodeMemory,
    /// The machines the server ran on: hatshop's own, or those a URL named.
    Machines,
}

impl Fact {
    /// The facts without a key, as a study file names them.
    const NAMES: [(&'static str, Fact); 10] = [
        ("machine", Fact::Machine),
        ("machines", Fact::Machines),
        ("server version", Fact::ServerVersion),
        ("nodes", Fact::Nodes),
        ("in flight", Fact::Concurrency),
        ("events", Fact::Events),
        ("warm-up", Fact::Warmup),
        ("loaded", Fact::Loaded),
        ("value size", Fact::ValueSize),
        ("memory per node", Fact::NodeMemory),
    ];
}

impl std::str::FromStr for Fact {
    type Err = String;

    /// `machine`, `server setting: heap`, `store setting: rf`, …
    fn from_str(said: &str) -> Result<Fact, String> {
        if let Some(key) = said.strip_prefix("server setting:") {
            return Ok(Fact::ServerSetting(key.trim().into()));
        }
        if let Some(key) = said.strip_prefix("store setting:") {
            return Ok(Fact::StoreSetting(key.trim().into()));
        }
        if let Some((_, fact)) = Fact::NAMES.iter().find(|(name, _)| *name == said) {
            return Ok(fact.clone());
        }
        let names = Fact::NAMES.iter().map(|(name, _)| *name);
        Err(format!(
            "no fact of a cell's record is named '{said}'{}: give one of {}, \
             'server setting: KEY' or 'store setting: KEY'",
            crate::suggest::did_you_mean(said, names.clone()),
            names.collect::<Vec<_>>().join(", ")
        ))
    }
}

/// What a cell's run.json says of where and how it ran: the "ours" of a study's setup
/// table.
#[derive(Debug, Clone, Default)]
pub struct CellFacts {
    pub machine: String,
    /// The client machine's cores.
    pub cores: usize,
    pub server_version: String,
    pub nodes: usize,
    /// Settings of the server hatshop started (none for a server it did not start).
    pub server_settings: BTreeMap<String, String>,
    /// Whether hatshop started the server (else it was given by URL: machines of their
    /// own).
    pub started_here: bool,
    /// The URL's hosts, for a server hatshop did not start.
    pub hosts: String,
    pub store_settings: BTreeMap<String, String>,
    pub concurrency: usize,
    /// Measured events: the count asked for, or where `--min-duration` lengthened the
    /// stream, its floor's count.
    pub events: u64,
    /// `--min-duration`: the measured phase lasted at least this long, seconds.
    pub floor_s: Option<f64>,
    pub warmup: String,
    pub loaded: String,
    pub value_size: u32,
    /// The values loaded before the run, bytes (records × value size; 0 where the
    /// workload loads orders, or nothing).
    pub data_bytes: u64,
    /// The client machine's memory, bytes: on one host, what a node may cache.
    pub memory_bytes: u64,
    /// Each node's memory budget, bytes, where hatshop gave its nodes one.
    pub node_memory_bytes: Option<u64>,
    /// What the nodes did with memory and disk while the cell was measured, where the
    /// sampler saw them.
    pub nodes_seen: Option<NodesSeen>,
    /// The client's busiest thread while measured, and its share of the wall time (1.0:
    /// busy all the time), where the run says.
    pub client_busiest: Option<(String, f64)>,
    /// CPU the server's processes spent per measured operation, µs, where hatshop
    /// started and watched them.
    pub server_cpu_us_per_op: Option<f64>,
    /// The name of the folder of the run whose tables this one went on from
    /// (`--reuse-load`), where it did not load its own.
    pub went_on_from: Option<String>,
    /// How busy the host's CPU was while the cell was measured, where /proc could say.
    pub host_load: Option<crate::host_load::HostLoad>,
}

/// The nodes' memory and disk in the measured window, from server-metrics.csv.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodesSeen {
    /// The most any node's processes held resident (page cache not included).
    pub rss_bytes: u64,
    /// Bytes the nodes read from storage, all of them together.
    pub disk_read_bytes: u64,
}

impl NodesSeen {
    /// From the samples of a run's server-metrics.csv; `None` where no node was
    /// sampled while measuring.
    pub fn of(rows: &[MetricsRow]) -> Option<NodesSeen> {
        let nodes = || rows.iter().filter(|r| r.source.starts_with("node "));
        let rss_mb = nodes()
            .filter(|r| r.at_s >= 0.0)
            .filter_map(|r| r.rss_mb)
            .reduce(f64::max)?;
        // A rate is over the time since the node's sample before: bytes are the rate
        // times that time, counted from the measured phase's start.
        let mut last_at: BTreeMap<&str, f64> = BTreeMap::new();
        let mut read = 0.0;
        for row in nodes() {
            let since = last_at.insert(&row.source, row.at_s).unwrap_or(row.at_s);
            if row.at_s > 0.0 {
                read += row.disk_read_bytes_s.unwrap_or(0.0) * (row.at_s - since.max(0.0));
            }
        }
        Some(NodesSeen {
            rss_bytes: (rss_mb * (1u64 << 20) as f64) as u64,
            disk_read_bytes: read as u64,
        })
    }
}

impl CellFacts {
    /// The facts of a run's record.
    pub fn of(record: &RunRecord) -> CellFacts {
        let data_bytes = match &record.events {
            EventSource::Generated { workload } => {
                workload.initial_records * u64::from(workload.value_size)
            }
            EventSource::File(_) => 0,
        };
        let (events, warmup, loaded, value_size) = match &record.events {
            EventSource::Generated { workload } => (
                record.plan.min_events.unwrap_or(workload.events),
                match record.plan.warmup_s {
                    Some(s) => format!("{s} s"),
                    None => format!("{} events", thousands(workload.warmup)),
                },
                match record.went_on_from {
                    Some(_) => "on the tables the run before left".to_string(),
                    None => loaded(workload.initial_orders, workload.initial_records),
                },
                workload.value_size,
            ),
            EventSource::File(info) => (info.measured_events, String::new(), String::new(), 0),
        };
        CellFacts {
            client_busiest: record
                .client
                .as_ref()
                .and_then(|c| Some((c.busiest_thread.clone()?, c.busiest_share))),
            concurrency: record.plan.concurrency,
            floor_s: record.plan.min_duration_s,
            server_cpu_us_per_op: record.server_cpu.as_ref().map(|cpu| cpu.cpu_us_per_op),
            host_load: record.host_load.clone(),
            events,
            warmup,
            loaded,
            value_size,
            data_bytes,
            went_on_from: record.went_on_from.as_ref().map(|from| {
                std::path::Path::new(&from.folder)
                    .file_name()
                    .map_or(from.folder.clone(), |name| {
                        name.to_string_lossy().into_owned()
                    })
            }),
            ..CellFacts::of_place(&record.host, &record.database)
        }
    }

    /// The facts of a load's record (`hatshop load`): its rows are its events.
    pub fn of_load(record: &LoadRecord) -> CellFacts {
        CellFacts {
            concurrency: record.plan.in_flight,
            events: record.plan.rows,
            value_size: record.plan.value_size as u32,
            ..CellFacts::of_place(&record.host, &record.database)
        }
    }

    /// Where a cell ran: the client machine and the server.
    fn of_place(host: &Host, database: &DatabaseRecord) -> CellFacts {
        let server = database.server.as_ref();
        let hosts = database
            .url
            .split_once("://")
            .map(|(_, rest)| rest.rsplit_once('@').map_or(rest, |(_, h)| h))
            .and_then(|rest| rest.split(['/', '?']).next())
            .unwrap_or_default()
            .to_string();
        CellFacts {
            machine: format!(
                "{}, {} cores, {:.0} GiB",
                host.cpu,
                host.cores,
                host.memory_bytes as f64 / (1u64 << 30) as f64
            ),
            cores: host.cores,
            memory_bytes: host.memory_bytes,
            node_memory_bytes: server.and_then(|s| NodeBudget::of(&s.settings).memory),
            server_version: database.store.server_version.clone(),
            nodes: server.map_or_else(|| hosts.split(',').count(), |s| s.nodes),
            server_settings: server.map(|s| s.settings.clone()).unwrap_or_default(),
            started_here: server.is_some(),
            hosts,
            // What the store says it ran with (defaults included), and what was given.
            store_settings: database
                .store
                .settings
                .iter()
                .chain(&database.settings)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            ..CellFacts::default()
        }
    }

    /// The value of a fact, as the setup table shows it (empty: not known).
    pub fn get(&self, fact: &Fact) -> String {
        match fact {
            Fact::Machine => self.machine.clone(),
            Fact::ServerVersion => self.server_version.clone(),
            Fact::Nodes => self.nodes.to_string(),
            Fact::ServerSetting(key) => self
                .server_settings
                .get(key.as_str())
                .cloned()
                .unwrap_or_default(),
            Fact::StoreSetting(key) => self
                .store_settings
                .get(key.as_str())
                .cloned()
                .unwrap_or_default(),
            Fact::Concurrency => self.concurrency.to_string(),
            Fact::Events => match self.floor_s {
                Some(secs) => format!("{}, {secs} s at least", thousands(self.events)),
                None => thousands(self.events),
            },
            Fact::Warmup => self.warmup.clone(),
            Fact::Loaded => self.loaded.clone(),
            Fact::NodeMemory => self
                .node_memory_bytes
                .map(crate::cluster::budget::memory::said)
                .unwrap_or_default(),
            Fact::ValueSize => match self.value_size {
                0 => String::new(),
                bytes => format!("{} B", thousands(u64::from(bytes))),
            },
            Fact::Machines if self.started_here => match self.server_settings.get("cpu_per_node") {
                Some(cores) => {
                    format!("this machine, each node capped at {cores} of a core (CPU quota)")
                }
                None => "this machine, every node sharing its cores".into(),
            },
            Fact::Machines => format!("the machines at {}", self.hosts),
        }
    }
}

/// "500 orders", "50,000 records", "nothing": what a run loaded before measuring.
fn loaded(orders: u64, records: u64) -> String {
    let mut parts = Vec::new();
    if orders > 0 {
        parts.push(format!("{} orders", thousands(orders)));
    }
    if records > 0 {
        parts.push(format!("{} records", thousands(records)));
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" and ")
    }
}
