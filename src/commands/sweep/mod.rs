//! `hatshop sweep`: one workload run again and again while settings vary, each run in
//! its own folder under the sweep folder, then `sweep.csv` (a row per run per event
//! type) and `sweep.html`. Several `--vary` move in step (`nodes=1,2,3` with
//! `rf=1,2,3`); several `--db` run every step on every database, drawn side by side.
//!
//! A `nodes` sweep starts the cluster at each size itself: its `--db` names servers
//! (`cassandra`, `galera`, with settings after `?`), each started fresh with that many
//! nodes, run, then stopped and wiped, also when a run fails or Ctrl-C ends the sweep.

mod targets;

use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::quantities::{count, positive_count, rate, seconds, share};
use crate::cli::{RUN_KEYS, RunArgs, SweepArgs, Vary, all_settings};
use crate::cluster::Home;
use crate::config::RunConfig;
use crate::console::{note, say};
use crate::db::StoreDeclarations;
use crate::files::read_json;
use crate::interrupt;
use crate::lifecycle::run::{
    EXIT_INTERRUPTED, execute_in_series, refuse_export_in_series, verified_note,
};
use crate::lifecycle::servers::ServerGuard;
use crate::numbers::format_us;
use crate::report::sweep::{self, RunPlace, SweepRow};
use crate::result_dir;
use crate::result_dir::folder::{
    create_empty_folder, missing_folders, remove_if_unused, unique_dir,
};
use crate::stats::Summary;
use crate::verify::VerifyReport;
use targets::Target;

/// The settings that vary, in step: `values[step][key]`.
#[derive(Debug, PartialEq)]
struct Steps {
    keys: Vec<String>,
    values: Vec<Vec<String>>,
}

impl Steps {
    /// One `--vary` or more; several keys must have as many values.
    fn parse(varies: &[Vary]) -> Result<Steps> {
        let mut keys: Vec<String> = Vec::new();
        let mut columns: Vec<Vec<String>> = Vec::new();
        for Vary { key, values } in varies {
            if keys.contains(key) {
                bail!("--vary {key} is given twice");
            }
            if let Some(first) = columns.first()
                && first.len() != values.len()
            {
                bail!(
                    "--vary {key} has {} values but --vary {} has {}: several --vary move in step",
                    values.len(),
                    keys[0],
                    first.len()
                );
            }
            keys.push(key.clone());
            columns.push(values.clone());
        }
        let steps = columns.first().map_or(0, Vec::len);
        let values: Vec<Vec<String>> = (0..steps)
            .map(|step| columns.iter().map(|c| c[step].clone()).collect())
            .collect();
        // Each step is a folder of its own: the same step twice is a repeat.
        if let Some(twice) = (1..values.len()).find(|&i| values[..i].contains(&values[i])) {
            let said: Vec<String> = keys
                .iter()
                .zip(&values[twice])
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            crate::cli::usage_bail!(
                "--vary gives {} twice: a step runs once, and --repeat N runs each N times",
                said.join(" ")
            );
        }
        Ok(Steps { keys, values })
    }

    fn nodes(&self, step: usize) -> Option<&str> {
        let at = self.keys.iter().position(|k| k == "nodes")?;
        Some(&self.values[step][at])
    }
}

/// A value `--vary` has read already, in its flag's grammar.
fn read<T>(key: &str, value: &str, grammar: impl Fn(&str) -> Result<T, String>) -> Result<T> {
    grammar(value).map_err(|e| anyhow::anyhow!("--vary {key}: '{value}': {e}"))
}

/// Sets `key` to `value` in a run's arguments: a run flag, or a store setting (which a
/// database that does not take it runs without: `rf` varies Cassandra beside Galera).
fn apply(args: &mut RunArgs, key: &str, value: &str, store: &StoreDeclarations) -> Result<()> {
    let setting = crate::db::current_setting_name(key);
    match key {
        // The server's size: the sweep starts it, the run only uses it.
        "nodes" => {
            read(key, value, positive_count::<usize>)?;
        }
        "events" => args.stream.events = Some(read(key, value, count)?),
        "warmup" => args.stream.warmup = Some(read(key, value, |v| v.parse())?),
        "seed" => args.stream.seed = Some(read(key, value, count)?),
        "records" => args.stream.records = Some(read(key, value, count)?),
        "orders" => args.stream.orders = Some(read(key, value, count)?),
        "value_size" => args.stream.value_size = Some(read(key, value, count)?),
        "concurrency" => args.concurrency = Some(read(key, value, positive_count)?),
        "duration" => args.duration = Some(read(key, value, seconds)?),
        "conflicts" => args.conflicts = Some(read(key, value, share)?),
        "retries" => args.retries = read(key, value, count)?,
        "rate" => args.rate = Some(crate::cli::RateArg::fixed(read(key, value, rate)?)),
        _ if all_settings().iter().any(|(s, _)| s.name == setting) => {
            if store.takes(setting) {
                args.store.given.retain(|(k, _)| k != setting);
                args.store
                    .given
                    .push((setting.to_string(), value.to_string()));
            }
        }
        _ => {
            let settings: Vec<&str> = all_settings().iter().map(|(s, _)| s.name).collect();
            bail!(
                "--vary {key}: not something a run takes ({}, or a store setting: {})",
                RUN_KEYS.join(", "),
                settings.join(", ")
            );
        }
    }
    Ok(())
}

