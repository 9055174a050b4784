// The bit-level helpers shared by kernels and references (kernels/numeric.h), checked against
// independent oracles: exhaustive round trips, brute-force nearest-value searches over every code,
// and the compiler's own _Float16 conversion where it has one.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "kernels/kv_cache_reference.h"
#include "kernels/numeric.h"
#include "kernels/reference.h"

using namespace quantplan::kernels;

namespace {

bool is_nan_fp8(std::uint8_t b) { return (b & 0x7F) == 0x7F; }

// The FP8 E4M3 code nearest to x by brute force over all finite codes, ties to the even code,
// saturating beyond 448: the oracle for float_to_fp8_e4m3.
std::uint8_t nearest_fp8(float x) {
    if (std::isnan(x)) return 0x7F;
    const double v = std::fmin(std::fmax(static_cast<double>(x), -448.0), 448.0);
    int best = -1;
    double best_d = 0;
    for (int c = 0; c < 256; ++c) {
        if (is_nan_fp8(static_cast<std::uint8_t>(c))) continue;
        const double d = std::fabs(static_cast<double>(fp8_e4m3_to_float(static_cast<std::uint8_t>(c))) - v);
        const bool better = best < 0 || d < best_d || (d == best_d && (c & 1) == 0 && (best & 1) == 1);
        if (better) {
            best = c;
            best_d = d;
        }
    }
    // Zero keeps the sign of the input, as the hardware conversion does.
    if ((best & 0x7F) == 0) best = std::signbit(x) ? 0x80 : 0x00;
    return static_cast<std::uint8_t>(best);
}

// Random floats spread over many binades, both signs.
float random_float(Random& rng, int min_exp, int max_exp) {
    const float mant = rng.uniform(1.0f, 2.0f);
    const int e = min_exp + static_cast<int>(rng.below(static_cast<std::uint32_t>(max_exp - min_exp + 1)));
    const float v = std::ldexp(mant, e);
    return rng.below(2) ? -v : v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(numeric)

BOOST_AUTO_TEST_CASE(bf16_round_trips_every_pattern) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float f = bf16_to_float(bits);
        if (std::isnan(f)) {
            BOOST_TEST(float_to_bf16(f) == 0x7FFF);
            continue;
        }
        BOOST_TEST_REQUIRE(float_to_bf16(f) == bits, "bf16 0x" << std::hex << b << " -> " << f << " -> 0x" << float_to_bf16(f));
    }
}

BOOST_AUTO_TEST_CASE(bf16_rounds_to_nearest_even) {
    BOOST_TEST(float_to_bf16(1.0f + 0.00390625f) == 0x3F80);       // 1 + 2^-8: tie, stays on even 1.0
    BOOST_TEST(float_to_bf16(1.0f + 3 * 0.00390625f) == 0x3F82);   // 1 + 3 * 2^-8: tie, up to even
    BOOST_TEST(float_to_bf16(1.0f + 0.0039065f) == 0x3F81);        // just above the tie
    BOOST_TEST(float_to_bf16(3.4e38f) == 0x7F80);                  // rounds past the largest bf16 to inf
    BOOST_TEST(float_to_bf16(-0.0f) == 0x8000);
}

BOOST_AUTO_TEST_CASE(fp16_round_trips_every_pattern) {
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto bits = static_cast<std::uint16_t>(b);
        const float f = fp16_to_float(bits);
        if (std::isnan(f)) {
            BOOST_TEST(float_to_fp16(f) == 0x7FFF);
            continue;
        }
        BOOST_TEST_REQUIRE(float_to_fp16(f) == bits, "fp16 0x" << std::hex << b << " -> " << f << " -> 0x" << float_to_fp16(f));
    }
    BOOST_TEST(fp16_to_float(0x0001) == 5.9604644775390625e-8f);  // smallest subnormal 2^-24
    BOOST_TEST(fp16_to_float(0x7BFF) == 65504.0f);
}

