// gpu-labs CUDA emulator: the reduced-precision types of cuda_fp16.h, cuda_bf16.h and
// cuda_fp8.h (one header: the three include it). Values are stored exactly as on a GPU
// (16 or 8 bits, IEEE / bfloat16 / OCP FP8 encodings); arithmetic converts to float and
// rounds back to nearest even, as the GPU's half instructions do for one operation.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };

namespace __gl_fp {
static inline float bits_to_float(uint32_t b) { return __builtin_bit_cast(float, b); }
static inline uint32_t float_to_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
// IEEE binary16 through the compiler's own type: exact, round to nearest even.
static inline unsigned short f2h(float f) { return __builtin_bit_cast(unsigned short, (_Float16)f); }
static inline float h2f(unsigned short b) { return (float)__builtin_bit_cast(_Float16, b); }
// bfloat16: the upper half of a float, rounded to nearest even; NaN stays a (quiet) NaN.
static inline unsigned short f2bf(float f) {
    uint32_t b = float_to_bits(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40);
    b += 0x7fffu + ((b >> 16) & 1u);
    return (unsigned short)(b >> 16);
}
static inline float bf2f(unsigned short b) { return bits_to_float((uint32_t)b << 16); }
// From double, rounded once (a fused multiply-add's exact result, say): to nearest even.
static inline unsigned short d2h(double d) { return __builtin_bit_cast(unsigned short, (_Float16)d); }
static inline unsigned short d2bf(double d) {
    uint64_t b = __builtin_bit_cast(uint64_t, d);
    if ((b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return f2bf((float)d);
    // Keep 7 of the 52 mantissa bits, to nearest even, then narrow (exact from here on).
    b += (1ull << 44) - 1 + ((b >> 45) & 1);
    b &= ~((1ull << 45) - 1);
    return f2bf((float)__builtin_bit_cast(double, b));
}
}

// The operations both 16-bit types share, defined in terms of their conversions to float.
#define __GL_HALF_TYPE(T, RAW, TO, FROM, FROM_D)                                                   \
    struct T {                                                                                   \
        unsigned short __x;                                                                      \
        T() = default;                                                                           \
        constexpr T(const RAW& r) : __x(r.x) {}                                                  \
        template <class A, typename std::enable_if<std::is_arithmetic<A>::value, int>::type = 0> \
        T(A v) : __x(TO((float)v)) {}                                                            \
        operator RAW() const { return RAW{__x}; }                                                \
        operator float() const { return FROM(__x); }                                             \
        T& operator=(const RAW& r) { __x = r.x; return *this; }                                  \
        template <class A, typename std::enable_if<std::is_arithmetic<A>::value, int>::type = 0> \
        T& operator=(A v) { __x = TO((float)v); return *this; }                                  \
    };                                                                                           \
    static inline T operator+(const T& a, const T& b) { return T((float)a + (float)b); }         \
    static inline T operator-(const T& a, const T& b) { return T((float)a - (float)b); }         \
    static inline T operator*(const T& a, const T& b) { return T((float)a * (float)b); }         \
    static inline T operator/(const T& a, const T& b) { return T((float)a / (float)b); }         \
    static inline T& operator+=(T& a, const T& b) { return a = a + b; }                          \
    static inline T& operator-=(T& a, const T& b) { return a = a - b; }                          \
    static inline T& operator*=(T& a, const T& b) { return a = a * b; }                          \
    static inline T& operator/=(T& a, const T& b) { return a = a / b; }                          \
    static inline T operator-(const T& a) { T r; r.__x = (unsigned short)(a.__x ^ 0x8000u); return r; } \
    static inline T operator+(const T& a) { return a; }                                          \
    static inline bool operator==(const T& a, const T& b) { return (float)a == (float)b; }       \
    static inline bool operator!=(const T& a, const T& b) { return (float)a != (float)b; }       \
    static inline bool operator<(const T& a, const T& b) { return (float)a < (float)b; }         \
    static inline bool operator>(const T& a, const T& b) { return (float)a > (float)b; }         \
    static inline bool operator<=(const T& a, const T& b) { return (float)a <= (float)b; }       \
    static inline bool operator>=(const T& a, const T& b) { return (float)a >= (float)b; }       \
    static inline bool __hisnan(T a) { return std::isnan((float)a); }                            \
    static inline bool __hisinf(T a) { return std::isinf((float)a); }                            \
    static inline T __hadd(T a, T b) { return a + b; }                                           \
    static inline T __hsub(T a, T b) { return a - b; }                                           \
    static inline T __hmul(T a, T b) { return a * b; }                                           \
    static inline T __hdiv(T a, T b) { return a / b; }                                           \
    static inline T __hneg(T a) { return -a; }                                                   \
    static inline T __habs(T a) { T r; r.__x = (unsigned short)(a.__x & 0x7fffu); return r; }    \
    static inline T __hfma(T a, T b, T c) {                                                      \
        /* Rounded once, as the GPU's fused multiply-add is: exact in double for 16-bit inputs. */ \
        T r; r.__x = FROM_D(fma((double)(float)a, (double)(float)b, (double)(float)c)); return r; \
    }                                                                                            \
    static inline T __hmax(T a, T b) { return T(fmaxf((float)a, (float)b)); }                    \
    static inline T __hmin(T a, T b) { return T(fminf((float)a, (float)b)); }                    \
    static inline T __hmax_nan(T a, T b) { return __hisnan(a) ? a : (__hisnan(b) ? b : __hmax(a, b)); } \
    static inline T __hmin_nan(T a, T b) { return __hisnan(a) ? a : (__hisnan(b) ? b : __hmin(a, b)); } \
    static inline bool __heq(T a, T b) { return a == b; }                                        \
    static inline bool __hne(T a, T b) { return a != b; }                                        \
    static inline bool __hlt(T a, T b) { return a < b; }                                         \
    static inline bool __hle(T a, T b) { return a <= b; }                                        \
    static inline bool __hgt(T a, T b) { return a > b; }                                         \
    static inline bool __hge(T a, T b) { return a >= b; }                                        \
    static inline T hsqrt(T a) { return T(sqrtf((float)a)); }                                    \
    static inline T hrsqrt(T a) { return T(1.0f / sqrtf((float)a)); }                            \
    static inline T hrcp(T a) { return T(1.0f / (float)a); }                                     \
    static inline T hexp(T a) { return T(expf((float)a)); }                                      \
    static inline T hexp2(T a) { return T(exp2f((float)a)); }                                    \
    static inline T hexp10(T a) { return T(powf(10.0f, (float)a)); }                             \
    static inline T hlog(T a) { return T(logf((float)a)); }                                      \
    static inline T hlog2(T a) { return T(log2f((float)a)); }                                    \
    static inline T hlog10(T a) { return T(log10f((float)a)); }                                  \
    static inline T hsin(T a) { return T(sinf((float)a)); }                                      \
    static inline T hcos(T a) { return T(cosf((float)a)); }                                      \
    static inline T htanh(T a) { return T(tanhf((float)a)); }                                    \
    static inline T hfloor(T a) { return T(floorf((float)a)); }                                  \
    static inline T hceil(T a) { return T(ceilf((float)a)); }                                    \
    static inline T htrunc(T a) { return T(truncf((float)a)); }                                  \
    static inline T hrint(T a) { return T(nearbyintf((float)a)); }                               \
    static inline T __GL_CAS(T)(T* p, T v, T (*f)(T, T)) {                                        \
        unsigned short* q = (unsigned short*)p;                                                  \
        unsigned short old = *q, assumed;                                                        \
        do {                                                                                     \
            assumed = old;                                                                       \
            old = atomicCAS(q, assumed, f(T(RAW{assumed}), v).__x);                              \
        } while (old != assumed);                                                                \
        return T(RAW{old});                                                                      \
    }                                                                                            \
    static inline T atomicAdd(T* p, T v) { return __GL_CAS(T)(p, v, __hadd); }                   \
    static inline T atomicMax(T* p, T v) { return __GL_CAS(T)(p, v, __hmax); }                   \
    static inline T atomicMin(T* p, T v) { return __GL_CAS(T)(p, v, __hmin); }                   \
    /* Two values in one 32-bit word (4-byte aligned, as CUDA's). */                            \
    struct alignas(4) T##2 { T x, y; };                                                          \
    static inline T##2 __GL_PAIR(T)(T##2 a, T##2 b, T (*f)(T, T)) { return T##2{f(a.x, b.x), f(a.y, b.y)}; } \
    static inline T##2 __hadd2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hadd); }             \
    static inline T##2 __hsub2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hsub); }             \
    static inline T##2 __hmul2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hmul); }             \
    static inline T##2 __hdiv2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hdiv); }             \
    static inline T##2 __hmax2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hmax); }             \
    static inline T##2 __hmin2(T##2 a, T##2 b) { return __GL_PAIR(T)(a, b, __hmin); }             \
    static inline T##2 __hfma2(T##2 a, T##2 b, T##2 c) { return T##2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)}; } \
    static inline T##2 __hneg2(T##2 a) { return T##2{-a.x, -a.y}; }                              \
    static inline T##2 __habs2(T##2 a) { return T##2{__habs(a.x), __habs(a.y)}; }                \
    static inline T##2 operator+(const T##2& a, const T##2& b) { return __hadd2(a, b); }          \
    static inline T##2 operator-(const T##2& a, const T##2& b) { return __hsub2(a, b); }          \
    static inline T##2 operator*(const T##2& a, const T##2& b) { return __hmul2(a, b); }          \
    static inline T##2 operator/(const T##2& a, const T##2& b) { return __hdiv2(a, b); }          \
    static inline T##2 operator-(const T##2& a) { return __hneg2(a); }                           \
    static inline T##2& operator+=(T##2& a, const T##2& b) { return a = a + b; }                 \
    static inline T##2& operator-=(T##2& a, const T##2& b) { return a = a - b; }                 \
    static inline T##2& operator*=(T##2& a, const T##2& b) { return a = a * b; }                 \
    static inline T##2& operator/=(T##2& a, const T##2& b) { return a = a / b; }                 \
    static inline bool operator==(const T##2& a, const T##2& b) { return a.x == b.x && a.y == b.y; } \
    static inline bool operator!=(const T##2& a, const T##2& b) { return !(a == b); }           \
    /* Atomic for each half on its own (CUDA does not make the pair one atomic access). */      \
    static inline T##2 atomicAdd(T##2* p, T##2 v) { return T##2{atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y)}; }
#define __GL_PAIR(T) __gl_pair_##T
#define __GL_CAS(T) __gl_cas_##T

__GL_HALF_TYPE(__half, __half_raw, ::__gl_fp::f2h, ::__gl_fp::h2f, ::__gl_fp::d2h)
__GL_HALF_TYPE(__nv_bfloat16, __nv_bfloat16_raw, ::__gl_fp::f2bf, ::__gl_fp::bf2f, ::__gl_fp::d2bf)
#undef __GL_HALF_TYPE
#undef __GL_PAIR
#undef __GL_CAS
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half((float)d); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half __int2half_rn(int i) { return __half((float)i); }
static inline int __half2int_rz(__half h) { return (int)(float)h; }
static inline int __half2int_rn(__half h) { return (int)nearbyintf((float)h); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short b) { return __half(__half_raw{b}); }
static inline __half __short_as_half(short b) { return __half(__half_raw{(unsigned short)b}); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
static inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
static inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16((float)d); }
static inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { return __nv_bfloat16(__nv_bfloat16_raw{b}); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)}; }
static inline __nv_bfloat162 __float2bfloat162_rn(float a) { return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(a)}; }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162{a, b}; }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162{a, a}; }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 a) { return a.y; }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.x, b.x}; }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162{a.y, b.y}; }
static inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162{a.x, a.x}; }
static inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162{a.y, a.y}; }
static inline float __low2float(__nv_bfloat162 h) { return (float)h.x; }
static inline float __high2float(__nv_bfloat162 h) { return (float)h.y; }
static inline __half __low2half(__half2 a) { return a.x; }
static inline __half __high2half(__half2 a) { return a.y; }
static inline __half2 __half2half2(__half a) { return __half2{a, a}; }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2{a.x, b.x}; }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2{a.y, b.y}; }
static inline float2 __half22float2(__half2 a) { return float2{(float)a.x, (float)a.y}; }
static inline __half2 __float22half2_rn(float2 a) { return __half2{__half(a.x), __half(a.y)}; }
static inline float2 __bfloat1622float2(__nv_bfloat162 a) { return float2{(float)a.x, (float)a.y}; }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 a) { return __nv_bfloat162{__nv_bfloat16(a.x), __nv_bfloat16(a.y)}; }

