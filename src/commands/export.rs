//! `hatshop export DIR --csv`: a run's op log as the plain CSV a spreadsheet opens, to
//! a file (written through, whatever it is) or standard output.

use anyhow::{Result, bail};

use crate::cli::ExportArgs;
use crate::console::note;
use crate::files::{OutStream, closed_pipe};
use crate::numbers::thousands;
use crate::op_log::{self, OpLog};
use crate::report::loaded_run::check_op_log;
use crate::result_dir;

/// Writes the op log of `args.result_dir` as CSV where `--out` says.
pub fn run(args: &ExportArgs) -> Result<()> {
    let dir = &args.result_dir;
    let record = result_dir::load(dir)?;
    if !record.plan.op_log {
        bail!(
            "{} kept no op log (it ran with --no-op-log): there is nothing to export",
            dir.display()
        );
    }
    if !OpLog::exists(dir) {
        bail!(
            "op log lost: {} is gone, so there is nothing to export",
            OpLog::dir_of(dir).display()
        );
    }
    // Before a byte is written: every part and record checked, the rows counted.
    check_op_log(dir, &record)?;
    let mut out = match &args.out {
        Some(target) => OutStream::open(target)?,
        None => {
            result_dir::folder::claim_for_writing(dir)?;
            OutStream::open_own(&dir.join("ops.csv"))?
        }
    };
    let rows = match op_log::export_csv(dir, record.op_log_runs(), &mut out.writer, &out.name) {
        Ok(rows) => rows,
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(closed_pipe) => {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let (name, to_stdout) = (out.name.clone(), out.to_stdout);
    match out.finish() {
        Err(e) if e.downcast_ref::<std::io::Error>().is_some_and(closed_pipe) => return Ok(()),
        finished => finished?,
    }
    if !to_stdout {
        note!("wrote {} operations to {name}", thousands(rows));
    }
    Ok(())
}
