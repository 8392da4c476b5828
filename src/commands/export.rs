//! `hatshop export DIR --csv`: a run's op log as the plain CSV a spreadsheet opens, to
//! a file (written through, whatever it is) or standard output.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};

use anyhow::{Context, Result, bail};

use crate::cli::ExportArgs;
use crate::console::note;
use crate::report::oplog::{self, OpLog};
use crate::report::table::thousands;
use crate::result_dir;

/// Writes the op log of `args.result_dir` as CSV where `--out` says.
pub fn run(args: &ExportArgs) -> Result<()> {
    let dir = &args.result_dir;
    let record = result_dir::load(dir)?;
    if !record.plan.op_log || !OpLog::exists(dir) {
        bail!(
            "{} kept no op log (it ran with --no-op-log): there is nothing to export",
            dir.display()
        );
    }
    let target = args.out.clone().unwrap_or_else(|| dir.join("ops.csv"));
    let to_stdout = target.as_os_str() == "-";
    let mut out: Box<dyn Write> = if to_stdout {
        Box::new(BufWriter::with_capacity(1 << 20, std::io::stdout().lock()))
    } else {
        // Opened, not replaced: a device, a pipe or a link is written through.
        let file =
            File::create(&target).with_context(|| format!("cannot write {}", target.display()))?;
        Box::new(BufWriter::with_capacity(1 << 20, file))
    };
    let name = match to_stdout {
        true => "standard output".to_string(),
        false => target.display().to_string(),
    };
    let rows = match oplog::export_csv(dir, &mut out, &name) {
        Ok(rows) => rows,
        // A reader that stopped early (`export --csv -o - | head`) took what it wanted.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe) =>
        {
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if !to_stdout {
        note!(
            "wrote {} operations to {}",
            thousands(rows),
            target.display()
        );
    }
    Ok(())
}