// ---------------------------------------------------------------- 8-bit floats (cuda_fp8.h)
typedef unsigned char __nv_fp8_storage_t;
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };

namespace __gl_fp {
// Exponent and mantissa widths of each interpretation; E4M3 has no infinity (its largest
// value is 448 and S.1111.111 is NaN), E5M2 is IEEE-like (largest 57344).
static inline float fp8_to_float(unsigned char b, __nv_fp8_interpretation_t k) {
    int mbits = k == __NV_E4M3 ? 3 : 2, bias = k == __NV_E4M3 ? 7 : 15;
    int sign = b >> 7, e = (b >> mbits) & ((k == __NV_E4M3) ? 0xf : 0x1f), m = b & ((1 << mbits) - 1);
    float v;
    if (k == __NV_E4M3 && e == 0xf && m == 7) v = NAN;
    else if (k == __NV_E5M2 && e == 0x1f) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexpf((float)m, 1 - bias - mbits);
    else v = ldexpf((float)((1 << mbits) | m), e - bias - mbits);
    return sign ? -v : v;
}
static inline unsigned char float_to_fp8(float f, __nv_fp8_interpretation_t k, __nv_saturation_t sat) {
    int mbits = k == __NV_E4M3 ? 3 : 2, bias = k == __NV_E4M3 ? 7 : 15;
    float maxv = k == __NV_E4M3 ? 448.0f : 57344.0f;
    unsigned char sign = std::signbit(f) ? 0x80 : 0;
    if (std::isnan(f)) return k == __NV_E4M3 ? 0x7f : 0x7f;
    float a = fabsf(f);
    int e = a == 0.0f ? 1 - bias : ilogbf(a);
    if (e < 1 - bias) e = 1 - bias;
    float r = nearbyintf(ldexpf(a, mbits - e));  // to nearest even, in units of the last place
    a = ldexpf(r, e - mbits);
    if (a > maxv || std::isinf(a)) {
        if (sat == __NV_SATFINITE || k == __NV_E4M3) {
            if (sat == __NV_SATFINITE) a = maxv;
            else return sign | 0x7f;
        } else {
            return sign | 0x7c;
        }
    }
    if (a == 0.0f) return sign;
    e = ilogbf(a);
    if (e < 1 - bias) return sign | (unsigned char)ldexpf(a, bias - 1 + mbits);
    unsigned m = (unsigned)ldexpf(a, mbits - e) & ((1u << mbits) - 1);
    return sign | (unsigned char)(((e + bias) << mbits) | m);
}
}

