"""CUDA device functions of ``kernel.rng``: nvFuser's Philox4x32-10 random numbers.

``CUDA_RANDOM`` is added to a translation unit whose kernels hold a ``kernel.rng``
(``cuda_printer.print_cuda``). It transcribes nvFuser's ``runtime/random_numbers.cu``
(``philox``, ``uniform``/``uniformf``/``uniform_half``/..., ``normal``/``normalf``) with
the element index as argument: element ``i`` of a random tensor reads subsequence
``i / m`` (``m`` = 2 for double, 4 otherwise) of ``philox(seed, subsequence, offset)``
and component ``i % m`` (nvFuser computes the linear index, subsequence and component
in its lowering and caches the last Philox result per thread; here the function does
it, and a thread recomputes Philox per element).

The one difference from nvFuser's file: products and sums are written with the
``__fmul_rn``/``__fadd_rn`` (``__dmul_rn``/``__dadd_rn``) intrinsics so that NVRTC
never contracts ``low + range * u`` or ``z * std + mean`` into a fused multiply-add.
That makes every uniform value bit-identical to ``fuser_ir/philox.py`` (numpy rounds
the product and the sum separately); normal values use ``log``/``sin``/``cos``/``sqrt``
of the CUDA math library and agree with numpy's to a few ulps.
"""

from __future__ import annotations

RNG_FUNCTIONS: dict[str, str] = {
    "f64": "double",
    "f32": "float",
    "f16": "float",
    "bf16": "float",
}
"""The dtype suffix of each ``fuser_rng_<distribution>_<suffix>`` function and the C
type of its parameters and result (half and bfloat16 values are returned in float,
their compute type, exactly representable)."""

