//! The keys a run's setup left out of its tables for the initial load
//! (`Store::setup_for_load`), added once the load is in and before any warm-up or
//! measured event reads them (`Store::key_loaded`: PostgreSQL's keys and index, as
//! `pgbench -i` builds its key after its COPY).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use crate::console::note;
use crate::db::{AnyStore, Store};
use crate::runner::{AfterLoad, StopSignal};

/// The longest a run waits for the keys: an index over tens of millions of rows on a
/// slow disk, with room to spare.
const KEY_LIMIT: Duration = Duration::from_secs(1800);

/// Asks `store` to add the keys its setup left out, until it answers, [`KEY_LIMIT`]
/// passes or `stop` ends the run; says on the terminal when that took 1 s or more. An
/// error (a duplicate key in the load, a server gone) ends the run before it reads.
pub(super) fn key_loaded(
    store: Arc<AnyStore>,
    runtime: Handle,
    stop: Arc<StopSignal>,
) -> AfterLoad {
    Box::new(move || {
        let began = Instant::now();
        // The timer is made inside the runtime: this thread is not one of its own.
        let keying = async { tokio::time::timeout(KEY_LIMIT, store.key_loaded()).await };
        // Stopped meanwhile: the source sees the stop itself.
        let Some(answer) = runtime.block_on(stop.unless_stopped(keying)) else {
            return Ok(());
        };
        match answer {
            Ok(Ok(None)) => Ok(()),
            Ok(Ok(Some(done))) => {
                let took_s = began.elapsed().as_secs_f64();
                if took_s >= 1.0 {
                    note!("{done} took {took_s:.1} s");
                }
                Ok(())
            }
            Ok(Err(e)) => Err(format!("cannot build the loaded tables' keys: {e}")),
            Err(_) => Err(format!(
                "the loaded tables' keys were not built within {} s",
                KEY_LIMIT.as_secs()
            )),
        }
    })
}