BOOST_AUTO_TEST_CASE(fp16_conversion_matches_the_compiler) {
#if defined(__FLT16_MAX__)
    Random rng(7);
    for (int i = 0; i < 200000; ++i) {
        const float x = i % 2 ? random_float(rng, -27, 17) : bits_float(static_cast<std::uint32_t>(rng.next()));
        if (std::isnan(x)) continue;
        const _Float16 h = static_cast<_Float16>(x);
        std::uint16_t expected;
        static_assert(sizeof h == 2);
        std::memcpy(&expected, &h, 2);
        BOOST_TEST_REQUIRE(float_to_fp16(x) == expected, "x=" << x << " expected 0x" << std::hex << expected << " actual 0x" << float_to_fp16(x));
    }
#else
    BOOST_TEST_MESSAGE("this compiler has no _Float16; covered by the round-trip and tie tests only");
#endif
    BOOST_TEST(float_to_fp16(65519.0f) == 0x7BFF);                  // below the overflow tie
    BOOST_TEST(float_to_fp16(65520.0f) == 0x7C00);                  // the tie rounds to inf (even)
    BOOST_TEST(float_to_fp16(2.98023223876953125e-8f) == 0x0000);   // 2^-25: tie to even zero
    BOOST_TEST(float_to_fp16(2.99e-8f) == 0x0001);
}

BOOST_AUTO_TEST_CASE(fp8_decodes_known_values) {
    BOOST_TEST(fp8_e4m3_to_float(0x38) == 1.0f);
    BOOST_TEST(fp8_e4m3_to_float(0xB8) == -1.0f);
    BOOST_TEST(fp8_e4m3_to_float(0x7E) == 448.0f);
    BOOST_TEST(fp8_e4m3_to_float(0x08) == 0.015625f);      // 2^-6, smallest normal
    BOOST_TEST(fp8_e4m3_to_float(0x01) == 0.001953125f);   // 2^-9, smallest subnormal
    BOOST_TEST(fp8_e4m3_to_float(0x07) == 7 * 0.001953125f);
    BOOST_TEST(std::isnan(fp8_e4m3_to_float(0x7F)));
    BOOST_TEST(std::isnan(fp8_e4m3_to_float(0xFF)));
    BOOST_TEST(kFp8E4M3Max == 448.0f);
}

BOOST_AUTO_TEST_CASE(fp8_round_trips_every_code) {
    for (int c = 0; c < 256; ++c) {
        const auto code = static_cast<std::uint8_t>(c);
        if (is_nan_fp8(code)) {
            BOOST_TEST(float_to_fp8_e4m3(fp8_e4m3_to_float(code)) == 0x7F);
            continue;
        }
        BOOST_TEST_REQUIRE(float_to_fp8_e4m3(fp8_e4m3_to_float(code)) == code, "code 0x" << std::hex << c);
    }
}

BOOST_AUTO_TEST_CASE(fp8_encoding_matches_brute_force_nearest) {
    Random rng(11);
    for (int i = 0; i < 100000; ++i) {
        const float x = random_float(rng, -12, 9);
        BOOST_TEST_REQUIRE(float_to_fp8_e4m3(x) == nearest_fp8(x), "x=" << x << " expected 0x" << std::hex << int{nearest_fp8(x)}
                                                                      << " actual 0x" << int{float_to_fp8_e4m3(x)});
    }
    // Every midpoint between neighbouring codes: ties go to the even code.
    for (int c = 0; c < 0x7E; ++c) {
        const double lo = fp8_e4m3_to_float(static_cast<std::uint8_t>(c));
        const double hi = fp8_e4m3_to_float(static_cast<std::uint8_t>(c + 1));
        const float mid = static_cast<float>((lo + hi) / 2);
        const int expected = (c & 1) ? c + 1 : c;
        BOOST_TEST_REQUIRE(int{float_to_fp8_e4m3(mid)} == expected, "midpoint " << mid << " of codes " << c << " and " << c + 1);
    }
}

