#include "core/errorsim/minifloat.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cmath>
#include <limits>

namespace quantplan::errorsim {
namespace {

constexpr MinifloatFormat kFp16{DType::Fp16, 5, 10, 15, true, true, 65504.0, 0x7BFF};
constexpr MinifloatFormat kBf16{DType::Bf16, 8, 7, 127, true, true, 0x1.FEp127, 0x7F7F};
constexpr MinifloatFormat kE4M3{DType::Fp8E4M3, 4, 3, 7, false, true, 448.0, 0x7E};
constexpr MinifloatFormat kE5M2{DType::Fp8E5M2, 5, 2, 15, true, true, 57344.0, 0x7B};
constexpr MinifloatFormat kE2M1{DType::Fp4E2M1, 2, 1, 1, false, false, 6.0, 0x7};

// 2^e for |e| < 1023, exactly, at compile time or run time.
constexpr double pow2(int e) {
    double v = 1.0;
    for (; e > 0; --e) v *= 2.0;
    for (; e < 0; ++e) v *= 0.5;
    return v;
}

// The value of a finite or special code, by the format's definition (compile-time capable).
constexpr double decode_definition(std::uint32_t code, const MinifloatFormat& f) {
    const std::uint32_t mant_mask = (1u << f.mantissa_bits) - 1;
    const std::uint32_t exp_mask = (1u << f.exponent_bits) - 1;
    const bool negative = (code >> (f.exponent_bits + f.mantissa_bits)) & 1u;
    const std::uint32_t exp_field = (code >> f.mantissa_bits) & exp_mask;
    const std::uint32_t mantissa = code & mant_mask;
    double v = 0.0;
    if (f.ieee_specials && exp_field == exp_mask) {
        v = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (!f.ieee_specials && f.has_nan && exp_field == exp_mask && mantissa == mant_mask) {
        v = std::numeric_limits<double>::quiet_NaN();
    } else if (exp_field == 0) {
        v = mantissa * pow2(1 - f.bias - f.mantissa_bits);
    } else {
        v = (1.0 + mantissa * pow2(-f.mantissa_bits)) * pow2(static_cast<int>(exp_field) - f.bias);
    }
    return negative ? -v : v;
}

// Every value of an 8-bit-or-narrower format, indexed by code (built at compile time).
template <const MinifloatFormat& F>
constexpr std::array<double, 256> decode_table() {
    std::array<double, 256> t{};
    for (std::uint32_t c = 0; c < (1u << F.bits()); ++c) t[c] = decode_definition(c, F);
    return t;
}
constexpr std::array<double, 256> kE4M3Values = decode_table<kE4M3>();
constexpr std::array<double, 256> kE5M2Values = decode_table<kE5M2>();
constexpr std::array<double, 256> kE2M1Values = decode_table<kE2M1>();
static_assert(kE4M3Values[0x7E] == 448.0 && kE5M2Values[0x7B] == 57344.0 && kE2M1Values[0x7] == 6.0);
static_assert(kE4M3Values[0x01] == pow2(-9) && kE5M2Values[0x01] == pow2(-16) && kE2M1Values[0x1] == 0.5);

static_assert(kE4M3.bits() == 8 && kE5M2.bits() == 8 && kE2M1.bits() == 4 && kFp16.bits() == 16 && kBf16.bits() == 16);

std::uint32_t nan_code(const MinifloatFormat& f) {
    const std::uint32_t exp_all = (1u << f.exponent_bits) - 1;
    const std::uint32_t mant_all = (1u << f.mantissa_bits) - 1;
    return (exp_all << f.mantissa_bits) | mant_all;  // e4m3: 0x7F; ieee formats: a quiet NaN
}

}  // namespace

double MinifloatFormat::min_normal() const { return std::ldexp(1.0, 1 - bias); }
double MinifloatFormat::min_subnormal() const { return std::ldexp(1.0, 1 - bias - mantissa_bits); }

const MinifloatFormat* minifloat_format(DType dtype) {
    switch (dtype) {
        case DType::Fp16: return &kFp16;
        case DType::Bf16: return &kBf16;
        case DType::Fp8E4M3: return &kE4M3;
        case DType::Fp8E5M2: return &kE5M2;
        case DType::Fp4E2M1: return &kE2M1;
        default: return nullptr;
    }
}

std::uint32_t encode_minifloat(double x, const MinifloatFormat& f) {
    const std::uint32_t sign_bit = (std::signbit(x) ? 1u : 0u) << (f.exponent_bits + f.mantissa_bits);
    if (std::isnan(x)) return f.has_nan ? nan_code(f) : 0u;
    const double a = std::fabs(x);
    // Anything at or beyond twice the largest finite value saturates (this also keeps the scaled
    // value below in range, and catches infinities).
    if (!(a < 2.0 * f.max_finite)) return sign_bit | f.max_finite_code;
    // The binade of `a` (the double's exponent field), no lower than the format's smallest normal
    // exponent: below it the spacing is the subnormal one.
    const int min_exp = 1 - f.bias;
    const int e = static_cast<int>((std::bit_cast<std::uint64_t>(a) >> 52) & 0x7FF) - 1023;
    const int exp_unbiased = std::max(e, min_exp);
    // a / quantum with quantum = 2^(exp_unbiased - M), exact (a power-of-two scale), then rounded to
    // an integer with ties to even (nearbyint in the default rounding mode).
    const double units = std::nearbyint(a * std::bit_cast<double>(static_cast<std::uint64_t>(f.mantissa_bits - exp_unbiased + 1023) << 52));
    // Codes are monotone in magnitude. In binade e > min_exp the code is ((e + bias) << M) + mant
    // with units = 2^M + mant, i.e. ((e - min_exp) << M) + units; at the bottom (subnormals and the
    // first normal binade) the code is units itself, the same formula. Rounding up to
    // units = 2^(M+1) carries into the exponent field by itself.
    std::uint32_t magnitude = (static_cast<std::uint32_t>(exp_unbiased - min_exp) << f.mantissa_bits) + static_cast<std::uint32_t>(units);
    if (magnitude > f.max_finite_code) magnitude = f.max_finite_code;
    return sign_bit | magnitude;
}

double decode_minifloat(std::uint32_t code, const MinifloatFormat& f) {
    switch (f.dtype) {
        case DType::Fp8E4M3: return kE4M3Values[code & 0xFF];
        case DType::Fp8E5M2: return kE5M2Values[code & 0xFF];
        case DType::Fp4E2M1: return kE2M1Values[code & 0xF];
        default: return decode_definition(code, f);
    }
}

double round_to_minifloat(double x, const MinifloatFormat& f) { return decode_minifloat(encode_minifloat(x, f), f); }

std::int64_t minifloat_ordinal(std::uint32_t code, const MinifloatFormat& f) {
    const int magnitude_bits = f.exponent_bits + f.mantissa_bits;
    const std::int64_t magnitude = code & ((1u << magnitude_bits) - 1);
    return ((code >> magnitude_bits) & 1u) ? -magnitude : magnitude;
}

int minifloat_emax(const MinifloatFormat& f) {
    int e = 0;
    std::frexp(f.max_finite, &e);
    return e - 1;
}

std::uint8_t mx_scale_code(double amax, int element_emax) {
    if (!(amax > 0.0) || !std::isfinite(amax)) return 0;
    int e = 0;
    std::frexp(amax, &e);  // amax = m 2^e, m in [0.5, 1): floor(log2 amax) = e - 1
    int x = (e - 1) - element_emax;
    if (x < -127) x = -127;
    if (x > 127) x = 127;
    return static_cast<std::uint8_t>(x + 127);
}

double decode_e8m0(std::uint8_t code) {
    if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(code) - 127);
}

}  // namespace quantplan::errorsim
