//! What the SQL stores (SQLite, MySQL/MariaDB, PostgreSQL) share: the statements in
//! each dialect's placeholders, the order of setup (check the marker, drop, create,
//! mark), the multi-row item insert, and turning rows back into orders. Each keeps its
//! own driver code and column types in its own file.

use super::ownership::{MARKER, Ownership, TABLES};
use super::{DbError, LOAD_TABLE, OrderRow};
use crate::workload::{EventType, LineItem, Order};

/// The order row's columns, in the order every SQL statement names them.
pub const ORDER_COLUMNS: &str =
    "order_id, client_id, customer, address, created_at_ms, status, subtotal_cents, payload";
/// A line item row's columns, in the order every SQL statement names them.
pub const ITEM_COLUMNS: &str = "line_item_id, product, colour, size, quantity, unit_price_cents";

/// One order with its items in one round trip: order columns 0–7, item columns 8–13
/// (NULL when the order has no items).
const READ_ORDER_JOINED: &str = "SELECT o.order_id, o.client_id, o.customer, o.address, \
     o.created_at_ms, o.status, o.subtotal_cents, o.payload, i.line_item_id, i.product, i.colour, i.size, \
     i.quantity, i.unit_price_cents FROM orders o LEFT JOIN line_items i ON i.order_id = o.order_id \
     WHERE o.order_id = {P1} ORDER BY i.line_item_id";

/// Placeholder style of a dialect.
#[derive(Clone, Copy)]
pub enum Placeholders {
    /// `?` (MySQL, SQLite)
    Question,
    /// `$1`, `$2`, … (PostgreSQL)
    Dollar,
}

impl Placeholders {
    fn nth(self, n: usize) -> String {
        match self {
            Placeholders::Question => "?".into(),
            Placeholders::Dollar => format!("${n}"),
        }
    }

    /// `text` with `{P1}`, `{P2}`, … replaced by this dialect's placeholders.
    pub fn fill(self, text: &str) -> String {
        let mut out = text.to_string();
        for n in (1..=9).rev() {
            out = out.replace(&format!("{{P{n}}}"), &self.nth(n));
        }
        out
    }

