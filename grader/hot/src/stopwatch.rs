//! Times that earn points, read by the supervisor's clock, never the worker's.
//!
//! The worker runs the submission's code, and code in a submission can reach anything in its
//! own process: the clock functions, the memory where a measurement waits to be reported. So
//! a worker never measures a time that earns points. At each [`Checkpoint`] it stops itself
//! (`SIGSTOP`: every thread of the process freezes), the supervisor notices the stop and reads
//! its own clock, hands over the next run's inputs through the shared [`region`] while nothing
//! in the worker can run, and lets it continue (`SIGCONT`). A timed run is the time from that
//! continue to the next stop, by the supervisor's clock; the result is copied out of the
//! region while the worker is stopped again, so nothing finished later counts.
//!
//! The baseline a speedup is measured against runs in a second worker that never calls the
//! submission's functions (the yardstick), and the student's worker is stopped while it runs.

pub use crate::region;

use ndarray::Array2;
use region::{Field, Region};
use std::path::Path;

/// Where a worker stopped, written to the region before it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Checkpoint {
    /// The previous run's result (if any) is in the region; waiting for the next command.
    Ready = 1,
    /// The run's inputs are loaded where they are needed (on the GPU): start the clock.
    Go = 2,
    /// The run has finished (the GPU included): stop the clock.
    Done = 3,
    /// A student's timer is about to be called.
    CallStart = 4,
    /// The student's timer called the work: the supervisor holds the worker for the work's
    /// length.
    Work = 5,
    /// The student's timer returned; what it reported is in the region.
    CallEnd = 6,
}

impl Checkpoint {
    /// The checkpoint a header value names, if any.
    pub fn from_u64(v: u64) -> Option<Self> {
        Some(match v {
            1 => Checkpoint::Ready,
            2 => Checkpoint::Go,
            3 => Checkpoint::Done,
            4 => Checkpoint::CallStart,
            5 => Checkpoint::Work,
            6 => Checkpoint::CallEnd,
            _ => return None,
        })
    }
}

/// What the supervisor asks for at a [`Checkpoint::Ready`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Command {
    /// Multiply the inputs in the region.
    Run = 1,
    /// Copy the inputs in and a zero result out without multiplying: the overhead of a run.
    Null = 2,
    /// No more runs.
    Finish = 3,
    /// Stop at [`Checkpoint::Go`] and at once at [`Checkpoint::Done`], nothing between: what
    /// the two stops that bracket a GPU run's clock cost (a GPU candidate is timed from `Go`
    /// to `Done`, its hand-over outside the clock), measured in the grader's own yardstick.
    Brackets = 4,
}

/// A product the stopwatch serves runs of: the student's, or a baseline.
pub trait Product: FnMut(&Array2<f32>, &Array2<f32>) -> Array2<f32> {}

impl<F: FnMut(&Array2<f32>, &Array2<f32>) -> Array2<f32>> Product for F {}

/// Where matrices lie among the region's words for a run of shape `[m, k, n]`: A, then B,
/// then C, each row-major.
pub fn layout([m, k, n]: [usize; 3]) -> [std::ops::Range<usize>; 3] {
    let (a, b, c) = (m * k, k * n, m * n);
    [0..a, a..a + b, a + b..a + b + c]
}

/// The region words a run of shape `size` needs.
pub fn words_for(size: [usize; 3]) -> usize {
    layout(size)[2].end
}

/// The worker's side: checkpoints, and the inputs and results that pass through the region.
/// Clones share the region (timed work handed to a student's timer holds one).
#[derive(Clone)]
pub struct Checkpoints {
    region: Region,
    sequence: u64,
    /// The operands of the last run, whose memory the next run of the same shape reuses (no
    /// allocation or first-touch page faults inside the supervisor's clock).
    operands: Option<(Array2<f32>, Array2<f32>)>,
    /// A zero result for null runs.
    zeros: Option<Array2<f32>>,
}

impl Checkpoints {
    /// Maps the region the supervisor made for this order.
    pub fn open(path: &Path) -> Result<Checkpoints, String> {
        Ok(Self::of(Region::open(path).map_err(|e| e.to_string())?))
    }

    /// The checkpoints of the region whose descriptor the supervisor handed this process.
    #[cfg(unix)]
    pub fn from_fd(fd: i32) -> Result<Checkpoints, String> {
        Ok(Self::of(Region::from_fd(fd).map_err(|e| e.to_string())?))
    }

    fn of(region: Region) -> Checkpoints {
        Checkpoints {
            region,
            sequence: 0,
            operands: None,
            zeros: None,
        }
    }

