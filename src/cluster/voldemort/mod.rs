//! Project Voldemort, built from source by hatshop (see `build.rs`) and run as N nodes
//! (`--nodes`, 1–5) on 127.0.0.1, each with its own ports (client, admin), folder,
//! `cluster.xml`, `stores.xml` and `server.properties`, BDB storage. One store,
//! `hatshop`, declared as the study's (string keys, raw-byte values; hatshop's keys are
//! ASCII, so a Java client reads the same bytes): replication min(3, nodes), required reads
//! and writes min(2, replication), as the study's N=3 R=2 W=2; `--set
//! replication_factor=…`, `required_reads=…`, `required_writes=…` change them.

mod build;

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::{
    DeclaredServer, Home, LOOPBACK, Launch, NodeRecord, ServerRecord, StartOptions,
    ensure_packages, node_record, process, wait_for_port,
};

const STORE: &str = "hatshop";
const FIRST_PORT: u16 = 6666;
/// Partitions per node: keys spread over 4N partitions, owned round-robin.
const PARTITIONS_PER_NODE: usize = 4;
/// A node answers in about 2 s on an idle machine.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// 256 MB of heap: three nodes (about 550 MB RSS each) and the client fit easily.
const DEFAULT_HEAP: &str = "256m";
const QUORUM_SETTINGS: [&str; 3] = ["replication_factor", "required_reads", "required_writes"];

/// A Voldemort cluster of 1-5 nodes, built from source.
pub struct Voldemort;

impl DeclaredServer for Voldemort {
    const NAME: &'static str = "voldemort";
    const ABOUT: &'static str =
        "Project Voldemort built from source with javac (--nodes 1-5, --source PATH|GIT-URL)";
    const STORE: &'static str = "voldemort";
    const RETRY_START: bool = false;
    const MAX_NODES: usize = 5;
    const SETTINGS_FILE: Option<&'static str> = Some("quorums");
    const FROM_SOURCE: bool = true;

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let (home, options) = (launch.home, launch.options);
        let plan = Plan::new(launch)?;
        let source = launch
            .previous_setting("source_given")
            .or(options.source.clone());
        // The build needs a JDK and Maven (--install fetches Debian's).
        let java = ensure_packages("javac", &["openjdk-17-jdk-headless"], options.install, &[])?
            .with_file_name("java");
        ensure_packages("mvn", &["maven"], options.install, &[])?;
        let built = build::ensure(home, source.as_deref())?;
        crate::console::note!(
            "starting Project Voldemort: {} node{} on {LOOPBACK}, N={} R={} W={} …",
            plan.nodes.len(),
            if plan.nodes.len() == 1 { "" } else { "s" },
            plan.quorums[0],
            plan.quorums[1],
            plan.quorums[2]
        );
        let started = Instant::now();
        plan.write_configs()?;
        let mut spawned = process::Spawned::default();
        for node in &plan.nodes {
            spawned.push(node.spawn(&java, &built, &plan.heap)?);
        }
        for (node, &pid) in plan.nodes.iter().zip(spawned.pids()) {
            node.wait(pid)?;
        }
        let pids = spawned.keep();
        crate::console::note!(
            "Voldemort ready after {:.0} s",
            started.elapsed().as_secs_f64()
        );
        let mut settings: std::collections::BTreeMap<String, String> = [
            ("nodes".to_string(), plan.nodes.len().to_string()),
            ("heap".to_string(), plan.heap.clone()),
            ("store".to_string(), STORE.to_string()),
            ("classes".to_string(), built.classes.display().to_string()),
            ("lib".to_string(), built.lib.display().to_string()),
        ]
        .into_iter()
        .chain(
            QUORUM_SETTINGS
                .iter()
                .zip(plan.quorums)
                .map(|(k, v)| (k.to_string(), v.to_string())),
        )
        .chain(built.facts.iter().cloned())
        .collect();
        if let Some(source) = source {
            settings.insert("source_given".into(), source);
        }
        let hosts: Vec<String> = plan
            .nodes
            .iter()
            .map(|n| format!("{LOOPBACK}:{}", n.port))
            .collect();
        let url = format!("voldemort://{}/{STORE}", hosts.join(","));
        let version = "Project Voldemort (built from source)".to_string();
        let started = plan
            .nodes
            .iter()
            .zip(pids)
            .map(|(node, pid)| node.record(pid));
        Ok(ServerRecord {
            settings,
            programs: Some(built.classes.clone()),
            ..ServerRecord::of::<Self>(url, version, started.collect())
        })
    }

    fn restart_node(home: &Home, record: &ServerRecord, node: usize) -> Result<NodeRecord> {
        let plan = Plan::new(&Launch::again(home, record, &StartOptions::default()))?;
        let built = build::ensure(
            home,
            record.settings.get("source_given").map(String::as_str),
        )?;
        let this = &plan.nodes[node - 1];
        let pid = this.spawn(&java()?, &built, &plan.heap)?;
        this.wait(pid)?;
        Ok(this.record(pid))
    }
}

