//! Whether a run measured a warm server, as run.json keeps it: how long the server
//! hatshop started had been up when measuring began, and whether latency fell while
//! measuring; a warning for each that says the numbers mix a cold server's with a warm
//! one's.

use serde::{Deserialize, Serialize};

use crate::numbers::format_us;
use crate::stats::settling::Settled;

/// A server up for less than this when measuring began is cold: a JVM still compiles
/// its hot code and every server's caches are still filling. Between what was measured
/// in bench/NOTES.md: Cassandra up 25 s still warming within a run, up 51 s warm.
pub const COLD_FOR_S: f64 = 45.0;

/// run.json's `warmth`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Warmth {
    /// How long the server hatshop started had been up when measuring began, s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_up_s: Option<f64>,
    /// Where mean latency fell by a quarter or more from the first third of the
    /// measured batches to the last, beyond the noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_fell: Option<LatencyFell>,
    /// How a warm-up that waited for latency to settle (`--warmup settled`) went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settling: Option<Settled>,
}

/// Mean latency in the first and last third of a run's measured batches, and Welch's p
/// of the two.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LatencyFell {
    pub first_third_us: f64,
    pub last_third_us: f64,
    pub p_value: f64,
}

impl Warmth {
    /// A warning for each sign of a cold server.
    pub fn warnings(&self) -> Vec<String> {
        let mut said = Vec::new();
        // A warm-up that settled read the server warm by its own numbers, which
        // outweighs its age.
        let settled = self.settling.as_ref().is_some_and(|s| s.settled);
        if let Some(up) = self.server_up_s.filter(|up| *up < COLD_FOR_S && !settled) {
            said.push(format!(
                "the server had been up {up:.0} s when measuring began: in its first \
                 {COLD_FOR_S:.0} s a server is still warming up (a JVM compiling, caches \
                 filling), so these numbers may be a cold server's; warm it first \
                 (--warmup settled) or run again"
            ));
        }
        if let Some(unsettled) = self.settling.as_ref().filter(|s| !s.settled) {
            said.push(unsettled.said());
        }
        if let Some(fell) = &self.latency_fell {
            let p = crate::numbers::p_value_text(fell.p_value);
            said.push(format!(
                "mean latency fell while measuring, from {} µs in the first third to {} µs \
                 in the last ({p}): the server was still warming up, and these numbers mix \
                 a cold server's with a warm one's; warm it first (--warmup settled) or \
                 run longer",
                format_us(fell.first_third_us),
                format_us(fell.last_third_us)
            ));
        }
        said
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cold_server_and_a_falling_latency_are_said_and_a_warm_one_is_not() {
        assert!(Warmth::default().warnings().is_empty());
        let warm = Warmth {
            server_up_s: Some(600.0),
            latency_fell: None,
            settling: Some(Settled {
                settled: true,
                after_s: 15.0,
                window_means_us: vec![Some(900.0), Some(880.0), Some(870.0)],
            }),
        };
        assert!(warm.warnings().is_empty());
        let settled_young = Warmth {
            server_up_s: Some(39.0),
            ..warm.clone()
        };
        assert!(settled_young.warnings().is_empty());
        let cold = Warmth {
            server_up_s: Some(12.0),
            latency_fell: Some(LatencyFell {
                first_third_us: 2_310.0,
                last_third_us: 1_100.0,
                p_value: 0.00002,
            }),
            settling: Some(Settled {
                settled: false,
                after_s: 120.0,
                window_means_us: vec![Some(2_310.0), None, Some(1_100.0)],
            }),
        };
        let said = cold.warnings();
        assert_eq!(said.len(), 3, "{said:?}");
        assert!(
            said[0].starts_with("the server had been up 12 s"),
            "{}",
            said[0]
        );
        assert!(
            said[1].starts_with("latency had not settled after 120 s"),
            "{}",
            said[1]
        );
        assert!(said[1].contains("2,310, –, 1,100"), "{}", said[1]);
        assert!(
            said[2].contains("2,310 µs in the first third"),
            "{}",
            said[2]
        );
        assert!(said[2].contains("(p < 0.0001)"), "{}", said[2]);
    }
}
