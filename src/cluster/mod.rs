//! Real local servers, started by hatshop: Cassandra (jars from Maven Central),
//! MariaDB and PostgreSQL (Debian's packages). Each server lives in its own folder
//! under the hatshop home, with a `server.json` that says what runs where, so a
//! second `start` finds the first and `status` works from any shell.

mod cassandra;
mod mariadb;
mod postgres;
pub mod process;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The servers hatshop can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    Cassandra,
    Mariadb,
    Postgres,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Cassandra => "cassandra",
            ServerKind::Mariadb => "mariadb",
            ServerKind::Postgres => "postgres",
        }
    }

    /// Signal that shuts the server down cleanly and promptly.
    fn stop_signal(self) -> i32 {
        match self {
            // SIGINT is PostgreSQL's "fast" shutdown: it does not wait for clients.
            ServerKind::Postgres => libc::SIGINT,
            ServerKind::Cassandra | ServerKind::Mariadb => libc::SIGTERM,
        }
    }
}

/// What `start` was asked for.
#[derive(Debug, Clone)]
pub struct StartOptions {
    pub version: Option<String>,
    pub heap: String,
    pub port: Option<u16>,
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
    let launch = || match kind {
        ServerKind::Cassandra => cassandra::start(home, &dir, options),
        ServerKind::Mariadb => mariadb::start(&dir, options),
        ServerKind::Postgres => postgres::start(home, &dir, options),
    };
    let record = match launch() {
        Ok(record) => record,
        // A free port can be taken by another process between our check and the
        // server's bind: the quick servers try once more on a newly chosen port.
        Err(first) if options.port.is_none() && kind != ServerKind::Cassandra => {
            eprintln!(
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
    process::stop_pid(record.pid, kind.stop_signal(), Duration::from_secs(90))?;
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
    [
        ServerKind::Cassandra,
        ServerKind::Mariadb,
        ServerKind::Postgres,
    ]
    .into_iter()
    .filter(|&k| home.server_dir(k).exists())
    .map(|k| (k, home.record(k)))
    .collect()
}

/// Waits until `host:port` accepts connections, failing early if `pid` dies.
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
        std::thread::sleep(Duration::from_millis(250));
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
    eprintln!("installing {} …", packages.join(" "));
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
