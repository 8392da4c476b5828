//! `hatshop workloads [show NAME]`.

use anyhow::{Result, anyhow};

use crate::cli::{WorkloadsAction, WorkloadsArgs};
use crate::console::say;
use crate::workload::presets;

/// `hatshop workloads`: the presets, or one as TOML to copy and edit.
pub fn run(args: &WorkloadsArgs) -> Result<()> {
    match &args.action {
        None => {
            for spec in presets() {
                say!("{:<16} {}", spec.name, spec.description);
            }
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
