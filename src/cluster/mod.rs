//! Real local servers, started by hatshop: Cassandra (jars from Maven Central, one node
//! or a ring), MariaDB (one server, or a Galera cluster), PostgreSQL and Redis (Debian's
//! packages). Each server lives in its own folder under the hatshop home (home.rs), with a
//! `server.json` that says what runs where (every node: address, port, pid, folders),
//! so a second `start` finds the first, `status` works from any shell, and a fault
//! (kill, stop, start, pause, resume one node) acts on a node's own pid, never on a
//! broad process match.
//!
//! A server hatshop can run is one file here implementing [`DeclaredServer`], and one line
//! in the `servers!` list.

pub mod budget;
mod cassandra;
mod certs;
mod galera;
mod home;
mod mariadb;
mod maven;
mod node;
mod postgres;
pub mod process;
mod redis;
mod voldemort;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use budget::NodeBudget;
pub use home::{Home, NodeRecord, ServerRecord, node_record};
pub use node::act;

/// The address a server whose nodes differ by port listens on (a Cassandra or Galera
/// node takes a loopback address of its own): load tests stay on this host.
pub const LOOPBACK: &str = "127.0.0.1";

/// A Cassandra ring as nodetool shows it (state and load of every node).
pub fn ring_status(home: &Home, record: &ServerRecord) -> Option<String> {
    cassandra::nodetool_status(home, record)
}

/// The peers some node of a ring does not see up (see [`cassandra::peers_unseen`]);
/// `None` where the ring is whole.
pub fn ring_gaps(record: &ServerRecord) -> Option<String> {
    cassandra::peers_unseen(&record.nodes)
}

/// A server hatshop can start.
pub trait DeclaredServer {
    /// Its name on the command line.
    const NAME: &'static str;
    /// Other names for it on the command line.
    const ALIASES: &'static [&'static str] = &[];
    /// Its folder under the home's `servers/`.
    const FOLDER: &'static str = Self::NAME;
    /// What it is, for help.
    const ABOUT: &'static str;
    /// The store it serves (its URL scheme).
    const STORE: &'static str;
    /// The signal that shuts it down cleanly and promptly.
    const STOP_SIGNAL: i32 = libc::SIGTERM;
    /// Whether a failed start is tried once more on a new port (quick servers only).
    const RETRY_START: bool = true;
    /// The most nodes it runs (1: a single server; never more than [`crate::workload::MAX_NODES`]).
    const MAX_NODES: usize = 1;
    /// What `server start --set KEY=VALUE` sets, if it takes any.
    const SETTINGS_FILE: Option<&'static str> = None;
    /// Whether it is built from a source archive (`server start --source`).
    const FROM_SOURCE: bool = false;
    /// Whether its nodes answer nodetool: ring status, thread pools and compactions are
    /// read from it, and its GC log is kept.
    const NODETOOL: bool = false;

    /// Starts every node: a new server, or one whose nodes all stopped (the launch's
    /// `previous` then says where they ran, and their data is kept).
    fn start(launch: &Launch) -> Result<ServerRecord>;

    /// Starts one stopped or killed node of a server whose other nodes may run.
    fn restart_node(home: &Home, record: &ServerRecord, node: usize) -> Result<NodeRecord>;
}

/// A server's declarations, as data.
pub struct ServerDeclarations {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// See [`DeclaredServer::FOLDER`].
    pub folder: &'static str,
    pub about: &'static str,
    pub store: &'static str,
    pub max_nodes: usize,
    /// See [`DeclaredServer::SETTINGS_FILE`].
    pub settings_file: Option<&'static str>,
    /// See [`DeclaredServer::FROM_SOURCE`].
    pub from_source: bool,
    /// See [`DeclaredServer::NODETOOL`].
    pub nodetool: bool,
    stop_signal: i32,
    retry_start: bool,
    start: fn(&Launch) -> Result<ServerRecord>,
    restart_node: fn(&Home, &ServerRecord, usize) -> Result<NodeRecord>,
}

impl ServerDeclarations {
    const fn of<T: DeclaredServer>() -> ServerDeclarations {
        ServerDeclarations {
            name: T::NAME,
            aliases: T::ALIASES,
            folder: T::FOLDER,
            about: T::ABOUT,
            store: T::STORE,
            max_nodes: T::MAX_NODES,
            settings_file: T::SETTINGS_FILE,
            from_source: T::FROM_SOURCE,
            nodetool: T::NODETOOL,
            stop_signal: T::STOP_SIGNAL,
            retry_start: T::RETRY_START,
            start: T::start,
            restart_node: T::restart_node,
        }
    }
}

