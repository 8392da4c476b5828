//! The targets that exist at a point of the stream, in creation order, with what the
//! generator keeps of each: orders by id, keys by index, both handed out in increasing
//! order.
//!
//! A Fenwick tree of "alive" counts over the slots gives the k-th live target in
//! O(log n), so zipfian and latest can rank by age while targets come and go; a removal
//! finds its id by binary search. Deleted targets leave their slot until they outnumber the
//! live ones, then the table compacts: memory follows the live targets, never the
//! events (about 4 bytes of tree and a bit per slot, beside the slots themselves).

pub struct LiveTable<T> {
    /// Ids by slot, increasing.
    ids: Vec<u64>,
    values: Vec<T>,
    alive: Vec<u64>,
    /// Fenwick tree, 1-based: `tree[i]` counts live slots in `(i - lowbit(i), i]`.
    tree: Vec<u32>,
    live: usize,
}

/// Dead slots tolerated before a compaction, at the least.
const MIN_DEAD: usize = 1024;

impl<T> Default for LiveTable<T> {
    fn default() -> Self {
        LiveTable {
            ids: Vec::new(),
            values: Vec::new(),
            alive: Vec::new(),
            tree: vec![0],
            live: 0,
        }
    }
}

impl<T> LiveTable<T> {
    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Adds a target; ids come in increasing order.
    pub fn push(&mut self, id: u64, value: T) {
        debug_assert!(
            self.ids.last().is_none_or(|&last| last < id),
            "ids increase"
        );
        if self.ids.len() == self.ids.capacity() {
            // Grow by an eighth, not double: at millions of targets, doubling would
            // leave hundreds of megabytes unused.
            let more = (self.ids.len() / 8).max(1024);
            self.ids.reserve_exact(more);
            self.values.reserve_exact(more);
        }
        self.ids.push(id);
        self.values.push(value);
        let slot = self.tree.len(); // 1-based position of the new slot
        // The new node covers (slot - lowbit, slot]: itself plus the nodes below it.
        let low = slot & slot.wrapping_neg();
        let mut sum = 1u32;
        let mut j = slot - 1;
        while j > slot - low {
            sum += self.tree[j];
            j -= j & j.wrapping_neg();
        }
        self.tree.push(sum);
        let bit = slot - 1;
        if bit / 64 >= self.alive.len() {
            self.alive.push(0);
        }
        self.alive[bit / 64] |= 1 << (bit % 64);
        self.live += 1;
    }

    fn is_alive(&self, slot: usize) -> bool {
        self.alive[slot / 64] & (1 << (slot % 64)) != 0
    }

    fn slot_of(&self, id: u64) -> Option<usize> {
        self.ids
            .binary_search(&id)
            .ok()
            .filter(|&slot| self.is_alive(slot))
    }

    /// The live target of rank `k` (0 = the oldest), `k < len()`: its id and value.
    pub fn nth_mut(&mut self, k: usize) -> (u64, &mut T) {
        let slot = self.slot_of_rank(k);
        let id = match (self.ids.first(), self.ids.last()) {
            // Every id from the first to the last, none dead (a load, then reads): the
            // id follows from the slot, and its cache line is not fetched.
            (Some(&first), Some(&last))
                if self.live == self.ids.len() && last - first == self.ids.len() as u64 - 1 =>
            {
                first + slot as u64
            }
            _ => self.ids[slot],
        };
        (id, &mut self.values[slot])
    }

    fn slot_of_rank(&self, k: usize) -> usize {
        debug_assert!(k < self.live);
        if self.live == self.ids.len() {
            // No dead slot: the rank is the slot. Spares the tree walk, a cache miss per
            // level (6 % of the client's CPU samples on race-cql-read, by perf).
            return k;
        }
        let mut remaining = k as u32;
        let mut pos = 0usize;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= remaining {
                remaining -= self.tree[next];
                pos = next;
            }
            step >>= 1;
        }
        pos
    }

    pub fn remove(&mut self, id: u64) {
        let Some(slot) = self.slot_of(id) else {
            return;
        };
        self.alive[slot / 64] &= !(1 << (slot % 64));
        let mut i = slot + 1;
        while i < self.tree.len() {
            self.tree[i] -= 1;
            i += i & i.wrapping_neg();
        }
        self.live -= 1;
        let dead = self.ids.len() - self.live;
        if dead > self.live && dead > MIN_DEAD {
            self.compact();
        }
    }

    /// Drops the dead slots, keeping creation order, and rebuilds the tree: O(n), once
    /// the dead outnumber the live, so O(1) per removal over time.
    fn compact(&mut self) {
        let mut slot = 0;
        let alive = std::mem::take(&mut self.alive);
        let is_alive = |s: usize| alive[s / 64] & (1 << (s % 64)) != 0;
        self.ids.retain(|_| {
            let keep = is_alive(slot);
            slot += 1;
            keep
        });
        slot = 0;
        self.values.retain(|_| {
            let keep = is_alive(slot);
            slot += 1;
            keep
        });
        self.ids.shrink_to_fit();
        self.values.shrink_to_fit();
        let n = self.ids.len();
        self.alive = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            *self.alive.last_mut().expect("n > 0") = (1 << (n % 64)) - 1;
        }
        self.tree = vec![1; n + 1];
        self.tree[0] = 0;
        for i in 1..=n {
            let parent = i + (i & i.wrapping_neg());
            if parent <= n {
                self.tree[parent] += self.tree[i];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_dense_and_gapped_ids() {
        let mut dense = LiveTable::default();
        for id in 10..20u64 {
            dense.push(id, id);
        }
        for k in 0..10 {
            assert_eq!(dense.nth_mut(k), (10 + k as u64, &mut (10 + k as u64)));
        }
        let mut gapped = LiveTable::default();
        for id in [1u64, 3, 4] {
            gapped.push(id, id);
        }
        let got: Vec<u64> = (0..3).map(|k| gapped.nth_mut(k).0).collect();
        assert_eq!(got, [1, 3, 4]);
    }

    #[test]
    fn ranks_follow_creation_order_through_removals_and_compactions() {
        let mut table = LiveTable::default();
        let mut model: Vec<u64> = Vec::new();
        let mut state = 17u64;
        for id in 1..=50_000u64 {
            table.push(id, id * 10);
            model.push(id);
            // Remove more than is added now and then, so the table compacts.
            let removals = if id % 1000 < 600 { 1 } else { 0 };
            for _ in 0..removals {
                if crate::workload::splitmix64(&mut state).is_multiple_of(2) && !model.is_empty() {
                    let k = (crate::workload::splitmix64(&mut state) % model.len() as u64) as usize;
                    table.remove(model.remove(k));
                }
            }
        }
        assert_eq!(table.len(), model.len());
        assert!(
            table.ids.len() < 2 * model.len() + MIN_DEAD + 2,
            "compacted"
        );
        for (k, id) in model.iter().enumerate() {
            let (got, value) = table.nth_mut(k);
            assert_eq!((got, *value), (*id, id * 10), "rank {k}");
        }
        assert_eq!(table.slot_of(0), None);
        // Once compacted with no dead slot left, ranks take the short way.
        table.compact();
        assert_eq!(table.live, table.ids.len());
        for (k, id) in model.iter().enumerate() {
            assert_eq!(table.nth_mut(k).0, *id, "rank {k} after compacting");
        }
        assert_eq!(table.slot_of(99_999), None);
    }
}
