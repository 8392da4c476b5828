//! A chart with the numbers it was drawn from: what a page shows as a figure and
//! writes beside itself as a CSV (see `page`).

/// A chart and the numbers it shows.
pub struct Figure {
    pub title: String,
    /// The `<svg>` element.
    pub svg: String,
    /// Series names in colour order; drawn as HTML under the chart, where a long name
    /// wraps instead of running off the picture.
    pub legend: Vec<String>,
    pub table: Table,
}

/// Named columns and their rows, as the CSV beside a figure holds them.
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(columns: &[&str]) -> Table {
        Table {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// The table as CSV bytes, header first.
    pub fn csv(&self) -> Vec<u8> {
        let mut out = csv::Writer::from_writer(Vec::new());
        let _ = out.write_record(&self.columns);
        for row in &self.rows {
            let _ = out.write_record(row);
        }
        out.into_inner().expect("a CSV written to memory")
    }
}

/// A number as a CSV cell: to a thousandth (a nanosecond of a latency in µs), and
/// empty where there is none.
pub fn cell(value: f64) -> String {
    if !value.is_finite() {
        return String::new();
    }
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_a_number_to_a_thousandth_or_empty() {
        assert_eq!(cell(60.429455778), "60.429");
        assert_eq!(cell(2.0), "2");
        assert_eq!(cell(-0.0001), "0");
        assert_eq!(cell(f64::NAN), "");
    }
}