macro_rules! servers {
    ($($server:ty),* $(,)?) => {
        /// Every server hatshop can run, in the order help lists them.
        pub static SERVERS: &[ServerDeclarations] = &[$(ServerDeclarations::of::<$server>()),*];
        /// The same, as the handles clap offers.
        static HANDLES: &[&ServerDeclarations] = &{
            let mut handles = [&SERVERS[0]; [$(stringify!($server)),*].len()];
            let mut i = 0;
            while i < handles.len() {
                handles[i] = &SERVERS[i];
                i += 1;
            }
            handles
        };
    };
}

servers! {
    cassandra::Cassandra,
    mariadb::Mariadb,
    galera::Galera,
    postgres::Postgres,
    redis::Redis,
    voldemort::Voldemort,
}

/// The server a name (or one of its aliases) names.
pub fn server_declarations(name: &str) -> Option<&'static ServerDeclarations> {
    SERVERS
        .iter()
        .find(|m| m.name == name || m.aliases.contains(&name))
}

// A server is one by its name; it shows, saves and reads as that name.
impl PartialEq for ServerDeclarations {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ServerDeclarations {}

impl std::fmt::Debug for ServerDeclarations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl clap::ValueEnum for &'static ServerDeclarations {
    fn value_variants<'a>() -> &'a [Self] {
        HANDLES
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(
            clap::builder::PossibleValue::new(self.name)
                .aliases(self.aliases.iter().copied())
                .help(self.about),
        )
    }
}

impl Serialize for ServerDeclarations {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name)
    }
}

impl<'de> Deserialize<'de> for &'static ServerDeclarations {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        server_declarations(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown server '{name}'")))
    }
}

/// What `start` was asked for.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub version: Option<String>,
    /// JVM heap per node (Cassandra); `None`: sized by the node count.
    pub heap: Option<String>,
    pub port: Option<u16>,
    /// Redis: none, aof-everysec or aof-always.
    pub persistence: String,
    /// Nodes of a ring or cluster.
    pub nodes: usize,
    /// Data centres of a Cassandra ring (1 or 2).
    pub dcs: usize,
    /// Install missing Debian packages (needs root).
    pub install: bool,
    /// Cassandra: cassandra.yaml settings over hatshop's; Voldemort: the store's quorums.
    pub config: Vec<(String, String)>,
    /// Voldemort: the source to build (a folder, an archive or a git URL; `None`: the
    /// upstream archive hatshop carries).
    pub source: Option<String>,
    /// What each node may use of the host ([`budget`]): set once the nodes have started
    /// (no cap: the nodes share the host's cores and memory).
    pub budget: NodeBudget,
    /// TLS on and required, from a CA made in the server's folder ([`certs`]).
    pub tls: bool,
}

/// One start of a server: its home and folder, what was asked, and the record of the
/// nodes that ran there before, if they did (their data names their addresses, so
/// what they ran with wins over what is asked now).
pub struct Launch<'a> {
    pub home: &'a Home,
    /// The server's own folder under the home.
    pub dir: PathBuf,
    pub options: &'a StartOptions,
    pub previous: Option<&'a ServerRecord>,
}

impl<'a> Launch<'a> {
    /// A start of nodes that ran before, from their record and data.
    pub fn again(home: &'a Home, record: &'a ServerRecord, options: &'a StartOptions) -> Self {
        Launch {
            home,
            dir: home.server_dir(record.kind),
            options,
            previous: Some(record),
        }
    }

    /// The port of a one-node server on `host`: the one asked for, else the one it had,
    /// else the first free one from `preferred` up.
    pub fn port_or(&self, host: &str, preferred: u16) -> Result<u16> {
        match (self.options.port, self.previous) {
            (Some(port), _) => Ok(port),
            (None, Some(previous)) => Ok(previous.nodes[0].port),
            (None, None) => process::free_port(host, preferred),
        }
    }

    /// A setting the nodes ran with before, if they ran.
    pub fn previous_setting(&self, name: &str) -> Option<String> {
        self.previous.and_then(|p| p.settings.get(name)).cloned()
    }

    /// Whether the nodes speak TLS: asked now, or asked when their data was made (a
    /// node started again keeps what its clients were told).
    pub fn tls(&self) -> bool {
        self.options.tls || self.previous_setting(TLS_SETTING).as_deref() == Some("on")
    }

    /// How many nodes start: as many as ran before, else as many as asked.
    pub fn nodes(&self) -> usize {
        self.previous.map_or(self.options.nodes, |p| p.nodes.len())
    }
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            version: None,
            heap: None,
            port: None,
            persistence: "none".into(),
            nodes: 1,
            dcs: 1,
            install: false,
            config: Vec::new(),
            source: None,
            budget: NodeBudget::NONE,
            tls: false,
        }
    }
}

