//! Apache Cassandra from Maven Central: `cassandra-all` and its dependencies are
//! fetched once into the hatshop cache with Maven, and each node runs as
//! `CassandraDaemon` on JDK 17 with a generated `cassandra.yaml`.
//!
//! A ring of N nodes (`--nodes`, 1–5) runs on N loopback addresses with the same ports
//! (9042 CQL, 7000 gossip) and a JMX port each on 127.0.0.1. The seed starts first,
//! then the joiners together: a fresh ring gives every node 16 fixed, interleaved
//! tokens, because joiners that allocate tokens at the same moment pick the same ones.
//! Ready when every node's own log says every other node
//! is up. `--dcs 2` lays the nodes out in two data centres (GossipingPropertyFileSnitch),
//! for NetworkTopologyStrategy and LOCAL_QUORUM / EACH_QUORUM.

mod config;
mod gossip;

pub use gossip::peers_unseen;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::certs::{ServerCerts, server_certs};
use super::{
    DeclaredServer, Home, Launch, NodeRecord, ServerRecord, StartOptions, node_record, process,
    wait_until,
};

/// The Cassandra release fetched when `--version` does not name one.
pub const DEFAULT_VERSION: &str = "5.0.4";
/// A node answers in 13–40 s on an idle 2-core machine; a busy one needs more.
const START_TIMEOUT: Duration = Duration::from_secs(300);
const CQL_PORT: u16 = 9042;
const GOSSIP_PORT: u16 = 7000;

/// The module flags of Cassandra's own conf/jvm17-server.options.
const JDK17_FLAGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.math=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
];

/// The jar folder: `$HATSHOP_CASSANDRA_LIB`, or the cache, filled by Maven on first use.
pub fn jars(home: &Home, version: &str) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("HATSHOP_CASSANDRA_LIB") {
        return Ok(PathBuf::from(dir));
    }
    super::maven::jars(
        &home.cache_dir().join(format!("cassandra-{version}")),
        &[format!("org.apache.cassandra:cassandra-all:{version}")],
        &format!("cassandra-all-{version}.jar"),
        &format!("Cassandra {version} (about 70 MB)"),
    )
}

/// A Cassandra ring of 1-5 nodes, in one or two data centres.
pub struct Cassandra;