/// The stores that take a setting, for messages.
fn takers(key: &str) -> String {
    all_settings()
        .into_iter()
        .find(|(s, _)| s.name == key)
        .map(|(_, stores)| stores.join(" and "))
        .unwrap_or_default()
}

fn rows_of_run(place: &RunPlace, dir: &Path) -> Result<Vec<SweepRow>> {
    let summary: Summary = read_json(&result_dir::file(dir, result_dir::SUMMARY_JSON))?;
    let verify = result_dir::file(dir, result_dir::VERIFY_JSON);
    let races = if verify.exists() {
        read_json::<VerifyReport>(&verify)
            .ok()
            .filter(|v| v.raced_orders > 0)
    } else {
        None
    };
    Ok(sweep::rows_of(place, &summary, races.as_ref()))
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
    let key_label = steps.keys.join(",");
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
    check_every_step(args, &steps, &targets)?;
    let made = missing_folders(&dir);
    create_empty_folder(&dir, "sweep")?;
    let plan = Plan {
        args,
        steps: &steps,
        targets: &targets,
        home: &home,
        key_label: &key_label,
        dir: &dir,
    };
    let result = plan.sweep().await;
    if result.is_err() {
        // A sweep that could not run leaves no empty folder behind.
        remove_if_unused(&dir, &made);
    }
    result
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

/// Every step must make a valid run on every database before any runs.
fn check_every_step(args: &SweepArgs, steps: &Steps, targets: &[Target]) -> Result<()> {
    for (step, values) in steps.values.iter().enumerate() {
        for target in targets {
            let mut probe = args.run.clone();
            probe.db = vec![target.probe_url()];
            for (key, value) in steps.keys.iter().zip(values) {
                apply(&mut probe, key, value, target.store()?)?;
            }
            if let Some(nodes) = steps.nodes(step)
                && let Target::Server { kind, .. } = target
            {
                let nodes: usize = read("nodes", nodes, positive_count)?;
                if nodes == 0 || nodes > kind.max_nodes {
                    bail!(
                        "--vary nodes: {} runs 1 to {} nodes",
                        kind.name,
                        kind.max_nodes
                    );
                }
            }
            RunConfig::from_args(&probe)?;
        }
    }
    Ok(())
}

/// Everything a sweep loops over.
struct Plan<'a> {
    args: &'a SweepArgs,
    steps: &'a Steps,
    targets: &'a [Target],
    home: &'a Home,
    key_label: &'a str,
    dir: &'a Path,
}

/// What the sweep has gathered so far.
#[derive(Default)]
struct Tally {
    rows: Vec<SweepRow>,
    /// Runs whose verify found differences: the sweep goes on, and fails at the end.
    differing: Vec<String>,
    runs: usize,
}

