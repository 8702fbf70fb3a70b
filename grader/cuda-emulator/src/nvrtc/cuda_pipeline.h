// gpu-labs emulator: `cuda::pipeline` and the pipeline primitives, for asynchronous copies into
// shared memory (gpu_labs_async.h). A thread's pipeline (`cuda::make_pipeline()`) or a group's
// (`cuda::make_pipeline(group, &shared_state)`): `producer_acquire`, `producer_commit`,
// `consumer_wait` (the thread's copies are done; a group's pipeline then synchronises the
// block), `consumer_release`; `cuda::memcpy_async(dst, src, size, pipe)` and with a group;
// `__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`.
#pragma once
#include <gpu_labs_async.h>
namespace cuda {
template <thread_scope Scope>
struct pipeline {
    void producer_acquire() {}
    void producer_commit() {}
    void consumer_wait() {
        __gl_async::drain();
        if (Scope != thread_scope_thread) __syncthreads();
    }
    void consumer_release() {}
};
template <thread_scope Scope, unsigned char Stages = 1>
struct pipeline_shared_state {
    long unused;
};
static inline pipeline<thread_scope_thread> make_pipeline() { return pipeline<thread_scope_thread>(); }
template <class G, thread_scope S, unsigned char N>
static inline pipeline<S> make_pipeline(const G&, pipeline_shared_state<S, N>*) {
    return pipeline<S>();
}
template <unsigned Prior, thread_scope S>
static inline void pipeline_consumer_wait_prior(pipeline<S>& p) {
    p.consumer_wait();
}
template <class T, thread_scope S>
static inline void memcpy_async(T* dst, const T* src, unsigned long size, pipeline<S>&) {
    __gl_async::start(dst, src, size, 0, 1);
}
template <class G, class T, thread_scope S>
static inline void memcpy_async(const G& g, T* dst, const T* src, unsigned long size, pipeline<S>&) {
    __gl_async::start(dst, src, size, g.thread_rank(), g.size());
}
}  // namespace cuda
static inline void __pipeline_memcpy_async(void* dst, const void* src, unsigned long size,
                                           unsigned long zero_fill = 0) {
    __gl_async::start(dst, src, size - zero_fill, 0, 1);
    if (zero_fill)
        for (unsigned long i = size - zero_fill; i < size; i++) ((char*)dst)[i] = 0;
}
static inline void __pipeline_commit() {}
static inline void __pipeline_wait_prior(unsigned long) { __gl_async::drain(); }
