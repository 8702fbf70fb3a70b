//! Public kernels nobody here wrote, run plain and checked: the CUDA kernels of Hugging Face's
//! candle (crate `candle-kernels` 0.11.1, licence MIT OR Apache-2.0), read at test time from
//! the cargo registry (fetched there with `cargo fetch` when absent), never copied here. They
//! are written the way libraries are: kernels made by macros, in headers of their own,
//! templates with `__shared__` arrays, `extern __shared__`, warp shuffles, `float4` loads,
//! `__half`/`__nv_bfloat16`, atomics. Each kernel is launched the way candle launches it, its
//! output compared with a CPU reference, and a checked run must print no emulator report at
//! all (no race, no host memory, no uninitialized shared memory, no barrier mismatch).
//!
//! Full suite only (`GPU_LABS_FULL=1`): compiling the eight files, plain and checked, takes
//! about 35 s on a 2-core machine (then the kernel cache answers).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

const CRATE: &str = "candle-kernels";
const VERSION: &str = "0.11.1";

/// The crate's source folder in the cargo registry, fetched there when absent.
fn candle_src() -> PathBuf {
    let prefix = format!("{CRATE}-{VERSION}");
    if let Some(dir) = common::registry_crate(&prefix) {
        return dir.join("src");
    }
    let project = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fetch-candle-kernels");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch-candle-kernels\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
             publish = false\n\n[dependencies]\n{CRATE} = \"={VERSION}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let st = Command::new(cargo)
        .arg("fetch")
        .arg("--manifest-path")
        .arg(project.join("Cargo.toml"))
        .status()
        .unwrap();
    assert!(st.success(), "cargo fetch {CRATE} {VERSION} failed");
    common::registry_crate(&prefix)
        .expect("candle-kernels is in the registry after cargo fetch")
        .join("src")
}

/// Whether the full suite runs.
fn full_suite() -> bool {
    std::env::var("GPU_LABS_FULL").is_ok_and(|v| v == "1")
}

/// Runs test `name`'s body in a child plain, then checked, and asserts that the checked run
/// printed no report.
fn plain_and_checked(name: &str) {
    let plain = common::run_child(name);
    assert!(plain.status.success(), "plain run failed");
    assert!(String::from_utf8_lossy(&plain.stdout).contains("1 passed"));
    let stderr = common::checked_child(name, &[]);
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("gpu-labs emulator:"))
        .collect();
    assert!(reports.is_empty(), "checked run reported: {reports:#?}");
}

/// A test of public kernels: full suite only; the child runs `body`.
macro_rules! public {
    ($name:ident, $body:block) => {
        #[test]
        fn $name() {
            if common::is_child(stringify!($name)) {
                $body
                return;
            }
            if !full_suite() {
                eprintln!("skipped: full suite only (GPU_LABS_FULL=1): compiles candle's kernels");
                return;
            }
            candle_src();
            plain_and_checked(stringify!($name));
        }
    };
}

/// One of candle's `.cu` files compiled through the emulator's NVRTC, with its folder as the
/// include path (as candle's build does).
struct Kernels {
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
}

impl Kernels {
    fn new(file: &str) -> Self {
        let dir = candle_src();
        let src = std::fs::read_to_string(dir.join(file)).unwrap();
        let opts = CompileOptions {
            include_paths: vec![dir.to_string_lossy().into_owned()],
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(src, opts).unwrap_or_else(|e| panic!("{file}: {e:?}"));
        let ctx = CudaContext::new(0).unwrap();
        let module = ctx.load_module(ptx).unwrap();
        Kernels {
            stream: ctx.default_stream(),
            module,
        }
    }
    fn f(&self, name: &str) -> CudaFunction {
        self.module.load_function(name).unwrap()
    }
    fn up<T: DeviceRepr + Clone>(&self, v: &[T]) -> CudaSlice<T> {
        self.stream.clone_htod(v).unwrap()
    }
    fn zeros<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, n: usize) -> CudaSlice<T> {
        self.stream.alloc_zeros(n).unwrap()
    }
    fn down<T: DeviceRepr + Clone + Default>(&self, d: &CudaSlice<T>) -> Vec<T> {
        self.stream.clone_dtoh(d).unwrap()
    }
}

