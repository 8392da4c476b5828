//! Real local servers, started by hatshop: Cassandra (jars from Maven Central),
//! MariaDB, PostgreSQL and Redis (Debian's packages). Each server lives in its own
//! folder under the hatshop home, with a `server.json` that says what runs where, so a
//! second `start` finds the first and `status` works from any shell.
//!
//! A server hatshop can run is one file here implementing [`LocalServer`], and one line
//! in the `servers!` list; its name is the URL scheme of the store it serves.

mod cassandra;
mod mariadb;
mod postgres;
pub mod process;
mod redis;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A server hatshop can start.
pub trait LocalServer {
    /// The store it serves (its URL scheme).
    const NAME: &'static str;
    /// Other names for it on the command line.
    const ALIASES: &'static [&'static str] = &[];
    /// What it is, for help.
    const ABOUT: &'static str;
    /// The signal that shuts it down cleanly and promptly.
    const STOP_SIGNAL: i32 = libc::SIGTERM;
    /// Whether a failed start is tried once more on a new port (quick servers only).
    const RETRY_START: bool = true;

    fn start(home: &Home, dir: &Path, options: &StartOptions) -> Result<ServerRecord>;
}

/// A server's declarations, as data.
pub struct ServerMeta {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub about: &'static str,
    stop_signal: i32,
    retry_start: bool,
    start: fn(&Home, &Path, &StartOptions) -> Result<ServerRecord>,
}

impl ServerMeta {
    const fn of<T: LocalServer>() -> ServerMeta {
        ServerMeta {
            name: T::NAME,
            aliases: T::ALIASES,
            about: T::ABOUT,
            stop_signal: T::STOP_SIGNAL,
            retry_start: T::RETRY_START,
            start: T::start,
        }
    }
}

macro_rules! servers {
    ($($server:ty),* $(,)?) => {
        static SERVERS: &[ServerMeta] = &[$(ServerMeta::of::<$server>()),*];
        static KINDS: &[ServerKind] = &{
            let mut kinds = [ServerKind(&SERVERS[0]); [$(stringify!($server)),*].len()];
            let mut i = 0;
            while i < kinds.len() {
                kinds[i] = ServerKind(&SERVERS[i]);
                i += 1;
            }
            kinds
        };
    };
}

servers! {
    cassandra::Cassandra,
    mariadb::Mariadb,
    postgres::Postgres,
    redis::Redis,
}

/// One of the servers hatshop can start, by name.
#[derive(Clone, Copy)]
pub struct ServerKind(&'static ServerMeta);

impl ServerKind {
    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn all() -> &'static [ServerKind] {
        KINDS
    }

    pub fn find(name: &str) -> Option<ServerKind> {
        KINDS
            .iter()
            .copied()
            .find(|k| k.0.name == name || k.0.aliases.contains(&name))
    }
}

impl PartialEq for ServerKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for ServerKind {}

impl std::fmt::Debug for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl clap::ValueEnum for ServerKind {
    fn value_variants<'a>() -> &'a [Self] {
        KINDS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(
            clap::builder::PossibleValue::new(self.0.name)
                .aliases(self.0.aliases.iter().copied())
                .help(self.0.about),
        )
    }
}

impl Serialize for ServerKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.name)
    }
}

impl<'de> Deserialize<'de> for ServerKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ServerKind::find(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown server '{name}'")))
    }
}

/// What `start` was asked for.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub version: Option<String>,
    pub heap: String,
    pub port: Option<u16>,
    /// Redis: none, aof-everysec or aof-always.
    pub persistence: String,
    /// Install missing Debian packages (needs root).
    pub install: bool,
}

/// `server.json`: one running (or stopped) server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerRecord {
    pub kind: ServerKind,
    pub pid: u32,
    pub url: String,
    pub version: String,
    pub host: String,
    pub port: u16,
    pub data_dir: PathBuf,
    pub log_file: PathBuf,
    pub started_at: String,
    /// What else matters about it (e.g. Redis persistence).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
}

