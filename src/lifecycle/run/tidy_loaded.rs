//! What the load left in the store's tables, tidied just before measuring where the
//! store has such work (`Store::tidy_loaded`: PostgreSQL's VACUUM (ANALYZE), as
//! `pgbench -i` ends its load), so that the measured operations do not run beside the
//! server's own clean-up of the load, and how long it took, for run.json.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::Handle;

use crate::console::note;
use crate::db::{AnyStore, Store};
use crate::result_dir::Tidied;
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
        let answer = runtime.block_on(async {
            tokio::select! {
                answer = tokio::time::timeout(TIDY_LIMIT, store.tidy_loaded()) => Some(answer),
                _ = stop.stopped() => None,
            }
        })?;
        let took_s = began.elapsed().as_secs_f64();
        let failed = |why: String| {
            note!("the store's tables were not tidied before measuring ({why}): measuring anyway");
            Some(Tidied {
                took_s,
                done: None,
                failed: Some(why),
            })
        };
        match answer {
            Ok(Ok(None)) => None,
            Ok(Ok(Some(done))) => {
                if took_s >= 1.0 {
                    note!("{done} took {took_s:.1} s before measuring");
                }
                Some(Tidied {
                    took_s,
                    done: Some(done.to_string()),
                    failed: None,
                })
            }
            Ok(Err(e)) => failed(e.message),
            Err(_) => failed(format!("no answer within {} s", TIDY_LIMIT.as_secs())),
        }
    })
}
