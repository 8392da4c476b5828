//! `hatshop sweep`: one workload run again and again while settings vary, each run a
//! cell of a series (`lifecycle::series`, as a study's are) in its own folder under
//! the sweep folder, then `sweep.csv` (a row per run per event type) and `sweep.html`.
//! Several `--vary` move in step (`nodes=1,2,3` with `rf=1,2,3`); several `--db` run
//! every step on every database, drawn side by side. Every run sets its tables up
//! anew and is verified; the same command again resumes a sweep cut short.
//!
//! A `nodes` sweep starts the cluster at each size itself: its `--db` names servers
//! (`cassandra`, `galera`, with settings after `?`), each started fresh with that many
//! nodes, run, then stopped and wiped, also when a run fails or Ctrl-C ends the sweep.

mod said;
mod steps;
mod targets;

use std::cell::Cell as Once;
use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::quantities::positive_count;
use crate::cli::{Cli, Command, SweepArgs, all_settings};
use crate::cluster::{Home, NodeBudget};
use crate::config::RunConfig;
use crate::console::note;
use crate::lifecycle::run::refuse_export_in_series;
use crate::lifecycle::series::Series;
use crate::result_dir::folder::unique_dir;
use crate::studies::cells::{Cell, ServerNeed, Verb, with_query};
use said::{Said, write_up};
use steps::Steps;
use targets::Target;

/// The stores that take a setting, for messages.
fn takers(key: &str) -> String {
    all_settings()
        .into_iter()
        .find(|(s, _)| s.name == key)
        .map(|(_, stores)| stores.join(" and "))
        .unwrap_or_default()
}
/// A folder name from a run's place in the sweep.
fn folder_name(keys: &[String], values: &[String], target: Option<&str>, repeat: usize) -> String {
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name: Vec<String> = keys
        .iter()
        .zip(values)
        .map(|(k, v)| format!("{k}={}", safe(v)))
        .collect();
    if let Some(target) = target {
        name.push(safe(target));
    }
    format!("{}-r{repeat}", name.join("-"))
}

/// A varied store setting must be taken by at least one of the databases; the others
/// run without it, and say so.
fn check_varied_settings(steps: &Steps, targets: &[Target]) -> Result<()> {
    for key in &steps.keys {
        let key = crate::db::current_setting_name(key);
        if !all_settings().iter().any(|(s, _)| s.name == key) {
            continue;
        }
        let stores = targets
            .iter()
            .map(Target::store)
            .collect::<Result<Vec<_>>>()?;
        if !stores.iter().any(|store| store.takes(key)) {
            bail!(
                "--vary {key}: none of the databases takes it (it is a setting of {})",
                takers(key)
            );
        }
        for (target, store) in targets.iter().zip(stores) {
            if !store.takes(key) {
                note!(
                    "--vary {key}: {} does not take it and runs without it",
                    target.label()
                );
            }
        }
    }
    Ok(())
}

/// A nodes sweep starts and stops its own servers: none may run already.
fn check_servers_stopped(home: &Home, targets: &[Target]) -> Result<()> {
    for target in targets {
        if let Target::Server { kind, .. } = target
            && home.running(kind).is_some()
        {
            bail!(
                "{} already runs under {}: a nodes sweep starts and stops its own; stop it first \
                 (`hatshop server stop {}`)",
                kind.name,
                home.root.display(),
                kind.name
            );
        }
    }
    Ok(())
}

/// The flags of the sweep that are not its runs': each run gets its own.
const NOT_HANDED_ON: &[&str] = &[
    "vary", "db", "out", "repeat", "home", "quiet", "recreate", "verify",
];

/// `hatshop sweep`: one workload run while settings vary, every step checked first.
pub async fn run(args: &SweepArgs) -> Result<std::process::ExitCode> {
    let steps = Steps::parse(&args.vary)?;
    refuse_export_in_series(&args.run)?;
    crate::lifecycle::run::refuse_bounds_in(&args.run, "a sweep")?;
    if args.run.find_max || args.run.p99_under.is_some() {
        crate::cli::usage_bail!(
            "--find-max searches on its own: use it with hatshop run, not sweep"
        );
    }
    if args.run.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if args.run.shard.is_some() {
        crate::cli::usage_bail!("--shard splits one run over client machines; a sweep runs on one");
    }
    let nodes_sweep = steps.keys.iter().any(|k| k == "nodes");
    let dbs = match args.run.db.as_slice() {
        [] if nodes_sweep => bail!(
            "a nodes sweep needs --db naming the servers it starts: e.g. --db cassandra --db galera"
        ),
        [] => vec![crate::db::DEFAULT_URL.to_string()],
        given => given.to_vec(),
    };
    let targets: Vec<Target> = dbs
        .iter()
        .map(|db| Target::parse(db, nodes_sweep))
        .collect::<Result<_>>()?;
    check_varied_settings(&steps, &targets)?;
    let home = Home::resolve(args.run.home.as_deref())?;
    check_servers_stopped(&home, &targets)?;
    let dir = match &args.run.out {
        Some(dir) => dir.clone(),
        None => unique_dir(
            Path::new("results"),
            &format!(
                "sweep-{}-{}",
                crate::stamp::for_names(),
                steps.keys.join("-")
            ),
        ),
    };
    let cells = cells(args, &steps, &targets, &home.root)?;
    let name = args
        .vary
        .iter()
        .map(|v| format!("{}={}", v.key, v.values.join(",")))
        .collect::<Vec<_>>()
        .join(" ");
    let series = Series::of_command("sweep", &name, &dir, &home);
    let watch = Said {
        header: format!(
            "sweep of {} over {} × {} × {} into {}",
            steps.keys.join(","),
            crate::numbers::counted(steps.values.len() as u64, "step"),
            crate::numbers::counted(targets.len() as u64, "database"),
            crate::numbers::counted(args.run.repeat as u64, "repeat"),
            dir.display()
        ),
        several: targets.len() > 1,
        said_header: Once::new(false),
    };
    let outcome = series.run(&cells, false, &watch).await?;
    write_up(args, &steps, &cells, &dir, outcome)
}

