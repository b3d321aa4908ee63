//! [`OrderedMap`]: an insertion-ordered map from a key (name or URI) to a
//! descriptor, the storage of each part of the registry.

use std::collections::HashMap;

use crate::fast_hash::FastHash;

/// Descriptors in registration order, with a key index for lookups.
#[derive(Clone)]
pub(crate) struct OrderedMap<T> {
    items: Vec<T>,
    /// Looked up on every call by the name or URI it asks for.
    index: HashMap<String, usize, FastHash>,
}

impl<T> Default for OrderedMap<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<T> OrderedMap<T> {
    /// Adds `item` under `key`; false (and nothing added) when the key is taken.
    pub(crate) fn insert(&mut self, key: String, item: T) -> bool {
        if self.index.contains_key(&key) {
            return false;
        }
        self.index.insert(key, self.items.len());
        self.items.push(item);
        true
    }

    /// Removes the item under `key`, keeping the order of the others.
    pub(crate) fn remove(&mut self, key: &str) -> Option<T> {
        let i = self.index.remove(key)?;
        let item = self.items.remove(i);
        for at in self.index.values_mut() {
            if *at > i {
                *at -= 1;
            }
        }
        Some(item)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&T> {
        self.index.get(key).and_then(|&i| self.items.get(i))
    }

    pub(crate) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
