//! `hatshop compare`: runs side by side, a table on the terminal and a page on disk.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::cli::CompareArgs;
use crate::console::say;
use crate::report::compare::{self, terminal};
use crate::report::compare_export;
use crate::report::compare_page::{TITLE, page};
use crate::report::loaded_run::LoadedRun;

/// Loads every folder (each checked whole), prints the table, writes the page and the
/// exports asked for.
pub fn run(args: &CompareArgs) -> Result<()> {
    let exports = [
        ("--export-csv", &args.export_csv),
        ("--export-markdown", &args.export_markdown),
        ("--export-json", &args.export_json),
    ];
    let to_stdout = exports
        .iter()
        .filter(|(_, to)| to.as_deref() == Some(Path::new("-")))
        .count();
    if to_stdout > 1 {
        bail!(
            "standard output carries one export: give the others a file (--export-csv -, --export-markdown -, --export-json -)"
        );
    }
    for (flag, to) in exports {
        if let Some(to) = to.as_deref().filter(|to| *to != Path::new("-")) {
            crate::files::check_out(flag, to)?;
        }
    }
    if to_stdout > 0 {
        // The table and every note go to standard error.
        crate::console::keep_stdout_for_data();
    }
    let path = args.page();
    // `-o DIR` names the folder the page goes into, made if it is not there.
    if let Some(folder) = path
        .parent()
        .filter(|f| !f.as_os_str().is_empty() && !f.exists())
    {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    crate::files::check_out("compare -o", &path)?;
    let runs = args
        .result_dirs
        .iter()
        .map(|dir| LoadedRun::load_checked(dir))
        .collect::<Result<Vec<_>>>()?;
    crate::console::out(&terminal(&runs));
    if !args.slo.is_empty() {
        let judged = crate::report::compare_page::judged(&runs, &args.slo);
        crate::console::out("the verdict:\n");
        for line in crate::report::slo::verdict_lines(&args.slo, &judged) {
            crate::console::out(&format!("  {line}\n"));
        }
    }
    let file_name = path.file_name().map_or_else(
        || "compare.html".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let beside = page(&runs, &file_name, &args.slo).write_out(&path, TITLE)?;
    say!("page: {}", path.display());
    if beside {
        // What `hatshop show` reads to print this table again.
        let folder = path.parent().unwrap_or(Path::new(""));
        compare::write_record(folder, &args.result_dirs)?;
    }
    if !beside {
        say!(
            "(its figures' numbers are not written: {} is not a plain file with a folder \
             beside it)",
            path.display()
        );
    }
    if let Some(to) = &args.export_csv {
        crate::report::export::write(to, &compare_export::csv(&runs))?;
    }
    if let Some(to) = &args.export_markdown {
        crate::report::export::write(to, &compare_export::markdown(&runs))?;
    }
    if let Some(to) = &args.export_json {
        crate::report::export::write(to, &compare_export::json(&runs))?;
    }
    Ok(())
}
