//! The servers a series of runs stands on, and what becomes of each at the end: one
//! started here is stopped (and wiped, when it was started fresh for a sweep's step),
//! whatever happened; one found running is left as it was found, its budget given
//! back (the user's own, given by URL, never has a guard: it is only used). A budget
//! per node is set before each run that asks for one.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cluster::{
    self, Home, NodeBudget, ServerDeclarations, ServerRecord, StartOptions, server_declarations,
};
use crate::console::note;
use crate::interrupt;
use crate::observe::settle::{self, Settled};
use crate::observe::thread_pools;

/// The longest a cell waits for a server's background work to end before it runs.
const SETTLE_DEADLINE: Duration = Duration::from_secs(60);
/// The longest a cell waits for its ring to be whole again.
const RING_DEADLINE: Duration = Duration::from_secs(120);

/// What becomes of a server when its guard goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    /// Found running: left as it was found.
    Leave,
    /// Started here: stopped.
    Stop,
    /// Started fresh here: stopped and its data deleted.
    Wipe,
}

/// A server some runs stand on, guarded until they are done.
pub struct ServerGuard {
    home: Home,
    kind: &'static ServerDeclarations,
    nodes: usize,
    set: Vec<(String, String)>,
    end: End,
    /// Each node's budget now, and as the guard found it.
    budget: NodeBudget,
    found_budget: NodeBudget,
    /// Whether it has been warmed up.
    pub warmed: bool,
    /// The URL to give `--db`.
    pub url: String,
}

impl ServerGuard {
    fn new(
        home: &Home,
        kind: &'static ServerDeclarations,
        nodes: usize,
        end: End,
        url: String,
    ) -> ServerGuard {
        ServerGuard {
            home: home.clone(),
            kind,
            nodes,
            set: Vec::new(),
            end,
            budget: NodeBudget::NONE,
            found_budget: NodeBudget::NONE,
            warmed: false,
            url,
        }
    }

    /// A fresh server of `nodes` nodes, whatever ran before (a sweep's step): wiped
    /// before it starts, and stopped and wiped at the end.
    pub async fn fresh(home: &Home, name: &str, nodes: usize) -> Result<ServerGuard> {
        let kind = server_declarations(name).with_context(|| format!("no server named {name}"))?;
        let began = Instant::now();
        let options = StartOptions {
            nodes,
            ..StartOptions::default()
        };
        let record = start(home, kind, options, true).await?;
        note!(
            "{} with {nodes} node{} ready in {:.0} s",
            kind.name,
            if nodes == 1 { "" } else { "s" },
            began.elapsed().as_secs_f64()
        );
        Ok(ServerGuard::new(home, kind, nodes, End::Wipe, record.url))
    }

    /// The server `name` at `nodes` nodes, started with the server settings `set`: one
    /// found running at that size (refused at another size or without a setting); else
    /// started, and stopped at the end.
    pub async fn find_or_start(
        home: &Home,
        name: &str,
        nodes: usize,
        set: &[(String, String)],
        install: bool,
    ) -> Result<ServerGuard> {
        let kind = server_declarations(name).with_context(|| format!("no server named {name}"))?;
        if let Some(record) = home.running(kind) {
            refuse_other_size_or_settings(home, kind, &record, nodes, set)?;
            let mut guard = ServerGuard::new(home, kind, nodes, End::Leave, record.url.clone());
            guard.set = set.to_vec();
            guard.budget = record.budget();
            guard.found_budget = guard.budget;
            return Ok(guard);
        }
        let began = Instant::now();
        note!(
            "starting {}{}",
            kind.name,
            if nodes > 1 {
                format!(" with {nodes} nodes")
            } else {
                String::new()
            }
        );
        let options = StartOptions {
            nodes,
            config: set.to_vec(),
            install,
            ..StartOptions::default()
        };
        let record = start(home, kind, options, false).await?;
        note!(
            "{} ready in {:.0} s",
            kind.name,
            began.elapsed().as_secs_f64()
        );
        let mut guard = ServerGuard::new(home, kind, nodes, End::Stop, record.url);
        guard.set = set.to_vec();
        Ok(guard)
    }

    /// Whether it is the server `name` at `nodes` nodes with the settings `set`.
    pub fn serves(&self, name: &str, nodes: usize, set: &[(String, String)]) -> bool {
        self.kind.name == name && self.nodes == nodes && self.set == set
    }

    /// Gives every node the budget `given` (none: no cap).
    pub async fn budget(&mut self, given: NodeBudget) -> Result<()> {
        if self.budget == given {
            return Ok(());
        }
        let (home, kind) = (self.home.clone(), self.kind);
        tokio::task::spawn_blocking(move || cluster::budget(&home, kind, given)).await??;
        self.budget = given;
        Ok(())
    }

