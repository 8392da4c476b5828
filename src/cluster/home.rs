//! Where servers live and what they recorded: the hatshop home (a folder per server,
//! and the download cache) and each server's `server.json`, which says what runs where
//! (every node's address, port, pid and folders).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::{
    DeclaredServer, NodeBudget, SERVERS, ServerDeclarations, process, server_declarations,
};

/// `server.json`: one running (or stopped) server and every node of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerRecord {
    pub kind: &'static ServerDeclarations,
    /// The URL to give `--db`: every node's address.
    pub url: String,
    pub version: String,
    pub started_at: String,
    /// What else matters about it (nodes, data centres, heap, persistence).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// Where its programs came from when not from the system (Cassandra's jars):
    /// a restarted node and nodetool use the same ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub programs: Option<PathBuf>,
    pub nodes: Vec<NodeRecord>,
}

impl ServerRecord {
    /// The record of a server of kind `T` started just now, with no settings to keep.
    pub fn of<T: DeclaredServer>(
        url: String,
        version: String,
        nodes: Vec<NodeRecord>,
    ) -> ServerRecord {
        ServerRecord {
            kind: server_declarations(T::NAME).expect("every server kind is listed"),
            url,
            version,
            started_at: crate::stamp::now(),
            settings: BTreeMap::new(),
            programs: None,
            nodes,
        }
    }

    /// What each node may use of the host, as it was last set.
    pub fn budget(&self) -> NodeBudget {
        NodeBudget::of(&self.settings)
    }

    /// Whether it was started with a server setting (`--set key=value`), however its
    /// server keeps it (Cassandra's as `yaml.key`).
    pub fn started_with(&self, key: &str, value: &str) -> bool {
        self.settings
            .iter()
            .any(|(k, v)| (k == key || k.rsplit('.').next() == Some(key)) && v == value)
    }
}

/// One node (process) of a server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeRecord {
    /// 1, 2, …: what `--node` and a fault's `node` name.
    pub node: usize,
    pub host: String,
    /// Where clients connect.
    pub port: u16,
    pub pid: u32,
    /// When the pid started (clock ticks since boot): a reused pid is not the node.
    #[serde(default)]
    pub process_start: u64,
    /// The node's own folder (its config, logs and data).
    pub dir: PathBuf,
    pub data_dir: PathBuf,
    pub log_file: PathBuf,
    /// Other ports and facts (JMX port, data centre, rack, …).
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

impl NodeRecord {
    /// Whether this node's process runs (and is the one that was started).
    pub fn alive(&self) -> bool {
        self.pid != 0
            && process::alive(self.pid)
            && crate::procfs::process_start(self.pid)
                .is_some_and(|start| self.process_start == 0 || start == self.process_start)
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A node record for a process just started.
pub fn node_record(
    node: usize,
    host: &str,
    port: u16,
    pid: u32,
    dir: &Path,
    data_dir: PathBuf,
    log_file: PathBuf,
) -> NodeRecord {
    NodeRecord {
        node,
        host: host.to_string(),
        port,
        pid,
        process_start: crate::procfs::process_start(pid).unwrap_or(0),
        dir: dir.to_path_buf(),
        data_dir,
        log_file,
        extra: BTreeMap::new(),
    }
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

    /// Where one server's nodes keep their data, logs and record.
    pub fn server_dir(&self, kind: &'static ServerDeclarations) -> PathBuf {
        self.root.join("servers").join(kind.folder)
    }

    /// Downloads kept between starts, so a server is fetched once.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    fn record_path(&self, kind: &'static ServerDeclarations) -> PathBuf {
        self.server_dir(kind).join("server.json")
    }

    /// The record of a server started here, if it was.
    pub fn record(&self, kind: &'static ServerDeclarations) -> Option<ServerRecord> {
        let text = std::fs::read_to_string(self.record_path(kind)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes a server's record, so later commands find its nodes.
    pub fn save(&self, record: &ServerRecord) -> Result<()> {
        let path = self.record_path(record.kind);
        let text = serde_json::to_string_pretty(record)? + "\n";
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// The record of a server with at least one node alive.
    pub fn running(&self, kind: &'static ServerDeclarations) -> Option<ServerRecord> {
        self.record(kind)
            .filter(|r| r.nodes.iter().any(NodeRecord::alive))
    }

    /// The running server of this store (URL scheme) that has a node at one of
    /// these hosts (`host:port`; port 0: any), if any.
    pub fn serving(&self, store: &str, hosts: &[(String, u16)]) -> Option<ServerRecord> {
        SERVERS
            .iter()
            .filter(|kind| kind.store == store)
            .find_map(|kind| {
                self.running(kind).filter(|r| {
                    r.nodes.iter().any(|n| {
                        hosts
                            .iter()
                            .any(|(h, p)| *h == n.host && (*p == 0 || *p == n.port))
                    })
                })
            })
    }
}