BOOST_AUTO_TEST_CASE(fp8_saturates) {
    BOOST_TEST(float_to_fp8_e4m3(449.0f) == 0x7E);
    BOOST_TEST(float_to_fp8_e4m3(470.0f) == 0x7E);
    BOOST_TEST(float_to_fp8_e4m3(1e30f) == 0x7E);
    BOOST_TEST(float_to_fp8_e4m3(std::numeric_limits<float>::infinity()) == 0x7E);
    BOOST_TEST(float_to_fp8_e4m3(-std::numeric_limits<float>::infinity()) == 0xFE);
    BOOST_TEST(float_to_fp8_e4m3(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
    BOOST_TEST(float_to_fp8_e4m3(0.0009765625f) == 0x00);   // 2^-10: tie between 0 and 2^-9, even 0
    BOOST_TEST(float_to_fp8_e4m3(0.00098f) == 0x01);
    BOOST_TEST(quantize_fp8_e4m3(896.0f, 2.0f) == 0x7E);
}

BOOST_AUTO_TEST_CASE(fp8_pairs_decode_to_scaled_fp16) {
    for (std::uint32_t p = 0; p < 65536; ++p) {
        const auto lo = static_cast<std::uint8_t>(p & 0xFF), hi = static_cast<std::uint8_t>(p >> 8);
        if (is_nan_fp8(lo) || is_nan_fp8(hi)) continue;
        const std::uint32_t h2 = fp8x2_e4m3_to_fp16x2_scaled(static_cast<std::uint16_t>(p));
        const float a = fp16_to_float(static_cast<std::uint16_t>(h2 & 0xFFFF)) * 256.0f;
        const float b = fp16_to_float(static_cast<std::uint16_t>(h2 >> 16)) * 256.0f;
        BOOST_TEST_REQUIRE(a == fp8_e4m3_to_float(lo), "low byte 0x" << std::hex << int{lo});
        BOOST_TEST_REQUIRE(b == fp8_e4m3_to_float(hi), "high byte 0x" << std::hex << int{hi});
    }
}

BOOST_AUTO_TEST_CASE(int8_rounds_half_to_even_and_clamps) {
    BOOST_TEST(quantize_int8(2.5f, 1.0f) == 2);
    BOOST_TEST(quantize_int8(3.5f, 1.0f) == 4);
    BOOST_TEST(quantize_int8(-2.5f, 1.0f) == -2);
    BOOST_TEST(quantize_int8(-0.4f, 1.0f) == 0);
    BOOST_TEST(quantize_int8(1000.0f, 1.0f) == 127);
    BOOST_TEST(quantize_int8(-1000.0f, 1.0f) == -128);
    BOOST_TEST(quantize_int8(std::numeric_limits<float>::quiet_NaN(), 1.0f) == 0);
    BOOST_TEST(quantize_int8(std::numeric_limits<float>::infinity(), 1.0f) == 127);
    BOOST_TEST(quantize_int8(6.0f, 0.5f) == 12);
}

BOOST_AUTO_TEST_CASE(int8_bytes_decode_exactly) {
    for (int v = -128; v < 128; ++v) {
        const auto byte = static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(v)));
        BOOST_TEST_REQUIRE(int8_byte_to_float(byte) == static_cast<float>(v), "int8 " << v);
        BOOST_TEST_REQUIRE(int8_byte_to_float(byte | 0xABCD0000u) == static_cast<float>(v), "high bits ignored for " << v);
    }
}

BOOST_AUTO_TEST_CASE(nibbles) {
    std::uint32_t w = 0;
    for (int i = 0; i < 8; ++i) w = with_nibble(w, i, static_cast<std::uint32_t>(15 - i));
    BOOST_TEST(w == 0x89ABCDEFu);
    for (int i = 0; i < 8; ++i) BOOST_TEST(nibble(w, i) == static_cast<std::uint32_t>(15 - i));
    BOOST_TEST(with_nibble(0xFFFFFFFFu, 3, 0) == 0xFFFF0FFFu);
    for (std::uint32_t q = 0; q < 16; ++q)
        for (int z = 0; z < 16; ++z) BOOST_TEST_REQUIRE(nibble_minus_zero(q, static_cast<float>(z)) == static_cast<float>(static_cast<int>(q) - z));
}