static inline __half_raw __nv_cvt_fp8_to_halfraw(__nv_fp8_storage_t b, __nv_fp8_interpretation_t k) {
    return __half_raw{::__gl_fp::f2h(::__gl_fp::fp8_to_float(b, k))};
}
static inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(float f, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
    return ::__gl_fp::float_to_fp8(f, k, s);
}
#define __GL_FP8_TYPE(T, K)                                                                      \
    struct T {                                                                                   \
        __nv_fp8_storage_t __x;                                                                  \
        T() = default;                                                                           \
        template <class A, typename std::enable_if<std::is_arithmetic<A>::value, int>::type = 0> \
        explicit T(A v) : __x(::__gl_fp::float_to_fp8((float)v, K, __NV_SATFINITE)) {}          \
        explicit T(__half h) : T((float)h) {}                                                    \
        explicit T(__nv_bfloat16 h) : T((float)h) {}                                             \
        explicit operator float() const { return ::__gl_fp::fp8_to_float(__x, K); }             \
        explicit operator double() const { return (double)(float)*this; }                        \
        explicit operator __half() const { return __half((float)*this); }                        \
        explicit operator __nv_bfloat16() const { return __nv_bfloat16((float)*this); }          \
        template <class A, typename std::enable_if<std::is_integral<A>::value, int>::type = 0>   \
        explicit operator A() const { return (A)(float)*this; }                                  \
    };
__GL_FP8_TYPE(__nv_fp8_e4m3, __NV_E4M3)
__GL_FP8_TYPE(__nv_fp8_e5m2, __NV_E5M2)
#undef __GL_FP8_TYPE
