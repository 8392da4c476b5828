//! The runner against a fake store (our own code under test, not a database): the
//! store refuses any event that arrives out of order for its order, while lanes are
//! made to interleave by yielding at random points.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hatshop::db::{Applied, Database, DbError, ErrorKind, Snapshot, StoreInfo};
use hatshop::runner::{self, Pace, Progress, RunClock, RunContext, RunPlan, StopSignal};
use hatshop::workload::{Generator, ItemChange, Order, OrderId, OrderStatus, preset};

#[derive(Default)]
struct StrictStore {
    orders: Mutex<HashMap<OrderId, Order>>,
    calls: AtomicU64,
}

impl StrictStore {
    async fn interleave(&self) {
        // Yield on some calls so that lanes overtake one another.
        if self.calls.fetch_add(1, Ordering::Relaxed) % 3 == 0 {
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
    let outcome = runner::run(
        store.clone(),
        Box::new(Generator::new(&spec).map(Ok)),
        RunContext {
            plan: RunPlan {
                concurrency: 16,
                pace: Pace::ClosedLoop,
                max_duration: None,
                check_reads: false,
                hash_stream: true,
            },
            clock: RunClock::now(),
            stop: Arc::new(StopSignal::default()),
            progress: Arc::new(Progress::default()),
            op_log: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.stats.total_ops(), 30_000);
    let summary = outcome.stats.summary(&["c", "r", "u", "s", "d"], 1.0);
    assert_eq!(summary.errors, 0, "{:?}", summary.overall.errors_by_kind);
    assert_eq!(outcome.lane_last_seq.len(), 16);
    assert!(outcome.lane_last_seq.iter().all(Option::is_some));
}
