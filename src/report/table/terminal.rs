//! A table for the terminal: each column as wide as its widest cell or header, a rule
//! under the header and between sections.

use std::fmt::Write;

use super::{Align, Form, Table};

/// The table's lines, each ending with a newline.
pub fn terminal(table: &Table) -> String {
    let columns: Vec<_> = table.shown(Form::Terminal).collect();
    let sections: Vec<_> = table.sections_in(Form::Terminal).collect();
    let widths: Vec<usize> = columns
        .iter()
        .map(|(i, column)| {
            sections
                .iter()
                .flat_map(|section| &section.rows)
                .map(|row| width(&row[*i].text))
                .chain([width(&column.title)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |texts: Vec<&str>| {
        let mut out = String::new();
        for ((text, (_, column)), &width) in texts.into_iter().zip(&columns).zip(&widths) {
            if !out.is_empty() {
                out.push(' ');
            }
            let pad = " ".repeat(width - self::width(text));
            match column.align {
                Align::Left => out.extend([text, &pad]),
                Align::Right => out.extend([&pad, text]),
            }
        }
        out.trim_end().to_string()
    };
    let header = line(columns.iter().map(|(_, c)| c.title.as_str()).collect());
    // As long as the header: a column of words at the end may run on past it.
    let rule = "-".repeat(width(&header));
    let mut out = String::new();
    let _ = writeln!(out, "{header}");
    for section in sections {
        let _ = writeln!(out, "{rule}");
        if let Some(caption) = &section.caption {
            let _ = writeln!(out, "{caption}");
        }
        for row in &section.rows {
            let texts = columns.iter().map(|(i, _)| row[*i].text.as_str()).collect();
            let _ = writeln!(out, "{}", line(texts));
        }
    }
    out
}

/// Characters as the terminal shows them (`µ` is one).
fn width(text: &str) -> usize {
    text.chars().count()
}
