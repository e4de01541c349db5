//! Checked reading of JSON requests (`noc_sweep`, `stream_run`): every field is validated on its
//! own, and an error names the field and what is wrong with its value (`measure must be an
//! integer from 1 to 1000000000 cycles, got 0`). The CLI maps a field name to its option
//! (`--measure`), so the Python API and the CLI give the same message.
use crate::error::{NocError, Result};
use serde_json::{Map, Value};

/// Longest request text accepted (a request embeds an inline graph at most this long).
pub const MAX_REQUEST_BYTES: usize = 64 << 20;

fn field_err<T>(field: &str, msg: String) -> Result<T> {
    Err(NocError::Field {
        field: field.to_string(),
        msg,
    })
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(37).map(|c| c.0).unwrap_or(s.len())]
        )
    } else {
        s
    }
}

/// The fields of one JSON request object.
pub struct Fields {
    obj: Map<String, Value>,
}

impl Fields {
    /// Parse `text` as a JSON object whose keys are all in `allowed`.
    pub fn parse(text: &str, what: &str, allowed: &[&str]) -> Result<Fields> {
        if text.len() > MAX_REQUEST_BYTES {
            return Err(NocError::Request {
                what: what.into(),
                msg: format!(
                    "{} bytes is more than the {MAX_REQUEST_BYTES} accepted",
                    text.len()
                ),
            });
        }
        let v: Value = serde_json::from_str(text).map_err(|e| NocError::Request {
            what: what.into(),
            msg: e.to_string(),
        })?;
        let Value::Object(obj) = v else {
            return Err(NocError::Request {
                what: what.into(),
                msg: "expected a JSON object".into(),
            });
        };
        for k in obj.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(NocError::Request {
                    what: what.into(),
                    msg: format!("unknown field `{k}` (known: {})", allowed.join(", ")),
                });
            }
        }
        Ok(Fields { obj })
    }

    /// Is the field present (and not null)?
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    /// An integer within `min..=max` (`unit` for the message), or `default` when absent.
    pub fn int(&self, key: &str, default: u64, min: u64, max: u64, unit: &str) -> Result<u64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => int_value(key, v, min, max, unit),
        }
    }

    /// An optional integer within `min..=max`.
    pub fn int_opt(&self, key: &str, min: u64, max: u64, unit: &str) -> Result<Option<u64>> {
        self.get(key)
            .map(|v| int_value(key, v, min, max, unit))
            .transpose()
    }

    /// A finite number within `min..=max`, or `default` when absent.
    pub fn num(&self, key: &str, default: f64, min: f64, max: f64, unit: &str) -> Result<f64> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => num_value(key, v, min, max, unit),
        }
    }

    pub fn num_opt(&self, key: &str, min: f64, max: f64, unit: &str) -> Result<Option<f64>> {
        self.get(key)
            .map(|v| num_value(key, v, min, max, unit))
            .transpose()
    }

    /// A list of at most `max_len` finite numbers within `min..=max`.
    pub fn num_list(
        &self,
        key: &str,
        min: f64,
        max: f64,
        max_len: usize,
        unit: &str,
    ) -> Result<Vec<f64>> {
        let Some(v) = self.get(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(a) = v else {
            return field_err(key, format!("must be a list of numbers, got {}", show(v)));
        };
        if a.len() > max_len {
            return field_err(
                key,
                format!("lists {} values; at most {max_len} are accepted", a.len()),
            );
        }
        a.iter()
            .enumerate()
            .map(|(i, x)| num_value(&format!("{key}[{i}]"), x, min, max, unit))
            .collect()
    }

    pub fn string(&self, key: &str, default: &str) -> Result<String> {
        match self.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => field_err(key, format!("must be a string, got {}", show(v))),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<bool> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => field_err(key, format!("must be true or false, got {}", show(v))),
        }
    }

    /// A JSON object (or null/absent: an empty object).
    pub fn object(&self, key: &str) -> Result<Value> {
        match self.get(key) {
            None => Ok(Value::Object(Map::new())),
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            Some(v) => field_err(key, format!("must be an object, got {}", show(v))),
        }
    }
}

fn int_value(key: &str, v: &Value, min: u64, max: u64, unit: &str) -> Result<u64> {
    let range = format!("an integer from {min} to {max}{unit}");
    let got = match v {
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Some(u)
            } else if let Some(f) = n.as_f64() {
                (f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0)
                    .then_some(f as u64)
            } else {
                None
            }
        }
        _ => None,
    };
    match got {
        Some(u) if (min..=max).contains(&u) => Ok(u),
        _ => field_err(key, format!("must be {range}, got {}", show(v))),
    }
}

fn num_value(key: &str, v: &Value, min: f64, max: f64, unit: &str) -> Result<f64> {
    match v.as_f64() {
        Some(f) if f.is_finite() && f >= min && f <= max => Ok(f),
        _ => field_err(
            key,
            format!(
                "must be a finite number from {min} to {max}{unit}, got {}",
                show(v)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_bad_value_names_the_field() {
        let f = Fields::parse(
            r#"{"m":0,"w":-5,"r":[0.1,"NaN"],"s":1.5,"b":"yes","big":1e300}"#,
            "req",
            &["m", "w", "r", "s", "b", "big"],
        )
        .unwrap();
        for (e, needle) in [
            (f.int("m", 1, 1, 10, " cycles").unwrap_err(), "m must be"),
            (f.int("w", 1, 0, 10, "").unwrap_err(), "w must be"),
            (f.int("s", 1, 0, 10, "").unwrap_err(), "s must be"),
            (f.int("big", 1, 0, 10, "").unwrap_err(), "big must be"),
            (
                f.num_list("r", 0.0, 1.0, 5, "").unwrap_err(),
                "r[1] must be",
            ),
            (f.boolean("b").unwrap_err(), "b must be"),
        ] {
            assert!(e.to_string().starts_with(needle), "{e}");
        }
        assert_eq!(f.int("absent", 7, 1, 10, "").unwrap(), 7);
        assert!(Fields::parse(r#"{"zz":1}"#, "req", &["m"])
            .err()
            .unwrap()
            .to_string()
            .contains("unknown field `zz`"));
        assert!(Fields::parse("[1]", "req", &["m"]).is_err());
    }
}
