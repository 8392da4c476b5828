//! `hatshop load`: study 002's bulk load, whose life (`lifecycle::bulk_load`) a study's cell
//! shares.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::LoadArgs;

/// `hatshop load`: batches of rows into a table of their own, timed batch by batch,
/// then read back.
pub async fn run(args: &LoadArgs) -> Result<ExitCode> {
    crate::lifecycle::bulk_load::run(args).await
}