    /// Waits until the nodes have no background work left (Cassandra's compactions and
    /// flushes, what the cell before may have left), at most [`SETTLE_DEADLINE`]; says
    /// what it found where there was any wait.
    pub async fn settle(&self) {
        let Some(nodes) = self
            .home
            .running(self.kind)
            .as_ref()
            .and_then(thread_pools::nodes_of)
        else {
            return;
        };
        let name = self.kind.name;
        match settle::settle(nodes, SETTLE_DEADLINE).await {
            Settled::Quiet(took) if took >= Duration::from_secs(1) => note!(
                "{name} settled in {:.0} s (no compaction or flush left)",
                took.as_secs_f64()
            ),
            Settled::Quiet(_) => {}
            Settled::Busy(what) => note!(
                "{name} still busy after {} s ({what}); the cell runs on what it finds",
                SETTLE_DEADLINE.as_secs()
            ),
            Settled::Unknown(why) => note!("cannot tell whether {name} has settled ({why})"),
        }
    }

    /// Waits until every node of a ring sees every other up (a node starved by its
    /// budget can be marked down after the ring started whole), at most
    /// [`RING_DEADLINE`]; says where there was any wait, and what is still down after
    /// it: the cell then runs on what it finds, and fails on its own if it must.
    pub async fn wait_ring(&self) {
        if !self.kind.nodetool || self.nodes < 2 {
            return;
        }
        let name = self.kind.name;
        let began = Instant::now();
        loop {
            let Some(record) = self.home.running(self.kind) else {
                return;
            };
            let Some(gaps) = crate::cluster::ring_gaps(&record) else {
                let waited = began.elapsed();
                if waited >= Duration::from_secs(1) {
                    note!(
                        "{name}: the ring is whole again after {:.0} s",
                        waited.as_secs_f64()
                    );
                }
                return;
            };
            if interrupt::requested() {
                return;
            }
            if began.elapsed() >= RING_DEADLINE {
                note!(
                    "{name}: the ring is not whole after {} s ({gaps}); the cell runs on what it finds",
                    RING_DEADLINE.as_secs()
                );
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// How long it has been up, as its record says.
    pub fn up_for(&self) -> Option<Duration> {
        let record = self.home.running(self.kind)?;
        let started = crate::stamp::parse(&record.started_at)?;
        std::time::SystemTime::now().duration_since(started).ok()
    }

    /// Its name, as `hatshop server` takes it.
    pub fn name(&self) -> &'static str {
        self.kind.name
    }

    /// Its URL with store settings after it (`rf=3&cl=QUORUM`).
    pub fn url_with(&self, query: &str) -> String {
        if query.is_empty() {
            return self.url.clone();
        }
        let joint = if self.url.contains('?') { '&' } else { '?' };
        format!("{}{joint}{query}", self.url)
    }
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let ended = match self.end {
            End::Stop => cluster::stop(&self.home, self.kind).map(|_| "stopped"),
            End::Wipe => cluster::wipe(&self.home, self.kind).map(|()| "stopped and wiped"),
            End::Leave if self.budget != self.found_budget => {
                // A server found running gets back the budget it had.
                cluster::budget(&self.home, self.kind, self.found_budget).map(|_| "left running")
            }
            End::Leave => return,
        };
        match ended {
            Ok(what) if self.end != End::Leave => note!("{} {what}", self.kind.name),
            Ok(_) => {}
            Err(e) => note!("could not stop {}: {e:#}", self.kind.name),
        }
    }
}

/// A server found running must be of the size and settings asked for: it is not
/// touched, and the line says how to stop it.
fn refuse_other_size_or_settings(
    home: &Home,
    kind: &'static ServerDeclarations,
    record: &ServerRecord,
    nodes: usize,
    set: &[(String, String)],
) -> Result<()> {
    if record.nodes.len() != nodes {
        bail!(
            "{} already runs with {} node{} under {}; {nodes} are needed: stop it first \
             (`hatshop server stop {}`)",
            kind.name,
            record.nodes.len(),
            if record.nodes.len() == 1 { "" } else { "s" },
            home.root.display(),
            kind.name
        );
    }
    if let Some((key, value)) = set
        .iter()
        .find(|(key, value)| !record.started_with(key, value))
    {
        bail!(
            "{} runs without {key}={value}, which is needed: stop it first (`hatshop server \
             stop {}`) and one is started with it",
            kind.name,
            kind.name
        );
    }
    Ok(())
}

/// Starts a server off the runtime's threads, hearing Ctrl-C; `fresh`: wiped first (and
/// wiped again if it fails to start).
async fn start(
    home: &Home,
    kind: &'static ServerDeclarations,
    options: StartOptions,
    fresh: bool,
) -> Result<ServerRecord> {
    let home = home.clone();
    tokio::task::spawn_blocking(move || {
        let _listening = interrupt::Listening::new();
        if fresh {
            cluster::wipe(&home, kind)?;
        }
        match cluster::start(&home, kind, &options) {
            Ok((record, _)) => Ok(record),
            Err(e) => {
                if fresh {
                    let _ = cluster::wipe(&home, kind);
                }
                Err(e)
            }
        }
    })
    .await?
}
