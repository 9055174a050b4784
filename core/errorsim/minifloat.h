#pragma once
// Bit-exact small floating-point formats: fp16, bf16, OCP FP8 (E4M3, E5M2), OCP FP4 (E2M1) and the
// OCP MX E8M0 scale. Conversion is round to nearest, ties to even, with subnormals, saturating to
// the largest finite value (the "satfinite" conversion FP8 and FP4 kernels use); NaN maps to the
// format's NaN where it has one.
//
//   format    exponent  mantissa  bias  max finite  infinities  NaN
//   fp16          5        10      15     65504        yes      exp 31
//   bf16          8         7     127     3.39e38      yes      exp 255
//   fp8_e4m3      4         3       7       448         no      S.1111.111
//   fp8_e5m2      5         2      15     57344        yes      exp 31
//   fp4_e2m1      2         1       1         6         no      none
//   e8m0 (scale)  8         0     127     2^127        no      0xFF, value 2^(code-127), no sign
#include <cstdint>

#include "core/base/dtype.h"

namespace quantplan::errorsim {

// One sign-exponent-mantissa format.
struct MinifloatFormat {
    DType dtype;
    int exponent_bits;
    int mantissa_bits;
    int bias;
    bool ieee_specials;  // true: the all-ones exponent holds infinities and NaNs (fp16, bf16, e5m2)
    bool has_nan;        // false only for fp4_e2m1
    double max_finite;   // largest finite magnitude
    std::uint32_t max_finite_code;  // magnitude bits of max_finite (e4m3: 0x7E, e5m2: 0x7B, e2m1: 0x7)

    // Total bits including the sign.
    constexpr int bits() const { return 1 + exponent_bits + mantissa_bits; }
    // Smallest normal magnitude, 2^(1 - bias).
    double min_normal() const;
    // Smallest subnormal magnitude, 2^(1 - bias - mantissa_bits).
    double min_subnormal() const;
};

// The format descriptor of fp16, bf16, fp8_e4m3, fp8_e5m2 or fp4_e2m1; nullptr for other dtypes.
const MinifloatFormat* minifloat_format(DType dtype);

// Encodes `x` (RNE, subnormals, saturating to +-max_finite; infinities saturate too; NaN to the
// format's NaN, or to +0 for fp4 which has none). Returns the code in the low bits() bits.
std::uint32_t encode_minifloat(double x, const MinifloatFormat& format);

// The value of `code` (infinity or NaN for the special codes of formats that have them).
double decode_minifloat(std::uint32_t code, const MinifloatFormat& format);

// decode(encode(x)): `x` rounded to the format.
double round_to_minifloat(double x, const MinifloatFormat& format);

// The signed ordinal of a finite code: the magnitude bits read as an integer, negated for a
// negative sign. Consecutive representable values have consecutive ordinals (+0 and -0 share 0),
// so max - min + 1 counts the levels a set of values spans.
std::int64_t minifloat_ordinal(std::uint32_t code, const MinifloatFormat& format);

// The OCP MX shared scale for a block whose largest magnitude is `amax` and whose element format
// has largest exponent `element_emax` (fp4_e2m1: 2, fp8_e4m3: 8, fp8_e5m2: 15): the E8M0 code of
// 2^(floor(log2 amax) - element_emax), clamped to [2^-127, 2^127]. amax == 0 gives code 0.
std::uint8_t mx_scale_code(double amax, int element_emax);

// The value 2^(code - 127) of an E8M0 code (NaN for 0xFF).
double decode_e8m0(std::uint8_t code);

// The largest unbiased exponent of a format's finite values (fp4_e2m1: 2, fp8_e4m3: 8, e5m2: 15).
int minifloat_emax(const MinifloatFormat& format);

}  // namespace quantplan::errorsim
