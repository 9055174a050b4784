#pragma once
// Bit-level number conversions shared by the CUDA kernels and their host references.
//
// Every function here is `__host__ __device__` under nvcc and plain inline C++ under the host
// compiler, so the references compute with exactly the code the kernels run. They use only
// integer and IEEE float operations whose results are the same on both sides:
//   - bf16 and fp16 from float: round to nearest, ties to even (what cvt.rn does); NaN becomes the
//     canonical 0x7FFF that the hardware conversion produces.
//   - FP8 E4M3 ("fn": no infinities, max 448, NaN = S.1111.111): saturating round to nearest even,
//     the __NV_SATFINITE behaviour of __nv_cvt_float_to_fp8; NaN becomes 0x7F.
//   - INT8: q = clamp(rint(x / scale), -128, 127), the vLLM convention (kernels.md (d)); NaN -> 0.
// Sources: IEEE 754-2019 (binary16); OCP 8-bit Floating Point Specification v1.0 (E4M3);
// ../shared/reference/kernels.md (d) for the saturating KV-cache convention.
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QP_HD __host__ __device__ __forceinline__
#else
#define QP_HD inline
#endif

namespace quantplan::kernels {

// 16-bit floating-point formats an activation, scale or output can be stored in.
enum class Half16 : std::uint8_t {
    Fp16,  // IEEE binary16
    Bf16,  // bfloat16
};

// The bits of a float.
QP_HD std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

// The float with bits `u`.
QP_HD float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

// bfloat16 bits -> float (exact).
QP_HD float bf16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

// float -> bfloat16 bits, round to nearest even; NaN -> 0x7FFF.
QP_HD std::uint16_t float_to_bf16(float f) {
    const std::uint32_t u = float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
    const std::uint32_t rounded = u + 0x7FFFu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(rounded >> 16);
}

// IEEE binary16 bits -> float (exact, subnormals included).
QP_HD float fp16_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1Fu;
    const std::uint32_t mantissa = h & 0x3FFu;
    if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
    if (exponent != 0) return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
    // Subnormal: mantissa x 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
}

