//! The store of a run: its URL, its settings (the URL's, then flags over them) checked
//! against what the store declares, and its file in the result folder.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::{RunArgs, StoreArgs};
use crate::db::{DbUrl, STORES, Settings, StoreDeclarations, listed};

/// The one store of a run and its settings (URL parameters and flags), checked.
pub(super) fn store_of(args: &RunArgs) -> Result<(DbUrl, Settings)> {
    let db = match args.db.as_slice() {
        [one] => one,
        [] => crate::db::DEFAULT_URL,
        _ => crate::cli::usage_bail!("a run takes one --db (a sweep takes several)"),
    };
    let db = DbUrl::parse(db)?;
    let settings = store_settings(db.store(), &db, &args.store)?;
    Ok((db, settings))
}

/// `--trace-sample`: a share, and only for stores whose server time hatshop reads.
pub(super) fn trace_sample_of(args: &RunArgs, db: &DbUrl) -> Result<f64> {
    let trace_sample = args.trace_sample.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&trace_sample) {
        bail!("--trace-sample must be a share from 0 to 1, got {trace_sample}");
    }
    if trace_sample > 0.0 && db.store().db_time.is_none() {
        let products: Vec<&str> = STORES
            .iter()
            .filter_map(|store| Some(store.db_time?.product))
            .collect();
        bail!(
            "--trace-sample reads the server's own times: {} only, not {}://",
            listed(&products),
            db.scheme()
        );
    }
    Ok(trace_sample)
}

/// An embedded store's URL that names no file (`sqlite://` alone): its file inside the
/// result folder.
pub fn in_result_folder(db: DbUrl, out_dir: &Path) -> DbUrl {
    match db.store().own_file {
        Some(name) if db.file().is_none() => db.with_file(&out_dir.join(name)),
        _ => db,
    }
}

/// URL settings, then flags over them, checked against what the store declares. A
/// flag the store does not take is refused with one line that names who takes it.
pub fn store_settings(
    meta: &StoreDeclarations,
    url: &DbUrl,
    flags: &StoreArgs,
) -> Result<Settings> {
    let mut given: BTreeMap<String, String> = url
        .params()
        .into_iter()
        .map(|(name, value)| (crate::db::current_setting_name(&name).to_string(), value))
        .collect();
    if let Some(why) = meta.no_tls {
        let asked = given
            .keys()
            .chain(flags.given.iter().map(|(name, _)| name))
            .find(|name| crate::db::is_tls_setting(name));
        if let Some(asked) = asked {
            bail!("{asked} given to {}://: {why}", meta.scheme);
        }
    }
    for (name, value) in &flags.given {
        if !meta.takes(name) {
            let takers: Vec<&str> = crate::db::STORES
                .iter()
                .filter(|s| s.takes(name))
                .map(|s| s.scheme)
                .collect();
            let own: Vec<String> = meta
                .settings
                .iter()
                .map(|s| format!("--{}", s.name.replace('_', "-")))
                .collect();
            bail!(
                "--{} is a setting of {}, not of {}:// (which takes {})",
                name.replace('_', "-"),
                takers.join(" and "),
                meta.scheme,
                if own.is_empty() {
                    "none".to_string()
                } else {
                    own.join(", ")
                }
            );
        }
        given.insert(name.clone(), value.clone());
    }
    let settings =
        Settings::checked(meta.scheme, meta.settings, given).map_err(anyhow::Error::msg)?;
    (meta.check)(&settings)?;
    Ok(settings)
}
