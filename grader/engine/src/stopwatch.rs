//! The stopwatch's shared region and its worker side are the worker crate's
//! ([`grader_worker::stopwatch`], re-exported here); the supervisor's side of the hand-over,
//! [`Handover`], is the engine's.

pub use grader_worker::stopwatch::*;

use ndarray::Array2;
use region::{Field, Region};

/// The supervisor's side of the region: commands and inputs in, results out.
pub struct Handover<'a>(pub &'a mut Region);

impl Handover<'_> {
    /// Asks for `command` on operands `a` (m×k) and `b` (k×n).
    pub fn command(&mut self, command: Command, a: &Array2<f32>, b: &Array2<f32>) {
        let shape = [a.nrows(), a.ncols(), b.ncols()];
        for (field, v) in [Field::M, Field::K, Field::N].into_iter().zip(shape) {
            self.0.set(field, v as u64);
        }
        let [ra, rb, _] = layout(shape);
        let words = self.0.words();
        for (range, x) in [(ra, a), (rb, b)] {
            if let Some(out) = words.get_mut(range) {
                for (w, v) in out.iter_mut().zip(x.iter()) {
                    *w = v.to_bits();
                }
            }
        }
        self.0.set(Field::OutRows, 0);
        self.0.set(Field::OutCols, 0);
        self.0.set(Field::Command, command as u64);
    }

    /// Asks the worker to finish.
    pub fn finish(&mut self) {
        self.0.set(Field::Command, Command::Finish as u64);
    }

    /// The result the worker left, if it wrote one of the run's shape.
    pub fn output(&mut self) -> Option<Array2<f32>> {
        let shape = [Field::M, Field::K, Field::N].map(|f| self.0.get(f) as usize);
        let (rows, cols) = (
            self.0.get(Field::OutRows) as usize,
            self.0.get(Field::OutCols) as usize,
        );
        if (rows, cols) != (shape[0], shape[2]) {
            return None;
        }
        let [_, _, rc] = layout(shape);
        let data = self
            .0
            .words()
            .get(rc)?
            .iter()
            .map(|&w| f32::from_bits(w))
            .collect();
        Array2::from_shape_vec((rows, cols), data).ok()
    }

    /// The checkpoint the worker says it stopped at.
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        Checkpoint::from_u64(self.0.get(Field::Checkpoint))
    }
}
