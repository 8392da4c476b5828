//! The settings a sweep varies, in step: `--vary` read into the values of each step.

use anyhow::{Result, bail};

use crate::cli::Vary;

/// The settings that vary, in step: `values[step][key]`.
#[derive(Debug, PartialEq)]
pub(super) struct Steps {
    pub(super) keys: Vec<String>,
    pub(super) values: Vec<Vec<String>>,
}

impl Steps {
    /// One `--vary` or more; several keys must have as many values.
    pub(super) fn parse(varies: &[Vary]) -> Result<Steps> {
        let mut keys: Vec<String> = Vec::new();
        let mut columns: Vec<Vec<String>> = Vec::new();
        for Vary { key, values } in varies {
            if keys.contains(key) {
                bail!("--vary {key} is given twice");
            }
            if let Some(first) = columns.first()
                && first.len() != values.len()
            {
                bail!(
                    "--vary {key} has {} values but --vary {} has {}: several --vary move in step",
                    values.len(),
                    keys[0],
                    first.len()
                );
            }
            keys.push(key.clone());
            columns.push(values.clone());
        }
        let steps = columns.first().map_or(0, Vec::len);
        let values: Vec<Vec<String>> = (0..steps)
            .map(|step| columns.iter().map(|c| c[step].clone()).collect())
            .collect();
        // Each step is a folder of its own: the same step twice is a repeat.
        if let Some(twice) = (1..values.len()).find(|&i| values[..i].contains(&values[i])) {
            let said: Vec<String> = keys
                .iter()
                .zip(&values[twice])
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            crate::cli::usage_bail!(
                "--vary gives {} twice: a step runs once, and --repeat N runs each N times",
                said.join(" ")
            );
        }
        Ok(Steps { keys, values })
    }

    pub(super) fn nodes(&self, step: usize) -> Option<&str> {
        let at = self.keys.iter().position(|k| k == "nodes")?;
        Some(&self.values[step][at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vary(key: &str, values: &[&str]) -> Vary {
        Vary {
            key: key.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn a_step_given_twice_is_refused_as_a_repeat() {
        let error = Steps::parse(&[vary("concurrency", &["2", "2"])])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--vary gives concurrency=2 twice"),
            "{error}"
        );
        // In step, a value may come again where its partner differs.
        Steps::parse(&[vary("nodes", &["1", "2"]), vary("rf", &["1", "1"])]).unwrap();
    }

    #[test]
    fn several_varies_move_in_step() {
        let steps = Steps::parse(&[
            vary("nodes", &["1", "2", "3"]),
            vary("rf", &["1", "2", "3"]),
        ])
        .unwrap();
        assert_eq!(steps.keys, ["nodes", "rf"]);
        assert_eq!(steps.values[1], ["2", "2"]);
        assert_eq!(steps.nodes(2), Some("3"));
        let error =
            Steps::parse(&[vary("nodes", &["1", "2"]), vary("rf", &["1", "2", "3"])]).unwrap_err();
        assert!(error.to_string().contains("move in step"), "{error}");
        assert!(Steps::parse(&[vary("rf", &["1"]), vary("rf", &["2"])]).is_err());
    }
}
