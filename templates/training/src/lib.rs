//! # Weeks 13–14 lab: a neural network's training loop, by hand
//!
//! The second half of the course trains neural networks. In the lesson, PyTorch does it in five
//! lines:
//!
//! ```text
//! for x, y in loader:
//!     optimizer.zero_grad()
//!     out = model(x)
//!     loss = criterion(out, y)
//!     loss.backward()
//!     optimizer.step()
//! ```
//!
//! Here you write every piece of that loop yourself, in Rust. Rust has no autograd: nothing
//! records your forward pass to differentiate it for you. So each forward function has a
//! backward function next to it that you write too, and the chain rule is yours to apply, one
//! layer at a time, from the loss back to the input.
//!
//! The pieces, in the order to write them:
//! 1. [`layers`]: [`Linear`] (`nn.Linear`), [`relu`] and [`sigmoid`], each with its backward.
//! 2. [`losses`]: [`bce_loss`] (`nn.BCELoss`) and [`cross_entropy`] (`nn.CrossEntropyLoss`),
//!    each with its gradient.
//! 3. [`models`]: the lesson's [`SimpleNN`] and the MNIST [`Mlp`], behind the [`Model`] trait.
//! 4. [`optim`]: [`Sgd`] and [`Adam`] (`torch.optim`), behind the [`Optimizer`] trait.
//! 5. [`data_loop`]: shuffled minibatches ([`batches`], the `DataLoader`), one epoch
//!    ([`train_epoch`]), [`accuracy`] and the whole loop ([`train`]).
//! 6. [`gpu`]: the same epoch on the GPU: the model and the data moved there once, batches
//!    gathered on the device, matrix products with cuBLAS and the rest in your own CUDA C
//!    kernels ([`gpu::train_epoch_gpu`], [`gpu::train_on`]).
//!
//! Every number is an `f32`, and a batch is an `ndarray::Array2<f32>` with one row per example
//! and one column per feature (batch × features): `x.nrows()` examples, `x.ncols()` features.
//! `a.dot(&b)` is the matrix product and `a.t()` the transpose; you may use both (this lab is
//! about the loop, not the product).
//!
//! Run `cargo test` to be graded: the grader checks each function against its own, checks your
//! gradients against finite differences, trains your models, and prints a score table with a
//! hint for anything that is wrong.

// Remove this line when you are done: it hides warnings about unused inputs.
#![allow(unused_variables, unused_imports, dead_code)]

pub mod data_loop;
pub mod gpu;
pub mod layers;
pub mod losses;
pub mod models;
pub mod optim;

pub use data_loop::{accuracy, batches, train, train_epoch};
pub use layers::{relu, relu_backward, sigmoid, Linear};
pub use losses::{bce_grad, bce_loss, cross_entropy, cross_entropy_grad};
pub use models::{Mlp, Model, SimpleNN};
pub use optim::{Adam, Optimizer, Sgd};

/// The random number generator every function here takes: make one with
/// `StdRng::seed_from_u64(seed)` (the same seed gives the same numbers, like `torch.manual_seed`).
pub use rand::rngs::StdRng;
/// The trait that gives [`StdRng`] its `seed_from_u64`: `use training_lab::SeedableRng;`.
pub use rand::SeedableRng;
