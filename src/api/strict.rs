//! JSON as the API reads it: like `serde_json::from_slice`, but an object
//! that names a key twice is refused.
//!
//! Why: `serde_json` keeps the last of two equal keys. A body such as
//! `{"title": "A", "title": "B"}` would then mean different things to
//! different readers (a proxy, a log, a client library that keeps the
//! first), so it is refused with 400 rather than guessed at (RFC 8259 §4
//! says names SHOULD be unique; I-JSON, RFC 7493, says they MUST).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Parses `bytes` as one JSON value; duplicate keys are an error.
pub fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice::<Strict>(bytes).map(|s| s.0)
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Number::from_f64(n).map(Value::Number).ok_or_else(|| E::custom("a number out of range"))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                // Key text comes from the client: quoted, and cut short.
                let shown: String = key.chars().take(40).collect();
                return Err(de::Error::custom(format!("duplicate key {shown:?}")));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(parse(br#"{"a": 1, "a": 1}"#).is_err());
        assert!(parse(br#"{"q": [{"label": "x", "label": "y"}]}"#).is_err());
        let err = parse(br#"{"title": "A", "title": "B"}"#).unwrap_err().to_string();
        assert!(err.contains("duplicate key \"title\""), "{err}");
    }

    #[test]
    fn everything_else_reads_as_serde_json_reads_it() {
        let text = br#"{"t": "x\u00e9", "n": [1, -2, 2.5, 1e300, null, true], "o": {"a": {}, "b": []}}"#;
        assert_eq!(parse(text).unwrap(), serde_json::from_slice::<Value>(text).unwrap());
        assert!(parse(b"{").is_err());
        assert!(parse(b"[1,]").is_err());
        // serde_json's depth limit still holds.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(deep.as_bytes()).is_err());
    }
}
