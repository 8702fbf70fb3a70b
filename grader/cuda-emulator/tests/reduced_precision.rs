//! The bf16 pairs (`__nv_bfloat162`) and cache-hinted loads and stores that public training
//! kernels use, against their documented semantics: each half of a pair computed as its own
//! bf16 operation, rounded once to nearest even (a fused multiply-add included); the halves
//! taken apart and put together as named; `atomicAdd` on a pair atomic for each half; `__ldcg`,
//! `__stcg` and the other hints the same access as a plain one. The references are computed
//! here exactly (in `f64`) and rounded by hand, not by the emulator's own code. Run plain and
//! checked (no report).

mod common;

use cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::compile_ptx;

const THREADS: usize = 64;

const KERNEL: &str = r#"
#include <cuda_bf16.h>
extern "C" __global__ void pairs(const unsigned int* in, unsigned int* out, unsigned int* sum) {
    int i = threadIdx.x;
    unsigned int wa = __ldcg(&in[2 * i]), wb = __ldca(&in[2 * i + 1]);
    __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162*>(&wa);
    __nv_bfloat162 b = *reinterpret_cast<__nv_bfloat162*>(&wb);
    __nv_bfloat162 r[7];
    r[0] = a + b;
    r[1] = a * b;
    r[2] = __hfma2(a, b, __hsub2(b, a));
    r[3] = __halves2bfloat162(__low2bfloat16(a), __high2bfloat16(b));
    float2 f = __bfloat1622float2(a);
    r[4] = __float22bfloat162_rn(make_float2(f.x / 3.0f, f.y / 3.0f));
    r[5] = a;
    r[5] -= b;
    r[6] = __hneg2(__lows2bfloat162(a, b));
    for (int k = 0; k < 7; ++k) {
        __stcg(&out[7 * i + k], *reinterpret_cast<unsigned int*>(&r[k]));
    }
    atomicAdd(reinterpret_cast<__nv_bfloat162*>(sum), __float2bfloat162_rn(1.0f));
}
"#;

/// bf16 bits of `x` rounded to nearest even (ties to even), from an exact `f64` (normal
/// values only, as the test's are).
fn bf16(x: f64) -> u16 {
    let b = x.to_bits();
    // Keep 7 of f64's 52 mantissa bits: to nearest, ties to even.
    let half = 1u64 << 44;
    let low = b & ((1u64 << 45) - 1);
    let mut kept = b >> 45;
    if low > half || (low == half && kept & 1 == 1) {
        kept += 1;
    }
    let rounded = f64::from_bits(kept << 45);
    ((rounded as f32).to_bits() >> 16) as u16
}

/// The value of bf16 bits.
fn value(h: u16) -> f64 {
    f64::from(f32::from_bits(u32::from(h) << 16))
}

/// A pair's word: `lo` in the low half (the pair's `.x`), `hi` in the high.
fn word(lo: u16, hi: u16) -> u32 {
    u32::from(lo) | u32::from(hi) << 16
}

/// The test's inputs: pairs of normal bf16 values of mixed signs and magnitudes, some sums
/// landing on ties.
fn inputs() -> Vec<u32> {
    (0..THREADS * 2)
        .map(|i| {
            let v = |k: usize| {
                let x = ((k * 37 % 101) as f64 - 50.0) * 0.37 + (k % 7) as f64 * 1e-3;
                bf16(if x == 0.0 { 1.0 } else { x })
            };
            word(v(2 * i), v(2 * i + 1))
        })
        .collect()
}

/// What each thread must write, from the documented semantics.
fn expected(input: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    for i in 0..THREADS {
        let (wa, wb) = (input[2 * i], input[2 * i + 1]);
        let halves = |w: u32| [(w & 0xffff) as u16, (w >> 16) as u16];
        let (a, b) = (halves(wa), halves(wb));
        let each = |f: &dyn Fn(f64, f64) -> f64| {
            let r: Vec<u16> = (0..2).map(|h| bf16(f(value(a[h]), value(b[h])))).collect();
            word(r[0], r[1])
        };
        out.push(each(&|x, y| x + y));
        out.push(each(&|x, y| x * y));
        // fma(a, b, b - a): the difference rounded first (its own operation), then one
        // rounding of the exact a·b + (b − a).
        out.push(each(&|x, y| x * y + value(bf16(y - x))));
        out.push(word(a[0], b[1]));
        // f / 3 in f32, then to bf16 (the conversion rounds once from f32).
        let third = |h: u16| bf16(f64::from((value(h) as f32) / 3.0));
        out.push(word(third(a[0]), third(a[1])));
        out.push(each(&|x, y| x - y));
        out.push(word(a[0] ^ 0x8000, b[0] ^ 0x8000));
    }
    out
}

fn run() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = ctx.load_module(compile_ptx(KERNEL).unwrap()).unwrap();
    let f = module.load_function("pairs").unwrap();
    let input = inputs();
    let in_d = stream.clone_htod(&input).unwrap();
    let mut out = stream.alloc_zeros::<u32>(THREADS * 7).unwrap();
    let mut sum = stream.alloc_zeros::<u32>(1).unwrap();
    let mut l = stream.launch_builder(&f);
    l.arg(&in_d).arg(&mut out).arg(&mut sum);
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    unsafe { l.launch(cfg) }.unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want = expected(&input);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "thread {} result {}: got {g:08x}, want {w:08x}",
            k / 7,
            k % 7
        );
    }
    // 64 additions of 1.0 to each half of a pair that starts at 0: 64 exactly.
    let total = stream.clone_dtoh(&sum).unwrap()[0];
    let sixty_four = bf16(64.0);
    assert_eq!(total, word(sixty_four, sixty_four), "{total:08x}");
}

#[test]
fn bf16_pairs_and_cache_hints_follow_their_documented_semantics() {
    let name = "bf16_pairs_and_cache_hints_follow_their_documented_semantics";
    if common::is_child(name) {
        run();
        return;
    }
    let plain = common::run_child(name);
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let stderr = common::checked_child(name, &[]);
    assert!(
        !stderr.contains("gpu-labs emulator:"),
        "a checked run reports nothing: {stderr}"
    );
}

#[test]
fn the_reference_rounds_ties_to_even() {
    // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: to the even one, 1.
    assert_eq!(bf16(1.0 + 2f64.powi(-8)), 0x3f80);
    // 1 + 3·2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: to the even one, 1 + 2^-6.
    assert_eq!(bf16(1.0 + 3.0 * 2f64.powi(-8)), 0x3f82);
    assert_eq!(bf16(-2.5), 0xc020);
}
