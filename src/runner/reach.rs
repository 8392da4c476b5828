//! A store that no operation can reach any more ends the run. Without it, a run whose
//! only server has died goes on failing one reconnect at a time through the rest of its
//! stream, which can take hours. Only calls that no server answered count
//! ([`crate::db::DbError::reached_no_server`]); a store that answers, even with errors
//! (timeouts, unavailable replicas, conflicts), is measured as it is.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::progress::Progress;
use super::stop::{StopReason, StopSignal};

/// How often the watch looks.
const LOOK: Duration = Duration::from_millis(250);

/// Watches `progress` until the run stops. When operations went on failing to reach
/// the store and none reached it for `limit`, it stops the run as failed and says why.
pub async fn watch(
    progress: Arc<Progress>,
    limit: Duration,
    stop: Arc<StopSignal>,
) -> Option<String> {
    let mut answered = progress.answered.load(Ordering::Relaxed);
    let mut unreached = progress.unreached.load(Ordering::Relaxed);
    let mut since = Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(LOOK) => {}
            _ = stop.stopped() => return None,
        }
        let now_answered = progress.answered.load(Ordering::Relaxed);
        if now_answered != answered {
            answered = now_answered;
            unreached = progress.unreached.load(Ordering::Relaxed);
            since = Instant::now();
            continue;
        }
        let failed = progress.unreached.load(Ordering::Relaxed) - unreached;
        if failed > 0 && since.elapsed() >= limit {
            let last = progress
                .last_unreached
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone()
                .unwrap_or_default();
            stop.stop(StopReason::Failed);
            return Some(format!(
                "no operation reached the store for {} s: {failed} in a row found no server to answer (the last: {last})",
                limit.as_secs_f64()
            ));
        }
    }
}
