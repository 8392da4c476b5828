//! A table as CSV, for a spreadsheet or a dataframe: each cell's value as data (no
//! separators, empty where there is none), every row of every section but those the
//! terminal alone shows.

use super::{Form, Table, Value};

/// The header and the rows, each line ending with a newline.
pub fn csv(table: &Table) -> String {
    let columns: Vec<_> = table.shown(Form::Csv).collect();
    let header: Vec<&str> = columns.iter().map(|(_, c)| c.key.as_str()).collect();
    let mut out = header.join(",");
    out.push('\n');
    for row in table.sections_in(Form::Csv).flat_map(|s| &s.rows) {
        let fields: Vec<String> = columns.iter().map(|(i, _)| field(&row[*i].value)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted where it holds a comma, a quote or a line break.
pub(super) fn field(value: &Value) -> String {
    match value {
        Value::None => String::new(),
        Value::Count(n) => n.to_string(),
        Value::Number(x, _) if !x.is_finite() => String::new(),
        Value::Number(x, decimals) => format!("{x:.decimals$}"),
        Value::Text(text) if text.contains([',', '"', '\n', '\r']) => {
            format!("\"{}\"", text.replace('"', "\"\""))
        }
        Value::Text(text) => text.clone(),
    }
}
