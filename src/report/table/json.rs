//! A table as JSON, for a script: an array of rows, each an object keyed by the CSV
//! headers, numbers as numbers and an empty cell as null; the rows CSV has.

use serde_json::{Map, Value as Json};

use super::{Form, Table, Value};

/// The rows as a JSON array, pretty-printed, ending with a newline.
pub fn json(table: &Table) -> String {
    let columns: Vec<_> = table.shown(Form::Csv).collect();
    let rows: Vec<Json> = table
        .sections_in(Form::Csv)
        .flat_map(|section| &section.rows)
        .map(|row| {
            let fields: Map<String, Json> = columns
                .iter()
                .map(|(i, column)| (column.key.clone(), value(&row[*i].value)))
                .collect();
            Json::Object(fields)
        })
        .collect();
    let mut out = serde_json::to_string_pretty(&rows).expect("JSON of plain values");
    out.push('\n');
    out
}

/// A cell's value in JSON: a number stays one (none where it is not finite).
fn value(value: &Value) -> Json {
    match value {
        Value::None => Json::Null,
        Value::Count(n) => Json::from(*n),
        Value::Number(x, _) => serde_json::Number::from_f64(*x).map_or(Json::Null, Json::Number),
        Value::Text(text) => Json::from(text.as_str()),
    }
}
