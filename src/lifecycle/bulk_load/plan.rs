//! What a load will do: the flags over a preset over the defaults, checked.

use std::time::Duration;

use anyhow::{Result, bail};

use crate::cli::LoadArgs;
use crate::result_dir::load_record::LoadPlan;

/// The study's run: 10 × 150,000 rows of three values, in buckets of 10,000, every 10 s.
struct Preset {
    rows: u64,
    columns: usize,
    value_size: usize,
    batch_size: u64,
    every: Option<Duration>,
    repeat: u64,
}

const DEFAULTS: Preset = Preset {
    rows: 150_000,
    columns: 3,
    value_size: 64,
    batch_size: 10_000,
    every: None,
    repeat: 1,
};

const STUDY_002: Preset = Preset {
    every: Some(Duration::from_secs(10)),
    repeat: 10,
    ..DEFAULTS
};

impl LoadPlan {
    /// The preset with the flags over it, checked.
    pub fn from_args(args: &LoadArgs) -> Result<LoadPlan> {
        let base = match args.preset.as_deref() {
            // `seed-002` is its first name.
            Some("study-002" | "seed-002") => STUDY_002,
            Some(other) => bail!("no load preset {other}: the one preset is study-002"),
            None => DEFAULTS,
        };
        let plan = LoadPlan {
            preset: args.preset.clone(),
            rows: args.rows.unwrap_or(base.rows),
            columns: args.columns.unwrap_or(base.columns),
            value_size: args.value_size.unwrap_or(base.value_size),
            batch_size: args.batch_size.unwrap_or(base.batch_size),
            batch: args.batch_type,
            in_flight: args.rows_in_flight,
            concurrency: args.concurrency,
            every_s: args.every.or(base.every).map(|d| d.as_secs_f64()),
            repeat: args.repeat.unwrap_or(base.repeat),
            seed: args.seed,
            interval_s: args.interval,
            trace_sample: args.trace_sample,
        };
        plan.check()?;
        Ok(plan)
    }

    fn check(&self) -> Result<()> {
        for (flag, value, most) in [
            ("--rows", self.rows, 1_000_000_000),
            ("--columns", self.columns as u64, 64),
            ("--value-size", self.value_size as u64, 16 << 20),
            ("--batch-size", self.batch_size, 10_000_000),
            ("--rows-in-flight", self.in_flight as u64, 4096),
            ("--concurrency", self.concurrency as u64, 256),
            ("--repeat", self.repeat, 1_000_000),
        ] {
            if value == 0 || value > most {
                bail!("{flag} must be from 1 to {most}, got {value}");
            }
        }
        if let Some(share) = self.trace_sample
            && !(0.0..=1.0).contains(&share)
        {
            bail!("--trace-sample must be a share from 0 to 1, got {share}");
        }
        if self.every_s == Some(0.0) {
            bail!("--every must be longer than 0 s");
        }
        Ok(())
    }

    /// Batches in one pass; the last may be short.
    pub fn batches_per_pass(&self) -> u64 {
        self.rows.div_ceil(self.batch_size)
    }

    /// Batches in the whole load.
    pub fn total_batches(&self) -> u64 {
        self.batches_per_pass() * self.repeat
    }

    /// Rows in the whole load.
    pub fn total_rows(&self) -> u64 {
        self.rows * self.repeat
    }

    /// Batch `index`'s pass, first row and row count: passes write new rows, and a
    /// pass's last batch holds what is left.
    pub fn batch(&self, index: u64) -> (u64, u64, u64) {
        let per_pass = self.batches_per_pass();
        let pass = index / per_pass;
        let within = (index % per_pass) * self.batch_size;
        let rows = self.batch_size.min(self.rows - within);
        (pass, pass * self.rows + within, rows)
    }

    /// Whether batch `index` is traced on the server: a draw from the seed, so the
    /// same batches are traced in every load with it.
    pub fn traced(&self, index: u64) -> bool {
        let Some(share) = self.trace_sample else {
            return false;
        };
        let mut state = self.seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let draw = (crate::workload::splitmix64(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
        draw < share
    }

    /// Bytes of keys and values a row carries (keys are `row` and ten digits).
    pub fn row_bytes(&self) -> u64 {
        13 + (self.columns * self.value_size) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::BatchKind;

    fn plan(rows: u64, batch_size: u64, repeat: u64) -> LoadPlan {
        LoadPlan {
            preset: None,
            rows,
            columns: 3,
            value_size: 64,
            batch_size,
            batch: BatchKind::Unlogged,
            in_flight: 64,
            concurrency: 1,
            every_s: None,
            repeat,
            seed: 1,
            interval_s: 1.0,
            trace_sample: None,
        }
    }

    #[test]
    fn batches_cover_every_row_of_every_pass_once() {
        let p = plan(25, 10, 2);
        assert_eq!(p.total_batches(), 6);
        let batches: Vec<_> = (0..6).map(|i| p.batch(i)).collect();
        assert_eq!(
            batches,
            [
                (0, 0, 10),
                (0, 10, 10),
                (0, 20, 5),
                (1, 25, 10),
                (1, 35, 10),
                (1, 45, 5)
            ]
        );
        assert_eq!(plan(150_000, 10_000, 1).total_batches(), 15);
    }

    #[test]
    fn the_bulk_insert_study_traces_at_least_ten_batches_at_every_scale() {
        use crate::cli::{Cli, Command};
        let study = crate::studies::open("bulk-insert").unwrap();
        for scale in [0.01, 0.02, 0.05, 0.25, 1.0] {
            let cell = &study.cells(scale).unwrap()[0];
            let argv = cell.argv("cassandra://127.0.0.1", "x".as_ref(), "h".as_ref());
            let Command::Load(args) = Cli::from_command_line(&argv).unwrap().command else {
                panic!("a load");
            };
            let plan = LoadPlan::from_args(&args).unwrap();
            let traced = (0..plan.total_batches())
                .filter(|i| plan.traced(*i))
                .count();
            assert!(
                traced >= 10,
                "scale {scale}: {traced} traced of {}",
                plan.total_batches()
            );
        }
    }
}