    /// `INSERT INTO line_items (…) VALUES (…), (…)` for `items` rows of 7 values.
    pub fn insert_items(self, items: usize) -> String {
        let rows: Vec<String> = (0..items)
            .map(|row| {
                let cells: Vec<String> = (1..=7).map(|c| self.nth(row * 7 + c)).collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!(
            "INSERT INTO line_items (line_item_id, order_id, product, colour, size, quantity, unit_price_cents) VALUES {}",
            rows.join(", ")
        )
    }
}

/// The statements of an SQL store, in its dialect.
pub struct Statements {
    style: Placeholders,
    pub insert_order: String,
    pub read_order: String,
    pub update_order: String,
    pub update_item: String,
    pub update_subtotal: String,
    pub update_status: String,
    pub delete_items: String,
    pub delete_order: String,
    pub kv_insert: String,
    pub kv_update: String,
    pub kv_select: String,
    pub kv_delete: String,
    /// The next page of records after a key, in key order.
    pub kv_page: String,
}

/// Item counts whose inserts are prepared ahead (the default 1–5 items per order);
/// other counts are prepared on first use.
const PREPARED_ITEM_COUNTS: std::ops::RangeInclusive<usize> = 1..=5;

impl Statements {
    /// The statements in a placeholder style (`?` or `$1`).
    pub fn new(style: Placeholders) -> Statements {
        Statements {
            style,
            insert_order: style.fill(
                "INSERT INTO orders (order_id, client_id, customer, address, created_at_ms, status, \
                 subtotal_cents, payload) VALUES ({P1}, {P2}, {P3}, {P4}, {P5}, {P6}, {P7}, {P8})",
            ),
            read_order: style.fill(READ_ORDER_JOINED),
            update_order: style.fill(
                "UPDATE orders SET created_at_ms = {P1}, status = {P2}, subtotal_cents = {P3} \
                 WHERE order_id = {P4}",
            ),
            update_item: style.fill(
                "UPDATE line_items SET colour = {P1}, size = {P2}, quantity = {P3} \
                 WHERE line_item_id = {P4} AND order_id = {P5}",
            ),
            update_subtotal: style
                .fill("UPDATE orders SET subtotal_cents = {P1} WHERE order_id = {P2}"),
            update_status: style.fill("UPDATE orders SET status = {P1} WHERE order_id = {P2}"),
            delete_items: style.fill("DELETE FROM line_items WHERE order_id = {P1}"),
            delete_order: style.fill("DELETE FROM orders WHERE order_id = {P1}"),
            kv_insert: style.fill("INSERT INTO kv (k, v) VALUES ({P1}, {P2})"),
            kv_update: style.fill("UPDATE kv SET v = {P1} WHERE k = {P2}"),
            kv_select: style.fill("SELECT v FROM kv WHERE k = {P1}"),
            kv_delete: style.fill("DELETE FROM kv WHERE k = {P1}"),
            kv_page: style.fill(&format!(
                "SELECT k, v FROM kv WHERE k > {{P1}} ORDER BY k LIMIT {}",
                super::KV_PAGE
            )),
        }
    }

    /// The key-value statements, in this order: insert, update, select, delete.
    pub fn kv(&self) -> [&str; 4] {
        [
            &self.kv_insert,
            &self.kv_update,
            &self.kv_select,
            &self.kv_delete,
        ]
    }

    /// The event type that sends `text` (one of these statements, or a transaction's
    /// BEGIN or COMMIT: `""`), and whether every operation of it sends it exactly once.
    pub fn sent_by(&self, text: &str) -> Option<(&'static str, bool)> {
        let once = |event: EventType| Some((event.as_str(), true));
        let text = text.trim();
        match text {
            _ if text == self.insert_order => once(EventType::CreateOrder),
            _ if text.starts_with("INSERT INTO line_items ") => {
                Some((EventType::CreateOrder.as_str(), false))
            }
            _ if text == self.read_order => once(EventType::ReadOrder),
            _ if text == self.update_order => once(EventType::UpdateOrder),
            _ if text == self.update_item => Some((EventType::UpdateItems.as_str(), false)),
            _ if text == self.update_subtotal => once(EventType::UpdateItems),
            _ if text == self.update_status => once(EventType::UpdateStatus),
            _ if text == self.delete_items => Some((EventType::DeleteOrder.as_str(), false)),
            _ if text == self.delete_order => once(EventType::DeleteOrder),
            _ if text == self.kv_insert => once(EventType::Write),
            _ if text == self.kv_update => once(EventType::Rewrite),
            _ if text == self.kv_select => once(EventType::Read),
            _ if text == self.kv_delete => once(EventType::Delete),
            _ if ["BEGIN", "START TRANSACTION", "COMMIT"]
                .iter()
                .any(|t| text.eq_ignore_ascii_case(t)) =>
            {
                Some(("", false))
            }
            _ => None,
        }
    }

    /// An insert of `items` line items in one statement.
    pub fn insert_items(&self, items: usize) -> String {
        self.style.insert_items(items)
    }

    /// What to prepare on every connection before the run, so that no measured
    /// operation pays for a first prepare.
    pub fn ahead(&self) -> Vec<String> {
        let mut all = vec![
            self.insert_order.clone(),
            self.read_order.clone(),
            self.update_order.clone(),
            self.update_item.clone(),
            self.update_subtotal.clone(),
            self.update_status.clone(),
            self.delete_items.clone(),
            self.delete_order.clone(),
            self.kv_insert.clone(),
            self.kv_update.clone(),
            self.kv_select.clone(),
            self.kv_delete.clone(),
        ];
        all.extend(PREPARED_ITEM_COUNTS.map(|n| self.insert_items(n)));
        all
    }
}

/// The statements that make hatshop's tables ready, given which of its table names
/// exist: drops (only if the marker allows), the store's `create` statements, and the
/// marker. `marker_type` is the dialect's text column type.
pub fn setup_statements(
    target: &str,
    owner: &Ownership,
    existing: &[String],
    create: &[&str],
    marker_type: &str,
) -> Result<Vec<String>, DbError> {
    owner.may_drop(target, existing)?;
    let mut statements: Vec<String> = TABLES
        .iter()
        .filter(|t| existing.iter().any(|e| e == *t))
        .map(|t| format!("DROP TABLE {t}"))
        .collect();
    statements.extend(create.iter().map(|s| s.to_string()));
    // TEXT for the note: the note of what the tables hold (`Store::holding`) names a
    // run's folder, longer than a VARCHAR(255) holds.
    statements.push(format!(
        "CREATE TABLE {MARKER} (name {marker_type} PRIMARY KEY, made_by TEXT NOT NULL)"
    ));
    statements.push(format!(
        "INSERT INTO {MARKER} (name, made_by) VALUES ('hatshop', '{}')",
        owner.note.replace('\'', "''")
    ));
    Ok(statements)
}

/// The load table (`hatshop load`): a text key and `columns` value columns.
pub fn create_load_table(columns: usize, key_type: &str, value_type: &str) -> String {
    let values: String = (0..columns)
        .map(|c| format!(", c{c} {value_type} NOT NULL"))
        .collect();
    format!("CREATE TABLE {LOAD_TABLE} (k {key_type} PRIMARY KEY{values})")
}

/// `c0, c1, …`: the load table's value columns.
pub fn load_value_columns(columns: usize) -> String {
    (0..columns)
        .map(|c| format!("c{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row into the load table, in a dialect's placeholders.
pub fn load_insert_row(style: Placeholders, columns: usize) -> String {
    let cells: Vec<String> = (1..=columns + 1).map(|n| style.nth(n)).collect();
    format!(
        "INSERT INTO {LOAD_TABLE} (k, {}) VALUES ({})",
        load_value_columns(columns),
        cells.join(", ")
    )
}

/// One row of the load table by key.
pub fn load_select_row(style: Placeholders, columns: usize) -> String {
    format!(
        "SELECT {} FROM {LOAD_TABLE} WHERE k = {}",
        load_value_columns(columns),
        style.nth(1)
    )
}

/// Rows a bulk load left, for its check at the end.
pub const LOAD_COUNT: &str = "SELECT COUNT(*) FROM load_rows";

/// The order of a joined read (order columns 0–7, item columns from 8 on), or `None`
/// when no row came back. Each store passes its own row readers.
pub fn order_from_joined<R>(
    rows: &[R],
    order_row: impl Fn(&R) -> Result<OrderRow, DbError>,
    line_item: impl Fn(&R, usize) -> Result<Option<LineItem>, DbError>,
) -> Result<Option<Order>, DbError> {
    let Some(first) = rows.first() else {
        return Ok(None);
    };
    let header = order_row(first)?;
    let mut items = Vec::with_capacity(rows.len());
    for row in rows {
        items.extend(line_item(row, 8)?);
    }
    Ok(Some(super::order_of(header, items)))
}

/// `connections` (once `pool`), as the pooled SQL stores declare it.
pub const CONNECTIONS: super::Setting = super::Setting {
    name: "connections",
    value: super::Value::Count { min: 1 },
    default: "",
    help: "connections to open [default: one per operation in flight (--concurrency), which defaults to this, else 4]",
};

/// The `connections` setting if given, else `otherwise` (at least 1).
pub fn connections_or(settings: &super::Settings, otherwise: usize) -> usize {
    settings
        .given_text("connections")
        .and_then(|p| p.parse().ok())
        .unwrap_or(otherwise)
        .max(1)
}

/// A status read back that is not one of ours.
pub fn unknown_status(text: &str) -> DbError {
    DbError::other(format!("unknown order status '{text}'"))
}

/// Bytes as hex digits, two a byte, for a dialect's hex literal around them (MySQL's
/// `X'…'`, PostgreSQL's BYTEA `\x…`).
pub fn push_hex_digits(out: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xF)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_follow_the_dialect() {
        assert_eq!(
            Placeholders::Dollar.fill("a = {P1} AND b = {P2}"),
            "a = $1 AND b = $2"
        );
        assert_eq!(Placeholders::Question.fill("a = {P1}"), "a = ?");
        let sql = Placeholders::Dollar.insert_items(2);
        assert!(
            sql.ends_with("($1, $2, $3, $4, $5, $6, $7), ($8, $9, $10, $11, $12, $13, $14)"),
            "{sql}"
        );
    }

    #[test]
    fn setup_drops_only_what_it_found_and_marks_what_it_made() {
        let owner = Ownership {
            recreate: false,
            note: "hatshop 1 run o'brien".into(),
        };
        let found = vec!["orders".to_string(), MARKER.to_string()];
        let sql = setup_statements(
            "db",
            &owner,
            &found,
            &["CREATE TABLE orders (x INT)"],
            "TEXT",
        )
        .unwrap();
        assert_eq!(sql[0], "DROP TABLE orders");
        assert_eq!(sql[1], format!("DROP TABLE {MARKER}"));
        assert!(sql.last().unwrap().contains("o''brien"));
        assert!(setup_statements("db", &owner, &["kv".into()], &[], "TEXT").is_err());
    }
}
