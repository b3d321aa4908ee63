//! An insertion-ordered map from a key (name or URI) to a descriptor.

use std::collections::HashMap;

/// Descriptors in registration order, with a key index for lookups.
pub(crate) struct Registry<T> {
    items: Vec<T>,
    index: HashMap<String, usize>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T> Registry<T> {
    /// Adds `item` under `key`; false (and nothing added) when the key is taken.
    pub(crate) fn insert(&mut self, key: String, item: T) -> bool {
        if self.index.contains_key(&key) {
            return false;
        }
        self.index.insert(key, self.items.len());
        self.items.push(item);
        true
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
