//! The object store: every object as JSON, one global resourceVersion counter, and the event
//! history watches replay from.

use super::karpenter::Instances;
use super::resources::{Registry, Resource};
use super::util::meta_str;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, as watches see it.
#[derive(Debug)]
pub struct WatchEvent {
    pub rv: u64,
    /// Storage key of the resource (`group/plural`).
    pub key: String,
    pub etype: EventType,
    pub object: Value,
    /// The object before a modification (for selector transitions).
    pub old: Option<Value>,
}

/// Where an object with a given uid lives.
#[derive(Debug, Clone)]
pub struct Loc {
    pub key: String,
    pub namespace: String,
    pub name: String,
}

pub struct Store {
    pub rv: u64,
    pub registry: Registry,
    /// key → (namespace, name) → object. BTreeMap: lists come out sorted like etcd keys.
    pub objects: HashMap<String, BTreeMap<(String, String), Value>>,
    pub uids: HashMap<String, Loc>,
    pub history: VecDeque<Arc<WatchEvent>>,
    pub history_cap: usize,
    pub tx: broadcast::Sender<Arc<WatchEvent>>,
    /// Set on every write; the controllers clear it.
    pub dirty: bool,
    /// Instances as the EC2 kubelet sees them and the termination controller wants them gone.
    pub instances: Instances,
}

impl Store {
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(65_536);
        Store {
            rv: 1000,
            registry: Registry::new(),
            objects: HashMap::new(),
            uids: HashMap::new(),
            history: VecDeque::new(),
            history_cap: 200_000,
            tx,
            dirty: true,
            instances: Instances::default(),
        }
    }

    pub fn get(&self, key: &str, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(key)?
            .get(&(ns.to_string(), name.to_string()))
    }

    pub fn get_by_uid(&self, uid: &str) -> Option<&Value> {
        let loc = self.uids.get(uid)?;
        self.get(&loc.key, &loc.namespace, &loc.name)
    }

    /// All objects of a kind, optionally in one namespace, in key order.
    pub fn list<'a>(
        &'a self,
        key: &str,
        ns: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        let map = self.objects.get(key);
        let iter: Box<dyn Iterator<Item = (&(String, String), &Value)>> = match (map, ns) {
            (None, _) => Box::new(std::iter::empty()),
            (Some(m), None) => Box::new(m.iter()),
            (Some(m), Some(ns)) => Box::new(
                m.range((ns.to_string(), String::new())..)
                    .take_while(move |((n, _), _)| n == ns),
            ),
        };
        iter.map(|(_, v)| v)
    }

    pub fn count(&self, key: &str) -> usize {
        self.objects.get(key).map_or(0, BTreeMap::len)
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn emit(&mut self, key: &str, etype: EventType, object: Value, old: Option<Value>) {
        let ev = Arc::new(WatchEvent {
            rv: self.rv,
            key: key.to_string(),
            etype,
            object,
            old,
        });
        if self.history.len() >= self.history_cap {
            self.history.pop_front();
        }
        self.history.push_back(ev.clone());
        let _ = self.tx.send(ev);
        self.dirty = true;
    }

    /// Stores a new object (its metadata already complete but for resourceVersion).
    pub fn insert(&mut self, res: &Resource, mut obj: Value) -> Value {
        let rv = self.next_rv();
        super::util::meta_mut(&mut obj)
            .insert("resourceVersion".into(), Value::String(rv.to_string()));
        let ns = meta_str(&obj, "namespace").to_string();
        let name = meta_str(&obj, "name").to_string();
        let uid = meta_str(&obj, "uid").to_string();
        let key = res.key();
        self.uids.insert(
            uid,
            Loc {
                key: key.clone(),
                namespace: ns.clone(),
                name: name.clone(),
            },
        );
        self.objects
            .entry(key.clone())
            .or_default()
            .insert((ns, name), obj.clone());
        self.emit(&key, EventType::Added, obj.clone(), None);
        obj
    }

    /// Replaces an existing object, bumping its resourceVersion.
    pub fn replace(&mut self, key: &str, mut obj: Value) -> Value {
        let rv = self.next_rv();
        super::util::meta_mut(&mut obj)
            .insert("resourceVersion".into(), Value::String(rv.to_string()));
        let ns = meta_str(&obj, "namespace").to_string();
        let name = meta_str(&obj, "name").to_string();
        let old = self
            .objects
            .entry(key.to_string())
            .or_default()
            .insert((ns, name), obj.clone());
        self.emit(key, EventType::Modified, obj.clone(), old);
        obj
    }

    /// Removes an object for good; the DELETED event carries a new resourceVersion.
    pub fn remove(&mut self, key: &str, ns: &str, name: &str) -> Option<Value> {
        let mut obj = self
            .objects
            .get_mut(key)?
            .remove(&(ns.to_string(), name.to_string()))?;
        self.uids.remove(meta_str(&obj, "uid"));
        let rv = self.next_rv();
        super::util::meta_mut(&mut obj)
            .insert("resourceVersion".into(), Value::String(rv.to_string()));
        self.emit(key, EventType::Deleted, obj.clone(), None);
        Some(obj)
    }

    /// Oldest resourceVersion a watch can resume from.
    pub fn oldest_watchable(&self) -> u64 {
        self.history.front().map_or(self.rv, |e| e.rv - 1)
    }
}
