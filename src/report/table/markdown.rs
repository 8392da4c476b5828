//! A table in Markdown, for a pull request or a wiki: the unit in each header, numbers
//! aligned right, and `|` and `*` in a cell kept as text.

use std::fmt::Write;

use super::{Align, Form, Table};

/// The table's lines, each ending with a newline.
pub fn markdown(table: &Table) -> String {
    let columns: Vec<_> = table.shown(Form::Markdown).collect();
    let mut out = String::from("|");
    for (_, column) in &columns {
        match column.unit {
            Some(unit) => write!(out, " {} {unit} |", column.title),
            None => write!(out, " {} |", column.title),
        }
        .expect("writing to a String");
    }
    out.push_str("\n|");
    for (_, column) in &columns {
        out.push_str(match column.align {
            Align::Left => "---|",
            Align::Right => "---:|",
        });
    }
    out.push('\n');
    for row in table
        .sections_in(Form::Markdown)
        .flat_map(|section| &section.rows)
    {
        out.push('|');
        for (i, _) in &columns {
            let _ = write!(out, " {} |", escape(&row[*i].text));
        }
        out.push('\n');
    }
    out
}

/// Text that Markdown shows as written.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('*', "\\*")
}