/// The key a server's record keeps `--tls` under.
pub const TLS_SETTING: &str = "tls";

/// Options the server cannot start with: a node count beyond its own, TLS where its
/// store has none.
fn refuse_options(kind: &'static ServerDeclarations, options: &StartOptions) -> Result<()> {
    if options.nodes == 0 || options.nodes > kind.max_nodes {
        bail!(
            "{} runs 1{} node{}, not {}",
            kind.name,
            if kind.max_nodes > 1 {
                format!(" to {}", kind.max_nodes)
            } else {
                String::new()
            },
            if kind.max_nodes > 1 { "s" } else { "" },
            options.nodes
        );
    }
    if options.tls {
        let store = crate::db::store_declarations(kind.store);
        if let Some(why) = store.and_then(|s| s.no_tls) {
            bail!("{} cannot start with --tls: {why}", kind.name);
        }
    }
    Ok(())
}

/// A server that runs already, as asked: refused where it runs otherwise (no TLS, a
/// different size); a new CPU budget applied, which needs no restart.
fn already_running(
    home: &Home,
    kind: &'static ServerDeclarations,
    options: &StartOptions,
    record: ServerRecord,
) -> Result<ServerRecord> {
    let has_tls = record
        .settings
        .get(TLS_SETTING)
        .is_some_and(|on| on == "on");
    if options.tls && !has_tls {
        bail!(
            "{} already runs without TLS: stop it first (`hatshop server stop {}`)",
            kind.name,
            kind.name
        );
    }
    if record.nodes.len() != options.nodes && options.nodes != 1 {
        bail!(
            "{} already runs with {} nodes: stop it first (`hatshop server stop {}`)",
            kind.name,
            record.nodes.len(),
            kind.name
        );
    }
    // A budget is the kernel's to change at any time: no restart needed.
    let asked = NodeBudget {
        cores: options.budget.cores.or(record.budget().cores),
        memory: options.budget.memory.or(record.budget().memory),
    };
    if asked != record.budget() {
        return budget(home, kind, asked);
    }
    Ok(record)
}

/// A stopped server of another size starts afresh; of the same size, from its data.
/// Its nodes' old data would tell them of a ring that no longer is (a node that thinks
/// it has peers it never sees answers nothing), so it goes.
fn wipe_another_size(home: &Home, kind: &'static ServerDeclarations, nodes: usize) -> Result<()> {
    if let Some(stopped) = home.record(kind)
        && stopped.nodes.len() != nodes
    {
        crate::console::note!(
            "{}: the stopped server of {} node{} is wiped; {} node{} start afresh",
            kind.name,
            stopped.nodes.len(),
            if stopped.nodes.len() == 1 { "" } else { "s" },
            nodes,
            if nodes == 1 { "" } else { "s" }
        );
        wipe(home, kind)?;
    }
    Ok(())
}

/// Starts a server unless it runs already; returns its record and whether it was started now.
pub fn start(
    home: &Home,
    kind: &'static ServerDeclarations,
    options: &StartOptions,
) -> Result<(ServerRecord, bool)> {
    let meta = kind;
    refuse_options(kind, options)?;
    if let Some(record) = home.running(kind) {
        return Ok((already_running(home, kind, options, record)?, false));
    }
    let dir = home.server_dir(kind);
    wipe_another_size(home, kind, options.nodes)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let previous = home.record(kind);
    let launch = Launch {
        home,
        dir,
        options,
        previous: previous.as_ref(),
    };
    let try_start = || (meta.start)(&launch);
    let mut record = match try_start() {
        Ok(record) => record,
        // A free port can be taken by another process between our check and the
        // server's bind: the quick servers try once more on a newly chosen port.
        Err(first)
            if options.port.is_none() && meta.retry_start && !crate::interrupt::requested() =>
        {
            crate::console::note!("{} did not start ({first:#}); trying once more", kind.name);
            try_start()?
        }
        Err(e) => return Err(e),
    };
    if launch.tls() {
        record.settings.insert(TLS_SETTING.into(), "on".into());
    }
    home.save(&record)?;
    let record = if options.budget.is_none() {
        record
    } else {
        budget(home, kind, options.budget)?
    };
    Ok((record, true))
}

/// Gives every running node of a server the budget `given` (no cap: lifts it), and
/// records it, so that a node started again later gets the same.
pub fn budget(
    home: &Home,
    kind: &'static ServerDeclarations,
    given: NodeBudget,
) -> Result<ServerRecord> {
    let Some(mut record) = home.running(kind) else {
        bail!("{} is not running", kind.name);
    };
    // Groups of nodes gone since (a stopped ring's) are removed once the kernel has let
    // go of their processes.
    budget::remove_empty(kind.name);
    for node in record.nodes.iter().filter(|n| n.alive()) {
        given.apply(kind.name, node.node, node.pid)?;
    }
    given.record(&mut record.settings);
    home.save(&record)?;
    Ok(record)
}

