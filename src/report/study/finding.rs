//! The sentence under a figure: what it shows, in plain words, computed from its
//! numbers (ratios between stores, a line's first and last points, where a series does
//! best and worst). A winner, a best or a worst is named only where the samples behind
//! both points stand apart by Welch's test (`evidence`); otherwise the sentence says
//! why it cannot tell.

use super::cells::CellResult;
use super::evidence::{Evidence, Verdict, evidence, judge};
use super::points::{Points, THIN, axis_name, mean};
use super::spec::{Dim, FigureSpec, Metric, Shape};

/// The sentence under a figure: what it shows, from its numbers.
pub(super) fn sentence(spec: &FigureSpec, points: &Points, cells: &[CellResult]) -> String {
    if points.values.is_empty() {
        return nothing_drawn(spec, cells);
    }
    let figure = Finding {
        spec,
        points,
        cells,
    };
    let metric = capital(spec.metric.name());
    let one_series = points.series.len() == 1;
    let clauses = match spec.shape {
        Shape::Bars if points.series.len() == 2 => figure.two_series(),
        Shape::Lines => figure.lines(),
        _ if one_series && points.xs.len() == 2 => {
            return format!("{metric} of {}: {}.", points.series[0], figure.two_places())
                + &figure.against_seed_max()
                + &figure.thin();
        }
        _ if one_series => figure.one_series(),
        _ => figure.best_and_worst_by_group(),
    };
    // Series that stand at no x together are not set against each other.
    let said = if clauses.is_empty() {
        format!(
            "{metric}: no two series stand at one {} to be set side by side.",
            axis_name(&spec.x)
        )
    } else {
        format!("{metric}: {}.", clauses.join("; "))
    };
    said + &figure.against_seed_max() + &figure.thin()
}

/// Why a figure has no point: none of its cells finished, or those that did hold
/// nothing it draws.
pub(super) fn nothing_drawn(spec: &FigureSpec, cells: &[CellResult]) -> String {
    let finished = cells
        .iter()
        .filter(|c| spec.draws(&c.part) && c.counted && c.matches(&spec.only))
        .count();
    match finished {
        0 => "No cell of this figure has finished yet.".into(),
        n => format!(
            "Nothing to draw: {} finished, and {} none of this figure's numbers.",
            match n {
                1 => "its one cell".to_string(),
                n => format!("its {n} cells"),
            },
            if n == 1 { "it holds" } else { "they hold" }
        ),
    }
}

/// Two values `ratio` apart in words a person would use, beside the number.
fn roughly(ratio: f64) -> &'static str {
    match ratio {
        r if (1.8..2.3).contains(&r) => " (roughly double)",
        r if (2.7..3.4).contains(&r) => " (roughly three times)",
        r if (3.6..4.5).contains(&r) => " (roughly four times)",
        _ => "",
    }
}

/// Improvements smaller than this are not "helping".
const HELPS: f64 = 0.10;

/// A figure and what its numbers came from, to be said in words.
struct Finding<'a> {
    spec: &'a FigureSpec,
    points: &'a Points,
    cells: &'a [CellResult],
}

