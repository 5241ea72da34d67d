//! Connection checks that found what the last line already said (interop §10, §10a). A stream
//! compares records without the connection's check time (`compared`), so a probe round that
//! finds every worker as it was sends no `seat` line; the new check times ride on the next
//! heartbeat's `checked` instead (one small line, not a record per seat). A reader sets each
//! seat's `connection.checkedAt` from it, so the age it shows stays the check's own.

use std::collections::BTreeMap;

use serde_json::Value;

/// Most seats one heartbeat names (a board holds at most 256).
pub(crate) const MAX_CHECKED: usize = 256;

/// A record's connection check time (`intercom.connection.checkedAt`), when it has one.
pub(crate) fn checked_at(record: &Value) -> Option<&str> {
    record
        .get("intercom")?
        .get("connection")?
        .get("checkedAt")?
        .as_str()
}

/// What a stream compares of a record: its steady part (`stream::steady`) without the
/// connection's check time when it has one (a check that appears or goes away still counts).
pub(crate) fn compared(record: &Value) -> Value {
    let mut s = super::stream::steady(record);
    if let Some(c) = s
        .pointer_mut("/intercom/connection")
        .and_then(Value::as_object_mut)
    {
        if c.get("checkedAt").is_some_and(Value::is_string) {
            c.remove("checkedAt");
        }
    }
    s
}

/// Per seat: the check time last sent, and the newer ones the next heartbeat carries.
#[derive(Debug)]
pub(crate) struct Rechecks<K: Ord + Clone> {
    sent: BTreeMap<K, Option<String>>,
    due: BTreeMap<K, String>,
}

impl<K: Ord + Clone> Default for Rechecks<K> {
    fn default() -> Self {
        Rechecks {
            sent: BTreeMap::new(),
            due: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> Rechecks<K> {
    /// The seat's whole record went out (a `seat` line, or a board): its time with it.
    pub(crate) fn sent(&mut self, key: &K, record: &Value) {
        self.due.remove(key);
        self.sent
            .insert(key.clone(), checked_at(record).map(str::to_string));
    }

    /// The seat compared the same: a newer check time is due on the next heartbeat.
    pub(crate) fn same(&mut self, key: &K, record: &Value) {
        let now = checked_at(record);
        if self.sent.get(key).map(Option::as_deref) == Some(now) {
            return;
        }
        if let Some(t) = now {
            self.due.insert(key.clone(), t.to_string());
        }
        self.sent.insert(key.clone(), now.map(str::to_string));
    }

    /// The seat left.
    pub(crate) fn gone(&mut self, key: &K) {
        self.sent.remove(key);
        self.due.remove(key);
    }

    /// Forget everything (a whole board follows, naming every seat's time).
    pub(crate) fn clear(&mut self) {
        self.sent.clear();
        self.due.clear();
    }

    /// The check times due, for a heartbeat (at most `MAX_CHECKED`); none are due after.
    pub(crate) fn take(&mut self) -> BTreeMap<K, String> {
        let mut due = std::mem::take(&mut self.due);
        while due.len() > MAX_CHECKED {
            due.pop_last();
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(state: &str, checked: Value) -> Value {
        json!({"state": "idle", "scannedAt": "t",
               "intercom": {"connection": {"state": state, "reason": "r", "checkedAt": checked}}})
    }

    #[test]
    fn a_new_check_time_alone_is_due_on_the_heartbeat_and_anything_else_is_a_change() {
        let a = rec("connected", json!("2026-01-01T00:00:00.000Z"));
        let b = rec("connected", json!("2026-01-01T00:00:15.000Z"));
        assert_eq!(compared(&a), compared(&b));
        assert_ne!(compared(&a), compared(&rec("disconnected", json!("x"))));
        // A check that appears or goes away is a change of the record.
        assert_ne!(compared(&a), compared(&rec("connected", Value::Null)));

        let mut r = Rechecks::<String>::default();
        let k = "proj/W".to_string();
        r.sent(&k, &a);
        r.same(&k, &a);
        assert!(r.take().is_empty(), "nothing new");
        r.same(&k, &b);
        assert_eq!(
            r.take().get(&k).map(String::as_str),
            Some("2026-01-01T00:00:15.000Z")
        );
        assert!(r.take().is_empty(), "taken once");
        r.same(&k, &rec("connected", json!("2026-01-01T00:00:30.000Z")));
        r.sent(&k, &b);
        assert!(r.take().is_empty(), "a seat line carried it");
        r.same(&k, &rec("connected", json!("later")));
        r.gone(&k);
        assert!(r.take().is_empty(), "a seat that left");
    }
}
