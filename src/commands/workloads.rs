//! `hatshop workloads [show NAME]`.

use anyhow::{Result, anyhow};

use crate::cli::{WorkloadsAction, WorkloadsArgs};
use crate::console::say;
use crate::report::table::{Cell, Column, Table, terminal};
use crate::workload::presets;

/// `hatshop workloads`: the presets, or one as TOML to copy and edit.
pub fn run(args: &WorkloadsArgs) -> Result<()> {
    match &args.action {
        None => {
            let mut table = Table::new(vec![
                Column::text("preset", "preset"),
                Column::text("what it runs", "description"),
            ]);
            table.section(
                presets()
                    .into_iter()
                    .map(|spec| vec![Cell::text(spec.name), Cell::text(spec.description)])
                    .collect(),
            );
            crate::console::out(&terminal(&table));
            say!("\nshow one as TOML: hatshop workloads show NAME");
        }
        Some(WorkloadsAction::Show { name }) => {
            let spec = presets()
                .into_iter()
                .find(|p| &p.name == name)
                .ok_or_else(|| anyhow!("unknown preset '{name}' (see `hatshop workloads`)"))?;
            crate::console::out(&spec.to_toml());
        }
    }
    Ok(())
}