/// Launches kernel `$name` of `$k` with `$cfg` and the arguments, each a place (`&x`,
/// `&mut y`), and waits for it.
macro_rules! launch {
    ($k:expr, $name:expr, $cfg:expr, $($arg:expr),+ $(,)?) => {{
        let f = $k.f($name);
        let mut l = $k.stream.launch_builder(&f);
        $( l.arg($arg); )+
        unsafe { l.launch($cfg) }.unwrap();
    }};
}

/// candle's launch for element-wise kernels: 1024 threads a block.
fn elementwise(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

/// Deterministic inputs in [-2, 2).
fn values(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            (s >> 8) as f32 / (1u32 << 24) as f32 * 4.0 - 2.0
        })
        .collect()
}

/// Asserts `got` is within `tol` (relative, or absolute near zero) of `want`, naming the index.
fn close(what: &str, got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(1.0),
            "{what}[{i}]: expected {w}, got {g}"
        );
    }
}

/// dims then strides of a contiguous tensor.
fn contiguous(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * dims[d + 1];
    }
    [dims, &strides[..]].concat()
}

public!(candle_elementwise, {
    let (rows, cols) = (37usize, 70usize);
    let n = rows * cols;
    let x = values(n, 1);
    let z = values(n, 3);
    let cfg = elementwise(n);
    // the transpose of a (rows, cols) matrix, as dims and strides
    let transposed = [cols, rows, 1, cols];
    let t = |i: usize| (i % rows) * cols + i / rows;
    // affine, contiguous and through the transpose (strided)
    let k = Kernels::new("affine.cu");
    let (xd, info, tinfo) = (
        k.up(&x),
        k.up(&contiguous(&[rows, cols])),
        k.up(&transposed),
    );
    let mut out = k.zeros::<f32>(n);
    for (what, i) in [("affine_f32", &info), ("affine_f32 (transposed)", &tinfo)] {
        launch!(
            k,
            "affine_f32",
            cfg,
            &n,
            &2usize,
            i,
            &xd,
            &mut out,
            &1.5f32,
            &-0.25f32
        );
        let tr = what.contains("transposed");
        let want: Vec<f32> = (0..n)
            .map(|i| x[if tr { t(i) } else { i }] * 1.5 - 0.25)
            .collect();
        close(what, &k.down(&out), &want, 1e-6);
    }

    // fill and copy2d
    let k = Kernels::new("fill.cu");
    let mut buf = k.zeros::<f32>(n);
    launch!(k, "fill_f32", cfg, &mut buf, &3.25f32, &n);
    assert!(k.down(&buf).iter().all(|v| *v == 3.25), "fill_f32");
    let src = k.up(&x);
    let mut dst = k.zeros::<f32>(rows * 80);
    let (d1, d2) = (rows as u32, cols as u32);
    launch!(k, "copy2d_f32", cfg, &src, &mut dst, &d1, &d2, &d2, &80u32);
    let got = k.down(&dst);
    for r in 0..rows {
        let want = &x[r * cols..(r + 1) * cols];
        close("copy2d_f32", &got[r * 80..r * 80 + cols], want, 0.0);
    }

    // unary: exp and gelu (tanh form) on contiguous data, sqrt of |x| through the transpose
    let k = Kernels::new("unary.cu");
    let absx: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let (xd, ad) = (k.up(&x), k.up(&absx));
    let (info, tinfo) = (k.up(&contiguous(&[rows, cols])), k.up(&transposed));
    let gelu = |v: f32| {
        let c = (2.0f32 / std::f32::consts::PI).sqrt();
        0.5 * v * (1.0 + (c * (v + 0.044715 * v * v * v)).tanh())
    };
    let mut out = k.zeros::<f32>(n);
    launch!(k, "uexp_f32", cfg, &n, &2usize, &info, &xd, &mut out);
    close(
        "uexp_f32",
        &k.down(&out),
        &x.iter().map(|v| v.exp()).collect::<Vec<_>>(),
        1e-5,
    );
    launch!(k, "ugelu_f32", cfg, &n, &2usize, &info, &xd, &mut out);
    close(
        "ugelu_f32",
        &k.down(&out),
        &x.iter().map(|v| gelu(*v)).collect::<Vec<_>>(),
        1e-5,
    );
    launch!(k, "usqrt_f32", cfg, &n, &2usize, &tinfo, &ad, &mut out);
    let want: Vec<f32> = (0..n).map(|i| absx[t(i)].sqrt()).collect();
    close("usqrt_f32 (transposed)", &k.down(&out), &want, 1e-6);

    // binary: add a row broadcast (stride 0) to every row; multiply contiguous
    let k = Kernels::new("binary.cu");
    let y = values(cols, 2);
    let (xd, yd, zd) = (k.up(&x), k.up(&y), k.up(&z));
    let info = k.up(&[rows, cols, cols, 1, 0, 1]);
    launch!(k, "badd_f32", cfg, &n, &2usize, &info, &xd, &yd, &mut out);
    let want: Vec<f32> = (0..n).map(|i| x[i] + y[i % cols]).collect();
    close("badd_f32 (broadcast)", &k.down(&out), &want, 1e-6);
    let info = k.up(&[rows, cols, cols, 1, cols, 1]);
    launch!(k, "bmul_f32", cfg, &n, &2usize, &info, &xd, &zd, &mut out);
    let want: Vec<f32> = (0..n).map(|i| x[i] * z[i]).collect();
    close("bmul_f32", &k.down(&out), &want, 1e-6);

    // where(ids, x, z)
    let k = Kernels::new("ternary.cu");
    let ids: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 0)).collect();
    let info = k.up(&[rows, cols, cols, 1, cols, 1, cols, 1]);
    let (idd, td, fd) = (k.up(&ids), k.up(&x), k.up(&z));
    let mut out = k.zeros::<f32>(n);
    launch!(
        k,
        "where_u8_f32",
        cfg,
        &n,
        &2usize,
        &info,
        &idd,
        &td,
        &fd,
        &mut out
    );
    let want: Vec<f32> = (0..n)
        .map(|i| if ids[i] != 0 { x[i] } else { z[i] })
        .collect();
    close("where_u8_f32", &k.down(&out), &want, 0.0);

    // casts to half and bfloat16 and back: exact values, and rounding to nearest even
    let k = Kernels::new("cast.cu");
    let mut v: Vec<f32> = (-100..100).map(|i| i as f32 / 8.0).collect();
    v.extend([
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        65504.0,
        1e-8,
    ]);
    let m = v.len();
    let (vd, info) = (k.up(&v), k.up(&contiguous(&[m])));
    for (there, back, bits) in [
        (
            "cast_f32_f16",
            "cast_f16_f32",
            [0x3c00u16, 0x3c02, 0x7bff, 0x0000],
        ),
        (
            "cast_f32_bf16",
            "cast_bf16_f32",
            [0x3f80u16, 0x3f80, 0x4780, 0x322c],
        ),
    ] {
        let mut h = k.zeros::<u16>(m);
        launch!(k, there, elementwise(m), &m, &1usize, &info, &vd, &mut h);
        let got = k.down(&h);
        assert_eq!(
            got[m - 4..],
            bits,
            "{there}: the last four values' rounding"
        );
        let mut out = k.zeros::<f32>(m);
        launch!(k, back, elementwise(m), &m, &1usize, &info, &h, &mut out);
        close(back, &k.down(&out)[..200], &v[..200], 0.0);
    }
});