impl Plan<'_> {
    /// Every step × target × repeat, one run each, then sweep.csv and sweep.html. The
    /// repeats take turns, a round of every step and target at a time, so that a burst
    /// of the host's load lands on every step alike; where each step starts its own
    /// servers, a step's repeats run together on its start.
    async fn sweep(&self) -> Result<std::process::ExitCode> {
        let mut tally = Tally::default();
        let mut interrupted = false;
        // The repeats of each round.
        let repeats = 1..=self.args.run.repeat;
        let rounds: Vec<Vec<usize>> = match self.steps.keys.iter().any(|k| k == "nodes") {
            true => vec![repeats.collect()],
            false => repeats.map(|repeat| vec![repeat]).collect(),
        };
        'sweep: for round in &rounds {
            for (step, values) in self.steps.values.iter().enumerate() {
                for target in self.targets {
                    let server = match (target, self.steps.nodes(step)) {
                        (Target::Server { kind, .. }, Some(nodes)) => {
                            let nodes = read("nodes", nodes, positive_count::<usize>)?;
                            match ServerGuard::fresh(self.home, kind, nodes).await {
                                Ok(server) => Some(server),
                                Err(_) if interrupt::requested() => {
                                    interrupted = true;
                                    break 'sweep;
                                }
                                Err(e) => return Err(e),
                            }
                        }
                        _ => None,
                    };
                    for &repeat in round {
                        let url = target.url(server.as_ref().map(|s| s.url.as_str()));
                        if self
                            .run_one(&mut tally, target, url, values, repeat)
                            .await?
                        {
                            interrupted = true;
                            break 'sweep;
                        }
                    }
                    drop(server);
                }
            }
        }
        self.write_up(tally, interrupted)
    }

    /// One run of the sweep, its rows added to the tally; whether it was interrupted.
    async fn run_one(
        &self,
        tally: &mut Tally,
        target: &Target,
        url: String,
        values: &[String],
        repeat: usize,
    ) -> Result<bool> {
        let several = self.targets.len() > 1;
        let label = target.label();
        let mut run_args = self.args.run.clone();
        run_args.quiet = true;
        run_args.db = vec![url];
        let name = folder_name(
            &self.steps.keys,
            values,
            several.then_some(label.as_str()),
            repeat,
        );
        let run_dir = self.dir.join(name);
        run_args.out = Some(run_dir.clone());
        for (key, value) in self.steps.keys.iter().zip(values) {
            apply(&mut run_args, key, value, target.store()?)?;
        }
        let (code, differs) = execute_in_series(&run_args).await?;
        if differs {
            tally.differing.push(run_dir.display().to_string());
        }
        if tally.runs == 0 {
            // Said once the first run worked, so a sweep that cannot start is one line.
            self.announce();
        }
        tally.runs += 1;
        let value = values.join(",");
        let status = result_dir::load_complete(&run_dir)?.status;
        let place = RunPlace {
            setting: self.key_label,
            value: &value,
            database: &label,
            repeat,
            run_dir: &run_dir.display().to_string(),
            status,
        };
        let run_rows = rows_of_run(&place, &run_dir)?;
        let all = &run_rows[0];
        let cut_short = if all.ran_its_plan() {
            String::new()
        } else {
            format!(" ({status}: left out of the charts)")
        };
        say!(
            "{}={value}{} #{repeat}: {:.2} s, {:.0} ops/s, mean {} µs, p99 {} µs{}, {} errors{}{cut_short}",
            self.key_label,
            if several {
                format!(" on {label}")
            } else {
                String::new()
            },
            all.elapsed_s,
            all.throughput_ops_s,
            format_us(all.mean_us),
            format_us(all.p99_us),
            all.response_p99_us
                .map(|r| format!(" (response p99 {} µs)", format_us(r)))
                .unwrap_or_default(),
            all.errors,
            verified_note(&run_dir)
        );
        tally.rows.extend(run_rows);
        Ok(code == std::process::ExitCode::from(EXIT_INTERRUPTED))
    }

    /// What the sweep will do, where.
    fn announce(&self) {
        let count = |n: usize, noun| crate::numbers::counted(n as u64, noun);
        note!(
            "sweep of {} over {} × {} × {} into {}",
            self.key_label,
            count(self.steps.values.len(), "step"),
            count(self.targets.len(), "database"),
            count(self.args.run.repeat, "repeat"),
            self.dir.display()
        );
    }

    /// sweep.csv and sweep.html of the runs that finished, and how the sweep ends.
    fn write_up(&self, mut tally: Tally, interrupted: bool) -> Result<std::process::ExitCode> {
        if tally.rows.is_empty() {
            bail!("the sweep was interrupted before its first run ended");
        }
        // The runs took turns; sweep.csv holds them by step, database and repeat.
        let steps: Vec<String> = self.steps.values.iter().map(|v| v.join(",")).collect();
        let mut databases: Vec<String> = Vec::new();
        for row in &tally.rows {
            if !databases.contains(&row.database) {
                databases.push(row.database.clone());
            }
        }
        let place = |list: &[String], of: &str| list.iter().position(|x| x == of);
        tally.rows.sort_by_key(|row| {
            (
                place(&steps, &row.value),
                place(&databases, &row.database),
                row.repeat,
            )
        });
        let title = format!(
            "hatshop sweep: {} by {}",
            self.args.run.stream.workload, self.key_label
        );
        let (table, chart) = crate::report::sweep::write(self.dir, &title, &tally.rows, None)?;
        say!("table: {}\nchart: {}", table.display(), chart.display());
        let differing = &tally.differing;
        if !differing.is_empty() {
            bail!(
                "verify found differences in {} run{}: {}",
                differing.len(),
                if differing.len() == 1 { "" } else { "s" },
                differing.join(", ")
            );
        }
        if interrupted {
            note!("interrupted: the sweep holds the runs that finished");
            return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
        }
        Ok(std::process::ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vary(key: &str, values: &[&str]) -> Vary {
        Vary {
            key: key.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn a_step_given_twice_is_refused_as_a_repeat() {
        let error = Steps::parse(&[vary("concurrency", &["2", "2"])])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--vary gives concurrency=2 twice"),
            "{error}"
        );
        // In step, a value may come again where its partner differs.
        Steps::parse(&[vary("nodes", &["1", "2"]), vary("rf", &["1", "1"])]).unwrap();
    }

    #[test]
    fn several_varies_move_in_step() {
        let steps = Steps::parse(&[
            vary("nodes", &["1", "2", "3"]),
            vary("rf", &["1", "2", "3"]),
        ])
        .unwrap();
        assert_eq!(steps.keys, ["nodes", "rf"]);
        assert_eq!(steps.values[1], ["2", "2"]);
        assert_eq!(steps.nodes(2), Some("3"));
        let error =
            Steps::parse(&[vary("nodes", &["1", "2"]), vary("rf", &["1", "2", "3"])]).unwrap_err();
        assert!(error.to_string().contains("move in step"), "{error}");
        assert!(Steps::parse(&[vary("rf", &["1"]), vary("rf", &["2"])]).is_err());
    }

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
