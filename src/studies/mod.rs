//! The five published studies hatshop reproduces, as data: each one's question, parts,
//! figures (the study's own axes, grouping and metrics, with the numbers it printed),
//! and the cells that fill them, sized by `--scale`. `hatshop study` runs them; the
//! completions offer their names.

mod bulk_insert;
mod cassandra_throughput;
pub mod cells;
mod clusters;
mod hat_shop;
mod kv_mixes;

use crate::cluster::NodeBudget;
use crate::report::study::{Fact, FigureSpec, Ours, PartSpec, SetupRow};
use cells::{Cell, ServerNeed};

/// One study.
pub struct Study {
    pub name: &'static str,
    /// The published study, as its title reads.
    pub seed: &'static str,
    pub title: &'static str,
    pub question: &'static str,
    /// Where the published study ran, as its numbers beside ours say.
    pub seed_machine: &'static str,
    /// Its cores, where it said: a throughput is then also set beside ours per core.
    pub seed_cores: Option<u32>,
    /// How this machine differs from the study's, said plainly on the page.
    pub caveats: &'static [&'static str],
    /// The study's setup against ours, row by row: the table the page opens with.
    pub setup: &'static [SetupRow],
    pub parts: &'static [PartSpec],
    pub figures: &'static [FigureSpec],
    /// Its cells at a scale, servers grouped: the cells of one server stand together.
    pub cells: fn(f64) -> Vec<Cell>,
}

/// Every study, in the order of the published studies.
pub static STUDIES: &[Study] = &[
    hat_shop::STUDY,
    clusters::STUDY,
    bulk_insert::STUDY,
    cassandra_throughput::STUDY,
    kv_mixes::STUDY,
];

// The servers the studies compare, by the names `hatshop server start` takes: a study
// names them, as its published text does (the one place outside db/ and cluster/ that
// may; no code here decides anything by them).
const CASSANDRA: &str = "cassandra";
const MARIADB: &str = "mariadb";
const GALERA: &str = "galera";
const VOLDEMORT: &str = "voldemort";

/// The six order event types, as figures by event type draw them.
const ORDER_EVENT_TYPES: &[&str] = &[
    "create_order",
    "read_order",
    "update_order",
    "update_items",
    "update_status",
    "delete_order",
];

/// A study by name.
pub fn find(name: &str) -> Option<&'static Study> {
    STUDIES.iter().find(|s| s.name == name)
}

/// Labels from pairs.
fn labels(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Flags from words.
fn args(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).collect()
}

/// A row of the setup table: the study's `seed` against ours, and why ours differs.
const fn row(what: &'static str, seed: &'static str, ours: Ours, why: &'static str) -> SetupRow {
    SetupRow {
        what,
        seed,
        ours,
        why,
    }
}

/// A row of the setup table whose "here" each cell's record says, as the study had it.
const fn fact(what: &'static str, seed: &'static str, fact: Fact) -> SetupRow {
    row(what, seed, Ours::Fact(fact), "")
}

/// A server of `nodes` nodes, with store settings, sharing the host's cores.
fn need(server: &'static str, nodes: usize, query: &str) -> ServerNeed {
    ServerNeed {
        server,
        nodes,
        query: query.into(),
        set: &[],
        budget: NodeBudget::NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    #[test]
    fn every_cell_of_every_study_is_a_command_hatshop_takes() {
        for study in STUDIES {
            let cells = (study.cells)(0.05);
            assert!(!cells.is_empty(), "{}", study.name);
            let mut ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(
                ids.len(),
                cells.len(),
                "{}: cell ids are unique",
                study.name
            );
            for cell in &cells {
                let argv = cell.argv(
                    "sqlite://",
                    std::path::Path::new("x"),
                    std::path::Path::new("h"),
                );
                Cli::from_command_line(&argv)
                    .unwrap_or_else(|e| panic!("{}: {}: {e}", study.name, cell.id));
                // So is what warms its server up.
                let warm = cell.warm_up_argv(
                    "sqlite://",
                    std::path::Path::new("w"),
                    std::path::Path::new("h"),
                    20,
                );
                Cli::from_command_line(&warm)
                    .unwrap_or_else(|e| panic!("{}: warming {}: {e}", study.name, cell.id));
                assert!(
                    study.parts.iter().any(|p| p.id == cell.part),
                    "{}: {} has no part",
                    study.name,
                    cell.id
                );
            }
            for figure in study.figures {
                assert!(study.parts.iter().any(|p| p.id == figure.part));
                // A figure that keeps only some cells keeps at least one.
                let kept = cells.iter().filter(|cell| {
                    (figure.part == cell.part || figure.also.contains(&cell.part))
                        && figure.only.iter().all(|(key, wanted)| {
                            cell.labels
                                .iter()
                                .any(|(k, v)| k == key && wanted.split('|').any(|w| w == v))
                        })
                });
                assert!(
                    kept.count() > 0,
                    "{}: {} draws no cell",
                    study.name,
                    figure.title
                );
            }
        }
    }

    #[test]
    fn a_smaller_scale_makes_smaller_cells() {
        for study in STUDIES {
            let full: u64 = (study.cells)(1.0).iter().map(|c| c.work).sum();
            let small: u64 = (study.cells)(0.05).iter().map(|c| c.work).sum();
            assert!(small < full, "{}", study.name);
        }
    }
}