fn java() -> Result<PathBuf> {
    process::find_program("java", &[]).context(
        "java is not installed: Voldemort needs a JDK (`apt-get install -y openjdk-17-jdk-headless`)",
    )
}

/// Every node's ports and folder, and the store's quorums.
struct Plan {
    nodes: Vec<Node>,
    heap: String,
    /// replication-factor, required-reads, required-writes.
    quorums: [usize; 3],
}

struct Node {
    /// Voldemort's node id: 0, 1, …
    id: usize,
    port: u16,
    admin_port: u16,
    dir: PathBuf,
}

impl Plan {
    /// A previous server's ports (its data and cluster.xml name them), or free ones.
    fn new(launch: &Launch) -> Result<Plan> {
        let (dir, options, previous) = (&launch.dir, launch.options, launch.previous);
        let setting = |name: &str| launch.previous_setting(name);
        let count = launch.nodes();
        let heap = setting("heap")
            .or(options.heap.clone())
            .unwrap_or_else(|| DEFAULT_HEAP.to_string());
        // Given (--set, or the previous server's), else N=min(3, nodes), R=W=min(2, N).
        let mut given: [Option<usize>; 3] = [None; 3];
        for (i, name) in QUORUM_SETTINGS.iter().enumerate() {
            if let Some(v) = setting(name) {
                given[i] = Some(v.parse().context("a quorum setting in server.json")?);
            }
        }
        for (key, value) in &options.config {
            let Some(i) = QUORUM_SETTINGS.iter().position(|k| k == key) else {
                bail!(
                    "--set {key}: Voldemort takes {} only",
                    QUORUM_SETTINGS.join(", ")
                );
            };
            given[i] =
                Some(value.parse().ok().filter(|&v| v >= 1).with_context(|| {
                    format!("--set {key}={value}: expected a whole number ≥ 1")
                })?);
        }
        let replication = given[0].unwrap_or(count.min(3));
        let quorums = [
            replication,
            given[1].unwrap_or(replication.min(2)),
            given[2].unwrap_or(replication.min(2)),
        ];
        if quorums[0] > count || quorums[1] > quorums[0] || quorums[2] > quorums[0] {
            bail!(
                "replication-factor {} must be at most the {count} nodes, and required reads {} and writes {} at most it",
                quorums[0],
                quorums[1],
                quorums[2]
            );
        }
        let mut nodes = Vec::with_capacity(count);
        let mut chosen: Vec<u16> = Vec::new();
        for id in 0..count {
            let (port, admin_port) = match previous {
                Some(p) => {
                    let node = &p.nodes[id];
                    let admin = node.extra.get("admin_port").and_then(|a| a.parse().ok());
                    (node.port, admin.unwrap_or(node.port + 1))
                }
                None => {
                    let port =
                        process::free_port_besides(LOOPBACK, FIRST_PORT + 10 * id as u16, &chosen)?;
                    chosen.push(port);
                    let admin = process::free_port_besides(LOOPBACK, port + 1, &chosen)?;
                    chosen.push(admin);
                    (port, admin)
                }
            };
            nodes.push(Node {
                id,
                port,
                admin_port,
                dir: dir.join(format!("node{}", id + 1)),
            });
        }
        Ok(Plan {
            nodes,
            heap,
            quorums,
        })
    }

