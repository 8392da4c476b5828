//! An order as Voldemort keeps it: the stream's JSON of the order, with its payload's
//! text where the stream has its length, so the value holds the bytes a shop's order
//! would and a read back judges them.

use serde::Serialize;
use serde_json::Value as Json;

use super::corrupt;
use crate::db::DbError;
use crate::workload::{Order, payload};

/// An order as written: the stream's fields (its payload's length among them), and the
/// payload's text beside them, where there is one.
#[derive(Serialize)]
struct Kept<'a> {
    #[serde(flatten)]
    order: &'a Order,
    #[serde(skip_serializing_if = "str::is_empty")]
    payload: &'a str,
}

/// The value of `order` with `payload` as its text, written straight from the order.
pub(super) fn encode(order: &Order, payload: &str) -> Result<Vec<u8>, DbError> {
    serde_json::to_vec(&Kept { order, payload }).map_err(|e| corrupt("an order", e))
}

/// The order a value holds, with its payload judged against the order's own (whatever
/// length the value says), and the payload's text, for a change that writes the order
/// back.
pub(super) fn decode(value: &[u8]) -> Result<(Order, String), DbError> {
    let mut json: Json =
        serde_json::from_slice(value).map_err(|e| corrupt("an order's value", e))?;
    let text = match &mut json {
        Json::Object(fields) => match fields.remove("payload") {
            Some(Json::String(text)) => text,
            Some(other) => return Err(corrupt("an order's payload", other)),
            None => String::new(),
        },
        _ => String::new(),
    };
    let mut order: Order =
        serde_json::from_value(json).map_err(|e| corrupt("an order's value", e))?;
    order.payload = payload::read(order.order_id, text.as_bytes());
    Ok((order, text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Generator, Operation, WorkloadSpec, preset};

    #[test]
    fn an_order_comes_back_with_its_payload_judged() {
        let mut spec: WorkloadSpec = preset("hatshop-random").unwrap();
        spec.order_bytes = Some(crate::workload::OrderBytes { min: 40, max: 40 });
        let order = Generator::new(&spec)
            .find_map(|event| match event.op {
                Operation::CreateOrder { order } => Some(*order),
                _ => None,
            })
            .unwrap();
        let text = payload::text(order.order_id, order.payload);
        let (back, kept) = decode(&encode(&order, &text).unwrap()).unwrap();
        assert_eq!((back, kept.as_str()), (order.clone(), text.as_str()));
        let (garbled, _) = decode(&encode(&order, &"x".repeat(40)).unwrap()).unwrap();
        assert!(garbled.payload.garbled);
    }
}
