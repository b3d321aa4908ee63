//! Typed application state shared with handlers (a database pool, a config).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Extracts a value registered with
/// [`McpServerBuilder::state`](crate::McpServerBuilder::state); use it as a
/// tool argument (`State(db): State<Db>`) with the macros, or call
/// [`InvokeContext::state`](crate::InvokeContext::state) by hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

/// Values keyed by their type.
#[derive(Default, Clone)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for StateMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StateMap({} values)", self.values.len())
    }
}

impl StateMap {
    pub(crate) fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref())
    }
}
