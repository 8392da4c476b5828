//! The one fake store of the runner's tests (our own code under test, not a database):
//! an in-memory store whose answers a test shapes with a [`Behaviour`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use hatshop::db::{
    Applied, BulkLoad, DbError, ErrorKind, KvPage, Marker, Ownership, Snapshot, Store, StoreFacts,
};
use hatshop::workload::{ItemsUpdate, KeyText, Order, OrderId, OrderUpdate, StatusUpdate};

/// How the fake store answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Holds what it is sent and refuses a call on an order or key that does not exist
    /// yet, so an event run out of order shows as an error; yields on every third call
    /// so that lanes overtake one another. Its order reads return nothing.
    Strict,
    /// Every other call fails with a conflict (MariaDB's deadlock); holds nothing.
    EveryOtherConflicts,
    /// Holds creates and first writes but acknowledges and drops every update and
    /// rewrite, so reads return what was first written: stale.
    DropsUpdates,
    /// Never answers.
    Silent,
    /// Answers this many calls (holding nothing), then cannot be reached: each later
    /// call fails to connect after 10 ms, as a client's reconnect to a dead server does.
    GoneAfter(u64),
}

/// An in-memory store that answers as its [`Behaviour`] says.
pub struct FakeStore {
    behaviour: Behaviour,
    orders: Mutex<HashMap<OrderId, Order>>,
    keys: Mutex<HashMap<String, Vec<u8>>>,
    calls: AtomicU64,
}

impl FakeStore {
    /// An empty store that answers as `behaviour` says.
    pub fn new(behaviour: Behaviour) -> FakeStore {
        FakeStore {
            behaviour,
            orders: Mutex::default(),
            keys: Mutex::default(),
            calls: AtomicU64::new(0),
        }
    }

    fn holds(&self) -> bool {
        matches!(self.behaviour, Behaviour::Strict | Behaviour::DropsUpdates)
    }

    fn strict(&self) -> bool {
        self.behaviour == Behaviour::Strict
    }

    /// What every operation goes through first: silence, a conflict, or a yield.
    async fn before(&self) -> Result<(), DbError> {
        match self.behaviour {
            Behaviour::Silent => std::future::pending().await,
            Behaviour::EveryOtherConflicts => {
                if self.calls.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) {
                    return Err(DbError::new(ErrorKind::Conflict, "1213 Deadlock found"));
                }
            }
            Behaviour::Strict => {
                if self.calls.fetch_add(1, Ordering::Relaxed).is_multiple_of(3) {
                    tokio::task::yield_now().await;
                }
            }
            Behaviour::DropsUpdates => {}
            Behaviour::GoneAfter(answered) => {
                if self.calls.fetch_add(1, Ordering::Relaxed) >= answered {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    return Err(DbError::new(ErrorKind::Connection, "Connection refused"));
                }
            }
        }
        Ok(())
    }

    /// A strict store refuses a call on an order it does not hold.
    fn existing(&self, order_id: OrderId) -> Result<(), DbError> {
        if self.strict() && !self.orders.lock().unwrap().contains_key(&order_id) {
            return Err(DbError::new(
                ErrorKind::NotFound,
                format!("order {order_id} before its create"),
            ));
        }
        Ok(())
    }

    /// A strict store refuses a call on a key it does not hold.
    fn existing_key(&self, key: &KeyText) -> Result<(), DbError> {
        if self.strict() && !self.keys.lock().unwrap().contains_key(key.as_str()) {
            return Err(DbError::new(ErrorKind::NotFound, "key before its write"));
        }
        Ok(())
    }
}

/// No bulk loads: the runner's tests need none.
impl BulkLoad for FakeStore {}

impl hatshop::db::DbTiming for FakeStore {}

impl Store for FakeStore {
    async fn setup(&self, _owner: &Ownership) -> Result<(), DbError> {
        Ok(())
    }
    async fn check_owned(&self) -> Result<Marker, DbError> {
        Ok(Marker::default())
    }
    /// No run goes on from a fake's tables.
    async fn holding(&self) -> Result<Option<String>, DbError> {
        Ok(None)
    }
    async fn write_holding(&self, _note: &str) -> Result<(), DbError> {
        Ok(())
    }
    async fn create_order(&self, order: &Order, _payload: &str) -> Result<(), DbError> {
        self.before().await?;
        if self.holds() {
            let before = self
                .orders
                .lock()
                .unwrap()
                .insert(order.order_id, order.clone());
            if before.is_some() && self.strict() {
                return Err(DbError::new(ErrorKind::Constraint, "created twice"));
            }
        }
        Ok(())
    }
    async fn read_order(&self, order_id: OrderId) -> Result<Option<Order>, DbError> {
        self.before().await?;
        self.existing(order_id)?;
        if self.behaviour == Behaviour::DropsUpdates {
            return Ok(self.orders.lock().unwrap().get(&order_id).cloned());
        }
        Ok(None)
    }
    async fn update_order(&self, update: &OrderUpdate) -> Result<Applied, DbError> {
        self.before().await?;
        self.existing(update.order_id).map(|()| Applied::Yes)
    }
    async fn update_items(&self, update: ItemsUpdate<'_>) -> Result<Applied, DbError> {
        self.before().await?;
        self.existing(update.order_id).map(|()| Applied::Yes)
    }
    async fn update_status(&self, update: StatusUpdate) -> Result<Applied, DbError> {
        let order_id = update.order_id;
        self.before().await?;
        self.existing(order_id).map(|()| Applied::Yes)
    }
    async fn delete_order(&self, order_id: OrderId) -> Result<Applied, DbError> {
        self.before().await?;
        self.existing(order_id)?;
        self.orders.lock().unwrap().remove(&order_id);
        Ok(Applied::Yes)
    }
    async fn kv_write(&self, key: &KeyText, value: &[u8]) -> Result<(), DbError> {
        self.before().await?;
        if self.holds() {
            let mut keys = self.keys.lock().unwrap();
            keys.insert(key.as_str().to_string(), value.to_vec());
        }
        Ok(())
    }
    async fn kv_rewrite(&self, key: &KeyText, value: &[u8]) -> Result<Applied, DbError> {
        self.before().await?;
        self.existing_key(key)?;
        if self.strict() {
            let mut keys = self.keys.lock().unwrap();
            keys.insert(key.as_str().to_string(), value.to_vec());
        }
        Ok(Applied::Yes)
    }
    async fn kv_read(&self, key: &KeyText) -> Result<Option<Vec<u8>>, DbError> {
        self.before().await?;
        self.existing_key(key)?;
        Ok(self.keys.lock().unwrap().get(key.as_str()).cloned())
    }
    async fn kv_delete(&self, key: &KeyText) -> Result<Applied, DbError> {
        self.before().await?;
        self.existing_key(key)?;
        if self.strict() {
            self.keys.lock().unwrap().remove(key.as_str());
        }
        Ok(Applied::Yes)
    }
    async fn snapshot(&self) -> Result<Snapshot, DbError> {
        if self.behaviour == Behaviour::Silent {
            std::future::pending::<()>().await;
        }
        Ok(Snapshot::default())
    }
    async fn kv_page(&self, _cursor: Option<Vec<u8>>) -> Result<KvPage, DbError> {
        if self.behaviour == Behaviour::Silent {
            std::future::pending::<()>().await;
        }
        Ok(KvPage::default())
    }
    fn facts(&self) -> StoreFacts {
        StoreFacts {
            name: format!("fake ({:?})", self.behaviour),
            server_version: "test".into(),
            settings: Default::default(),
        }
    }
}