CUDA_RANDOM = r"""
// Random numbers for kernel.rng (codegen/random_cuda.py): nvFuser's Philox4x32-10.
struct FuserPhilox { unsigned int v0, v1, v2, v3; };

__device__ __forceinline__ FuserPhilox fuser_philox(
    unsigned long long seed, unsigned long long subsequence, unsigned long long offset) {
  unsigned int k0 = (unsigned int)seed, k1 = (unsigned int)(seed >> 32);
  unsigned int c0 = (unsigned int)offset, c1 = (unsigned int)(offset >> 32);
  unsigned int c2 = (unsigned int)subsequence, c3 = (unsigned int)(subsequence >> 32);
#pragma unroll
  for (int i = 0; i < 10; i++) {
    if (i > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  FuserPhilox r;
  r.v0 = c0;
  r.v1 = c1;
  r.v2 = c2;
  r.v3 = c3;
  return r;
}

__device__ __forceinline__ unsigned int fuser_philox_word(const FuserPhilox& r, int k) {
  return k == 0 ? r.v0 : (k == 1 ? r.v1 : (k == 2 ? r.v2 : r.v3));
}

// 53 bits in (0, 1]; 1 becomes 0 (nvFuser's uniform).
__device__ __forceinline__ double fuser_uniform_double(unsigned int x, unsigned int y) {
  const double scale = 1.0 / (double)(1ll << 53);
  const unsigned long long z = (unsigned long long)x ^ ((unsigned long long)y << (53 - 32));
  const double r = __dadd_rn(__dmul_rn((double)z, scale), 0.5 * scale);
  return r == 1.0 ? 0.0 : r;
}

// float(x) * 2^-32 + 2^-33 in (0, 1] (nvFuser's raw_uniform_float).
__device__ __forceinline__ float fuser_raw_uniform_float(unsigned int x) {
  const float scale = (float)(1.0 / (double)(1ll << 32));
  return __fadd_rn(__fmul_rn(__uint2float_rn(x), scale), 0.5f * scale);
}

// nvFuser's uniformf: [0, 1).
__device__ __forceinline__ float fuser_uniform_float(unsigned int x) {
  const float r = fuser_raw_uniform_float(x);
  return r == 1.0f ? 0.0f : r;
}

__device__ double fuser_rng_uniform_f64(long long seed, long long offset, long long index, double lo, double hi) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 2, offset);
  const int c = (int)(i % 2);
  const double u = fuser_uniform_double(c == 0 ? r.v0 : r.v2, c == 0 ? r.v1 : r.v3);
  return __dadd_rn(lo, __dmul_rn(hi - lo, u));
}

__device__ float fuser_rng_uniform_f32(long long seed, long long offset, long long index, float lo, float hi) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 4, offset);
  const float u = fuser_uniform_float(fuser_philox_word(r, (int)(i % 4)));
  return __fadd_rn(lo, __fmul_rn(hi - lo, u));
}

// Half and bfloat16: the value rounded to the type; one equal to hi becomes lo.
__device__ float fuser_rng_uniform_f16(long long seed, long long offset, long long index, float lo, float hi) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 4, offset);
  const float u = fuser_raw_uniform_float(fuser_philox_word(r, (int)(i % 4)));
  const float v = __half2float(__float2half_rn(__fadd_rn(lo, __fmul_rn(hi - lo, u))));
  return v == __half2float(__float2half_rn(hi)) ? __half2float(__float2half_rn(lo)) : v;
}

__device__ float fuser_rng_uniform_bf16(long long seed, long long offset, long long index, float lo, float hi) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 4, offset);
  const float u = fuser_raw_uniform_float(fuser_philox_word(r, (int)(i % 4)));
  const float v = __bfloat162float(__float2bfloat16_rn(__fadd_rn(lo, __fmul_rn(hi - lo, u))));
  return v == __bfloat162float(__float2bfloat16_rn(hi)) ? __bfloat162float(__float2bfloat16_rn(lo)) : v;
}

// Box-Muller: the two uniforms of an element's pair; sin for even elements, cos for odd.
__device__ double fuser_rng_normal_f64(long long seed, long long offset, long long index, double mean, double std) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 2, offset);
  const double u = fuser_uniform_double(r.v0, r.v1);
  const double v = __dmul_rn(fuser_uniform_double(r.v2, r.v3), 6.2831853071795860);
  const double radius = sqrt(__dmul_rn(-2.0, log(u)));
  const double z = __dmul_rn(radius, i % 2 == 0 ? sin(v) : cos(v));
  return __dadd_rn(__dmul_rn(z, std), mean);
}

__device__ __forceinline__ float fuser_normal_float(long long seed, long long offset, long long index) {
  const unsigned long long i = (unsigned long long)index;
  const FuserPhilox r = fuser_philox(seed, i / 4, offset);
  const int pair = (int)(i % 4) / 2 * 2;
  const float u = fuser_uniform_float(fuser_philox_word(r, pair));
  const float v = __fmul_rn(fuser_uniform_float(fuser_philox_word(r, pair + 1)), 6.2831855f);
  const float radius = sqrtf(__fmul_rn(-2.0f, logf(u)));
  return __fmul_rn(radius, i % 2 == 0 ? sinf(v) : cosf(v));
}

__device__ float fuser_rng_normal_f32(long long seed, long long offset, long long index, float mean, float std) {
  return __fadd_rn(__fmul_rn(fuser_normal_float(seed, offset, index), std), mean);
}

__device__ float fuser_rng_normal_f16(long long seed, long long offset, long long index, float mean, float std) {
  return __half2float(__float2half_rn(fuser_rng_normal_f32(seed, offset, index, mean, std)));
}

__device__ float fuser_rng_normal_bf16(long long seed, long long offset, long long index, float mean, float std) {
  return __bfloat162float(__float2bfloat16_rn(fuser_rng_normal_f32(seed, offset, index, mean, std)));
}
"""


def rng_function(distribution: str, dtype_suffix: str) -> str:
    """The device function of ``kernel.rng`` for a distribution and dtype suffix."""
    if distribution not in ("uniform", "normal") or dtype_suffix not in RNG_FUNCTIONS:
        raise ValueError(f"kernel.rng: no device function for {distribution} {dtype_suffix}")
    return f"fuser_rng_{distribution}_{dtype_suffix}"
