//! A MariaDB Galera cluster (Debian's `mariadb-server`, `galera-4`, `mariadb-backup`):
//! one `mariadbd` per loopback address, each with its own folder and the same ports
//! (3306 SQL, 4567 group communication, 4568 IST, 4444 SST). The first node bootstraps
//! the cluster and the others join one after another by state transfer (mariabackup,
//! which works as root); ready when every node is `Synced` in a cluster of N. A crashed
//! node is started again with `--wsrep-recover` first, so it rejoins by IST. With
//! `--tls`, clients over TCP must speak TLS to every node (the nodes' own replication
//! stays on loopback, as before).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::certs::server_certs;
use super::mariadb::{
    client, create_user_and_database, install_db, mariadbd, product, spawn, tls_lines, with_tls,
    write_cnf,
};
use super::{
    DeclaredServer, Home, Launch, NodeRecord, ServerRecord, TLS_SETTING, ensure_packages, process,
    wait_until,
};

const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";
const PORTS: [u16; 4] = [3306, 4567, 4568, 4444];
/// A joiner's full state transfer takes 13–15 s here; a busy machine needs more.
const SYNC_TIMEOUT: Duration = Duration::from_secs(300);

/// A MariaDB Galera cluster of 1-5 nodes on loopback addresses.
pub struct Galera;

impl DeclaredServer for Galera {
    const NAME: &'static str = "galera";
    const ABOUT: &'static str = "a MariaDB Galera cluster (--nodes 1-5) from Debian's galera-4";
    const STORE: &'static str = "mysql";
    const RETRY_START: bool = false;
    const MAX_NODES: usize = 5;

    fn start(launch: &Launch) -> Result<ServerRecord> {
        let (dir, options) = (&launch.dir, launch.options);
        let mariadbd = mariadbd(options.install, &["galera-4", "mariadb-backup", "socat"])?;
        for program in ["mariabackup", "socat"] {
            ensure_packages(
                program,
                &["mariadb-backup", "socat"],
                options.install,
                &["/usr/bin"],
            )?;
        }
        if !Path::new(PROVIDER).exists() {
            bail!("{PROVIDER} is missing: run `apt-get install -y galera-4`");
        }
        let hosts: Vec<String> = match launch.previous {
            Some(previous) => previous.nodes.iter().map(|n| n.host.clone()).collect(),
            None => process::free_addresses(options.nodes, &PORTS)?,
        };
        let tls = match launch.tls() {
            true => Some(server_certs(
                dir,
                &hosts.iter().map(String::as_str).collect::<Vec<_>>(),
            )?),
            false => None,
        };
        let client_tls = tls.as_ref().map(tls_lines).unwrap_or_default();
        let nodes: Vec<Node> = hosts
            .iter()
            .enumerate()
            .map(|(i, host)| Node::new(dir, i + 1, host, &hosts, &client_tls))
            .collect::<Result<_>>()?;
        let started = Instant::now();
        let first = bootstrap_node(&nodes);
        let mut records = vec![None; nodes.len()];
        let mut spawned = process::Spawned::default();
        records[first] = Some(nodes[first].start(&mariadbd, true, &mut spawned)?);
        for (i, node) in nodes.iter().enumerate().filter(|(i, _)| *i != first) {
            records[i] = Some(node.start(&mariadbd, false, &mut spawned)?);
        }
        create_user_and_database(&nodes[0].cnf)?;
        let version = client(&nodes[0].cnf, "SELECT VERSION()")?;
        spawned.keep();
        let provider = status(&nodes[0].cnf, "wsrep_provider_version").unwrap_or_default();
        crate::console::note!(
            "galera: {} node{} synced in {:.0} s",
            nodes.len(),
            if nodes.len() == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64()
        );
        let addresses: Vec<String> = hosts.iter().map(|h| format!("{h}:3306")).collect();
        let url = with_tls(
            format!("mysql://root@{}/hatshop", addresses.join(",")),
            tls.as_ref(),
        );
        let version = format!("{} with Galera {provider}", product(version.trim()));
        let started = records.into_iter().map(|r| r.expect("every node started"));
        Ok(ServerRecord {
            settings: [("nodes".to_string(), nodes.len().to_string())].into(),
            ..ServerRecord::of::<Self>(url, version, started.collect())
        })
    }

    fn restart_node(home: &Home, record: &ServerRecord, node: usize) -> Result<NodeRecord> {
        let dir = &home.server_dir(record.kind);
        let hosts: Vec<String> = record.nodes.iter().map(|n| n.host.clone()).collect();
        let client_tls = match record
            .settings
            .get(TLS_SETTING)
            .is_some_and(|on| on == "on")
        {
            true => tls_lines(&server_certs(dir, &[])?),
            false => String::new(),
        };
        let this = Node::new(dir, node, &hosts[node - 1], &hosts, &client_tls)?;
        // The survivors must have let the old incarnation go, or the rejoin takes
        // many times longer: the old member must first time out of the cluster.
        let survivors: Vec<&NodeRecord> = record
            .nodes
            .iter()
            .filter(|n| n.node != node && n.alive())
            .collect();
        if let Some(via) = survivors.first() {
            let cnf = via.dir.join("my.cnf");
            let deadline = Instant::now() + Duration::from_secs(30);
            while status(&cnf, "wsrep_cluster_size")
                .and_then(|s| s.parse::<usize>().ok())
                .is_some_and(|size| size > survivors.len())
                && Instant::now() < deadline
            {
                if crate::interrupt::sleep_unless_requested(Duration::from_millis(250)) {
                    bail!("interrupted while node {node} waited to rejoin");
                }
            }
        }
        let bootstrap = survivors.is_empty();
        let mut spawned = process::Spawned::default();
        let record = this.start(&mariadbd(false, &[])?, bootstrap, &mut spawned)?;
        spawned.keep();
        Ok(record)
    }
}