/// The folder that holds every server's state and the download cache.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    /// `--home`, else `$HATSHOP_HOME`, else `$XDG_DATA_HOME/hatshop`, else `~/.local/share/hatshop`.
    pub fn resolve(explicit: Option<&Path>) -> Result<Home> {
        let root = match explicit {
            Some(dir) => dir.to_path_buf(),
            None => match std::env::var_os("HATSHOP_HOME") {
                Some(dir) => PathBuf::from(dir),
                None => match std::env::var_os("XDG_DATA_HOME") {
                    Some(dir) => PathBuf::from(dir).join("hatshop"),
                    None => match std::env::var_os("HOME") {
                        Some(home) => PathBuf::from(home).join(".local/share/hatshop"),
                        None => bail!("no home folder: set HATSHOP_HOME or pass --home"),
                    },
                },
            },
        };
        let root = std::path::absolute(&root)
            .with_context(|| format!("cannot resolve {}", root.display()))?;
        Ok(Home { root })
    }

    pub fn server_dir(&self, kind: ServerKind) -> PathBuf {
        self.root.join("servers").join(kind.name())
    }

    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    fn record_path(&self, kind: ServerKind) -> PathBuf {
        self.server_dir(kind).join("server.json")
    }

    pub fn record(&self, kind: ServerKind) -> Option<ServerRecord> {
        let text = std::fs::read_to_string(self.record_path(kind)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, record: &ServerRecord) -> Result<()> {
        let path = self.record_path(record.kind);
        let text = serde_json::to_string_pretty(record)? + "\n";
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// The record of a server whose process is still alive.
    pub fn running(&self, kind: ServerKind) -> Option<ServerRecord> {
        self.record(kind).filter(|r| process::alive(r.pid))
    }
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Starts a server unless it runs already; returns its record and whether it was started now.
pub fn start(
    home: &Home,
    kind: ServerKind,
    options: &StartOptions,
) -> Result<(ServerRecord, bool)> {
    if let Some(record) = home.running(kind) {
        return Ok((record, false));
    }
    let dir = home.server_dir(kind);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let launch = || (kind.0.start)(home, &dir, options);
    let record = match launch() {
        Ok(record) => record,
        // A free port can be taken by another process between our check and the
        // server's bind: the quick servers try once more on a newly chosen port.
        Err(first)
            if options.port.is_none() && kind.0.retry_start && !crate::interrupt::requested() =>
        {
            crate::note!(
                "{} did not start ({first:#}); trying once more",
                kind.name()
            );
            launch()?
        }
        Err(e) => return Err(e),
    };
    home.save(&record)?;
    Ok((record, true))
}

/// Stops a server if it runs; returns whether it was running.
pub fn stop(home: &Home, kind: ServerKind) -> Result<bool> {
    let Some(record) = home.running(kind) else {
        return Ok(false);
    };
    process::stop_pid(record.pid, kind.0.stop_signal, Duration::from_secs(90))?;
    Ok(true)
}

/// Stops a server and deletes its folder and data; downloads in the cache stay.
pub fn wipe(home: &Home, kind: ServerKind) -> Result<()> {
    stop(home, kind)?;
    let dir = home.server_dir(kind);
    // PostgreSQL run as root keeps its data outside the server folder.
    if let Some(record) = home.record(kind)
        && !record.data_dir.starts_with(&dir)
        && let Some(base) = record.data_dir.parent()
    {
        remove_all(base)?;
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
pub fn known(home: &Home) -> Vec<(ServerKind, Option<ServerRecord>)> {
    ServerKind::all()
        .iter()
        .copied()
        .filter(|&k| home.server_dir(k).exists())
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
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if process::port_open(host, port) {
            return Ok(());
        }
        if !process::alive(pid) {
            bail!(
                "{what} exited before it answered on {host}:{port}; last lines of {}: {}",
                log.display(),
                process::tail_file(log, 5).replace('\n', " | ")
            );
        }
        if std::time::Instant::now() >= deadline {
            bail!(
                "{what} did not answer on {host}:{port} within {} s; see {}",
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
    crate::note!("installing {} …", packages.join(" "));
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
        for kind in ServerKind::all() {
            assert!(
                crate::db::store_meta(kind.name()).is_some(),
                "server {} serves no store",
                kind.name()
            );
            for name in std::iter::once(kind.0.name).chain(kind.0.aliases.iter().copied()) {
                assert!(!names.contains(&name), "{name} twice");
                names.push(name);
            }
        }
        assert_eq!(ServerKind::find("mariadb"), ServerKind::find("mysql"));
    }
}
