//! What the load left in the store's tables, tidied just before measuring where the
//! store has such work (`Store::tidy_loaded`: PostgreSQL's VACUUM (ANALYZE), as
//! `pgbench -i` ends its load), so that the measured operations do not run beside the
//! server's own clean-up of the load, and how long it took, for run.json.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use crate::console::note;
use crate::db::{AnyStore, Store};
use crate::result_dir::{Tidied, TidyOutcome};
use crate::runner::StopSignal;

/// The longest a run waits for it, a little past the server's own limit on the work
/// (PostgreSQL's is 60 s), for a server that stopped answering.
const TIDY_LIMIT: Duration = Duration::from_secs(65);

/// Tidies the store's loaded tables; called on the source's thread just before the
/// first measured event. `None` where the store has nothing to tidy or the run stopped
/// meanwhile.
pub(super) type TidyLoaded = Box<dyn Fn() -> Option<Tidied> + Send + Sync>;

/// Asks `store` (`None`: nothing is tidied) to tidy its tables, until it answers,
/// [`TIDY_LIMIT`] passes or `stop` (Ctrl-C, SIGTERM, a failure) ends the run; says on
/// the terminal when it took 1 s or more, or failed.
pub(super) fn tidy_loaded(
    store: Option<Arc<AnyStore>>,
    runtime: Handle,
    stop: Arc<StopSignal>,
) -> TidyLoaded {
    Box::new(move || {
        let store = store.as_ref()?;
        let began = Instant::now();
        // The timer is made inside the runtime: this thread is not one of its own.
        let tidying = async { tokio::time::timeout(TIDY_LIMIT, store.tidy_loaded()).await };
        let answer = runtime.block_on(stop.unless_stopped(tidying))?;
        let took_s = began.elapsed().as_secs_f64();
        let outcome = match answer {
            Ok(Ok(None)) => return None,
            Ok(Ok(Some(done))) => {
                if took_s >= 1.0 {
                    note!("{done} took {took_s:.1} s before measuring");
                }
                TidyOutcome::Done(done.to_string())
            }
            Ok(Err(e)) => TidyOutcome::Failed(e.message),
            Err(_) => TidyOutcome::Failed(format!("no answer within {} s", TIDY_LIMIT.as_secs())),
        };
        if let TidyOutcome::Failed(why) = &outcome {
            note!("the store's tables were not tidied before measuring ({why}): measuring anyway");
        }
        Some(Tidied { took_s, outcome })
    })
}