BOOST_AUTO_TEST_CASE(byte_perm_selects_bytes) {
    BOOST_TEST(byte_perm(0x33221100u, 0x77665544u, 0x3210u) == 0x33221100u);
    BOOST_TEST(byte_perm(0x33221100u, 0x77665544u, 0x7654u) == 0x77665544u);
    BOOST_TEST(byte_perm(0x33221100u, 0x77665544u, 0x0123u) == 0x00112233u);
    BOOST_TEST(byte_perm(0x33221100u, 0x77665544u, 0x4715u) == 0x44771155u);
    BOOST_TEST(byte_perm(0x0000000Au, 0x4B000000u, 0x7540u) == 0x4B00000Au);
}

// The GEMV's eight-at-a-time nibble conversion against nibble_minus_zero, the conversion the host
// references use: every nibble value at every position, every zero point, on backgrounds of all
// zeros, all ones and random words (a nibble's neighbours must not leak into it), then random words.
BOOST_AUTO_TEST_CASE(eight_nibbles_at_once_equal_one_at_a_time_bit_for_bit) {
    const auto same_bits = [](float a, float b) { return float_bits(a) == float_bits(b); };
    Random rng(77);
    std::vector<std::uint32_t> backgrounds{0u, 0xFFFFFFFFu, 0x0F0F0F0Fu, 0xF0F0F0F0u};
    for (int i = 0; i < 64; ++i) backgrounds.push_back(static_cast<std::uint32_t>(rng.next()));
    for (int z = 0; z < 16; ++z) {
        const float zero = static_cast<float>(z);
        for (const std::uint32_t bg : backgrounds)
            for (int j = 0; j < 8; ++j)
                for (std::uint32_t q = 0; q < 16; ++q) {
                    const std::uint32_t word = with_nibble(bg, j, q);
                    float out[8];
                    nibbles_minus_zero(word, zero, out);
                    BOOST_TEST_REQUIRE(same_bits(out[j], nibble_minus_zero(q, zero)), "word " << word << " nibble " << j << " zero " << z);
                }
    }
    for (int i = 0; i < (1 << 18); ++i) {
        const auto word = static_cast<std::uint32_t>(rng.next());
        const auto z = static_cast<std::uint32_t>(rng.below(16));
        float out[8];
        nibbles_minus_zero(word, static_cast<float>(z), out);
        for (int j = 0; j < 8; ++j)
            BOOST_TEST_REQUIRE(same_bits(out[j], nibble_minus_zero(nibble(word, j), static_cast<float>(z))), "word " << word << " nibble " << j);
    }
}

BOOST_AUTO_TEST_CASE(half16_dispatch) {
    BOOST_TEST(half16_to_float(0x3F80, Half16::Bf16) == 1.0f);
    BOOST_TEST(half16_to_float(0x3C00, Half16::Fp16) == 1.0f);
    BOOST_TEST(float_to_half16(-2.0f, Half16::Bf16) == 0xC000);
    BOOST_TEST(float_to_half16(-2.0f, Half16::Fp16) == 0xC000);
    BOOST_TEST(float_to_half16(0.1f, Half16::Fp16) == 0x2E66);
    BOOST_TEST(float_to_half16(0.1f, Half16::Bf16) == 0x3DCD);
}

BOOST_AUTO_TEST_CASE(int8_kv_scale_stays_finite_and_positive) {
    BOOST_TEST(kv_int8_scale_fp16(127.0f) == 0x3C00);        // amax 127 -> scale 1.0
    BOOST_TEST(kv_int8_scale_fp16(0.0f) == 0x3C00);          // all-zero row -> 1.0
    BOOST_TEST(kv_int8_scale_fp16(1e-30f) == 0x0001);        // underflow -> smallest subnormal
    BOOST_TEST(kv_int8_scale_fp16(1e30f) == 0x7BFF);         // overflow -> 65504
}

BOOST_AUTO_TEST_SUITE_END()
