//! The table model drawn in each form: the same table, sized, escaped and quoted as each
//! form needs.

use super::*;

/// Two sections, a column for CSV alone and a section for the terminal alone.
fn sample() -> Table {
    let mut table = Table::new(vec![
        Column::text("event", "event_type"),
        Column::number("count", None, "count"),
        Column::number("p99", Some("µs"), "p99_us"),
        Column::text("thin", "thin_percentiles").only(&[Form::Csv]),
    ]);
    let row = |event: &str, count: u64, p99: f64, thin: &str| {
        vec![
            Cell::text(event),
            Cell::count(count),
            Cell::shown_as(
                format!("{p99:.1}{}", if thin.is_empty() { "" } else { "*" }),
                Value::Number(p99, 3),
            ),
            Cell::text(thin),
        ]
    };
    table.section(vec![
        row("create_order", 12_345, 1234.5678, ""),
        row("read", 7, 2.0, "p99"),
    ]);
    table.section(vec![row("all", 12_352, 1200.0, "")]);
    table
        .section(vec![row("node 1", 12_352, 1200.0, "")])
        .terminal_only = true;
    table
}

#[test]
fn the_terminal_sizes_each_column_to_its_content() {
    let text = terminal(&sample());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "event         count    p99");
    assert_eq!(lines[1], "-".repeat(lines[2].chars().count()));
    assert_eq!(lines[2], "create_order 12,345 1234.6");
    assert_eq!(lines[3], "read              7   2.0*");
    assert_eq!(lines[4], lines[1]);
    assert_eq!(lines[5], "all          12,352 1200.0");
    assert_eq!(lines[7], "node 1       12,352 1200.0");
    assert_eq!(lines.len(), 8, "{text}");
}

#[test]
fn markdown_carries_units_in_headers_and_keeps_marks_as_text() {
    let text = markdown(&sample());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "| event | count | p99 µs |");
    assert_eq!(lines[1], "|---|---:|---:|");
    assert_eq!(lines[3], "| read | 7 | 2.0\\* |");
    assert_eq!(
        lines.len(),
        5,
        "the terminal's own section stays out: {text}"
    );
}

#[test]
fn json_carries_the_csv_rows_as_typed_values() {
    let rows: serde_json::Value = serde_json::from_str(&json(&sample())).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(
        rows.len(),
        3,
        "the terminal's own section stays out: {rows:?}"
    );
    assert_eq!(
        rows[1],
        serde_json::json!({"event_type": "read", "count": 7, "p99_us": 2.0, "thin_percentiles": "p99"})
    );
    let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["event_type", "count", "p99_us", "thin_percentiles"]);
}

#[test]
fn csv_carries_values_as_data() {
    let mut table = sample();
    table.section(vec![vec![
        Cell::text("a, \"quoted\" name"),
        Cell::shown_as("-", Value::None),
        Cell::shown_as("-", Value::Number(f64::NAN, 3)),
        Cell::text(""),
    ]]);
    assert_eq!(
        csv(&table),
        "event_type,count,p99_us,thin_percentiles\n\
         create_order,12345,1234.568,\n\
         read,7,2.000,p99\n\
         all,12352,1200.000,\n\
         \"a, \"\"quoted\"\" name\",,,\n"
    );
}

#[test]
fn a_page_gets_each_number_as_data_its_marks_explained_and_its_total_set_apart() {
    let mut table = sample();
    table.sections[0].rows[1][2] = table.sections[0].rows[1][2].clone().noted("few <samples>");
    table.sections[1].total = true;
    table.sections[0].rows[0][0] = Cell::text("a\"<b>");
    let page = html(&table, "latency");
    assert!(page.starts_with(
        r#"<table id="latency"><tr><th style="text-align:left">event</th><th>count</th><th>p99</th></tr>"#
    ));
    assert!(page.contains(
        r#"<tr data-row="a&quot;&lt;b&gt;"><td data-field="event_type" style="text-align:left">a&quot;&lt;b&gt;</td><td data-field="count" data-value="12345">12,345</td><td data-field="p99_us" data-value="1234.568">1234.6</td></tr>"#
    ), "{page}");
    assert!(page.contains(
        r#"<td data-field="p99_us" data-value="2.000" class="noted" title="few &lt;samples&gt;">2.0*</td>"#
    ), "{page}");
    assert!(
        page.contains(r#"<tr data-row="all" class="total">"#),
        "{page}"
    );
    // The CSV's own column and the terminal's own section stay off the page.
    assert!(
        !page.contains("thin_percentiles") && !page.contains("node 1"),
        "{page}"
    );
}

/// A linked cell leads somewhere on a page; elsewhere it is its text.
#[test]
fn a_linked_cell_is_a_link_on_a_page_and_its_text_elsewhere() {
    let mut table = sample();
    table.sections[0].rows[1][0] = Cell::text("read").linked("runs/a \"b\"/report.html");
    let page = html(&table, "latency");
    assert!(
        page.contains(r#"<a href="runs/a &quot;b&quot;/report.html">read</a></td>"#),
        "{page}"
    );
    assert!(csv(&table).contains("\nread,7,"), "{}", csv(&table));
    assert!(!terminal(&table).contains("href"));
}
