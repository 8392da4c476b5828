//! `hatshop run`: one run, its flags resolved into the config the run's life takes.

use anyhow::Result;

use crate::cli::RunArgs;
use crate::config::{RunConfig, refuse_bound_without_search};
use crate::lifecycle::run::execute;

/// One run (`--repeat` and `--find-max` are commands of their own, over this one).
pub async fn run(args: &RunArgs) -> Result<std::process::ExitCode> {
    refuse_bound_without_search(args)?;
    execute(&RunConfig::from_args(args)?).await
}
