// gpu-labs emulator: the basics of CUDA's cooperative groups, on the emulator's own barriers,
// shuffles and votes (only CUDA's public names: this header is read after the prelude's
// internals are poisoned). Supported: this_thread_block() (sync, thread_rank, size,
// num_threads, group_index, thread_index, dim_threads), tiled_partition<N>(block) for N = 1,
// 2, 4, 8, 16, 32 (sync, thread_rank, size, num_threads, meta_group_rank, meta_group_size,
// shfl, shfl_up, shfl_down, shfl_xor, any, all, ballot), cooperative_groups::sync(g),
// cooperative_groups::reduce(tile, v, op) with plus, less, greater, bit_and, bit_or, bit_xor,
// and memcpy_async(group, dst, src, count) with wait(group) and wait_prior<N>(group).
// Anything else fails to compile with a message saying so.
#pragma once
#include <gpu_labs_async.h>
namespace cooperative_groups {
namespace __gl_cg {
static inline unsigned block_rank() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline unsigned block_size() { return blockDim.x * blockDim.y * blockDim.z; }
template <class T>
struct unsupported {
    static constexpr bool no = false;
};
}  // namespace __gl_cg

#define __GL_CG_UNSUPPORTED(WHAT)                                                              \
    static_assert(__gl_cg::unsupported<T>::no,                                                 \
                  "gpu-labs emulator: cooperative_groups " WHAT " is not supported on the CPU " \
                  "emulator; supported: this_thread_block() (sync, thread_rank, size), "        \
                  "tiled_partition<N>(block) for N up to 32 (shfl, shfl_up, shfl_down, "        \
                  "shfl_xor, any, all, ballot, sync, thread_rank, meta_group_rank) and "       \
                  "reduce(tile, v, plus/less/greater)")

struct thread_block {
    void sync() const { __syncthreads(); }
    unsigned thread_rank() const { return __gl_cg::block_rank(); }
    unsigned size() const { return __gl_cg::block_size(); }
    unsigned num_threads() const { return __gl_cg::block_size(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 dim_threads() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
    dim3 group_dim() const { return dim_threads(); }
};
static inline thread_block this_thread_block() { return thread_block(); }

template <unsigned N>
struct thread_block_tile {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                  "gpu-labs emulator: tiled_partition<N> needs N a power of two up to 32");
    static constexpr unsigned full = 0xffffffffu;
    // The lanes of this tile in its warp: the mask its operations pass (a tile of 16 in a
    // branch that only its half of the warp takes is correct).
    unsigned lanes() const {
        return N == 32 ? full : ((1u << N) - 1) << ((__gl_cg::block_rank() & 31) & ~(N - 1));
    }
    void sync(int line = __builtin_LINE()) const { __syncwarp(lanes(), line); }
    unsigned thread_rank() const { return __gl_cg::block_rank() & (N - 1); }
    static constexpr unsigned size() { return N; }
    static constexpr unsigned num_threads() { return N; }
    unsigned meta_group_rank() const { return __gl_cg::block_rank() / N; }
    unsigned meta_group_size() const { return (__gl_cg::block_size() + N - 1) / N; }
    template <class V>
    V shfl(V v, int src, int line = __builtin_LINE()) const { return __shfl_sync(lanes(), v, src, N, line); }
    template <class V>
    V shfl_down(V v, unsigned d, int line = __builtin_LINE()) const { return __shfl_down_sync(lanes(), v, d, N, line); }
    template <class V>
    V shfl_up(V v, unsigned d, int line = __builtin_LINE()) const { return __shfl_up_sync(lanes(), v, d, N, line); }
    template <class V>
    V shfl_xor(V v, int m, int line = __builtin_LINE()) const { return __shfl_xor_sync(lanes(), v, m, N, line); }
    // The votes of this tile's threads, bit i for its thread i.
    unsigned ballot(int pred, int line = __builtin_LINE()) const {
        unsigned all = __ballot_sync(lanes(), pred, line);
        unsigned base = (__gl_cg::block_rank() & 31) & ~(N - 1);
        unsigned mask = N == 32 ? full : ((1u << N) - 1);
        return (all >> base) & mask;
    }
    int any(int pred, int line = __builtin_LINE()) const { return ballot(pred, line) != 0; }
    int all(int pred, int line = __builtin_LINE()) const { return ballot(!pred, line) == 0; }
};
template <unsigned N, class G>
static inline thread_block_tile<N> tiled_partition(const G&) { return thread_block_tile<N>(); }
template <class T = void>
static inline thread_block tiled_partition(const thread_block&, unsigned) {
    __GL_CG_UNSUPPORTED("tiled_partition(group, size) with a run-time size");
    return thread_block();
}
template <class G>
static inline void sync(const G& g) { g.sync(); }

template <class T>
struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T>
struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T>
struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T>
struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T>
struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T>
struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };
// Every thread of the tile gets the reduction of all of them.
template <unsigned N, class V, class Op>
static inline V reduce(const thread_block_tile<N>& g, V v, Op op) {
    for (unsigned o = N / 2; o > 0; o /= 2) v = op(v, g.shfl_xor(v, (int)o));
    return v;
}

struct grid_group {};
template <class T = void>
static inline grid_group this_grid() {
    __GL_CG_UNSUPPORTED("this_grid() (grid-wide synchronisation)");
    return grid_group();
}
template <class T = void>
static inline thread_block coalesced_threads() {
    __GL_CG_UNSUPPORTED("coalesced_threads()");
    return thread_block();
}
template <class T = void, class G>
static inline thread_block labeled_partition(const G&, int) {
    __GL_CG_UNSUPPORTED("labeled_partition()");
    return thread_block();
}
template <class T = void, class G>
static inline thread_block binary_partition(const G&, bool) {
    __GL_CG_UNSUPPORTED("binary_partition()");
    return thread_block();
}
// The group copies `count` bytes from `src` to `dst` (every thread of it calls this); done by
// `wait(group)`, which also synchronises the group (gpu_labs_async.h).
template <class G>
static inline void memcpy_async(const G& g, void* dst, const void* src, unsigned long count) {
    __gl_async::start(dst, src, count, g.thread_rank(), g.size());
}
template <class G>
static inline void memcpy_async(const G& g, void* dst, unsigned long dst_size, const void* src,
                                unsigned long src_size) {
    __gl_async::start(dst, src, dst_size < src_size ? dst_size : src_size, g.thread_rank(), g.size());
}
template <class G>
static inline void wait(const G& g) {
    __gl_async::drain();
    g.sync();
}
// Waits for all but the last N batches: the emulator waits for all of them, which CUDA allows.
template <unsigned N, class G>
static inline void wait_prior(const G& g) {
    wait(g);
}
#undef __GL_CG_UNSUPPORTED
}  // namespace cooperative_groups
