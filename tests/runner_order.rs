//! The runner against a fake store (our own code under test, not a database): the
//! store refuses any event that arrives out of order for its order, while lanes are
//! made to interleave by yielding at random points.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hatshop::db::{Applied, Database, DbError, ErrorKind, Snapshot, StoreInfo};
use hatshop::runner::{
    self, Pace, Progress, RunClock, RunContext, RunOutcome, RunPlan, StopSignal,
};
use hatshop::workload::{Generator, ItemChange, Order, OrderId, OrderStatus, WorkloadSpec, preset};

/// Runs `spec` against `store` with `lanes` lanes.
async fn run_on<D: Database>(
    store: Arc<D>,
    spec: &WorkloadSpec,
    lanes: usize,
    check_reads: bool,
) -> RunOutcome {
    runner::run(
        store,
        Box::new(Generator::new(spec).map(Ok)),
        RunContext {
            interval: std::time::Duration::from_secs(1),
            plan: RunPlan {
                concurrency: lanes,
                pace: Pace::ClosedLoop,
                max_duration: None,
                check_reads,
                hash_stream: false,
            },
            clock: RunClock::now(),
            stop: Arc::new(StopSignal::default()),
            progress: Arc::new(Progress::default()),
            op_log: None,
        },
    )
    .await
    .unwrap()
}

#[derive(Default)]
struct StrictStore {
    orders: Mutex<HashMap<OrderId, Order>>,
    calls: AtomicU64,
}

impl StrictStore {
    async fn interleave(&self) {
        // Yield on some calls so that lanes overtake one another.
        if self.calls.fetch_add(1, Ordering::Relaxed).is_multiple_of(3) {
            tokio::task::yield_now().await;
        }
    }

    fn existing(&self, order_id: OrderId) -> Result<(), DbError> {
        if self.orders.lock().unwrap().contains_key(&order_id) {
            Ok(())
        } else {
            Err(DbError::new(
                ErrorKind::NotFound,
                format!("order {order_id} before its create"),
            ))
        }
    }
}

impl Database for StrictStore {
    async fn setup(&self) -> Result<(), DbError> {
        Ok(())
    }
    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        self.interleave().await;
        let previous = self
            .orders
            .lock()
            .unwrap()
            .insert(order.order_id, order.clone());
        match previous {
            None => Ok(()),
            Some(_) => Err(DbError::new(ErrorKind::Constraint, "created twice")),
        }
    }
    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        self.interleave().await;
        self.existing(order_id)?;
        Ok(self.orders.lock().unwrap().get(&order_id).cloned())
    }
    async fn update_order(
        &self,
        order_id: OrderId,
        _c: &[ItemChange],
        _s: i64,
    ) -> Result<Applied, DbError> {
        self.interleave().await;
        self.existing(order_id)?;
        Ok(Applied::Unknown)
    }
    async fn update_status(
        &self,
        order_id: OrderId,
        status: OrderStatus,
    ) -> Result<Applied, DbError> {
        self.interleave().await;
        self.existing(order_id)?;
        self.orders
            .lock()
            .unwrap()
            .get_mut(&order_id)
            .unwrap()
            .status = status;
        Ok(Applied::Yes)
    }
    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        self.interleave().await;
        self.existing(order_id)?;
        self.orders.lock().unwrap().remove(&order_id);
        Ok(Applied::Yes)
    }
    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        Ok(Snapshot::default())
    }
    fn info(&self) -> StoreInfo {
        StoreInfo {
            name: "strict".into(),
            server_version: "test".into(),
            settings: Default::default(),
        }
    }
    // Reads return orders whose items this fake does not update.
    fn holds_data(&self) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_lanes_never_reorder_the_events_of_one_order() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.events = 30_000;
    spec.initial_orders = 50; // few orders, so lanes share little and race a lot
    let store = Arc::new(StrictStore::default());
    let outcome = run_on(store.clone(), &spec, 16, false).await;
    assert_eq!(outcome.stats.total_ops(), 30_000);
    let summary = outcome.stats.summary(&["c", "r", "u", "s", "d"], 1.0);
    assert_eq!(summary.errors, 0, "{:?}", summary.overall.errors_by_kind);
    assert_eq!(outcome.lane_last_seq.len(), 16);
    assert!(outcome.lane_last_seq.iter().all(Option::is_some));
}

/// A store whose reads are one write behind: every read returns the order as created,
/// ignoring later status changes. The runner must count those reads as wrong results.
#[derive(Default)]
struct StaleReads {
    created: Mutex<HashMap<OrderId, Order>>,
}

impl Database for StaleReads {
    async fn setup(&self) -> Result<(), DbError> {
        Ok(())
    }
    async fn create_order(&self, order: &Order) -> Result<(), DbError> {
        self.created
            .lock()
            .unwrap()
            .insert(order.order_id, order.clone());
        Ok(())
    }
    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        Ok(self.created.lock().unwrap().get(&order_id).cloned())
    }
    async fn update_order(
        &self,
        _id: OrderId,
        _c: &[ItemChange],
        _s: i64,
    ) -> Result<Applied, DbError> {
        Ok(Applied::Yes)
    }
    async fn update_status(&self, _id: OrderId, _s: OrderStatus) -> Result<Applied, DbError> {
        Ok(Applied::Yes)
    }
    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        self.created.lock().unwrap().remove(&order_id);
        Ok(Applied::Yes)
    }
    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        Ok(Snapshot::default())
    }
    fn info(&self) -> StoreInfo {
        StoreInfo {
            name: "stale".into(),
            server_version: "test".into(),
            settings: Default::default(),
        }
    }
}

#[tokio::test]
async fn a_stale_read_is_a_wrong_result_not_a_success() {
    let mut spec = preset("hatshop-random").unwrap();
    spec.events = 5_000;
    let outcome = run_on(Arc::new(StaleReads::default()), &spec, 4, true).await;
    let summary = outcome.stats.summary(
        &[
            "create_order",
            "read_order",
            "update_order",
            "update_status",
            "delete_order",
        ],
        1.0,
    );
    let reads = summary
        .events
        .iter()
        .find(|e| e.event_type == "read_order")
        .unwrap();
    let wrong = reads
        .errors_by_kind
        .get("wrong_result")
        .copied()
        .unwrap_or(0);
    // Most orders have had an update before they are read; all of those reads are stale.
    assert!(wrong > reads.count / 2, "{reads:?}");
    assert_eq!(wrong, reads.errors);
    // Nothing else failed.
    assert_eq!(summary.errors, wrong);
}