/// Every step × database × repeat, a cell each, in the order they run: a round of
/// every step and database at a time, so that a burst of the host's load lands on
/// every step alike; where each step starts its own servers, a step's repeats run
/// together on its start.
fn cells(args: &SweepArgs, steps: &Steps, targets: &[Target], home: &Path) -> Result<Vec<Cell>> {
    let varied: Vec<&str> = steps
        .keys
        .iter()
        .map(|k| crate::db::current_setting_name(k))
        .collect();
    let mut left_out = NOT_HANDED_ON.to_vec();
    left_out.extend(&varied);
    let handed_on = crate::cli::given::flags_without(&args.run.argv, "sweep", &left_out);
    let repeats = 1..=args.run.repeat as u64;
    let rounds: Vec<Vec<u64>> = match steps.nodes(0).is_some() {
        true => vec![repeats.collect()],
        false => repeats.map(|repeat| vec![repeat]).collect(),
    };
    let key_label = steps.keys.join(",");
    let mut cells = Vec::new();
    for round in &rounds {
        for values in &steps.values {
            for target in targets {
                let (flags, need) = step_on(target, &varied, values, &handed_on)?;
                let label = target.label();
                for &repeat in round {
                    let cell = Cell {
                        id: folder_name(
                            &steps.keys,
                            values,
                            (targets.len() > 1).then_some(label.as_str()),
                            repeat as usize,
                        ),
                        part: "sweep".into(),
                        labels: vec![
                            ("store".into(), label.clone()),
                            (key_label.clone(), values.join(",")),
                            ("repeat".into(), repeat.to_string()),
                        ],
                        need: need.clone(),
                        verb: Verb::Run,
                        args: flags.clone(),
                        work: 1,
                        faults: None,
                        round: repeat,
                    };
                    check(&cell, target, home)?;
                    cells.push(cell);
                }
            }
        }
    }
    Ok(cells)
}

/// One step on one database: the flags of its runs (the sweep's own, then the varied
/// run settings) and the server it needs (the varied store settings on its URL, where
/// the store takes them; the varied node count).
fn step_on(
    target: &Target,
    varied: &[&str],
    values: &[String],
    handed_on: &[String],
) -> Result<(Vec<String>, ServerNeed)> {
    let store = target.store()?;
    let mut flags = handed_on.to_vec();
    let mut query = Vec::new();
    let mut nodes = 1;
    for (key, value) in varied.iter().zip(values) {
        if *key == "nodes" {
            nodes = positive_count::<usize>(value).map_err(anyhow::Error::msg)?;
        } else if all_settings().iter().any(|(s, _)| s.name == *key) {
            // A database that does not take it runs without it: `rf` varies Cassandra
            // beside Galera.
            if store.takes(key) {
                query.push(format!("{key}={value}"));
            }
        } else {
            flags.extend([format!("--{}", key.replace('_', "-")), value.clone()]);
        }
    }
    let need = match target {
        Target::Url(url) => ServerNeed {
            query: query.join("&"),
            ..ServerNeed::given(store.scheme, url)
        },
        Target::Server { kind, query: own } => ServerNeed {
            server: kind.name.to_string(),
            url: None,
            nodes,
            fresh: true,
            query: with_query(&format!("?{own}"), &query.join("&"))
                .trim_start_matches('?')
                .to_string(),
            set: Vec::new(),
            budget: NodeBudget::NONE,
        },
    };
    Ok((flags, need))
}

/// A cell's run must be valid before any runs: its command line parsed and its
/// configuration read, on a URL of its store (a server's size within what it runs).
fn check(cell: &Cell, target: &Target, home: &Path) -> Result<()> {
    if let Target::Server { kind, .. } = target
        && cell.need.nodes > kind.max_nodes
    {
        bail!(
            "--vary nodes: {} runs 1 to {} nodes",
            kind.name,
            kind.max_nodes
        );
    }
    let url = with_query(&target.probe_url(), &cell.need.query);
    let argv = cell.argv(&url, Path::new("probe"), home);
    let cli = Cli::from_command_line(&argv).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Command::Run(run) = &cli.command {
        RunConfig::from_args(run)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nodes_sweep_takes_servers_of_several_nodes() {
        let target = Target::parse("cassandra?rf=2", true).unwrap();
        assert_eq!(target.label(), "cassandra?rf=2");
        assert!(
            target
                .probe_url()
                .starts_with("cassandra://127.0.0.1/hatshop?rf=2")
        );
        let error = Target::parse("cassandra://127.0.0.1", true).unwrap_err();
        assert!(error.to_string().contains("cassandra, galera"), "{error}");
        assert!(Target::parse("redis", true).is_err());
        assert_eq!(
            Target::parse("mysql://h/db?pool=2", false).unwrap().label(),
            "mysql?pool=2"
        );
    }
}
