//! One latency histogram of an interval: made at its first value, and packed into
//! HdrHistogram's V2 encoding once its interval is over.
//!
//! A histogram's counts follow the largest value it saw: about 147 KB at 100 ms, with
//! three significant digits. Kept whole, one per event type per interval, they made
//! memory grow with the run's length. Packed, an interval keeps only its non-zero
//! counts: 20 s of `kv-50w-50r` on SQLite with 10 ms intervals peaked at 733 MB
//! before, 647 MB with intervals packed, and 85 MB once reports also merged
//! `latency.hlog` as they read it (`report::hlog`).

use std::borrow::Cow;
use std::io::Cursor;
use std::sync::LazyLock;

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

/// Three significant digits, as HdrHistogram users expect.
const SIGNIFICANT_DIGITS: u8 = 3;

/// An empty histogram of the kind every latency is kept in.
pub fn new_histogram() -> Histogram<u64> {
    // Auto-resizing: memory follows the range actually seen.
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 digits is valid")
}

/// What an unmade histogram shows.
static EMPTY: LazyLock<Histogram<u64>> = LazyLock::new(new_histogram);

/// Made at its first value: each one made holds 16 KB or more, and an interval keeps
/// four per event type, most of which (event types not in the mix, failures, open-loop
/// and queue times) never get a value: when each of 64 lanes kept its own, they held
/// about 50 MB of them.
#[derive(Debug, Clone, Default)]
pub(super) enum LazyHistogram {
    #[default]
    Unmade,
    Made(Histogram<u64>),
    /// V2-encoded, and how many values it holds.
    Packed {
        bytes: Box<[u8]>,
        len: u64,
    },
}

impl LazyHistogram {
    pub(super) fn record(&mut self, ns: u64) {
        let h = self.made_mut();
        // Auto-resizing: only a value beyond u64's range could fail, and then clamps.
        if h.record(ns).is_err() {
            h.saturating_record(ns);
        }
    }

    pub(super) fn add(&mut self, other: &LazyHistogram) {
        if other.len() > 0 {
            self.made_mut()
                .add(other.get())
                .expect("auto-resizing histograms always merge");
        }
    }

    /// Empties it and keeps its memory: a shard's next interval records without
    /// growing it again (each growth copies the counts).
    pub(super) fn reset(&mut self) {
        match self {
            LazyHistogram::Made(h) => h.reset(),
            LazyHistogram::Packed { .. } => *self = LazyHistogram::Unmade,
            LazyHistogram::Unmade => {}
        }
    }

    pub(super) fn get(&self) -> Cow<'_, Histogram<u64>> {
        match self {
            LazyHistogram::Unmade => Cow::Borrowed(&EMPTY),
            LazyHistogram::Made(h) => Cow::Borrowed(h),
            LazyHistogram::Packed { bytes, .. } => Cow::Owned(unpack(bytes)),
        }
    }

    pub(super) fn len(&self) -> u64 {
        match self {
            LazyHistogram::Unmade => 0,
            LazyHistogram::Made(h) => h.len(),
            LazyHistogram::Packed { len, .. } => *len,
        }
    }

    /// Encodes it: its interval is over, and only a late share may still add to it.
    pub(super) fn pack(&mut self) {
        let LazyHistogram::Made(h) = self else {
            return;
        };
        if h.is_empty() {
            *self = LazyHistogram::Unmade;
            return;
        }
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(h, &mut bytes)
            .expect("a histogram encodes into memory");
        *self = LazyHistogram::Packed {
            len: h.len(),
            bytes: bytes.into_boxed_slice(),
        };
    }

    /// The histogram to record or add into, made or unpacked first.
    fn made_mut(&mut self) -> &mut Histogram<u64> {
        let made = match self {
            LazyHistogram::Made(h) => return h,
            LazyHistogram::Unmade => new_histogram(),
            LazyHistogram::Packed { bytes, .. } => unpack(bytes),
        };
        *self = LazyHistogram::Made(made);
        match self {
            LazyHistogram::Made(h) => h,
            _ => unreachable!("made just above"),
        }
    }
}

fn unpack(bytes: &[u8]) -> Histogram<u64> {
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut Cursor::new(bytes))
        .expect("a histogram packed here decodes");
    h.auto(true);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_histogram_keeps_its_values_and_takes_more() {
        let mut h = LazyHistogram::default();
        for ns in [150, 2_000, 35_000, 1_000_000, 99_000_000] {
            h.record(ns);
        }
        let before = h.get().into_owned();
        h.pack();
        let LazyHistogram::Packed { bytes, len } = &h else {
            panic!("not packed");
        };
        assert_eq!(*len, 5);
        assert!(bytes.len() < 200, "packed into {} bytes", bytes.len());
        assert_eq!(*h.get(), before);
        // A late lane's share, and a value beyond the largest so far.
        let mut late = LazyHistogram::default();
        late.record(120);
        h.add(&late);
        h.record(5_000_000_000);
        assert_eq!(h.len(), 7);
        assert_eq!(h.get().max(), h.get().highest_equivalent(5_000_000_000));
        assert_eq!(h.get().min(), 120);
    }

    #[test]
    fn packing_an_empty_or_unmade_histogram_leaves_it_unmade() {
        let mut unmade = LazyHistogram::default();
        unmade.pack();
        assert!(matches!(unmade, LazyHistogram::Unmade));
        let mut emptied = LazyHistogram::default();
        emptied.record(1);
        emptied.reset();
        emptied.pack();
        assert!(matches!(emptied, LazyHistogram::Unmade));
        assert_eq!(emptied.get().len(), 0);
    }
}
