//! The grader's own work that speed items measure a submission against, run in the yardstick
//! worker (which never calls the submission) between the supervisor's checkpoints.

use ndarray::{Array1, Array2, Axis};

/// The grader's naive product, the baseline of the CPU speedup: the textbook triple loop
/// over indexed elements, as a student's first version looks.
pub fn naive_product(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
    let mut c = Array2::zeros((m, n));
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f32;
            for p in 0..k {
                sum += a[[i, p]] * b[[p, j]];
            }
            c[[i, j]] = sum;
        }
    }
    c
}

/// The baseline of the GPU speedup: ndarray's optimised product on the CPU.
pub fn library_product(a: &Array2<f32>, b: &Array2<f32>) -> Array2<f32> {
    a.dot(b)
}

/// A linear layer's parameters, as the MLP epoch updates them.
pub struct Dense<'a> {
    /// `out × in`.
    pub weight: &'a mut Array2<f32>,
    /// `out`.
    pub bias: &'a mut Array1<f32>,
}

/// One SGD epoch of `Linear → ReLU → Linear` with cross-entropy over `batches` of `x`,
/// written the way the lesson's CPU loop runs (ndarray's optimised products, one thread);
/// returns the mean of the batches' losses. The layers are updated in place.
pub fn mlp_epoch(
    [l1, l2]: [Dense<'_>; 2],
    x: &Array2<f32>,
    labels: &[usize],
    batches: &[Vec<usize>],
    lr: f32,
) -> f32 {
    let mut total = 0.0f32;
    for batch in batches {
        let xb = x.select(Axis(0), batch);
        let rows = batch.len() as f32;
        let pre = xb.dot(&l1.weight.t()) + &*l1.bias;
        let hidden = pre.mapv(|v| v.max(0.0));
        let mut grad = hidden.dot(&l2.weight.t()) + &*l2.bias;
        // Softmax cross-entropy, row by row with the largest logit subtracted; the logits
        // become the gradient (softmax − one-hot) / rows in place.
        let mut loss = 0.0f32;
        for (mut row, &label) in grad
            .rows_mut()
            .into_iter()
            .zip(batch.iter().map(|&i| &labels[i]))
        {
            let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            row.mapv_inplace(|v| (v - max).exp());
            let sum = row.sum();
            loss += sum.ln() - (row[label].ln());
            row.mapv_inplace(|v| v / sum / rows);
            row[label] -= 1.0 / rows;
        }
        total += loss / rows;
        let grad_hidden = grad.dot(&*l2.weight) * pre.mapv(|v| f32::from(u8::from(v > 0.0)));
        l2.weight.scaled_add(-lr, &grad.t().dot(&hidden));
        l2.bias.scaled_add(-lr, &grad.sum_axis(Axis(0)));
        l1.weight.scaled_add(-lr, &grad_hidden.t().dot(&xb));
        l1.bias.scaled_add(-lr, &grad_hidden.sum_axis(Axis(0)));
    }
    total / batches.len().max(1) as f32
}

/// The batched GPU speedup's baseline: the batch as a loop of single products, one cuBLAS call
/// per matrix (the fastest single product there is), all queued on the stream. Its loop runs
/// inside the clock, and on a real GPU the host's time per call is what batching saves.
pub fn looped_cublas(
    blas: &cudarc::cublas::CudaBlas,
    a: &cudarc::driver::CudaSlice<f32>,
    b: &cudarc::driver::CudaSlice<f32>,
    c: &mut cudarc::driver::CudaSlice<f32>,
    [batch, m, k, n]: [usize; 4],
) -> Result<(), String> {
    use cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N;
    use cudarc::cublas::{Gemm, GemmConfig};
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B first, m and n swapped.
    let config = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: 1.0f32,
        lda: n as i32,
        ldb: k as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    for z in 0..batch {
        let a_z = a.slice(z * m * k..(z + 1) * m * k);
        let b_z = b.slice(z * k * n..(z + 1) * k * n);
        let mut c_z = c.slice_mut(z * m * n..(z + 1) * m * n);
        // SAFETY: the sizes and leading dimensions describe the three views exactly.
        unsafe { blas.gemm(config, &b_z, &a_z, &mut c_z) }.map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_naive_product_is_the_library_product() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32 - 5.0);
        let b = Array2::from_shape_fn((4, 2), |(i, j)| (i + 2 * j) as f32 * 0.5);
        assert_eq!(naive_product(&a, &b), library_product(&a, &b));
        assert_eq!(
            naive_product(&a, &b)[[2, 1]],
            3.0 + 4.0 * 1.5 + 5.0 * 2.0 + 6.0 * 2.5
        );
    }
}