impl DeclaredServer for Cassandra {
    const NAME: &'static str = "cassandra";
    const ABOUT: &'static str =
        "Apache Cassandra from Maven Central (--nodes 1-5 for a ring, --dcs 2)";
    const STORE: &'static str = "cassandra";
    const RETRY_START: bool = false;
    const MAX_NODES: usize = 5;
    const SETTINGS_FILE: Option<&'static str> = Some("cassandra.yaml");
    const NODETOOL: bool = true;

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let version = match launch.previous {
            Some(_) => launch.previous_setting("version"),
            None => launch.options.version.clone(),
        }
        .unwrap_or_else(|| DEFAULT_VERSION.to_string());
        let ring = Ring::plan(launch)?;
        let lib = jars(launch.home, &version)?;
        let java = java()?;
        let fresh = !ring.nodes[0].dir.join("data/data").exists();
        crate::console::note!(
            "starting Cassandra {version}: {} node{} on {} (about {} s) …",
            ring.nodes.len(),
            if ring.nodes.len() == 1 { "" } else { "s" },
            ring.hosts().join(", "),
            if ring.nodes.len() == 1 { 20 } else { 40 }
        );
        let started = Instant::now();
        for node in &ring.nodes {
            node.write_config(&ring, fresh)?;
        }
        // The seed first, then the joiners together.
        let mut spawned = process::Spawned::default();
        let seed = spawned.push(ring.nodes[0].spawn(&java, &lib, &ring.heap, fresh)?);
        ring.nodes[0].wait_cql(seed)?;
        for node in &ring.nodes[1..] {
            spawned.push(node.spawn(&java, &lib, &ring.heap, fresh)?);
        }
        for (node, &pid) in ring.nodes.iter().zip(spawned.pids()).skip(1) {
            node.wait_cql(pid)?;
        }
        for (node, &pid) in ring.nodes.iter().zip(spawned.pids()) {
            node.wait_peers_up(pid, &ring)?;
        }
        let pids = spawned.keep();
        crate::console::note!(
            "Cassandra ring ready after {:.0} s",
            started.elapsed().as_secs_f64()
        );
        let addresses: Vec<String> = ring
            .hosts()
            .iter()
            .map(|h| format!("{h}:{CQL_PORT}"))
            .collect();
        let url = match &ring.tls {
            None => format!("cassandra://{}/hatshop", addresses.join(",")),
            Some(certs) => format!(
                "cassandra://{}/hatshop?ssl=true&ssl_ca={}&ssl_verify=full",
                addresses.join(","),
                certs.ca.display()
            ),
        };
        let label = format!("Apache Cassandra {version}");
        let started = ring
            .nodes
            .iter()
            .zip(pids)
            .map(|(node, pid)| node.record(pid));
        Ok(ServerRecord {
            settings: [
                ("version".to_string(), version),
                ("nodes".to_string(), ring.nodes.len().to_string()),
                ("dcs".to_string(), ring.dcs.to_string()),
                ("heap".to_string(), ring.heap.clone()),
            ]
            .into_iter()
            .chain(
                ring.config
                    .iter()
                    .map(|(k, v)| (format!("{YAML_PREFIX}{k}"), v.clone())),
            )
            .collect(),
            programs: Some(lib),
            ..ServerRecord::of::<Self>(url, label, started.collect())
        })
    }

    fn restart_node(home: &Home, record: &ServerRecord, node: usize) -> Result<NodeRecord> {
        let ring = Ring::plan(&Launch::again(home, record, &StartOptions::default()))?;
        let lib = jars_of(home, record)?;
        let this = &ring.nodes[node - 1];
        let mut spawned = process::Spawned::default();
        let pid = spawned.push(this.spawn(&java()?, &lib, &ring.heap, false)?);
        this.wait_cql(pid)?;
        this.wait_peers_up(pid, &ring)?;
        spawned.keep();
        Ok(this.record(pid))
    }
}

/// The jars a running ring was started from (fetched again only if they are gone).
fn jars_of(home: &Home, record: &ServerRecord) -> Result<PathBuf> {
    if let Some(lib) = record.programs.as_ref().filter(|lib| lib.is_dir()) {
        return Ok(lib.clone());
    }
    let version = record
        .settings
        .get("version")
        .cloned()
        .unwrap_or_else(|| DEFAULT_VERSION.to_string());
    jars(home, &version)
}

fn java() -> Result<PathBuf> {
    process::find_program("java", &[]).context(
        "java is not installed: Cassandra 5.0 needs JDK 11 or 17 (`apt-get install -y openjdk-17-jre-headless`)",
    )
}

/// Where every node of a ring lives.
struct Ring {
    nodes: Vec<RingNode>,
    dcs: usize,
    heap: String,
    /// cassandra.yaml settings given with `--set`, over hatshop's.
    config: Vec<(String, String)>,
    /// TLS for clients, on and required, where asked.
    tls: Option<ServerCerts>,
}

/// How `--set` settings are kept in the server's record.
const YAML_PREFIX: &str = "yaml.";

struct RingNode {
    number: usize,
    host: String,
    jmx: u16,
    dir: PathBuf,
    dc: String,
    rack: String,
}

