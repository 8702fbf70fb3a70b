//! The training lab's hot code: the data every grading run generates and the f64 reference
//! models it trains, both on every element of the run's data. The lab's judges
//! (`grader_labs::training`) use them; only a crate that turns on the `training` feature (the
//! training lab's) compiles them.

pub mod data;
pub mod reference;
