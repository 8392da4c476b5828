//! Store settings: each store declares the settings it takes (name, what value, default,
//! help); values come from `?key=value` in the URL and from command-line flags (flags
//! win). Values are checked here, against the declarations, before anything connects,
//! so a store reads them already valid.

use std::collections::BTreeMap;

/// What a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// A whole number of at least `min`.
    Count { min: u64 },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// `true` or `false`; as a flag it takes no value.
    Switch,
    /// Free text, checked by the store; the placeholder names it in help.
    Text(&'static str),
}

/// Settings given a new name, old → new: the old one is still read, from a URL, a flag
/// or a sweep, for scripts written before.
pub const RENAMED: &[(&str, &str)] = &[("pool", "connections")];

/// A setting's name as the stores declare it today.
pub fn current_name(name: &str) -> &str {
    RENAMED
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new)
}

/// One setting a store takes.
#[derive(Debug, Clone, Copy)]
pub struct Setting {
    /// The URL key; the flag is `--` and the name with `_` as `-`.
    pub name: &'static str,
    pub value: Value,
    /// Used when the setting is not given ("" when there is none).
    pub default: &'static str,
    pub help: &'static str,
}

impl Setting {
    /// The flag that gives the setting (`kv_table` → `--kv-table`).
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }

    /// Checks one given value; the message names the setting.
    fn check(&self, scheme: &str, value: &str) -> Result<(), String> {
        let bad = |expected: String| {
            Err(format!(
                "{scheme} setting {}={value}: expected {expected}",
                self.name
            ))
        };
        match self.value {
            Value::Count { min } => match value.parse::<u64>() {
                Ok(n) if n >= min => Ok(()),
                Ok(_) => bad(format!("at least {min}")),
                Err(_) => bad(format!("a whole number of at least {min}")),
            },
            Value::Choice(words) => {
                if words.iter().any(|w| w.eq_ignore_ascii_case(value)) {
                    Ok(())
                } else {
                    bad(format!("one of {}", words.join(", ")))
                }
            }
            Value::Switch => match value {
                "true" | "false" => Ok(()),
                _ => bad("true or false".into()),
            },
            Value::Text(_) => Ok(()),
        }
    }
}

/// The settings of one run against one store, checked against its declarations.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    declared: &'static [Setting],
    values: BTreeMap<String, String>,
}

impl Settings {
    /// `given` (URL settings with flags applied) checked against `declared`: every key
    /// must be declared and every value fit.
    pub fn checked(
        scheme: &str,
        declared: &'static [Setting],
        given: BTreeMap<String, String>,
    ) -> Result<Settings, String> {
        let given: BTreeMap<String, String> = given
            .into_iter()
            .map(|(key, value)| (current_name(&key).to_string(), value))
            .collect();
        for (key, value) in &given {
            let Some(setting) = declared.iter().find(|s| s.name == key) else {
                let known: Vec<&str> = declared.iter().map(|s| s.name).collect();
                return Err(format!(
                    "unknown setting '{key}'{} for {scheme}:// (it takes: {})",
                    crate::suggest::did_you_mean(key, known.iter().copied()),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            };
            setting.check(scheme, value)?;
        }
        Ok(Settings {
            declared,
            values: given,
        })
    }

    /// The settings as given (not the defaults), for run.json.
    pub fn given(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    fn declared(&self, name: &str) -> &Setting {
        self.declared
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("the store reads setting '{name}' but does not declare it"))
    }

    /// The value given, else the declared default ("" when there is none).
    pub fn text(&self, name: &str) -> &str {
        let setting = self.declared(name);
        self.values
            .get(name)
            .map_or(setting.default, String::as_str)
    }

    /// The value given, if it was given.
    pub fn given_text(&self, name: &str) -> Option<&str> {
        self.declared(name);
        self.values.get(name).map(String::as_str)
    }

    /// A `Count` setting (checked already).
    pub fn count(&self, name: &str) -> u64 {
        self.text(name).parse().unwrap_or(0)
    }

    /// A `Switch` setting.
    pub fn switch(&self, name: &str) -> bool {
        self.text(name) == "true"
    }

    /// A `Choice` setting, as declared (its case), so stores can match on it.
    pub fn choice(&self, name: &str) -> &'static str {
        let setting = self.declared(name);
        let value = self.text(name);
        match setting.value {
            Value::Choice(words) => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(value))
                .copied()
                .unwrap_or(words[0]),
            _ => panic!("setting '{name}' is not a choice"),
        }
    }
}

/// Settings a unit test gives: `pairs` checked against `own` and the TLS files every
/// store with TLS declares.
#[cfg(test)]
pub fn given_with_tls_files(scheme: &str, own: &[Setting], pairs: &[(&str, &str)]) -> Settings {
    let declared = Vec::leak([own, &crate::db::tls::FILE_SETTINGS].concat());
    let given = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::checked(scheme, declared, given).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECLARED: &[Setting] = &[
        Setting {
            name: "connections",
            value: Value::Count { min: 1 },
            default: "4",
            help: "connections",
        },
        Setting {
            name: "batch",
            value: Value::Choice(&["logged", "unlogged", "none"]),
            default: "logged",
            help: "how",
        },
        Setting {
            name: "lwt",
            value: Value::Switch,
            default: "false",
            help: "if exists",
        },
    ];

    fn given(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn values_are_checked_against_declarations() {
        // `pool` is read as its new name.
        let s =
            Settings::checked("x", DECLARED, given(&[("pool", "8"), ("batch", "NONE")])).unwrap();
        assert_eq!(s.count("connections"), 8);
        assert_eq!(s.choice("batch"), "none");
        assert!(!s.switch("lwt"));
        let err = Settings::checked("x", DECLARED, given(&[("connections", "0")])).unwrap_err();
        assert_eq!(err, "x setting connections=0: expected at least 1");
        let err = Settings::checked("x", DECLARED, given(&[("batch", "some")])).unwrap_err();
        assert!(err.contains("one of logged, unlogged, none"), "{err}");
        let err = Settings::checked("x", DECLARED, given(&[("rf", "2")])).unwrap_err();
        assert_eq!(
            err,
            "unknown setting 'rf' for x:// (it takes: connections, batch, lwt)"
        );
    }

    #[test]
    fn defaults_fill_what_was_not_given() {
        let s = Settings::checked("x", DECLARED, BTreeMap::new()).unwrap();
        assert_eq!(s.count("connections"), 4);
        assert_eq!(s.choice("batch"), "logged");
        assert!(s.given().is_empty());
    }
}