impl Finding<'_> {
    /// The mean of the cells at (x, series).
    fn value(&self, x: usize, series: usize) -> Option<f64> {
        self.points.values.get(&(x, series)).map(|v| mean(v))
    }

    fn better(&self, a: f64, b: f64) -> bool {
        if self.spec.metric.higher_is_better() {
            a > b
        } else {
            a < b
        }
    }

    /// An x value as a sentence names a place: "events 100", "read_order".
    fn place(&self, x: &str) -> String {
        match x.parse::<f64>() {
            Ok(_) => format!("{} {x}", axis_name(&self.spec.x)),
            Err(_) => x.to_string(),
        }
    }

    /// What the point at `key` rests on.
    fn evidence(&self, key: (usize, usize)) -> Evidence {
        evidence(self.spec, self.points, self.cells, key)
    }

    /// Whether the points at `a` and `b`, named as a sentence names them, stand apart.
    fn judge(&self, a: (usize, usize), b: (usize, usize), names: [&str; 2]) -> Verdict {
        judge(&self.evidence(a), &self.evidence(b), names)
    }

    /// Two series: per group, which wins and by how much, where the samples can say.
    fn two_series(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let series = &self.points.series;
        let mut clauses = Vec::new();
        // Groups too short to test, as ("2.00× at read_order", why): said once per reason.
        let mut short: Vec<(String, String)> = Vec::new();
        for (x, name) in self.points.xs.iter().enumerate() {
            let (Some(a), Some(b)) = (self.value(x, 0), self.value(x, 1)) else {
                continue;
            };
            if a == b || a <= 0.0 || b <= 0.0 {
                clauses.push(format!("{name}: the same on both ({})", metric.say(a)));
                continue;
            }
            let win = if self.better(a, b) { 0 } else { 1 };
            let ratio = a.max(b) / a.min(b);
            let word = match metric {
                Metric::OpsPerSecond => "the throughput",
                Metric::Conflicts => "fewer conflicts",
                Metric::LostSilently => "fewer writes lost",
                Metric::Seconds => "faster overall",
                _ => "faster",
            };
            // No winner the numbers cannot carry: a tail resting on too few operations,
            // too few samples to test, or a test that finds no difference.
            let thin = |s: usize| self.points.beyond.get(&(x, s)).is_some_and(|n| *n < THIN);
            if thin(0) || thin(1) {
                clauses.push(format!(
                    "{name}: {ratio:.2}× apart, on too few operations beyond the percentile \
                     to name the faster"
                ));
                continue;
            }
            clauses.push(match self.judge((x, 0), (x, 1), [&series[0], &series[1]]) {
                Verdict::TooShort(why) => {
                    short.push((format!("{ratio:.2}× at {}", self.place(name)), why));
                    continue;
                }
                Verdict::Noise(test) => format!(
                    "{name}: {ratio:.2}× apart, within the noise ({})",
                    Verdict::p(&test)
                ),
                Verdict::Apart(test) => format!(
                    "{name}: {ratio:.2}× {word}{} on {} ({})",
                    roughly(ratio),
                    series[win],
                    Verdict::p(&test)
                ),
            });
        }
        let mut reasons: Vec<&String> = Vec::new();
        for (_, why) in &short {
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        }
        for why in reasons {
            let apart: Vec<&str> = short
                .iter()
                .filter(|(_, w)| w == why)
                .map(|(name, _)| name.as_str())
                .collect();
            let apart = apart.join(", ").replacen("× at ", "× apart at ", 1);
            clauses.push(format!("{apart}: too short to tell ({why})"));
        }
        clauses
    }

    /// A series' points in x order, where x is a number.
    fn numeric(&self, s: usize) -> Vec<(f64, String, f64)> {
        let mut present: Vec<(f64, String, f64)> = (0..self.points.xs.len())
            .filter_map(|x| {
                let at: f64 = self.points.xs[x].parse().ok()?;
                Some((at, self.points.xs[x].clone(), self.value(x, s)?))
            })
            .collect();
        present.sort_by(|a, b| a.0.total_cmp(&b.0));
        present
    }

    /// Where a series stops helping: the first x from which no later point is more
    /// than [`HELPS`] better. `None` where x is not a number or there are too few.
    fn knee(&self, s: usize) -> Option<Knee> {
        let present = self.numeric(s);
        if present.len() < 3 {
            return None;
        }
        let gain = |from: f64, to: f64| {
            if self.spec.metric.higher_is_better() {
                to / from - 1.0
            } else {
                from / to - 1.0
            }
        };
        let at = (0..present.len()).find(|&i| {
            present[i + 1..]
                .iter()
                .all(|later| gain(present[i].2, later.2) < HELPS)
        })?;
        let axis = axis_name(&self.spec.x);
        // More in flight that adds no throughput only queues: the server is saturated.
        let (gaining, stops) = match (self.spec.metric, &self.spec.x) {
            (Metric::OpsPerSecond, Dim::Label(x)) if x == "in flight" => {
                ("still growing", "is saturated")
            }
            (Metric::OpsPerSecond, _) => ("still growing", "grows no further"),
            _ => ("still helping", "stops helping"),
        };
        Some(if at + 1 == present.len() {
            Knee::Still(format!("{gaining} at {axis} {}", present[at].1))
        } else {
            Knee::Stops(format!(
                "{stops} from {axis} {} on ({}; no later point more than {:.0} % better)",
                present[at].1,
                self.spec.metric.say(present[at].2),
                HELPS * 100.0
            ))
        })
    }

    /// Lines: each from its first point to its last, where it stops gaining, and how
    /// steady it is across x.
    fn lines(&self) -> Vec<String> {
        let metric = self.spec.metric;
        let axis = axis_name(&self.spec.x);
        let mut clauses = Vec::new();
        for (s, name) in self.points.series.iter().enumerate() {
            let present: Vec<Place> = (0..self.points.xs.len())
                .filter_map(|x| Some((x, self.value(x, s)?)))
                .collect();
            let (Some(first), Some(last)) = (present.first(), present.last()) else {
                continue;
            };
            let at = |p: &Place| format!("{axis} {}", self.points.xs[p.0]);
            if present.len() == 1 {
                clauses.push(format!(
                    "{name} has one point, {} at {}",
                    metric.say(first.1),
                    at(first)
                ));
                continue;
            }
            let values: Vec<f64> = present.iter().map(|p| p.1).collect();
            if values.iter().all(|v| *v == first.1) {
                clauses.push(format!(
                    "{name} stays at {} from {} to {}",
                    metric.say(first.1),
                    at(first),
                    at(last)
                ));
                continue;
            }
            // A count is small and uneven: each point said, never a share of its mean.
            if metric.is_count() {
                let each: Vec<String> = present
                    .iter()
                    .map(|p| format!("{} at {}", metric.say(p.1), at(p)))
                    .collect();
                clauses.push(format!("{name} counts {}", each.join(", ")));
                continue;
            }
            let mean = mean(&values);
            let spread = values
                .iter()
                .map(|v| (v / mean - 1.0).abs())
                .fold(0.0, f64::max);
            // How consistent it is across x, so two lines can be set side by side; a
            // share of a mean near 0 says nothing.
            let steadiness = match present.len() {
                0..=2 => String::new(),
                _ if spread < HELPS => format!(
                    ", steady (every point within {:.0} % of its mean)",
                    spread * 100.0
                ),
                _ => format!(", up to {:.0} % from its mean", spread * 100.0),
            };
            let knee = match metric {
                Metric::OpsPerSecond | Metric::Seconds => self
                    .knee(s)
                    .map_or(String::new(), |knee| format!(", {}", knee.in_a_line())),
                _ => String::new(),
            };
            clauses.push(format!(
                "{name} goes from {} at {} to {} at {}{steadiness}{knee}",
                metric.say(first.1),
                at(first),
                metric.say(last.1),
                at(last),
            ));
        }
        clauses.extend(self.two_lines_apart());
        clauses
    }

    /// Two lines over the same x: how far apart they are on average, and at how many
    /// points that stands beyond the noise.
    fn two_lines_apart(&self) -> Option<String> {
        if self.points.series.len() != 2 {
            return None;
        }
        let both: Vec<(usize, f64)> = (0..self.points.xs.len())
            .filter_map(|x| Some((x, self.value(x, 0)? / self.value(x, 1)?)))
            .filter(|(_, r)| r.is_finite() && *r > 0.0)
            .collect();
        if both.len() < 2 {
            return None;
        }
        let ratio = mean(&both.iter().map(|(_, r)| *r).collect::<Vec<_>>());
        let (high, low) = if ratio >= 1.0 { (0, 1) } else { (1, 0) };
        let series = &self.points.series;
        let verdicts: Vec<Verdict> = both
            .iter()
            .map(|(x, _)| self.judge((*x, 0), (*x, 1), [&series[0], &series[1]]))
            .collect();
        let apart = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Apart(_)))
            .count();
        let short = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::TooShort(_)))
            .count();
        let ratio = ratio.max(1.0 / ratio);
        let beyond = match apart {
            n if n == both.len() => "beyond the noise at every one".to_string(),
            0 if short == both.len() => "though every point is too short to test".to_string(),
            0 => "beyond the noise at none of them".to_string(),
            n => format!("beyond the noise at {n} of them"),
        };
        Some(format!(
            "at the {} points both ran, {} is {ratio:.2}× {}{} on average, {beyond}",
            both.len(),
            series[high],
            series[low],
            roughly(ratio)
        ))
    }

    /// Beside a bound the study gave for every point: the highest point here.
    fn against_seed_max(&self) -> String {
        let Some(bound) = self.spec.seed_max else {
            return String::new();
        };
        let highest = self
            .points
            .values
            .values()
            .map(|v| mean(v))
            .fold(0.0, f64::max);
        format!(
            " The slowest point here is {}; the study's slowest was under {}.",
            self.spec.metric.say(highest),
            self.spec.metric.say(bound)
        )
    }

    /// The points whose tail percentile rests on too few operations, said.
    fn thin(&self) -> String {
        let thin = self.points.thin();
        let Some(fewest) = thin.iter().map(|(_, n)| *n).min() else {
            return String::new();
        };
        format!(
            " Marked *: {} of these values rest{} on fewer than {THIN} operations beyond \
             {} (the fewest: {fewest}); run more operations to trust {}.",
            thin.len(),
            if thin.len() == 1 { "s" } else { "" },
            if thin.len() == 1 { "it" } else { "them" },
            if thin.len() == 1 { "it" } else { "them" }
        )
    }

    /// One series at two places: the two, how far apart, and whether beyond the noise.
    fn two_places(&self) -> String {
        let metric = self.spec.metric;
        let xs = &self.points.xs;
        let (Some(a), Some(b)) = (self.value(0, 0), self.value(1, 0)) else {
            return String::new();
        };
        let verdict = match self.judge((0, 0), (1, 0), [&xs[0], &xs[1]]) {
            Verdict::Apart(test) => Verdict::p(&test),
            Verdict::Noise(test) => format!("within the noise, {}", Verdict::p(&test)),
            Verdict::TooShort(why) => format!("too short to tell: {why}"),
        };
        format!(
            "{} {} against {} {}, {:.2}× apart ({verdict})",
            xs[0],
            metric.say(a),
            xs[1],
            metric.say(b),
            a.max(b) / a.min(b)
        )
    }

    /// One series: where along x it does best and worst, where the samples can say.
    fn one_series(&self) -> Vec<String> {
        let axis = axis_name(&self.spec.x);
        let present: Vec<Named> = (0..self.points.xs.len())
            .filter_map(|x| {
                Some(Named {
                    label: format!("{axis} {}", self.points.xs[x]),
                    key: (x, 0),
                    value: self.value(x, 0)?,
                })
            })
            .collect();
        let mut clauses = vec![format!(
            "{}: {}",
            self.points.series[0],
            self.ends(present).join("; ")
        )];
        clauses.extend(self.knee(0).map(|knee| format!("it {}", knee.on_its_own())));
        clauses
    }

    /// Several series: per group, the best and the worst, where the samples can say.
    fn best_and_worst_by_group(&self) -> Vec<String> {
        let series = &self.points.series;
        let mut clauses = Vec::new();
        for (x, name) in self.points.xs.iter().enumerate() {
            let present: Vec<Named> = (0..series.len())
                .filter_map(|s| {
                    Some(Named {
                        label: series[s].clone(),
                        key: (x, s),
                        value: self.value(x, s)?,
                    })
                })
                .collect();
            if present.len() > 1 {
                clauses.push(format!("{name}: {}", self.ends(present).join("; ")));
            }
        }
        clauses
    }

    /// The best and the worst of several points, each said against its nearest rival:
    /// named only where the two stand apart beyond the noise.
    fn ends(&self, mut present: Vec<Named>) -> Vec<String> {
        present.sort_by(|a, b| {
            if self.better(a.value, b.value) {
                std::cmp::Ordering::Less
            } else if self.better(b.value, a.value) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        if let [one] = present.as_slice() {
            return vec![format!(
                "only {} ({})",
                one.label,
                self.spec.metric.say(one.value)
            )];
        }
        let best: Vec<&Named> = present.iter().collect();
        let worst: Vec<&Named> = present.iter().rev().collect();
        [self.end("best", &best), self.end("worst", &worst)]
            .into_iter()
            .flatten()
            .collect()
    }

    /// Whether two series do the same work, so neither may be called better.
    fn alike(&self, a: &str, b: &str) -> bool {
        self.spec
            .alike
            .iter()
            .any(|group| group.iter().any(|s| s == a) && group.iter().any(|s| s == b))
    }

    /// "best 16 (…; beyond the noise of 8, p = 0.003)", or why no best is named:
    /// `ranked` from that end, its first set against the next that does other work.
    fn end(&self, word: &str, ranked: &[&Named]) -> Option<String> {
        let (top, rest) = ranked.split_first()?;
        let rival = rest.iter().find(|n| !self.alike(&top.label, &n.label))?;
        let twins: Vec<&str> = rest
            .iter()
            .filter(|n| self.alike(&top.label, &n.label))
            .map(|n| n.label.as_str())
            .collect();
        let with = match twins.as_slice() {
            [] => String::new(),
            _ => format!(", with {} doing the same work", twins.join(" and ")),
        };
        let metric = self.spec.metric;
        let top_said = format!("{} ({}{with}", top.label, metric.say(top.value));
        let rival_said = format!("{} ({})", rival.label, metric.say(rival.value));
        Some(
            match self.judge(top.key, rival.key, [&top.label, &rival.label]) {
                Verdict::Apart(test) => format!(
                    "{word} {top_said}; beyond the noise of {}, {})",
                    rival.label,
                    Verdict::p(&test)
                ),
                Verdict::Noise(test) => format!(
                    "no single {word}: {top_said}) and {rival_said} are within the noise of each \
                 other ({})",
                    Verdict::p(&test)
                ),
                Verdict::TooShort(why) => {
                    format!(
                        "too short to tell the {word}: {top_said}) against {rival_said} ({why})"
                    )
                }
            },
        )
    }
}

/// A point as a sentence names it.
struct Named {
    label: String,
    key: (usize, usize),
    value: f64,
}

/// Where a series stops gaining, said inside a line's clause or as a clause of its own.
enum Knee {
    /// Still gaining at its last point: "still growing at in flight 64".
    Still(String),
    /// Gaining no more from a point on: "is saturated from in flight 16 on (…)".
    Stops(String),
}

impl Knee {
    /// After "cassandra goes from … to …,".
    fn in_a_line(&self) -> String {
        match self {
            Knee::Still(said) => said.clone(),
            Knee::Stops(said) => format!("and {said}"),
        }
    }

    /// After "it".
    fn on_its_own(&self) -> String {
        match self {
            Knee::Still(said) => format!("is {said}"),
            Knee::Stops(said) => said.clone(),
        }
    }
}

/// A place on a figure's axis and its value there.
type Place = (usize, f64);

pub(super) fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
