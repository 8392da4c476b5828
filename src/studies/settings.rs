//! A cell's settings as a study file writes them, layered (the study's, the
//! candidate's, the group's, an axis value's) and said as the words a command takes:
//! numbers scaled by `--scale`, `{key}` filled from the cell's other settings.

use indexmap::IndexMap;
use serde::Deserialize;
use toml::Value;

/// Settings by name, in the order the file gives them: a table nested in one
/// (`db = { rf = 3 }`) by dotted names (`db.rf`). A setting written
/// `{ scaled = N, at_least = F }` is scaled by the study's `--scale`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(from = "toml::Table")]
pub struct Settings(IndexMap<String, Value>);

impl From<toml::Table> for Settings {
    fn from(table: toml::Table) -> Settings {
        let mut settings = Settings::default();
        settings.flatten("", table);
        settings
    }
}

impl Settings {
    fn flatten(&mut self, prefix: &str, table: toml::Table) {
        for (key, value) in table {
            let name = format!("{prefix}{key}");
            match value {
                Value::Table(inner) if !inner.contains_key(SCALED) => {
                    self.flatten(&format!("{name}."), inner)
                }
                value => {
                    self.0.insert(name, value);
                }
            }
        }
    }

    /// These settings with `over`'s laid on top: a setting both give keeps its place
    /// and takes `over`'s value.
    pub fn with(&self, over: &Settings) -> Settings {
        let mut laid = self.clone();
        for (key, value) in &over.0 {
            laid.0.insert(key.clone(), value.clone());
        }
        laid
    }

    /// The settings' names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    /// Every setting said as words at `scale`, `{key}` filled from the others and from
    /// `fixed` (the candidate's name, the repeat).
    pub fn said(&self, scale: f64, fixed: &[(&str, String)]) -> Result<Said, String> {
        let mut plain = IndexMap::new();
        for (key, value) in &self.0 {
            plain.insert(key.clone(), word(key, value, scale)?);
        }
        let mut said = IndexMap::new();
        for (key, value) in &plain {
            let value = match value {
                Word::Text(text) => Word::Text(fill(text, &plain, fixed, 0)?),
                switch => switch.clone(),
            };
            said.insert(key.clone(), value);
        }
        Ok(Said(said))
    }
}

/// The marker of a scaled number.
const SCALED: &str = "scaled";

/// A setting as words.
#[derive(Debug, Clone, PartialEq)]
pub enum Word {
    Text(String),
    /// `true` or `false`: a flag given bare or left out; a store or server setting's
    /// `true` or `false`.
    Switch(bool),
}

impl Word {
    /// As a URL's query or a server's setting writes it.
    pub fn text(&self) -> String {
        match self {
            Word::Text(text) => text.clone(),
            Word::Switch(on) => on.to_string(),
        }
    }
}

/// A cell's settings as words, in the file's order.
#[derive(Debug, Clone)]
pub struct Said(pub IndexMap<String, Word>);

impl Said {
    /// The setting `key` as words, if given.
    pub fn text(&self, key: &str) -> Option<String> {
        self.0.get(key).map(Word::text)
    }

    /// The setting `key` unless it is missing or `false` (left out).
    pub fn given(&self, key: &str) -> Option<String> {
        match self.0.get(key)? {
            Word::Switch(false) => None,
            word => Some(word.text()),
        }
    }

    /// `text` with each `{key}` said as this setting (or a fixed word) says it.
    pub fn fill(&self, text: &str, fixed: &[(&str, String)]) -> Result<String, String> {
        fill(text, &self.0, fixed, 0)
    }
}

/// One setting's value as words: a scaled number scaled, a table refused.
fn word(key: &str, value: &Value, scale: f64) -> Result<Word, String> {
    Ok(match value {
        Value::String(text) => Word::Text(text.clone()),
        Value::Integer(n) => Word::Text(n.to_string()),
        Value::Float(x) => Word::Text(x.to_string()),
        Value::Boolean(on) => Word::Switch(*on),
        Value::Table(table) => Word::Text(scaled_number(key, table, scale)?),
        Value::Array(_) | Value::Datetime(_) => {
            return Err(format!(
                "setting '{key}': give a string, a number, true or false, or \
                 {{ scaled = N, at_least = M }}"
            ));
        }
    })
}

