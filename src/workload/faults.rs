//! Fault timelines as written: `[[faults]]` tables in a workload spec or in a file of
//! their own (`--faults FILE`), each an offset into the measured phase, an action and a
//! node. Checked here as far as they can be without a server (each problem one line);
//! the runner finds the server they go to and plays them.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The most nodes any server runs here (five rings of 512 MB heaps and the client fit in
/// the machines' memory), and so the highest node a fault can name.
pub const MAX_NODES: usize = 5;

/// What a fault does to one node of a running server, by the node's own pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum NodeAction {
    /// SIGKILL: the node dies at once, as in a crash.
    Kill,
    /// A clean shutdown.
    Stop,
    /// Start a stopped or killed node again (Galera: recovering its position first).
    Start,
    /// SIGSTOP: the node stops answering but keeps its connections.
    Pause,
    /// SIGCONT after a pause.
    Resume,
}

impl NodeAction {
    /// Every action, in the order help lists them.
    pub const ALL: [NodeAction; 5] = [
        NodeAction::Kill,
        NodeAction::Stop,
        NodeAction::Start,
        NodeAction::Pause,
        NodeAction::Resume,
    ];

    /// The name a fault spec uses.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeAction::Kill => "kill",
            NodeAction::Stop => "stop",
            NodeAction::Start => "start",
            NodeAction::Pause => "pause",
            NodeAction::Resume => "resume",
        }
    }

    /// The action a fault spec names.
    pub fn parse(text: &str) -> Option<NodeAction> {
        Self::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// One `[[faults]]` table as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultEntry {
    /// Offset into the measured phase: "20s", "1m30s", "500ms".
    pub at: String,
    /// kill | stop | start | pause | resume
    pub action: String,
    /// 1-based, as `hatshop server status` numbers the nodes.
    pub node: u64,
    /// The server (cassandra, galera, mysql, …); default: the one serving the URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A checked fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub at: Duration,
    pub action: NodeAction,
    pub node: usize,
    pub server: Option<String>,
}

/// A file given to `--faults`: only `[[faults]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsFile {
    #[serde(default)]
    faults: Vec<FaultEntry>,
}

impl FaultEntry {
    /// Checks what can be checked without a server; `number` is 1-based.
    pub fn check(&self, number: usize) -> Result<Fault, String> {
        let at = humantime::parse_duration(self.at.trim()).map_err(|_| {
            format!(
                "fault {number}: at = \"{}\" is not a duration (write e.g. \"20s\", \"1m30s\", \"500ms\")",
                self.at
            )
        })?;
        let action = NodeAction::parse(&self.action).ok_or_else(|| {
            let actions: Vec<&str> = NodeAction::ALL.iter().map(|a| a.as_str()).collect();
            format!(
                "fault {number}: action = \"{}\" is not one of {}",
                self.action,
                actions.join(", ")
            )
        })?;
        if self.node == 0 || self.node > MAX_NODES as u64 {
            return Err(format!(
                "fault {number}: node = {} is out of range: nodes are numbered 1 to {}",
                self.node, MAX_NODES
            ));
        }
        Ok(Fault {
            at,
            action,
            node: self.node as usize,
            server: self.server.clone(),
        })
    }
}

/// Checks every entry, in time order.
pub fn check_all(entries: &[FaultEntry]) -> Result<Vec<Fault>, String> {
    let mut faults = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| entry.check(i + 1))
        .collect::<Result<Vec<_>, _>>()?;
    faults.sort_by_key(|f| f.at);
    Ok(faults)
}

/// Reads a `--faults` file: `[[faults]]` tables and nothing else.
pub fn read_file(path: &Path) -> Result<Vec<FaultEntry>> {
    let text =
        crate::regular_file::read_bounded_text(path, crate::regular_file::SETTINGS_FILE_LIMIT)
            .with_context(|| format!("cannot read faults file {}", path.display()))?;
    let file: FaultsFile = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        let message = e.message().trim().replace('\n', " ");
        match line {
            Some(line) => anyhow::anyhow!("{}: line {line}: {message}", path.display()),
            None => anyhow::anyhow!("{}: {message}", path.display()),
        }
    })?;
    check_all(&file.faults).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(file.faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: &str, action: &str, node: u64) -> FaultEntry {
        FaultEntry {
            at: at.into(),
            action: action.into(),
            node,
            server: None,
        }
    }

    #[test]
    fn good_entries_become_faults_in_time_order() {
        let faults = check_all(&[
            entry("40s", "start", 2),
            entry("1m", "resume", 1),
            entry("20s", "kill", 2),
        ])
        .unwrap();
        let at: Vec<u64> = faults.iter().map(|f| f.at.as_secs()).collect();
        assert_eq!(at, [20, 40, 60]);
        assert_eq!(faults[0].action, NodeAction::Kill);
    }

    #[test]
    fn each_problem_is_one_line_that_names_the_fault() {
        let cases = [
            (
                entry("soon", "kill", 1),
                "fault 1: at = \"soon\" is not a duration",
            ),
            (
                entry("20s", "explode", 1),
                "fault 1: action = \"explode\" is not one of kill, stop, start, pause, resume",
            ),
            (entry("20s", "kill", 0), "fault 1: node = 0 is out of range"),
            (entry("20s", "kill", 9), "fault 1: node = 9 is out of range"),
        ];
        for (bad, expected) in cases {
            let error = check_all(&[bad]).unwrap_err();
            assert!(error.starts_with(expected), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn a_faults_file_is_read_and_its_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.toml");
        std::fs::write(
            &good,
            "[[faults]]\nat = \"20s\"\naction = \"kill\"\nnode = 2\n",
        )
        .unwrap();
        assert_eq!(read_file(&good).unwrap().len(), 1);
        let bad = dir.path().join("bad.toml");
        std::fs::write(
            &bad,
            "[[faults]]\nat = \"20s\"\nacton = \"kill\"\nnode = 2\n",
        )
        .unwrap();
        let error = format!("{:#}", read_file(&bad).unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("acton"),
            "{error}"
        );
        assert!(!error.contains('\n'), "{error}");
    }
}
