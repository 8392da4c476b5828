//! A node as a machine of its own in everything but the network: a share of the host's
//! CPU ([`cpu`]) and a memory of its own ([`memory`]), each kept by the kernel on a
//! control group of the node's own ([`cgroup`]) and set once the node has started.
//! Processes a node starts later (PostgreSQL's backends) inherit its groups.

mod cgroup;
pub mod cpu;
pub mod memory;

use std::collections::BTreeMap;

use anyhow::Result;

use cgroup::{Controller, Resource};

/// The key a server's record keeps its nodes' CPU budget under (cores per node).
pub const CPU_PER_NODE: &str = "cpu_per_node";
/// The key a server's record keeps its nodes' memory budget under ("768M" per node).
pub const MEMORY_PER_NODE: &str = "memory_per_node";

/// What each node of a server may use of the host; `None`: no cap, the nodes share it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NodeBudget {
    /// A share of the host's CPU, in cores.
    pub cores: Option<f64>,
    /// Memory, page cache included, in bytes.
    pub memory: Option<u64>,
}

impl NodeBudget {
    /// No cap at all.
    pub const NONE: NodeBudget = NodeBudget {
        cores: None,
        memory: None,
    };

    /// The budget a server's record (its settings) keeps.
    pub fn of(settings: &BTreeMap<String, String>) -> NodeBudget {
        NodeBudget {
            cores: settings.get(CPU_PER_NODE).and_then(|v| v.parse().ok()),
            memory: settings.get(MEMORY_PER_NODE).and_then(|v| memory::parse(v)),
        }
    }

    /// Keeps it in a server's record, so that a node started again gets the same.
    pub fn record(&self, settings: &mut BTreeMap<String, String>) {
        let mut keep = |key: &str, value: Option<String>| match value {
            Some(value) => settings.insert(key.to_string(), value),
            None => settings.remove(key),
        };
        keep(CPU_PER_NODE, self.cores.map(|c| c.to_string()));
        keep(MEMORY_PER_NODE, self.memory.map(memory::kept));
    }

    /// Whether it caps nothing.
    pub fn is_none(&self) -> bool {
        *self == NodeBudget::NONE
    }

    /// Caps process `pid`, node `node` of `server`, at this budget; a resource without
    /// a cap is lifted, and a controller never used is left alone.
    pub fn apply(&self, server: &str, node: usize, pid: u32) -> Result<()> {
        if self.cores.is_some() || Controller::find(Resource::Cpu).is_ok() {
            cpu::apply(server, node, pid, self.cores)?;
        }
        if self.memory.is_some() || Controller::find(Resource::Memory).is_ok() {
            memory::apply(server, node, pid, self.memory)?;
        }
        Ok(())
    }

    /// "0.3 core, 768 MiB": as a node's status and a study's cell say it.
    pub fn said(&self) -> String {
        let mut parts = Vec::new();
        if let Some(cores) = self.cores {
            parts.push(format!("{cores} core"));
        }
        if let Some(bytes) = self.memory {
            parts.push(memory::said(bytes));
        }
        parts.join(", ")
    }
}

/// Removes the groups of `server` whose processes are gone (a stopped, killed or
/// restarted node's); a group still in use is left.
pub fn remove_empty(server: &str) {
    for resource in [Resource::Cpu, Resource::Memory] {
        if let Ok(controller) = Controller::find(resource) {
            controller.remove_empty(server);
        }
    }
}
