//! Charts as inline SVG, drawn by hand: line charts (linear or log axes, custom ticks
//! such as the percentile "nines"), grouped bar charts with optional whiskers. Every
//! axis says its unit; every chart comes with its legend and the table of numbers it
//! was drawn from (a [`Figure`]). No scripts, so a report is one self-contained file
//! that prints.

use std::fmt::Write;

use super::figure::{Figure, Table, cell};

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 320.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 52.0;
/// Series with at most this many points also get a mark on each point.
const SPARSE: usize = 30;
/// Series colours, in order (matplotlib's tab10).
pub const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// How an axis spreads its values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    Log10,
}

/// An axis: its label, scale and ticks.
#[derive(Debug, Clone)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Fixed ticks (value, label); computed when `None`.
    pub ticks: Option<Vec<(f64, String)>>,
    /// The value a position on the axis stands for, as a figure's table gives it: the
    /// position itself, except on an axis that spreads its values (the percentile
    /// "nines").
    pub value_at: fn(f64) -> f64,
    /// A bound drawn across the chart at this value, with its words (a service-level
    /// objective on the charts it bounds); the axis reaches it.
    pub level: Option<(f64, String)>,
}

impl Axis {
    /// A linear axis with computed ticks.
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            ticks: None,
            value_at: |position| position,
            level: None,
        }
    }

    /// The axis with a bound drawn across the chart at `value`.
    pub fn with_level(mut self, value: f64, words: &str) -> Axis {
        self.level = Some((value, words.to_string()));
        self
    }

    /// The label as the chart shows it: a log axis says so, inside its unit's
    /// parentheses ("latency (µs, log scale)"). Tables keep the plain label.
    fn drawn_label(&self) -> String {
        match (self.scale, self.label.strip_suffix(')')) {
            (Scale::Linear, _) => self.label.clone(),
            (Scale::Log10, Some(open)) => format!("{open}, log scale)"),
            (Scale::Log10, None) => format!("{} (log scale)", self.label),
        }
    }

    /// A log10 axis with computed ticks, for values over several decades.
    pub fn log(label: &str) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log10,
            ticks: None,
            value_at: |position| position,
            level: None,
        }
    }
}

/// One named line of points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// `text` made safe inside SVG or HTML text and attributes.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A short number for tick labels: 0.5, 12, 1.5k, 2M.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (n, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let text = if n.fract() == 0.0 || n.abs() >= 100.0 {
        format!("{n:.0}")
    } else if n.abs() >= 10.0 {
        format!("{n:.1}")
    } else {
        format!("{n:.2}")
    };
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{suffix}")
}