impl Ring {
    /// The ring's layout: a previous ring's addresses and ports (its data names them),
    /// or free ones.
    fn plan(launch: &Launch) -> Result<Ring> {
        let (dir, options, previous) = (&launch.dir, launch.options, launch.previous);
        let n = launch.nodes();
        let dcs = launch
            .previous_setting("dcs")
            .and_then(|d| d.parse().ok())
            .unwrap_or(options.dcs);
        if !(1..=2).contains(&dcs) || dcs > n {
            bail!("--dcs must be 1 or 2, and at most the number of nodes");
        }
        // Each node's JVM is its heap plus ~400 MB: 5 nodes of 512m fit beside the client.
        let heap = launch
            .previous_setting("heap")
            .or(options.heap.clone())
            .unwrap_or_else(|| if n == 1 { "1g".into() } else { "512m".into() });
        let hosts: Vec<String> = match previous {
            Some(p) => p.nodes.iter().map(|n| n.host.clone()).collect(),
            None => process::free_addresses(n, &[CQL_PORT, GOSSIP_PORT])?,
        };
        let mut nodes = Vec::with_capacity(n);
        let mut jmx_ports: Vec<u16> = Vec::new();
        for (i, host) in hosts.into_iter().enumerate() {
            let number = i + 1;
            let jmx = match previous.and_then(|p| p.nodes[i].extra.get("jmx_port")) {
                Some(port) => port.parse().context("server.json: bad jmx_port")?,
                None => process::free_port_besides("127.0.0.1", 7200 + number as u16, &jmx_ports)?,
            };
            jmx_ports.push(jmx);
            let in_first_dc = dcs == 1 || number <= n.div_ceil(2);
            nodes.push(RingNode {
                number,
                host,
                jmx,
                dir: dir.join(format!("node{number}")),
                dc: if in_first_dc { "dc1" } else { "dc2" }.to_string(),
                rack: format!("rack{number}"),
            });
        }
        // Settings of the data's first start, with any given now over them.
        let mut config: Vec<(String, String)> = previous
            .map(|p| {
                p.settings
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((k.strip_prefix(YAML_PREFIX)?.to_string(), v.clone()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (key, value) in &options.config {
            config.retain(|(k, _)| k != key);
            config.push((key.clone(), value.clone()));
        }
        let tls = match launch.tls() {
            true => {
                let hosts: Vec<&str> = nodes.iter().map(|n| n.host.as_str()).collect();
                Some(server_certs(dir, &hosts)?)
            }
            false => None,
        };
        Ok(Ring {
            nodes,
            dcs,
            heap,
            config,
            tls,
        })
    }

    fn hosts(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.host.clone()).collect()
    }
}

impl RingNode {
    fn conf(&self) -> PathBuf {
        self.dir.join("conf")
    }

    fn log_file(&self) -> PathBuf {
        self.dir.join("logs/system.log")
    }

    /// Starts the node's JVM; `fresh` joiners may bootstrap together (their tokens are fixed).
    fn spawn(&self, java: &Path, lib: &Path, heap: &str, fresh: bool) -> Result<u32> {
        let conf = self.conf();
        let logs = self.dir.join("logs");
        let log = self.log_file();
        if log.exists() {
            // One log per start: readiness is read from it.
            let _ = std::fs::rename(&log, logs.join("system.previous.log"));
        }
        let out = File::create(logs.join("stdout.log"))?;
        let mut cmd = Command::new(java);
        cmd.args([format!("-Xms{heap}"), format!("-Xmx{heap}")])
            .args(["-Xss512k", "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError"])
            .arg("-XX:MaxDirectMemorySize=256m")
            // The GC log: server pauses are part of what a latency tail means.
            .arg(format!(
                "-Xlog:gc*:file={}/gc.log:time,uptime,level,tags:filecount=3,filesize=10m",
                logs.display()
            ))
            .args(JDK17_FLAGS)
            .arg(format!(
                "-Dcassandra.config=file://{}/cassandra.yaml",
                conf.display()
            ))
            .arg(format!(
                "-Dcassandra-rackdc.properties=file://{}/cassandra-rackdc.properties",
                conf.display()
            ))
            .arg(format!(
                "-Dlogback.configurationFile={}/logback.xml",
                conf.display()
            ))
            .arg(format!(
                "-Dcassandra.storagedir={}",
                self.dir.join("data").display()
            ))
            .arg(format!("-Dcassandra.jmx.local.port={}", self.jmx))
            .args([
                "-Dcassandra.ring_delay_ms=5000",
                "-Dcassandra.skip_wait_for_gossip_to_settle=0",
                "-Dcassandra-foreground=yes",
            ]);
        if fresh && self.number > 1 {
            cmd.arg("-Dcassandra.consistent.rangemovement=false");
        }
        let child = cmd
            .arg("-cp")
            .arg(format!("{}:{}/*", conf.display(), lib.display()))
            .arg("org.apache.cassandra.service.CassandraDaemon")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .process_group(0)
            .spawn()
            .context("cannot start the Cassandra JVM")?;
        Ok(child.id())
    }

    fn wait_cql(&self, pid: u32) -> Result<()> {
        let what = format!("Cassandra node {} on {}", self.number, self.host);
        wait_until(pid, START_TIMEOUT, &what, &self.log_file(), || {
            process::port_open(&self.host, CQL_PORT)
        })
    }

    /// Waits until this node's log says every other node of the ring is up.
    fn wait_peers_up(&self, pid: u32, ring: &Ring) -> Result<()> {
        let what = format!("Cassandra node {} seeing its peers", self.number);
        let peers: Vec<&str> = ring
            .nodes
            .iter()
            .filter(|n| n.number != self.number)
            .map(|n| n.host.as_str())
            .collect();
        wait_until(pid, START_TIMEOUT, &what, &self.log_file(), || {
            gossip::peers_up(&self.log_file(), &peers)
                .iter()
                .all(|&up| up)
        })
    }

    fn record(&self, pid: u32) -> NodeRecord {
        let mut node = node_record(
            self.number,
            &self.host,
            CQL_PORT,
            pid,
            &self.dir,
            self.dir.join("data"),
            self.log_file(),
        );
        node.extra.insert("jmx_port".into(), self.jmx.to_string());
        node.extra.insert("dc".into(), self.dc.clone());
        node.extra.insert("rack".into(), self.rack.clone());
        node
    }
}

/// The ring as a node sees it, from nodetool (for `server status`): one line per node.
pub fn nodetool_status(home: &Home, record: &ServerRecord) -> Option<String> {
    let node = record.nodes.iter().find(|n| n.alive())?;
    let lib = jars_of(home, record).ok()?;
    let output = Command::new(java().ok()?)
        .arg("-Xmx128m")
        .args(JDK17_FLAGS)
        .arg("-cp")
        .arg(format!("{}/*", lib.display()))
        .arg("org.apache.cassandra.tools.NodeTool")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            node.extra.get("jmx_port")?,
            "status",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("Datacenter")
                || l.len() > 2 && l[..2].chars().all(|c| "UDNLJM".contains(c))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_ring_interleave_and_never_repeat() {
        let nodes: Vec<RingNode> = (1..=3)
            .map(|number| RingNode {
                number,
                host: String::new(),
                jmx: 0,
                dir: PathBuf::new(),
                dc: String::new(),
                rack: String::new(),
            })
            .collect();
        let mut all: Vec<i128> = nodes
            .iter()
            .flat_map(|n| {
                n.initial_tokens(3)
                    .split(',')
                    .map(|t| t.parse::<i128>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(all.len(), 48);
        let first = all.clone();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 48, "a token twice");
        assert!(
            all.iter()
                .all(|&t| t >= i64::MIN as i128 && t <= i64::MAX as i128)
        );
        // Node 1's first token is the ring's lowest; node 2's is one step on.
        assert_eq!(first[0], i64::MIN as i128);
        assert!(first[16] > first[0] && first[16] < first[1]);
    }
}
