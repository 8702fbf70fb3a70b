//! The CUDA driver API (`libcuda`): one device, contexts, streams, events, memory, modules
//! and launches.

pub mod context;
pub mod device;
pub mod event;
pub mod hazard;
pub mod launch;
pub mod memcpy;
pub mod module;
pub mod stream;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::status::CUresult;

/// Live objects of one kind, by the opaque handle given to the application (the address of
/// the object), so that handles can be checked before they are used.
#[derive(Debug)]
pub struct Registry<T> {
    map: Mutex<HashMap<usize, Arc<T>>>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Registry<T> {
    /// Registers an object and returns its handle.
    pub fn insert(&self, v: Arc<T>) -> usize {
        let h = Arc::as_ptr(&v) as usize;
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(h, v);
        h
    }

    /// The object behind a handle.
    pub fn get(&self, h: usize) -> Option<Arc<T>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&h)
            .cloned()
    }

    /// Unregisters an object.
    pub fn remove(&self, h: usize) -> Option<Arc<T>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&h)
    }
}

/// The `CUresult` of writing out-parameters: `written(write_out(p, v))` is SUCCESS, or
/// INVALID_VALUE when a pointer was null.
pub fn written(ok: bool) -> CUresult {
    if ok {
        crate::status::SUCCESS
    } else {
        crate::status::INVALID_VALUE
    }
}

/// Turns a `Result` into the `CUresult` returned to the application.
pub fn code(r: Result<(), CUresult>) -> CUresult {
    match r {
        Ok(()) => crate::status::SUCCESS,
        Err(e) => e,
    }
}