/// A [lo, hi] domain and where its ticks go.
struct Domain {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Domain {
    fn new(axis: &Axis, values: impl Iterator<Item = f64>, zero_based: bool) -> Domain {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        let level = axis.level.as_ref().map(|(value, _)| *value);
        for v in values
            .chain(level)
            .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
        {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = if axis.scale == Scale::Log10 {
                (1.0, 10.0)
            } else {
                (0.0, 1.0)
            };
        }
        if let Some(ticks) = &axis.ticks {
            let tick_lo = ticks.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
            let tick_hi = ticks.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
            return Domain {
                scale: axis.scale,
                lo: lo.min(tick_lo),
                hi: hi.max(tick_hi),
                ticks: ticks.clone(),
            };
        }
        match axis.scale {
            Scale::Log10 => {
                let lo = 10f64.powf(lo.log10().floor());
                let hi = 10f64.powf(hi.log10().ceil().max(lo.log10() + 1.0));
                let mut ticks = Vec::new();
                let mut t = lo;
                while t <= hi * 1.0001 {
                    ticks.push((t, short(t)));
                    t *= 10.0;
                }
                Domain {
                    scale: Scale::Log10,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Linear => {
                let lo = if zero_based { lo.min(0.0) } else { lo };
                let hi = if hi <= lo { lo + 1.0 } else { hi };
                let raw = (hi - lo) / 5.0;
                let magnitude = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 5.0, 10.0]
                    .iter()
                    .map(|m| m * magnitude)
                    .find(|s| *s >= raw)
                    .unwrap_or(magnitude * 10.0);
                let lo = (lo / step).floor() * step;
                let hi = (hi / step).ceil() * step;
                let ticks = (0..=((hi - lo) / step).round() as usize)
                    .map(|i| lo + i as f64 * step)
                    .map(|t| (t, short(t)))
                    .collect();
                Domain {
                    scale: Scale::Linear,
                    lo,
                    hi,
                    ticks,
                }
            }
        }
    }

    /// 0 at `lo`, 1 at `hi`.
    fn fraction(&self, v: f64) -> f64 {
        let f = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log10 => {
                (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
            }
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

fn frame(out: &mut String, title: &str, kind: &str, series: usize) {
    let _ = write!(
        out,
        r#"<svg class="chart {kind}" data-series="{series}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg" role="img"><title>{}</title>"#,
        escape(title)
    );
    let _ = write!(
        out,
        r#"<text x="{}" y="20" class="title" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
}

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

fn y_axis(out: &mut String, domain: &Domain, label: &str) {
    for (value, text) in &domain.ticks {
        let y = TOP + plot_height() * (1.0 - domain.fraction(*value));
        let _ = write!(
            out,
            r#"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{}" y="{:.1}" class="tick" text-anchor="end">{}</text>"#,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(text)
        );
    }
    let _ = write!(
        out,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" class="axis-label" text-anchor="middle">{}</text>"#,
        TOP + plot_height() / 2.0,
        escape(label)
    );
}

/// The axis's bound, if it has one: a dashed line across the plot, its words above it
/// at the right.
fn level(out: &mut String, domain: &Domain, axis: &Axis) {
    let Some((value, words)) = &axis.level else {
        return;
    };
    let y = TOP + plot_height() * (1.0 - domain.fraction(*value));
    let _ = write!(
        out,
        r#"<line class="level" x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="black" stroke-width="1.5" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" class="tick" text-anchor="end">{}</text>"#,
        WIDTH - RIGHT,
        WIDTH - RIGHT - 2.0,
        y - 4.0,
        escape(words)
    );
}

fn x_label(out: &mut String, label: &str) {
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{}" class="axis-label" text-anchor="middle">{}</text>"#,
        LEFT + plot_width() / 2.0,
        HEIGHT - 10.0,
        escape(label)
    );
}

/// Lines over a shared x axis.
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series]) -> Figure {
    marked_line_chart(title, x, y, series, &[])
}

/// A vertical line at `x` with a label (a fault on a chart over time).
#[derive(Debug, Clone)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

/// Lines over a shared x axis, with vertical marks.
pub fn marked_line_chart(
    title: &str,
    x: &Axis,
    y: &Axis,
    series: &[Series],
    marks: &[Mark],
) -> Figure {
    let xs = Domain::new(
        x,
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(marks.iter().map(|m| m.x)),
        false,
    );
    let ys = Domain::new(
        y,
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let mut out = String::new();
    frame(&mut out, title, "line", series.len());
    y_axis(&mut out, &ys, &y.drawn_label());
    for (value, text) in &xs.ticks {
        let px = LEFT + plot_width() * xs.fraction(*value);
        let _ = write!(
            out,
            r#"<line x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{}" class="grid"/><text x="{px:.1}" y="{}" class="tick" text-anchor="middle">{}</text>"#,
            TOP + plot_height(),
            TOP + plot_height() + 16.0,
            escape(text)
        );
    }
    x_label(&mut out, &x.label);
    for (i, s) in series.iter().enumerate() {
        out.push_str(&series_path(
            s,
            PALETTE[i % PALETTE.len()],
            &xs,
            &ys,
            y.scale,
        ));
    }
    level(&mut out, &ys, y);
    for (i, mark) in marks.iter().enumerate() {
        let px = LEFT + plot_width() * xs.fraction(mark.x);
        // Labels step down so that faults close in time stay readable.
        let ty = TOP + 28.0 + 12.0 * (i % 4) as f64;
        let _ = write!(
            out,
            r#"<line class="mark" x1="{px:.1}" x2="{px:.1}" y1="{TOP}" y2="{}" stroke="dimgray" stroke-dasharray="4 3"/><text x="{:.1}" y="{ty:.1}" class="tick">{}</text>"#,
            TOP + plot_height(),
            px + 3.0,
            escape(&mark.label)
        );
    }
    out.push_str("</svg>");
    Figure {
        title: title.into(),
        svg: out,
        legend: series.iter().map(|s| s.name.clone()).collect(),
        table: points_table(x, y, series, marks),
    }
}

/// One row per point (`series`, x, y; a missing value is an empty cell), then one row
/// per mark with its label as the series and no y.
fn points_table(x: &Axis, y: &Axis, series: &[Series], marks: &[Mark]) -> Table {
    let mut table = Table::new(&["series", &x.label, &y.label]);
    for s in series {
        for (px, py) in &s.points {
            table
                .rows
                .push(vec![s.name.clone(), cell((x.value_at)(*px)), cell(*py)]);
        }
    }
    for mark in marks {
        table.rows.push(vec![
            format!("mark: {}", mark.label),
            cell((x.value_at)(mark.x)),
            String::new(),
        ]);
    }
    table
}

/// One series as a path (with a dot per point when there are few), broken where a
/// value is missing or cannot be drawn on a log scale.
fn series_path(s: &Series, colour: &str, xs: &Domain, ys: &Domain, scale: Scale) -> String {
    let mut d = String::new();
    let mut marks = String::new();
    // A missing value (NaN) breaks the line: the next point starts a new piece.
    let mut gap = true;
    for (px, py) in &s.points {
        if !py.is_finite() || (scale == Scale::Log10 && *py <= 0.0) {
            gap = true;
            continue;
        }
        let cx = LEFT + plot_width() * xs.fraction(*px);
        let cy = TOP + plot_height() * (1.0 - ys.fraction(*py));
        let _ = write!(
            d,
            "{}{cx:.1},{cy:.1}",
            match (d.is_empty(), gap) {
                (true, _) => "M",
                (false, true) => " M",
                (false, false) => " L",
            }
        );
        gap = false;
        // A few points get a mark each, so a one-interval run still shows.
        if s.points.len() <= SPARSE {
            let _ = write!(
                marks,
                r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="{colour}"/>"#
            );
        }
    }
    if d.is_empty() {
        return String::new();
    }
    format!(
        r#"<path class="series" data-points="{}" d="{d}" fill="none" stroke="{colour}" stroke-width="1.6"><title>{}</title></path>{marks}"#,
        s.points.iter().filter(|p| p.1.is_finite()).count(),
        escape(&s.name)
    )
}

/// Roughly how wide a character of a tick label is (11 px sans-serif), to fit labels.
const TICK_CHAR_WIDTH: f64 = 6.6;

/// `label` cut with an ellipsis to fit `width` pixels, so that neighbouring category
/// names never run into each other; the whole name stays in its tooltip and the CSV.
fn fitted(label: &str, width: f64) -> String {
    let room = ((width - 6.0) / TICK_CHAR_WIDTH).floor().max(2.0) as usize;
    if label.chars().count() <= room {
        return label.to_string();
    }
    let mut cut: String = label.chars().take(room - 1).collect();
    cut.push('…');
    cut
}

/// One bar group per category, one bar per series; `whiskers` (low, high) per value.
pub struct Bars {
    pub name: String,
    pub values: Vec<f64>,
    pub whiskers: Option<Vec<(f64, f64)>>,
    /// Bars drawn with a `*` above them: values that rest on too few samples to trust
    /// (by category; none marked where it is shorter).
    pub marked: Vec<bool>,
}

/// A grouped bar chart, one group per category and one bar per series.
pub fn bar_chart(
    title: &str,
    x_axis: &str,
    categories: &[String],
    y: &Axis,
    bars: &[Bars],
) -> Figure {
    let values = bars.iter().flat_map(|b| {
        b.values
            .iter()
            .copied()
            .chain(b.whiskers.iter().flatten().flat_map(|(lo, hi)| [*lo, *hi]))
    });
    let ys = Domain::new(y, values, true);
    let mut out = String::new();
    frame(&mut out, title, "bar", bars.len());
    y_axis(&mut out, &ys, &y.drawn_label());
    let group = plot_width() / categories.len().max(1) as f64;
    let bar = (group * 0.8) / bars.len().max(1) as f64;
    let base = TOP + plot_height();
    for (c, category) in categories.iter().enumerate() {
        let gx = LEFT + c as f64 * group;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{}" class="tick" text-anchor="middle">{}<title>{}</title></text>"#,
            gx + group / 2.0,
            base + 16.0,
            escape(&fitted(category, group)),
            escape(category)
        );
        for (i, b) in bars.iter().enumerate() {
            let Some(&v) = b.values.get(c) else { continue };
            let top = TOP + plot_height() * (1.0 - ys.fraction(v));
            let x = gx + group * 0.1 + i as f64 * bar;
            let _ = write!(
                out,
                r#"<rect class="bar" x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                (bar - 2.0).max(1.0),
                (base - top).max(0.0),
                PALETTE[i % PALETTE.len()],
                escape(&b.name),
                short(v)
            );
            if b.marked.get(c).copied().unwrap_or(false) {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}" class="tick" text-anchor="middle">*<title>rests on fewer than 10 samples beyond it</title></text>"#,
                    x + (bar - 2.0) / 2.0,
                    (top - 3.0).max(TOP)
                );
            }
            if let Some((lo, hi)) = b.whiskers.as_ref().and_then(|w| w.get(c)) {
                let mid = x + (bar - 2.0) / 2.0;
                let ylo = TOP + plot_height() * (1.0 - ys.fraction(*lo));
                let yhi = TOP + plot_height() * (1.0 - ys.fraction(*hi));
                let _ = write!(
                    out,
                    r##"<path class="whisker" d="M{mid:.1},{ylo:.1} L{mid:.1},{yhi:.1} M{:.1},{ylo:.1} L{:.1},{ylo:.1} M{:.1},{yhi:.1} L{:.1},{yhi:.1}" stroke="#333" stroke-width="1.2"/>"##,
                    mid - 4.0,
                    mid + 4.0,
                    mid - 4.0,
                    mid + 4.0
                );
            }
        }
    }
    level(&mut out, &ys, y);
    x_label(&mut out, x_axis);
    out.push_str("</svg>");
    Figure {
        title: title.into(),
        svg: out,
        legend: bars.iter().map(|b| b.name.clone()).collect(),
        table: bars_table(x_axis, categories, y, bars),
    }
}

/// One row per bar: its series, its category and its value, and the whisker's ends
/// when the chart has whiskers.
fn bars_table(x_axis: &str, categories: &[String], y: &Axis, bars: &[Bars]) -> Table {
    let whiskers = bars.iter().any(|b| b.whiskers.is_some());
    let mut columns = vec!["series", x_axis, &y.label];
    if whiskers {
        columns.extend(["whisker low", "whisker high"]);
    }
    let mut table = Table::new(&columns);
    for b in bars {
        for (c, category) in categories.iter().enumerate() {
            let Some(&v) = b.values.get(c) else { continue };
            let mut row = vec![b.name.clone(), category.clone(), cell(v)];
            if whiskers {
                let (lo, hi) = b
                    .whiskers
                    .as_ref()
                    .and_then(|w| w.get(c))
                    .copied()
                    .unwrap_or((f64::NAN, f64::NAN));
                row.extend([cell(lo), cell(hi)]);
            }
            table.rows.push(row);
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers_read_well() {
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(12.0), "12");
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(2_000_000.0), "2M");
    }

    #[test]
    fn a_line_chart_draws_one_path_per_series() {
        let series = vec![
            Series {
                name: "p50".into(),
                points: vec![(0.0, 10.0), (1.0, 20.0)],
            },
            Series {
                name: "p99".into(),
                points: vec![(0.0, 100.0), (1.0, 300.0)],
            },
        ];
        let svg = line_chart(
            "t",
            &Axis::linear("time (s)"),
            &Axis::log("latency (µs)"),
            &series,
        );
        assert_eq!(svg.svg.matches(r#"class="series""#).count(), 2);
        assert!(svg.svg.contains("latency (µs, log scale)") && svg.svg.contains("time (s)"));
        assert_eq!(svg.table.columns, ["series", "time (s)", "latency (µs)"]);
        assert_eq!(svg.table.rows.len(), 4, "one row per point");
    }

    #[test]
    fn category_names_too_long_for_their_group_are_cut_to_fit() {
        let cats: Vec<String> = (0..8)
            .map(|i| format!("a category name far too long to fit #{i}"))
            .collect();
        let bars = vec![Bars {
            name: "mean".into(),
            values: vec![1.0; 8],
            whiskers: None,
            marked: Vec::new(),
        }];
        let figure = bar_chart("t", "name", &cats, &Axis::linear("µs"), &bars);
        // 8 groups in 758 px: 94 px each, room for 13 characters.
        assert!(
            figure
                .svg
                .contains(">a category n…<title>a category name far too long to fit #0</title>")
        );
        assert_eq!(
            figure.table.rows[0][1], cats[0],
            "the table keeps the whole name"
        );
        assert_eq!(fitted("short", 100.0), "short");
    }

    #[test]
    fn a_bar_chart_draws_every_bar_and_whisker() {
        let bars = vec![Bars {
            name: "mean".into(),
            values: vec![1.0, 2.0, 3.0],
            whiskers: Some(vec![(0.5, 1.5); 3]),
            marked: Vec::new(),
        }];
        let cats: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let svg = bar_chart("t", "letter", &cats, &Axis::linear("µs"), &bars);
        assert_eq!(svg.svg.matches(r#"class="bar""#).count(), 3);
        assert_eq!(svg.svg.matches(r#"class="whisker""#).count(), 3);
        assert_eq!(
            svg.table.rows[0],
            ["mean", "a", "1", "0.5", "1.5"],
            "one row per bar, with its whisker"
        );
    }
}