/// One node's place: its number, address, folder and config.
struct Node {
    number: usize,
    host: String,
    dir: PathBuf,
    cnf: PathBuf,
}

impl Node {
    /// Node `number` of the nodes on `all`; `client_tls`: `[mariadbd]` lines of TLS.
    fn new(
        base: &Path,
        number: usize,
        host: &str,
        all: &[String],
        client_tls: &str,
    ) -> Result<Node> {
        let dir = base.join(format!("node{number}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let peers: Vec<String> = all.iter().map(|h| format!("{h}:4567")).collect();
        let wsrep = format!(
            "binlog_format = ROW\ndefault_storage_engine = InnoDB\ninnodb_autoinc_lock_mode = 2\n\
             wsrep_on = ON\nwsrep_provider = {PROVIDER}\nwsrep_cluster_name = hatshop_galera\n\
             wsrep_cluster_address = gcomm://{peers}\nwsrep_node_name = node{number}\n\
             wsrep_node_address = {host}\nwsrep_node_incoming_address = {host}:3306\n\
             wsrep_sst_receive_address = {host}:4444\nwsrep_sst_method = mariabackup\n\
             wsrep_sst_auth = root:\nwsrep_slave_threads = 2\n\
             wsrep_provider_options = \"gmcast.listen_addr=tcp://{host}:4567;ist.recv_addr={host}:4568;gcache.size=128M;pc.recovery=TRUE\"\n\
             {client_tls}[sst]\nsst-syslog = -1\n",
            peers = peers.join(","),
        );
        let cnf = write_cnf(&dir, host, 3306, &wsrep)?;
        Ok(Node {
            number,
            host: host.to_string(),
            dir,
            cnf,
        })
    }

    /// (safe_to_bootstrap, seqno) from grastate.dat, if the node has data.
    fn grastate(&self) -> Option<(bool, i64)> {
        let text = std::fs::read_to_string(self.dir.join("data/grastate.dat")).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        let seqno = field("seqno:")?.parse().ok()?;
        let safe = field("safe_to_bootstrap:").is_some_and(|v| v == "1");
        Some((safe, seqno))
    }

    /// The position of the last transaction InnoDB committed, for a crashed node.
    fn recover_position(&self, mariadbd: &Path) -> Option<String> {
        let log = self.dir.join("wsrep-recover.log");
        let _ = std::process::Command::new(mariadbd)
            .arg(format!("--defaults-file={}", self.cnf.display()))
            .arg("--wsrep-recover")
            .arg(format!("--log-error={}", log.display()))
            .output();
        let text = std::fs::read_to_string(&log).ok()?;
        text.lines()
            .rev()
            .find_map(|l| l.split("Recovered position: ").nth(1))
            .map(|p| p.trim().to_string())
    }

    /// Starts the node and waits until it is Synced; `spawned` stops it if that fails.
    fn start(
        &self,
        mariadbd: &Path,
        bootstrap: bool,
        spawned: &mut process::Spawned,
    ) -> Result<NodeRecord> {
        let data = self.dir.join("data");
        let mut args = Vec::new();
        if !data.join("mysql").exists() {
            if bootstrap {
                install_db(&self.dir, &self.cnf)?;
            } else {
                // A joiner starts empty: the state transfer fills it.
                std::fs::create_dir_all(&data)?;
            }
        } else if self.grastate().is_some_and(|(_, seqno)| seqno == -1)
            && let Some(position) = self.recover_position(mariadbd)
        {
            args.push(format!("--wsrep_start_position={position}"));
        }
        if bootstrap {
            args.push("--wsrep-new-cluster".into());
            let grastate = data.join("grastate.dat");
            if let Ok(text) = std::fs::read_to_string(&grastate) {
                std::fs::write(
                    &grastate,
                    text.replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1"),
                )?;
            }
        }
        let pid = spawned.push(spawn(mariadbd, &self.dir, &self.cnf, &args)?);
        let log = self.dir.join("error.log");
        let what = format!("galera node {} on {}", self.number, self.host);
        wait_until(pid, SYNC_TIMEOUT, &what, &log, || {
            status(&self.cnf, "wsrep_local_state_comment").as_deref() == Some("Synced")
        })?;
        Ok(super::node_record(
            self.number,
            &self.host,
            3306,
            pid,
            &self.dir,
            data,
            log,
        ))
    }
}

/// Which node starts the cluster: one marked safe to bootstrap, else the one with the
/// highest committed position, else the first.
fn bootstrap_node(nodes: &[Node]) -> usize {
    if let Some(i) = nodes
        .iter()
        .position(|n| n.grastate().is_some_and(|(safe, _)| safe))
    {
        return i;
    }
    nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.grastate().map(|(_, seqno)| (seqno, i)))
        .max()
        .map_or(0, |(_, i)| i)
}

/// One `wsrep_*` status value of a node, through its socket.
fn status(cnf: &Path, name: &str) -> Option<String> {
    let out = client(cnf, &format!("SHOW GLOBAL STATUS LIKE '{name}'")).ok()?;
    out.split_whitespace().nth(1).map(str::to_string)
}
