//! One model for the tables hatshop prints, exports and puts on its pages (a run's, a
//! comparison's, a repeat's) and a renderer per form, as hyperfine has one exporter per
//! format: the terminal's, whose columns are as wide as their content; Markdown's, for
//! a pull request; CSV's and JSON's, plain numbers for a script; HTML's, for a page. A
//! builder says each cell once, as people read it and as data.

mod csv;
mod html;
mod json;
mod markdown;
mod terminal;

pub use csv::csv;
pub use html::html;
pub use json::json;
pub use markdown::markdown;
pub use terminal::terminal;

/// Where a table goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Terminal,
    Markdown,
    /// CSV, and JSON, which carries the same columns and rows.
    Csv,
    /// A page's table.
    Html,
}

/// Which side a column's cells lean to in the forms people read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A column: its header in each form, and the forms that show it.
#[derive(Debug, Clone)]
pub struct Column {
    /// As people read it (`p99`).
    pub title: String,
    /// Its unit (`µs`): Markdown puts it in the header, the terminal in a note below.
    pub unit: Option<&'static str>,
    /// Its CSV header (`p99_us`).
    pub key: String,
    pub align: Align,
    forms: &'static [Form],
}

/// Every form.
const EVERY_FORM: &[Form] = &[Form::Terminal, Form::Markdown, Form::Csv, Form::Html];

impl Column {
    /// A column of numbers, right-aligned, in every form; `key` is its CSV header.
    pub fn number(title: &str, unit: Option<&'static str>, key: &str) -> Column {
        Column {
            title: title.into(),
            unit,
            key: key.into(),
            align: Align::Right,
            forms: EVERY_FORM,
        }
    }

    /// A column of words, left-aligned, in every form.
    pub fn text(title: &str, key: &str) -> Column {
        Column {
            align: Align::Left,
            ..Column::number(title, None, key)
        }
    }

    /// The same column, shown only in `forms`.
    pub fn only(self, forms: &'static [Form]) -> Column {
        Column { forms, ..self }
    }

    /// Whether `form` shows it.
    pub fn shows_in(&self, form: Form) -> bool {
        self.forms.contains(&form)
    }
}

/// A cell's value as data (CSV), beside its text for people.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An empty CSV field.
    None,
    Count(u64),
    /// A number to so many decimals.
    Number(f64, usize),
    Text(String),
}

/// One cell: as people read it (separators, `-`, a `*` mark) and as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub text: String,
    pub value: Value,
    /// What a mark in the text means, where a page can say it (a tooltip).
    pub note: Option<&'static str>,
    /// Where the text leads on a page (a run's own report); the other forms show the
    /// text alone.
    pub link: Option<String>,
}

impl Cell {
    /// Words, the same for people and for data.
    pub fn text(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell {
            value: Value::Text(text.clone()),
            text,
            note: None,
            link: None,
        }
    }

    /// A count, with thousands separated for people.
    pub fn count(n: u64) -> Cell {
        Cell {
            text: crate::numbers::thousands(n),
            value: Value::Count(n),
            note: None,
            link: None,
        }
    }

    /// `text` for people, `value` as data.
    pub fn shown_as(text: impl Into<String>, value: Value) -> Cell {
        Cell {
            text: text.into(),
            value,
            note: None,
            link: None,
        }
    }

    /// The same cell, leading to `href` on a page.
    pub fn linked(self, href: impl Into<String>) -> Cell {
        Cell {
            link: Some(href.into()),
            ..self
        }
    }

    /// The same cell, its mark explained by `note` where a page can.
    pub fn noted(self, note: &'static str) -> Cell {
        Cell {
            note: Some(note),
            ..self
        }
    }
}

/// Rows that stand together: the terminal draws a rule between sections.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// A line under the rule before the rows, in the terminal.
    pub caption: Option<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Shown in the terminal alone (a run's rows by node, its response times): the
    /// exports keep to the rows every form has.
    pub terminal_only: bool,
    /// Its rows total the ones above: a page sets them apart (the terminal's rule does).
    pub total: bool,
}

/// A table: its columns and its sections of rows, a cell per column in each row.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub sections: Vec<Section>,
}

impl Table {
    /// A table of `columns` and no rows yet.
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            sections: Vec::new(),
        }
    }

    /// Adds a section of `rows`.
    pub fn section(&mut self, rows: Vec<Vec<Cell>>) -> &mut Section {
        self.sections.push(Section {
            rows,
            ..Section::default()
        });
        self.sections.last_mut().expect("just pushed")
    }

    /// The columns `form` shows, each with its index in a row.
    fn shown(&self, form: Form) -> impl Iterator<Item = (usize, &Column)> {
        self.columns
            .iter()
            .enumerate()
            .filter(move |(_, column)| column.shows_in(form))
    }

    /// The sections `form` shows.
    fn sections_in(&self, form: Form) -> impl Iterator<Item = &Section> {
        self.sections
            .iter()
            .filter(move |section| form == Form::Terminal || !section.terminal_only)
    }
}

#[cfg(test)]
mod tests;