public!(candle_reductions, {
    let k = Kernels::new("reduce.cu");
    let (rows, cols) = (6usize, 2048usize);
    let n = rows * cols;
    let x = values(n, 4);
    let xd = k.up(&x);
    let info = k.up(&contiguous(&[rows, cols]));
    let row = |r: usize| &x[r * cols..(r + 1) * cols];
    // candle's fast reductions: one block of 1024 threads a row
    let cfg = LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (1024, 1, 1),
        shared_mem_bytes: 0,
    };
    for name in ["fast_sum_f32", "fast_max_f32", "fast_min_f32"] {
        let mut out = k.zeros::<f32>(rows);
        launch!(k, name, cfg, &n, &cols, &2usize, &info, &xd, &mut out);
        let want: Vec<f32> = (0..rows)
            .map(|r| match name {
                "fast_sum_f32" => row(r).iter().sum(),
                "fast_max_f32" => row(r).iter().cloned().fold(f32::MIN, f32::max),
                _ => row(r).iter().cloned().fold(f32::MAX, f32::min),
            })
            .collect();
        close(name, &k.down(&out), &want, 1e-4);
    }
    let mut idx = k.zeros::<u32>(rows);
    launch!(
        k,
        "fast_argmax_f32",
        cfg,
        &n,
        &cols,
        &2usize,
        &info,
        &xd,
        &mut idx
    );
    for (r, got) in k.down(&idx).into_iter().enumerate() {
        let want = (0..cols).fold(0, |b, c| if row(r)[c] > row(r)[b] { c } else { b });
        assert_eq!(got as usize, want, "fast_argmax_f32 row {r}");
    }
    // sum over the last dimension with atomicAdd
    let sinfo = k.up(&[contiguous(&[rows, cols]), vec![cols, 1]].concat());
    let mut out = k.zeros::<f32>(rows);
    launch!(
        k,
        "sum_f32",
        elementwise(n),
        &n,
        &2usize,
        &1usize,
        &sinfo,
        &xd,
        &mut out
    );
    let sums: Vec<f32> = (0..rows).map(|r| row(r).iter().sum()).collect();
    close("sum_f32", &k.down(&out), &sums, 1e-4);
    // softmax: a row per block of (1, 32) threads
    let mut out = k.zeros::<f32>(n);
    let cfg32 = LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (1, 32, 1),
        shared_mem_bytes: 0,
    };
    let ncols = cols as i32;
    launch!(k, "softmax_f32", cfg32, &xd, &mut out, &ncols);
    let mut want = Vec::new();
    for r in 0..rows {
        let mx = row(r).iter().cloned().fold(f32::MIN, f32::max);
        let e: Vec<f32> = row(r).iter().map(|v| (v - mx).exp()).collect();
        let s: f32 = e.iter().sum();
        want.extend(e.iter().map(|v| v / s));
    }
    close("softmax_f32", &k.down(&out), &want, 1e-4);
    // rmsnorm and layernorm: a row per block of 1024 threads, with and without alpha
    let alpha = k.up(&values(cols, 5));
    let a = values(cols, 5);
    let beta = k.up(&values(cols, 6));
    let b = values(cols, 6);
    let eps = 1e-5f32;
    let mut out = k.zeros::<f32>(n);
    launch!(
        k,
        "rmsnorm_f32",
        cfg,
        &xd,
        &mut out,
        &alpha,
        &ncols,
        &1024i32,
        &eps
    );
    let mut want = Vec::new();
    for r in 0..rows {
        let ms = row(r).iter().map(|v| v * v).sum::<f32>() / cols as f32;
        let scale = 1.0 / (ms + eps).sqrt();
        want.extend(row(r).iter().zip(&a).map(|(v, a)| v * scale * a));
    }
    close("rmsnorm_f32", &k.down(&out), &want, 1e-4);
    launch!(
        k,
        "layernorm_f32",
        cfg,
        &xd,
        &mut out,
        &alpha,
        &beta,
        &ncols,
        &1024i32,
        &eps
    );
    let mut want = Vec::new();
    for r in 0..rows {
        let mean = row(r).iter().sum::<f32>() / cols as f32;
        let var = row(r).iter().map(|v| v * v).sum::<f32>() / cols as f32 - mean * mean;
        let inv = 1.0 / (var + eps).sqrt();
        want.extend(
            row(r)
                .iter()
                .zip(a.iter().zip(&b))
                .map(|(v, (a, b))| (v - mean) * inv * a + b),
        );
    }
    close("layernorm_f32", &k.down(&out), &want, 1e-3);
});

