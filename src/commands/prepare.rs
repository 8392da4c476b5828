//! `hatshop prepare --db URL`: makes hatshop's tables empty and ready, once, for the
//! shards of a run (`run --shard I/N`), which use them as they are: a shard that set
//! them up itself would drop the orders of shards already running.

use std::sync::Arc;

use anyhow::{Result, bail};

use crate::cli::PrepareArgs;
use crate::config::{seconds, store_settings};
use crate::console::say;
use crate::db::{ConnectOptions, DbUrl, Ownership};
use crate::interrupt;
use crate::lifecycle::reach::{Keys, SETUP_TIMEOUT, connect, set_up};
use crate::runner::{StopReason, StopSignal};

/// `hatshop prepare`: makes the tables empty once, for shards that then use them as they are.
pub async fn run(args: &PrepareArgs) -> Result<()> {
    let stop = Arc::new(StopSignal::default());
    let _listening = {
        let stop = stop.clone();
        interrupt::Listening::with(move || stop.stop(StopReason::Interrupted))
    };
    let url = DbUrl::parse(&args.db)?;
    if url.store().own_file.is_some() && url.file().is_none() {
        bail!(
            "prepare a file the shards will share: {}:///path/to/file.db",
            url.scheme()
        );
    }
    let meta = url.store();
    let settings = store_settings(meta, &url, &args.store)?;
    let connect_timeout = seconds("--connect-timeout", args.connect_timeout, 0.1)?;
    let options = ConnectOptions {
        concurrency: 1,
        settings,
        connect_timeout,
        op_timeout: SETUP_TIMEOUT,
        existing_only: false,
        key_value_only: false,
    };
    let store = connect(&url, &options, &stop).await?;
    let owner = Ownership {
        recreate: args.recreate,
        note: format!("hatshop {} prepare", env!("CARGO_PKG_VERSION")),
    };
    set_up(&store, &url, &owner, Keys::Now, &stop).await?;
    crate::db::close_within(&store).await;
    say!("{url}: hatshop's tables are empty and ready for `hatshop run --shard I/N --db …`");
    Ok(())
}
