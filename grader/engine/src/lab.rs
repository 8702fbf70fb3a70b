//! What the engine knows of a lab: [`crate::rubric::labs`], re-exported under the name the
//! labs use. The interface lives with the rubric model it hands items to, so that neither
//! needs the other's module.

pub use crate::rubric::labs::*;
