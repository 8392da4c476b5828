//! `hatshop sweep`: one workload run several times while one setting varies, each run
//! in its own folder under the sweep folder, then `sweep.csv` and `sweep.html`.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::run::{EXIT_INTERRUPTED, execute};
use crate::cli::{RunArgs, SweepArgs, all_settings};
use crate::config::{RunConfig, missing_folders, remove_folders, stamp, unique_dir};
use crate::report::sweep::{self, SweepRow};
use crate::report::table::format_us;
use crate::report::{read_json, write_csv};
use crate::result_dir;
use crate::stats::Summary;
use crate::{note, say};

/// `KEY=V1,V2,…`.
fn parse_vary(text: &str) -> Result<(String, Vec<String>)> {
    let Some((key, values)) = text.split_once('=') else {
        bail!("--vary {text}: expected KEY=V1,V2,… (e.g. pool=1,2,4)");
    };
    let values: Vec<String> = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(String::from)
        .collect();
    if key.is_empty() || values.is_empty() {
        bail!("--vary {text}: expected KEY=V1,V2,… (e.g. pool=1,2,4)");
    }
    Ok((key.trim().to_string(), values))
}

fn number<T: std::str::FromStr>(key: &str, value: &str) -> Result<T> {
    value
        .parse()
        .map_err(|_| anyhow::anyhow!("--vary {key}: '{value}' is not a number"))
}

/// What `--vary` takes besides store settings.
const RUN_KEYS: &str = "events, warmup, seed, concurrency, duration, value_size, records, orders";

/// Sets `key` to `value` in a run's arguments: a run flag, or a store setting.
fn apply(args: &mut RunArgs, key: &str, value: &str) -> Result<()> {
    let key = key.replace('-', "_");
    match key.as_str() {
        "events" => args.stream.events = Some(number(&key, value)?),
        "warmup" => args.stream.warmup = Some(number(&key, value)?),
        "seed" => args.stream.seed = Some(number(&key, value)?),
        "records" => args.stream.records = Some(number(&key, value)?),
        "orders" => args.stream.orders = Some(number(&key, value)?),
        "value_size" => args.stream.value_size = Some(number(&key, value)?),
        "concurrency" => args.concurrency = Some(number(&key, value)?),
        "duration" => args.duration = Some(number(&key, value)?),
        _ if all_settings().iter().any(|(s, _)| s.name == key) => {
            args.store.given.retain(|(k, _)| *k != key);
            args.store.given.push((key, value.to_string()));
        }
        _ => {
            let settings: Vec<&str> = all_settings().iter().map(|(s, _)| s.name).collect();
            bail!(
                "--vary {key}: not something a run takes ({RUN_KEYS}, or a store setting: {})",
                settings.join(", ")
            );
        }
    }
    Ok(())
}

fn row(key: &str, value: &str, repeat: usize, dir: &Path) -> Result<SweepRow> {
    let s: Summary = read_json(&result_dir::file(dir, result_dir::SUMMARY_JSON))?;
    let o = &s.overall;
    Ok(SweepRow {
        setting: key.into(),
        value: value.into(),
        repeat,
        run_dir: dir.display().to_string(),
        ops: s.ops,
        errors: s.errors,
        elapsed_s: s.elapsed_s,
        throughput_ops_s: s.throughput_ops_s,
        mean_us: o.mean_us,
        p50_us: o.percentile("p50"),
        p99_us: o.percentile("p99"),
        p999_us: o.percentile("p99.9"),
        max_us: o.max_us,
    })
}

pub async fn run(args: &SweepArgs) -> Result<std::process::ExitCode> {
    let (key, values) = parse_vary(&args.vary)?;
    if args.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let dir = match &args.run.out {
        Some(dir) => dir.clone(),
        None => unique_dir(Path::new("results"), &format!("sweep-{}-{key}", stamp())),
    };
    // Every value must make a valid run before any runs.
    for value in &values {
        let mut probe = args.run.clone();
        apply(&mut probe, &key, value)?;
        RunConfig::from_args(&probe)?;
    }
    let made = missing_folders(&dir);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create sweep folder {}", dir.display()))?;
    if std::fs::read_dir(&dir)?.next().is_some() {
        bail!(
            "sweep folder {} is not empty: choose another with --out",
            dir.display()
        );
    }
    let result = sweep(args, &key, &values, &dir).await;
    if result.is_err() {
        // A sweep that could not run leaves no empty folder behind.
        remove_folders(&made);
    }
    result
}

async fn sweep(
    args: &SweepArgs,
    key: &str,
    values: &[String],
    dir: &Path,
) -> Result<std::process::ExitCode> {
    let mut rows = Vec::new();
    let mut interrupted = false;
    'sweep: for value in values {
        for repeat in 1..=args.repeat {
            let mut run_args = args.run.clone();
            run_args.quiet = true;
            let safe: String = value
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let run_dir = dir.join(format!("{key}={safe}-r{repeat}"));
            run_args.out = Some(run_dir.clone());
            apply(&mut run_args, key, value)?;
            let mut config = RunConfig::from_args(&run_args)?;
            config.print_details = false;
            let code = execute(&config).await?;
            let r = row(key, value, repeat, &run_dir)?;
            if rows.is_empty() {
                // Said once the first run worked, so a sweep that cannot start is one line.
                note!(
                    "sweep of {key} over {} × {} repeat{} into {}",
                    values.join(", "),
                    args.repeat,
                    if args.repeat == 1 { "" } else { "s" },
                    dir.display()
                );
            }
            say!(
                "{key}={value} #{repeat}: {:.2} s, {:.0} ops/s, mean {} µs, p99 {} µs, {} errors",
                r.elapsed_s,
                r.throughput_ops_s,
                format_us(r.mean_us),
                format_us(r.p99_us),
                r.errors
            );
            rows.push(r);
            if code == std::process::ExitCode::from(EXIT_INTERRUPTED) {
                interrupted = true;
                break 'sweep;
            }
        }
    }
    let csv = dir.join("sweep.csv");
    write_csv(&csv, &rows)?;
    let html = dir.join("sweep.html");
    let title = format!("hatshop sweep: {} by {key}", args.run.stream.workload);
    std::fs::write(&html, sweep::html(&title, key, &rows))
        .with_context(|| format!("cannot write {}", html.display()))?;
    say!("table: {}\nchart: {}", csv.display(), html.display());
    if interrupted {
        note!("interrupted: the sweep holds the runs that finished");
        return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_is_parsed() {
        let (key, values) = parse_vary("pool=1, 2,4").unwrap();
        assert_eq!(key, "pool");
        assert_eq!(values, ["1", "2", "4"]);
        assert!(parse_vary("pool").is_err());
        assert!(parse_vary("pool=").is_err());
    }
}