/// `{ scaled = 200000, at_least = 1000, unit = "ms" }` at `scale`.
fn scaled_number(key: &str, table: &toml::Table, scale: f64) -> Result<String, String> {
    let number = |name: &str| match table.get(name) {
        None => Ok(None),
        Some(Value::Integer(n)) if *n >= 0 => Ok(Some(*n as u64)),
        Some(_) => Err(format!("setting '{key}': {name} must be a whole number")),
    };
    let full = number(SCALED)?.ok_or_else(|| format!("setting '{key}': no `scaled`"))?;
    let floor = number("at_least")?.unwrap_or(1);
    let unit = match table.get("unit") {
        None => "",
        Some(Value::String(unit)) => unit.as_str(),
        Some(_) => return Err(format!("setting '{key}': unit must be a string")),
    };
    if let Some(other) = table
        .keys()
        .find(|k| ![SCALED, "at_least", "unit"].contains(&k.as_str()))
    {
        return Err(format!(
            "setting '{key}': a scaled number takes scaled, at_least and unit, not '{other}'"
        ));
    }
    Ok(format!("{}{unit}", scaled(full, scale, floor)))
}

/// `n` scaled down, never below `floor` (nor above `n`).
fn scaled(n: u64, scale: f64, floor: u64) -> u64 {
    ((n as f64 * scale).round() as u64).max(floor.min(n))
}

/// `text` with each `{key}` said as that setting (or fixed word) says it.
fn fill(
    text: &str,
    plain: &IndexMap<String, Word>,
    fixed: &[(&str, String)],
    depth: usize,
) -> Result<String, String> {
    if depth > 8 {
        return Err(format!("'{text}': its {{…}} name one another in a ring"));
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("'{text}': a {{ without its }}"));
        };
        let name = &rest[open + 1..open + close];
        let value = match fixed.iter().find(|(key, _)| *key == name) {
            Some((_, value)) => value.clone(),
            None => match plain.get(name) {
                Some(Word::Text(inner)) => fill(inner, plain, fixed, depth + 1)?,
                Some(switch) => switch.text(),
                None => {
                    let names = plain
                        .keys()
                        .map(String::as_str)
                        .chain(fixed.iter().map(|f| f.0));
                    return Err(format!(
                        "'{text}': no setting named '{name}'{}",
                        crate::suggest::did_you_mean(name, names)
                    ));
                }
            },
        };
        out.push_str(&value);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> Settings {
        toml::from_str::<toml::Table>(text).unwrap().into()
    }

    #[test]
    fn nested_tables_are_dotted_and_scaled_numbers_scale_to_their_floor() {
        let said = settings(
            "events = { scaled = 200000, at_least = 1000 }\ndb = { rf = 3, lwt = false }\n\
             every = { scaled = 10000, at_least = 2000, unit = \"ms\" }",
        )
        .said(0.05, &[])
        .unwrap();
        assert_eq!(said.text("events").unwrap(), "10000");
        assert_eq!(said.text("db.rf").unwrap(), "3");
        assert_eq!(said.text("db.lwt").unwrap(), "false");
        assert_eq!(said.text("every").unwrap(), "2000ms");
    }

    #[test]
    fn a_later_layer_keeps_the_place_and_takes_the_value() {
        let laid = settings("a = 1\nb = 2").with(&settings("a = 3\nc = 4"));
        let said = laid.said(1.0, &[]).unwrap();
        let keys: Vec<&String> = said.0.keys().collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(said.text("a").unwrap(), "3");
    }

    #[test]
    fn names_in_braces_are_filled_and_an_unknown_one_is_refused_with_a_suggestion() {
        let said = settings("events = 500\nrecords = \"{events}\"\nid = \"x-{candidate}\"")
            .said(1.0, &[("candidate", "pg".into())])
            .unwrap();
        assert_eq!(said.text("records").unwrap(), "500");
        assert_eq!(said.text("id").unwrap(), "x-pg");
        let error = settings("events = 5\nrecords = \"{event}\"")
            .said(1.0, &[])
            .unwrap_err();
        assert!(error.contains("did you mean 'events'"), "{error}");
        let ring = settings("a = \"{b}\"\nb = \"{a}\"")
            .said(1.0, &[])
            .unwrap_err();
        assert!(ring.contains("ring"), "{ring}");
    }
}