public!(candle_indexing_and_sort, {
    let k = Kernels::new("indexing.cu");
    // index_select along dim 0 of a (10, 7) matrix, gather along dim 1, scatter_add along dim 0
    let (src_rows, cols) = (10usize, 7usize);
    let x = values(src_rows * cols, 7);
    let xd = k.up(&x);
    let ids: Vec<u32> = vec![3, 0, 9, 3, 5];
    let idd = k.up(&ids);
    let n_ids = ids.len();
    let n = n_ids * cols;
    let info = k.up(&contiguous(&[src_rows, cols]));
    let mut out = k.zeros::<f32>(n);
    let sizes = (1usize, src_rows, n_ids, cols);
    launch!(
        k,
        "is_u32_f32",
        elementwise(n),
        &n,
        &2usize,
        &info,
        &idd,
        &xd,
        &mut out,
        &sizes.0,
        &sizes.1,
        &sizes.2,
        &sizes.3
    );
    let want: Vec<f32> = (0..n)
        .map(|i| x[ids[i / cols] as usize * cols + i % cols])
        .collect();
    close("is_u32_f32", &k.down(&out), &want, 0.0);
    let gids: Vec<u32> = (0..src_rows * 3).map(|i| ((i * 5) % cols) as u32).collect();
    let gd = k.up(&gids);
    let gn = gids.len();
    let mut out = k.zeros::<f32>(gn);
    launch!(
        k,
        "gather_u32_f32",
        elementwise(gn),
        &gn,
        &gd,
        &xd,
        &mut out,
        &src_rows,
        &cols,
        &3usize,
        &1usize
    );
    let want: Vec<f32> = (0..gn)
        .map(|i| x[(i / 3) * cols + gids[i] as usize])
        .collect();
    close("gather_u32_f32", &k.down(&out), &want, 0.0);
    let dst_rows = 4usize;
    let sids: Vec<u32> = (0..src_rows).map(|i| (i % dst_rows) as u32).collect();
    let sd = k.up(&sids);
    let n_sids = sids.len();
    let mut acc = k.zeros::<f32>(dst_rows * cols);
    launch!(
        k,
        "ia_u32_f32",
        elementwise(cols),
        &sd,
        &n_sids,
        &xd,
        &mut acc,
        &1usize,
        &src_rows,
        &dst_rows,
        &cols
    );
    let mut want = vec![0f32; dst_rows * cols];
    for r in 0..src_rows {
        for c in 0..cols {
            want[sids[r] as usize * cols + c] += x[r * cols + c];
        }
    }
    close("ia_u32_f32", &k.down(&acc), &want, 1e-6);

    // argsort: a row per block, ncols_pad threads, bitonic sort in dynamic shared memory
    let k = Kernels::new("sort.cu");
    let (rows, cols, pad) = (3usize, 100usize, 128usize);
    let x = values(rows * cols, 8);
    let xd = k.up(&x);
    let (ncols, npad) = (cols as i32, pad as i32);
    let cfg = LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (pad as u32, 1, 1),
        shared_mem_bytes: (pad * 4) as u32,
    };
    for (name, asc) in [("asort_asc_f32", true), ("asort_desc_f32", false)] {
        let mut out = k.zeros::<u32>(rows * cols);
        launch!(k, name, cfg, &xd, &mut out, &ncols, &npad);
        let got = k.down(&out);
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let mut want: Vec<u32> = (0..cols as u32).collect();
            want.sort_by(|a, b| row[*a as usize].total_cmp(&row[*b as usize]));
            if !asc {
                want.reverse();
            }
            assert_eq!(&got[r * cols..(r + 1) * cols], &want[..], "{name} row {r}");
        }
    }
});