/// Stops every node of a server (the last first); returns whether any ran.
pub fn stop(home: &Home, kind: &'static ServerDeclarations) -> Result<bool> {
    let Some(record) = home.running(kind) else {
        return Ok(false);
    };
    for node in record.nodes.iter().rev().filter(|n| n.alive()) {
        // A paused node hears no signal until it resumes.
        let _ = process::signal(node.pid, libc::SIGCONT);
        process::stop_pid(node.pid, kind.stop_signal, Duration::from_secs(90))?;
    }
    budget::remove_empty(kind.name);
    Ok(true)
}

/// Stops a server and deletes its folder and data; downloads in the cache stay.
pub fn wipe(home: &Home, kind: &'static ServerDeclarations) -> Result<()> {
    stop(home, kind)?;
    let dir = home.server_dir(kind);
    // PostgreSQL run as root keeps its data outside the server folder.
    if let Some(record) = home.record(kind) {
        for node in &record.nodes {
            if !node.data_dir.starts_with(&dir)
                && let Some(base) = node.data_dir.parent()
            {
                remove_all(base)?;
            }
        }
    }
    remove_all(&dir)
}

fn remove_all(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot delete {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Every server that has a folder, running or not.
pub fn known(home: &Home) -> Vec<(&'static ServerDeclarations, Option<ServerRecord>)> {
    SERVERS
        .iter()
        .filter(|k| home.server_dir(k).exists())
        .map(|k| (k, home.record(k)))
        .collect()
}

/// Waits until `host:port` accepts connections, failing early if `pid` dies or a
/// signal asks hatshop to stop.
fn wait_for_port(
    host: &str,
    port: u16,
    pid: u32,
    timeout: Duration,
    what: &str,
    log: &Path,
) -> Result<()> {
    wait_until(pid, timeout, what, log, || process::port_open(host, port))
        .with_context(|| format!("{what} on {host}:{port}"))
}

/// Waits until `ready` says so, failing early if `pid` dies or a signal asks hatshop
/// to stop. A process that fails so, or is not ready in time, is killed.
fn wait_until(
    pid: u32,
    timeout: Duration,
    what: &str,
    log: &Path,
    mut ready: impl FnMut() -> bool,
) -> Result<()> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if ready() {
            return Ok(());
        }
        if !process::alive(pid) {
            bail!(
                "{what} exited before it was ready; last lines of {}: {}",
                log.display(),
                process::tail_file(log, 5).replace('\n', " | ")
            );
        }
        if std::time::Instant::now() >= deadline {
            // Nothing would name it once this start has failed, so it is not left up.
            let _ = process::stop_pid(pid, libc::SIGKILL, Duration::from_secs(5));
            bail!(
                "{what} was not ready within {} s, and was stopped; see {}",
                timeout.as_secs(),
                log.display()
            );
        }
        if crate::interrupt::sleep_unless_requested(Duration::from_millis(250)) {
            let _ = process::stop_pid(pid, libc::SIGKILL, Duration::from_secs(5));
            bail!("interrupted while {what} was starting; it was stopped");
        }
    }
}

/// Installs Debian packages when allowed, else says which command would.
fn ensure_packages(
    program: &str,
    packages: &[&str],
    install: bool,
    extra_dirs: &[&str],
) -> Result<PathBuf> {
    if let Some(found) = process::find_program(program, extra_dirs) {
        return Ok(found);
    }
    let command = format!(
        "apt-get update && apt-get install -y {}",
        packages.join(" ")
    );
    if !install {
        bail!(
            "{program} is not installed: run `{command}` (or add --install when running as root)"
        );
    }
    if !process::is_root() {
        bail!("--install needs root: run `sudo {command}`");
    }
    crate::console::note!("installing {} …", packages.join(" "));
    process::run_command(
        std::process::Command::new("sh")
            .args(["-c", &command])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get",
    )?;
    process::find_program(program, extra_dirs).with_context(|| {
        format!(
            "{program} is still missing after installing {}",
            packages.join(" ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_server_serves_a_store_and_has_a_name_once() {
        let mut names = Vec::new();
        for kind in SERVERS {
            assert!(
                crate::db::store_declarations(kind.store).is_some(),
                "server {} serves no store",
                kind.name
            );
            for name in std::iter::once(kind.name).chain(kind.aliases.iter().copied()) {
                assert!(!names.contains(&name), "{name} twice");
                names.push(name);
            }
        }
        assert_eq!(server_declarations("mariadb"), server_declarations("mysql"));
    }
}
