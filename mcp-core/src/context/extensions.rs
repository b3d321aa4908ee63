//! [`Extensions`]: typed values attached to one request (by a transport
//! hook, the caller of a custom transport, or an interceptor) and read by
//! interceptors and handlers, like `http::Extensions`.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A map from a type to one value of it, attached to a request.
///
/// Empty extensions allocate nothing; cloning is cheap (the values are
/// shared, and a clone that inserts copies only the table).
///
/// ```
/// use mcp_core::context::Extensions;
///
/// #[derive(Debug, PartialEq)]
/// struct Tenant(&'static str);
///
/// let mut ext = Extensions::new();
/// assert!(ext.get::<Tenant>().is_none());
/// ext.insert(Tenant("acme"));
/// assert_eq!(ext.get::<Tenant>(), Some(&Tenant("acme")));
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attaches `value`, replacing a value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let map = self.map.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The value of type `T`, if one is attached.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())?
            .downcast_ref::<T>()
    }

    /// Removes the value of type `T`; true when there was one.
    pub fn remove<T: Send + Sync + 'static>(&mut self) -> bool {
        match &mut self.map {
            Some(map) if map.contains_key(&TypeId::of::<T>()) => {
                Arc::make_mut(map).remove(&TypeId::of::<T>());
                true
            }
            _ => false,
        }
    }

    /// True when no value is attached.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|m| m.is_empty())
    }

    /// Adds every value of `other` (replacing those of the same types).
    pub fn extend(&mut self, other: &Extensions) {
        let Some(theirs) = &other.map else {
            return;
        };
        match &mut self.map {
            None => self.map = Some(Arc::clone(theirs)),
            Some(mine) => {
                let mine = Arc::make_mut(mine);
                for (k, v) in theirs.iter() {
                    mine.insert(*k, Arc::clone(v));
                }
            }
        }
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.as_ref().map_or(0, |m| m.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_replace_remove_and_clones_stay_apart() {
        let mut a = Extensions::new();
        assert!(a.is_empty());
        a.insert(7u32);
        a.insert("name");
        let mut b = a.clone();
        b.insert(8u32);
        assert_eq!(a.get::<u32>(), Some(&7));
        assert_eq!(b.get::<u32>(), Some(&8));
        assert_eq!(b.get::<&str>(), Some(&"name"));
        assert!(b.remove::<u32>());
        assert!(!b.remove::<u32>());
        assert_eq!(
            a.get::<u32>(),
            Some(&7),
            "a clone's change never shows in the original"
        );
        let mut c = Extensions::new();
        c.insert(1u8);
        c.extend(&a);
        assert_eq!((c.get::<u8>(), c.get::<u32>()), (Some(&1), Some(&7)));
    }
}