// float -> IEEE binary16 bits, round to nearest even, overflow to infinity; NaN -> 0x7FFF.
QP_HD std::uint16_t float_to_fp16(float f) {
    const std::uint32_t u = float_bits(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return 0x7FFF;
    if (a >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
    if (a < 0x38800000u) {                                                     // below 2^-14: subnormal
        const std::uint32_t e = a >> 23;
        if (e < 102) return sign;  // below 2^-25: rounds to zero
        const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        const std::uint32_t shift = 126u - e;  // 14..24
        std::uint32_t q = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return static_cast<std::uint16_t>(sign | q);
    }
    std::uint32_t h = (a - 0x38000000u) >> 13;  // rebias exponent 127 -> 15
    const std::uint32_t rem = a & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

// 16-bit value of format `type` -> float.
QP_HD float half16_to_float(std::uint16_t bits, Half16 type) {
    return type == Half16::Bf16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

// float -> 16-bit value of format `type` (round to nearest even).
QP_HD std::uint16_t float_to_half16(float f, Half16 type) {
    return type == Half16::Bf16 ? float_to_bf16(f) : float_to_fp16(f);
}

// Largest finite FP8 E4M3 value.
inline constexpr float kFp8E4M3Max = 448.0f;

// FP8 E4M3 bits -> float (exact). 0x7F / 0xFF are NaN.
QP_HD float fp8_e4m3_to_float(std::uint8_t b) {
    const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x80u) << 24;
    const std::uint32_t exponent = (b >> 3) & 0xFu;
    const std::uint32_t mantissa = b & 0x7u;
    if (exponent == 0xF && mantissa == 0x7) return bits_float(0x7FC00000u | sign);
    if (exponent != 0) return bits_float(sign | ((exponent + 120u) << 23) | (mantissa << 20));
    const float magnitude = static_cast<float>(mantissa) * 0.001953125f;  // mantissa x 2^-9
    return sign ? -magnitude : magnitude;
}

// float -> FP8 E4M3 bits: round to nearest even, saturate to +-448 (infinities included); NaN -> 0x7F.
QP_HD std::uint8_t float_to_fp8_e4m3(float f) {
    const std::uint32_t u = float_bits(f);
    const std::uint8_t sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
    const std::uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return 0x7F;
    if (a >= 0x43E00000u) return static_cast<std::uint8_t>(sign | 0x7Eu);  // >= 448: saturate
    if (a < 0x3C800000u) {                                                 // below 2^-6: subnormal
        const std::uint32_t e = a >> 23;
        if (e < 117) return sign;  // below 2^-10: rounds to zero
        const std::uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
        const std::uint32_t shift = 141u - e;  // 21..24
        std::uint32_t q = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return static_cast<std::uint8_t>(sign | q);
    }
    std::uint32_t q = (a - 0x3C000000u) >> 20;  // rebias exponent 127 -> 7, keep 3 mantissa bits
    const std::uint32_t rem = a & 0xFFFFFu;
    if (rem > 0x80000u || (rem == 0x80000u && (q & 1u))) ++q;
    if (q > 0x7Eu) q = 0x7Eu;  // 448 < |x| < 464 rounds past the largest finite value
    return static_cast<std::uint8_t>(sign | q);
}

// Two FP8 E4M3 values (low byte first) -> two IEEE binary16 values packed low-first, each equal to
// the FP8 value times 2^-8 (exact: E4M3's bias is 7, binary16's 15, and both keep subnormals).
// Kernels multiply the 2^8 back into their per-tensor scale. NaN inputs decode as 480 x 2^-8;
// the cache writers never store NaN (they saturate).
QP_HD std::uint32_t fp8x2_e4m3_to_fp16x2_scaled(std::uint16_t pair) {
    const std::uint32_t p = pair;
    return ((p & 0x007Fu) << 7) | ((p & 0x0080u) << 8) | ((p & 0x7F00u) << 15) | ((p & 0x8000u) << 16);
}

// An INT8 value held in the low byte of `byte` -> exact float: flip the sign bit to get v + 128 in
// 0..255, OR it into the mantissa of 2^23 and subtract 2^23 + 128 (no conversion instruction).
QP_HD float int8_byte_to_float(std::uint32_t byte) { return bits_float(0x4B000000u | ((byte & 0xFFu) ^ 0x80u)) - 8388736.0f; }

// Rounds to the nearest integer, ties to even (the device's rintf; the host's default rounding mode).
QP_HD float round_half_even(float x) {
#if defined(__CUDA_ARCH__)
    return rintf(x);
#else
    return std::nearbyint(x);
#endif
}

// float -> INT8 with `scale`: clamp(rint(x / scale), -128, 127); NaN -> 0. Precondition: scale > 0.
QP_HD std::int8_t quantize_int8(float x, float scale) {
    const float r = round_half_even(x / scale);
    if (!(r == r)) return 0;
    if (r >= 127.0f) return 127;
    if (r <= -128.0f) return -128;
    return static_cast<std::int8_t>(r);
}

// float -> FP8 E4M3 with `scale`: sat(x / scale) (kernels.md (d)). Precondition: scale > 0.
QP_HD std::uint8_t quantize_fp8_e4m3(float x, float scale) { return float_to_fp8_e4m3(x / scale); }

// Largest INT8 magnitude a symmetric scale maps max|x| to.
inline constexpr float kInt8Max = 127.0f;

// Nibble `index` (0 = bits 0..3) of `word`, as an unsigned value 0..15.
QP_HD std::uint32_t nibble(std::uint32_t word, int index) { return (word >> (4 * index)) & 0xFu; }

// `word` with nibble `index` replaced by `value` (0..15).
QP_HD std::uint32_t with_nibble(std::uint32_t word, int index, std::uint32_t value) {
    const std::uint32_t shift = 4u * static_cast<std::uint32_t>(index);
    return (word & ~(0xFu << shift)) | ((value & 0xFu) << shift);
}

// The exact float value q - zero for a nibble q in 0..15 and a zero point 0..15, computed the way
// the fused kernel does: OR the nibble into the mantissa of 2^23 and subtract 2^23 + zero.
QP_HD float nibble_minus_zero(std::uint32_t q, float zero) {
    return bits_float(0x4B000000u | q) - (8388608.0f + zero);
}

// __byte_perm(x, y, selector) (PRMT): byte n of the result is byte ((selector >> 4n) & 7) of the
// eight bytes y:x (x holds bytes 0..3, y bytes 4..7). Precondition: bit 3 of each of the four low
// selector nibbles is clear (where the hardware's sign-replicating mode and CUDA's documented
// __byte_perm could differ). The host twin lets the tests check the byte arithmetic.
QP_HD std::uint32_t byte_perm(std::uint32_t x, std::uint32_t y, std::uint32_t selector) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, y, selector);
#else
    const std::uint64_t bytes = (static_cast<std::uint64_t>(y) << 32) | x;
    std::uint32_t r = 0;
    for (std::uint32_t n = 0; n < 4; ++n) r |= static_cast<std::uint32_t>((bytes >> (8u * ((selector >> (4u * n)) & 7u))) & 0xFFu) << (8u * n);
    return r;
#endif
}

// The eight nibbles of `word` as out[j] = nibble_minus_zero(nibble(word, j), zero), bit for bit: one
// mask per parity puts four nibbles into the low bits of four bytes, and one byte_perm per nibble
// builds the word 0x4B0000qq (= 0x4B000000 | q, the float 2^23 + q) by taking that byte under the
// bytes 0x00, 0x00, 0x4B of the constant 0x4B000000. On the GPU this is 11 integer instructions
// per word (two masks, one shift, eight PRMT) against 15 for nibble() one at a time (a shift and
// a LOP3 each): the M = 1 GEMV issues about four instructions per weight and is issue-bound.
QP_HD void nibbles_minus_zero(std::uint32_t word, float zero, float (&out)[8]) {
    const std::uint32_t even = word & 0x0F0F0F0Fu;        // byte b: nibble 2b
    const std::uint32_t odd = (word >> 4) & 0x0F0F0F0Fu;  // byte b: nibble 2b + 1
    const float bias = 8388608.0f + zero;
    // Selector 0x754b: result bytes (low first) = input byte b, y byte 0 (0x00), y byte 1 (0x00),
    // y byte 3 (0x4B).
    for (std::uint32_t b = 0; b < 4; ++b) {
        out[2 * b] = bits_float(byte_perm(even, 0x4B000000u, 0x7540u | b)) - bias;
        out[2 * b + 1] = bits_float(byte_perm(odd, 0x4B000000u, 0x7540u | b)) - bias;
    }
}

}  // namespace quantplan::kernels
