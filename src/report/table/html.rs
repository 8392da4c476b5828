//! A table in HTML, for a page: each cell tagged with its column's key and, for a
//! number, its value as data (`data-field`, `data-value`), which the page's readers and
//! the tests take instead of parsing the separators people read.

use std::fmt::Write;

use super::{Align, Form, Table, Value};
use crate::report::svg::escape;

/// The `<table>` element, its id `id`: a header row, then each section's rows, a
/// section of totals set apart (bold, under a rule), a linked cell's text a link.
pub fn html(table: &Table, id: &str) -> String {
    let columns: Vec<_> = table.shown(Form::Html).collect();
    let mut out = format!(r#"<table id="{}"><tr>"#, escape(id));
    for (_, column) in &columns {
        let _ = write!(
            out,
            "<th{}>{}</th>",
            align(column.align),
            escape(&column.title)
        );
    }
    out.push_str("</tr>");
    for section in table.sections_in(Form::Html) {
        for row in &section.rows {
            let key = match &row[0].value {
                Value::Text(text) => text.as_str(),
                _ => row[0].text.as_str(),
            };
            let total = if section.total {
                r#" class="total""#
            } else {
                ""
            };
            let _ = write!(out, r#"<tr data-row="{}"{total}>"#, escape(key));
            for (i, column) in &columns {
                let cell = &row[*i];
                let _ = write!(out, r#"<td data-field="{}""#, escape(&column.key));
                // A number as the CSV holds it; a blank one (none, not finite) has none.
                if let Value::Count(_) | Value::Number(..) = cell.value {
                    let value = super::csv::field(&cell.value);
                    if !value.is_empty() {
                        let _ = write!(out, r#" data-value="{value}""#);
                    }
                }
                if let Some(note) = cell.note {
                    let _ = write!(out, r#" class="noted" title="{}""#, escape(note));
                }
                let text = match column.align {
                    // A range of numbers (`1,200–1,300`) breaks before or after, not at its
                    // dash: U+2060 joins the dash to what follows.
                    Align::Right => escape(&cell.text).replace('–', "–\u{2060}"),
                    Align::Left => escape(&cell.text),
                };
                let text = match &cell.link {
                    Some(href) => format!(r#"<a href="{}">{text}</a>"#, escape(href)),
                    None => text,
                };
                let _ = write!(out, "{}>{text}</td>", align(column.align));
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</table>");
    out
}

/// A left-aligned column's style (the page's cells lean right, but for the first).
fn align(align: Align) -> &'static str {
    match align {
        Align::Left => r#" style="text-align:left""#,
        Align::Right => "",
    }
}
