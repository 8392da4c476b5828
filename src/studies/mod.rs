//! Studies as files: a study (TOML) says its question, its candidates, the cells that
//! answer it and the figures that draw them. The five published studies hatshop
//! reproduces are the first such files (`studies/*.toml`), built into the binary;
//! `hatshop study` runs them or a file of the user's. docs/studies.md is the format.

pub mod cells;
mod expand;
mod file;
mod settings;

use indexmap::IndexMap;
use serde::Deserialize;

use crate::report::study::{FigureSpec, PartSpec, SetupRow};
use expand::CellGroup;
use settings::Settings;

pub use file::open;

/// One study, as its file says it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    pub name: String,
    pub title: String,
    pub question: String,
    /// The published study it reproduces, as its title reads (none for a shop's own).
    #[serde(default)]
    pub seed: String,
    /// Where the published study ran, as its numbers beside ours say.
    #[serde(default)]
    pub seed_machine: String,
    /// Its cores, where it said: a throughput is then also set beside ours per core.
    pub seed_cores: Option<u32>,
    /// How this machine differs from the study's, said plainly on the page.
    #[serde(default)]
    pub caveats: Vec<String>,
    /// The service-level objective, in `--threshold`'s words (`p99<20ms`,
    /// `errors<0.1%`): every run cell is judged by it, and the page opens with the
    /// verdict.
    #[serde(default)]
    slo: Vec<String>,
    /// The study's setup against ours, row by row: the table the page opens with.
    #[serde(default)]
    pub setup: Vec<SetupRow>,
    pub parts: Vec<PartSpec>,
    #[serde(default)]
    pub figures: Vec<FigureSpec>,
    /// What the cells compare, by the names the file gives them.
    candidates: IndexMap<String, Candidate>,
    /// Settings every cell starts from.
    #[serde(default)]
    set: Settings,
    /// Groups of cells, each a part's.
    cells: Vec<CellGroup>,
}

/// A database the study compares: a server hatshop starts (and stops), or the user's
/// own at a URL.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Candidate {
    /// A name `hatshop server start` takes.
    server: String,
    /// The user's own server of that kind: hatshop neither starts nor stops it.
    url: Option<String>,
    /// What its cells' `store` label says [default: the candidate's name].
    label: Option<String>,
    /// Settings of its every cell.
    #[serde(default)]
    set: Settings,
}

impl Study {
    /// The objective, read (a study file's is checked when it is read).
    pub fn slo(&self) -> Vec<crate::stats::threshold::Threshold> {
        self.slo
            .iter()
            .filter_map(|bound| crate::cli::threshold::threshold(bound).ok())
            .collect()
    }
}

/// The studies built into the binary, in the order of the published studies.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("hat-shop", include_str!("../../studies/hat-shop.toml")),
    ("clusters", include_str!("../../studies/clusters.toml")),
    (
        "bulk-insert",
        include_str!("../../studies/bulk-insert.toml"),
    ),
    (
        "cassandra-throughput",
        include_str!("../../studies/cassandra-throughput.toml"),
    ),
    ("kv-mixes", include_str!("../../studies/kv-mixes.toml")),
];

/// A built-in study's file, by name.
pub fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;

    fn every_study() -> Vec<Study> {
        BUILT_IN
            .iter()
            .map(|(name, text)| file::parse(text, name).unwrap_or_else(|e| panic!("{e:#}")))
            .collect()
    }

    #[test]
    fn every_cell_of_every_study_is_a_command_hatshop_takes() {
        for study in every_study() {
            let cells = study.cells(0.05).unwrap();
            assert!(!cells.is_empty(), "{}", study.name);
            for cell in &cells {
                // What warms its server up is one too.
                let warm = cell.warm_up_argv(
                    "sqlite://",
                    std::path::Path::new("w"),
                    std::path::Path::new("h"),
                    20,
                );
                Cli::from_command_line(&warm)
                    .unwrap_or_else(|e| panic!("{}: warming {}: {e}", study.name, cell.id));
            }
            for figure in &study.figures {
                // A figure that keeps only some cells keeps at least one.
                let kept = cells.iter().filter(|cell| {
                    figure.draws(&cell.part)
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
        for study in every_study() {
            let full: u64 = study.cells(1.0).unwrap().iter().map(|c| c.work).sum();
            let small: u64 = study.cells(0.05).unwrap().iter().map(|c| c.work).sum();
            assert!(small < full, "{}", study.name);
        }
    }

    #[test]
    fn each_built_in_study_is_named_as_its_file_names_it() {
        for (name, study) in BUILT_IN.iter().zip(every_study()) {
            assert_eq!(name.0, study.name);
        }
    }
}