    /// Stops this process at `at` until the supervisor lets it continue.
    pub fn stop(&mut self, at: Checkpoint) {
        self.sequence += 1;
        self.region.set(Field::Checkpoint, at as u64);
        self.region.set(Field::Sequence, self.sequence);
        #[cfg(unix)]
        // SAFETY: raise only sends this process a signal; SIGSTOP cannot be caught, so the
        // whole process stops here until SIGCONT.
        unsafe {
            libc::raise(libc::SIGSTOP);
        }
    }

    /// The command the supervisor gave at the last [`Checkpoint::Ready`].
    pub fn command(&self) -> Command {
        match self.region.get(Field::Command) {
            1 => Command::Run,
            2 => Command::Null,
            4 => Command::Brackets,
            _ => Command::Finish,
        }
    }

    /// The next run's shape.
    pub fn shape(&self) -> [usize; 3] {
        [Field::M, Field::K, Field::N].map(|f| self.region.get(f) as usize)
    }

    /// The next run's operands, copied out of the region (into the last run's operands when
    /// the shape is the same).
    pub fn inputs(&mut self) -> Result<(Array2<f32>, Array2<f32>), String> {
        let mut operands = self.operands.take();
        self.load(&mut operands)?;
        operands.ok_or_else(|| "no operands".to_string())
    }

    /// Fills `operands` from the region, allocating only when the shape changed.
    fn load(&mut self, operands: &mut Option<(Array2<f32>, Array2<f32>)>) -> Result<(), String> {
        let [m, k, n] = self.shape();
        let [ra, rb, _] = layout([m, k, n]);
        let words = self.region.words();
        if words.len() < rb.end {
            return Err("the stopwatch region is too small for the run".into());
        }
        if !operands
            .as_ref()
            .is_some_and(|(a, b)| a.dim() == (m, k) && b.dim() == (k, n))
        {
            *operands = Some((Array2::zeros((m, k)), Array2::zeros((k, n))));
        }
        if let Some((a, b)) = operands.as_mut() {
            for (x, range) in [(a, ra), (b, rb)] {
                for (v, &w) in x.iter_mut().zip(&words[range]) {
                    *v = f32::from_bits(w);
                }
            }
        }
        Ok(())
    }

    /// Copies a run's result into the region (any memory layout, logical row-major order).
    pub fn put_output(&mut self, c: &Array2<f32>) {
        let [_, _, rc] = layout(self.shape());
        let words = self.region.words();
        let fits = c.len() <= rc.len();
        if let Some(out) = words.get_mut(rc.start..rc.start + if fits { c.len() } else { 0 }) {
            for (w, v) in out.iter_mut().zip(c.iter()) {
                *w = v.to_bits();
            }
        }
        let (rows, cols) = if fits { c.dim() } else { (0, 0) };
        self.region.set(Field::OutRows, rows as u64);
        self.region.set(Field::OutCols, cols as u64);
    }

    /// A header value the supervisor set (the work's token).
    pub fn get(&self, field: Field) -> u64 {
        self.region.get(field)
    }

    /// Sets a header value for the supervisor (what a timer reported).
    pub fn set(&mut self, field: Field, value: u64) {
        self.region.set(field, value)
    }

    /// Serves runs of a product until the supervisor says [`Command::Finish`]: each run copies
    /// the operands in, multiplies, and copies the result out before the next
    /// [`Checkpoint::Ready`], all inside the supervisor's clock. (The product is a trait
    /// object, so that this loop is compiled here, optimised, and not in the caller's crate.)
    pub fn serve_products(&mut self, product: &mut dyn Product) -> Result<(), String> {
        loop {
            self.stop(Checkpoint::Ready);
            let command = self.command();
            if command == Command::Finish {
                return Ok(());
            }
            let (a, b) = self.inputs()?;
            match command {
                Command::Run => {
                    let c = product(&a, &b);
                    self.put_output(&std::hint::black_box(c));
                }
                _ => {
                    if command == Command::Brackets {
                        self.stop(Checkpoint::Go);
                        self.stop(Checkpoint::Done);
                    }
                    let zeros = match self.zeros.take() {
                        Some(z) if z.dim() == (a.nrows(), b.ncols()) => z,
                        _ => Array2::zeros((a.nrows(), b.ncols())),
                    };
                    self.put_output(std::hint::black_box(&zeros));
                    self.zeros = Some(zeros);
                }
            }
            self.operands = Some((a, b));
        }
    }
}