    fn cluster_xml(&self) -> String {
        let n = self.nodes.len();
        let mut xml = String::from("<cluster>\n  <name>hatshop</name>\n");
        for node in &self.nodes {
            let partitions: Vec<String> = (0..n * PARTITIONS_PER_NODE)
                .filter(|p| p % n == node.id)
                .map(|p| p.to_string())
                .collect();
            xml.push_str(&format!(
                "  <server><id>{}</id><host>{LOOPBACK}</host><http-port>{}</http-port>\
                 <socket-port>{}</socket-port><admin-port>{}</admin-port>\
                 <partitions>{}</partitions></server>\n",
                node.id,
                node.port - 1,
                node.port,
                node.admin_port,
                partitions.join(", ")
            ));
        }
        xml.push_str("</cluster>\n");
        xml
    }

    fn stores_xml(&self) -> String {
        let [replication, reads, writes] = self.quorums;
        format!(
            "<stores>\n  <store>\n    <name>{STORE}</name>\n    <persistence>bdb</persistence>\n\
             \x20   <routing-strategy>consistent-routing</routing-strategy>\n    <routing>client</routing>\n\
             \x20   <replication-factor>{replication}</replication-factor>\n\
             \x20   <required-reads>{reads}</required-reads>\n    <required-writes>{writes}</required-writes>\n\
             \x20   <key-serializer><type>string</type></key-serializer>\n\
             \x20   <value-serializer><type>identity</type></value-serializer>\n  </store>\n</stores>\n"
        )
    }

    /// Writes every node's config folder; a node's data folder is kept.
    fn write_configs(&self) -> Result<()> {
        let (cluster, stores) = (self.cluster_xml(), self.stores_xml());
        for node in &self.nodes {
            let config = node.dir.join("config");
            std::fs::create_dir_all(&config)
                .with_context(|| format!("cannot create {}", config.display()))?;
            std::fs::write(config.join("cluster.xml"), &cluster)?;
            std::fs::write(config.join("stores.xml"), &stores)?;
            std::fs::write(
                config.join("server.properties"),
                format!(
                    "node.id={}\nhttp.enable=false\nsocket.enable=true\nadmin.enable=true\n\
                     bdb.cache.size=64MB\nbdb.one.env.per.store=true\nenable.nio.connector=true\n\
                     request.format=vp3\nenable.server.routing=true\n\
                     storage.configs=voldemort.store.bdb.BdbStorageConfiguration, voldemort.store.memory.InMemoryStorageConfiguration\n",
                    node.id
                ),
            )?;
        }
        Ok(())
    }
}

impl Node {
    fn log_file(&self) -> PathBuf {
        self.dir.join("voldemort.log")
    }

    fn spawn(&self, java: &Path, built: &build::Build, heap: &str) -> Result<u32> {
        let log = self.log_file();
        if log.exists() {
            let _ = std::fs::rename(&log, self.dir.join("voldemort.previous.log"));
        }
        let out = File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let child = Command::new(java)
            .args([format!("-Xms{heap}"), format!("-Xmx{heap}")])
            .arg("-XX:+ExitOnOutOfMemoryError")
            .arg(format!(
                "-Dlog4j.configuration=file://{}/log4j.properties",
                built.classes.display()
            ))
            .arg("-cp")
            .arg(format!(
                "{}:{}/*",
                built.classes.display(),
                built.lib.display()
            ))
            .arg("voldemort.server.VoldemortServer")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            // Its own process group: a Ctrl-C meant for hatshop does not reach it.
            .process_group(0)
            .spawn()
            .context("cannot start the Voldemort JVM")?;
        Ok(child.id())
    }

    /// Ready when the client and admin ports both answer.
    fn wait(&self, pid: u32) -> Result<()> {
        let what = format!("Voldemort node {}", self.id + 1);
        for port in [self.port, self.admin_port] {
            wait_for_port(LOOPBACK, port, pid, START_TIMEOUT, &what, &self.log_file())?;
        }
        Ok(())
    }

    fn record(&self, pid: u32) -> NodeRecord {
        let mut node = node_record(
            self.id + 1,
            LOOPBACK,
            self.port,
            pid,
            &self.dir,
            self.dir.join("data"),
            self.log_file(),
        );
        node.extra
            .insert("admin_port".into(), self.admin_port.to_string());
        node.extra.insert("node_id".into(), self.id.to_string());
        node
    }
}
