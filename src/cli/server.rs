//! `hatshop server`'s flags: which server, how many nodes, its settings and budget, and
//! the node an action goes to.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::values::parse_key_value;
use crate::cluster::ServerDeclarations;

/// `hatshop server`: the data folder, and what to do.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Folder for server data and downloads [default: $HATSHOP_HOME, else ~/.local/share/hatshop].
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    #[command(subcommand)]
    pub action: ServerAction,
}

/// What `hatshop server` does to a local server.
#[derive(Debug, Subcommand)]
pub enum ServerAction {
    /// Start a server (once: a second start says where it already runs) and print its
    /// URL; with --node, start one stopped or killed node of it again.
    Start {
        kind: &'static ServerDeclarations,
        /// Nodes: a Cassandra ring or a Galera cluster of 1-5.
        #[arg(long, default_value_t = 1)]
        nodes: usize,
        /// Cassandra data centres (2: GossipingPropertyFileSnitch, for NetworkTopologyStrategy).
        #[arg(long, default_value_t = 1)]
        dcs: usize,
        /// Start this node of a running server again (after kill or stop).
        #[arg(long, value_name = "K", conflicts_with_all = ["nodes", "dcs"])]
        node: Option<usize>,
        /// Cassandra version to fetch from Maven Central.
        #[arg(long)]
        version: Option<String>,
        /// JVM heap per node [default: Cassandra 1g for one node, 512m in a ring;
        /// Voldemort 256m].
        #[arg(long)]
        heap: Option<String>,
        /// Port to listen on [default: the usual one if free, else any free port].
        #[arg(long)]
        port: Option<u16>,
        /// TLS on and required, from a CA made in the server's folder: the URL printed
        /// carries the CA and asks to check the certificate and the name (Voldemort's
        /// protocol has none).
        #[arg(long)]
        tls: bool,
        /// Redis persistence: none, aof-everysec or aof-always.
        #[arg(long, default_value = "none", value_parser = ["none", "aof-everysec", "aof-always"])]
        persistence: String,
        /// Install missing Debian packages (mariadb-server, galera-4, postgresql, redis-server, openjdk-17-jdk-headless, maven); needs root.
        #[arg(long)]
        install: bool,
        /// Cassandra: a cassandra.yaml setting, e.g. batch_size_fail_threshold=4MiB;
        /// Voldemort: replication_factor, required_reads or required_writes (repeatable;
        /// kept for the life of the data, recorded in every run.json).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        config: Vec<(String, String)>,
        /// Voldemort: the source to build, a folder or .tar.gz of upstream's tree or its
        /// git URL [default: the upstream archive hatshop carries, commit 99127eab3].
        #[arg(long, value_name = "PATH|GIT-URL")]
        source: Option<String>,
        /// Give each node this share of the host's CPU, in cores (0.3: a third of one),
        /// so that it is a machine of its own in everything but the network: the
        /// kernel's CPU quota, set once the nodes are up (needs root). On a running
        /// server it changes the budget of every node at once.
        #[arg(long, value_name = "CORES")]
        cpu_per_node: Option<f64>,
        /// Give each node this much memory, its page cache included (768M, 1.5G), so
        /// that data beyond it is read from the disk as on a machine of that size: the
        /// kernel's memory controller, set once the nodes are up (needs root). A node
        /// that needs more than its budget is stopped by the kernel, as a machine out of
        /// memory would be. On a running server it changes every node's budget at once.
        #[arg(long, value_name = "SIZE")]
        memory_per_node: Option<String>,
    },
    /// Stop a server cleanly (every node, or one with --node), or all of them.
    Stop {
        #[arg(required_unless_present = "all")]
        kind: Option<&'static ServerDeclarations>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
        /// Stop only this node.
        #[arg(long, value_name = "K", conflicts_with = "all")]
        node: Option<usize>,
    },
    /// Kill a node with SIGKILL, as in a crash.
    Kill(NodeArgs),
    /// Pause a node with SIGSTOP: it stops answering and keeps its connections.
    Pause(NodeArgs),
    /// Resume a paused node (SIGCONT).
    Resume(NodeArgs),
    /// Stop a server (or all) and delete its data, to start from scratch.
    Wipe {
        #[arg(required_unless_present = "all")]
        kind: Option<&'static ServerDeclarations>,
        #[arg(long, conflicts_with = "kind")]
        all: bool,
    },
    /// What runs, where: every node's address, state, pid and memory, and its URL.
    Status,
    /// The end of a node's log.
    Logs {
        kind: &'static ServerDeclarations,
        /// Which node.
        #[arg(long, value_name = "K", default_value_t = 1)]
        node: usize,
        /// Lines to show.
        #[arg(short = 'n', long, default_value_t = 40)]
        lines: usize,
    },
}

/// A server and one of its nodes.
#[derive(Debug, Args)]
pub struct NodeArgs {
    pub kind: &'static ServerDeclarations,
    /// Which node (1, 2, …).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub node: usize,
}
