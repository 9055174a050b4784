// The error lab's number formats and quantizers, bit for bit: the RNG, fp16/bf16/FP8/FP4/E8M0
// rounding (every code, ties, saturation, subnormals), integer grids, NVFP4 and MXFP4 blocks,
// scale layouts with partial edges, and effective bits.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <bit>
#include <cmath>
#include <limits>

#include "core/base/error.h"
#include "core/errorsim/error_lab.h"
#include "core/errorsim/layer_data.h"
#include "core/errorsim/minifloat.h"
#include "core/errorsim/quantizer.h"
#include "core/errorsim/rng.h"

using namespace quantplan;
using namespace quantplan::errorsim;
namespace bdata = boost::unit_test::data;

namespace {

// det_log / det_exp against the C library: both are accurate to a few ulp (the series' remainders
// are below 1e-19); 1e-14 relative leaves room for the libm's own error.
constexpr double kTranscendentalTolerance = 1e-14;

const MinifloatFormat& fmt(DType d) { return *minifloat_format(d); }

// Round to nearest even by brute force: the representable value closest to x, ties to the even
// code, saturating to max_finite. The oracle the bit-level encoder is checked against.
double oracle_round(double x, const MinifloatFormat& f) {
    const double a = std::fabs(x);
    double best = 0.0;
    std::uint32_t best_code = 0;
    double best_distance = std::numeric_limits<double>::infinity();
    const std::uint32_t codes = 1u << (f.bits() - 1);
    for (std::uint32_t c = 0; c < codes; ++c) {
        if (c > f.max_finite_code) break;
        const double v = decode_minifloat(c, f);
        const double d = std::fabs(v - a);
        if (d < best_distance || (d == best_distance && (c & 1u) == 0)) {
            best_distance = d;
            best = v;
            best_code = c;
        }
    }
    (void)best_code;
    return std::signbit(x) ? -best : best;
}

// A format as a data-test sample (printed by name).
struct SmallFormat {
    DType dtype;
};
std::ostream& operator<<(std::ostream& os, const SmallFormat& f) { return os << dtype_name(f.dtype); }
const SmallFormat kSmallFormats[] = {{DType::Fp8E4M3}, {DType::Fp8E5M2}, {DType::Fp4E2M1}};

// FNV-1a of the default seed-1 layer (weights, calibration then held-out activations), frozen
// when the generator was written (docs/errorsim.md quotes numbers from this layer).
constexpr std::uint64_t kFrozenLayerHash = 0xB0A2DE570FE0BCADull;

}  // namespace

BOOST_AUTO_TEST_SUITE(errorsim_rng)

BOOST_AUTO_TEST_CASE(splitmix64_reference_vector) {
    // splitmix64 seeded with 0: first output 0xE220A8397B1DCDAF (Vigna's reference).
    std::uint64_t state = 0;
    BOOST_TEST(splitmix64_next(state) == 0xE220A8397B1DCDAFull);
}

BOOST_AUTO_TEST_CASE(xoshiro256starstar_matches_an_independent_implementation) {
    // Rng(42): state from four splitmix64 draws, then xoshiro256**; expected values from a separate
    // Python implementation of both algorithms.
    Rng rng(42);
    BOOST_TEST(rng.next_u64() == 0x15780B2E0C2EC716ull);
    BOOST_TEST(rng.next_u64() == 0x6104D9866D113A7Eull);
    BOOST_TEST(rng.next_u64() == 0xAE17533239E499A1ull);
}

BOOST_AUTO_TEST_CASE(det_log_and_det_exp_match_the_c_library) {
    for (double x : {1e-300, 1e-10, 0.001, 0.5, 0.70710678, 1.0, 1.0000001, 1.41421357, 2.0, 3.14159, 1e10, 1e300}) {
        BOOST_TEST_CONTEXT("log(" << x << ")") { BOOST_TEST(det_log(x) == std::log(x), boost::test_tools::tolerance(kTranscendentalTolerance)); }
    }
    BOOST_TEST(det_log(1.0) == 0.0);
    for (double x : {-700.0, -20.0, -1.0, -1e-9, 0.0, 0.3, 1.0, 2.5, 100.0, 700.0}) {
        BOOST_TEST_CONTEXT("exp(" << x << ")") { BOOST_TEST(det_exp(x) == std::exp(x), boost::test_tools::tolerance(kTranscendentalTolerance)); }
    }
}

BOOST_AUTO_TEST_CASE(normals_have_unit_moments_and_uniform_below_is_in_range) {
    // 200,000 draws: the sample mean's standard error is 0.0022, the variance's 0.0032; 5 sigma bands.
    Rng rng(7);
    double sum = 0, sum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double z = rng.normal();
        sum += z;
        sum2 += z * z;
    }
    BOOST_TEST(std::fabs(sum / n) < 0.011);
    BOOST_TEST(std::fabs(sum2 / n - 1.0) < 0.016);
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < 30000; ++i) ++counts[rng.below(3)];
    for (int c : counts) BOOST_TEST(std::abs(c - 10000) < 500);
}

BOOST_AUTO_TEST_CASE(generated_layer_is_bit_identical_to_the_frozen_reference) {
    // FNV-1a over the bits of the seed-1 default layer's weights and activations. The generator
    // uses only IEEE basic operations in a fixed order, so this hash is the same on every platform;
    // a change here means every published number in docs/errorsim.md moved.
    const Layer layer = generate_layer(LayerSpec{});
    const auto& d = layer.data();
    auto fnv = [](std::uint64_t h, const float* p, long n) {
        for (long i = 0; i < n; ++i) {
            h ^= std::bit_cast<std::uint32_t>(p[i]);
            h *= 0x100000001B3ull;
        }
        return h;
    };
    std::uint64_t h = 0xCBF29CE484222325ull;
    h = fnv(h, d.w.data(), d.w.size());
    h = fnv(h, d.x_calibration.data(), d.x_calibration.size());
    h = fnv(h, d.x_heldout.data(), d.x_heldout.size());
    BOOST_TEST_MESSAGE("layer hash " << std::hex << h);
    BOOST_TEST(h == kFrozenLayerHash);
    BOOST_TEST(d.outlier_channels.size() == 3u);
}

BOOST_AUTO_TEST_CASE(streams_are_independent_and_seeds_differ) {
    LayerSpec a;
    LayerSpec b = a;
    b.calibration_tokens = 100;  // changing the token count leaves the weights alone
    BOOST_TEST((generate_layer(a).data().w == generate_layer(b).data().w));
    LayerSpec c = a;
    c.seed = 2;
    BOOST_TEST(!(generate_layer(a).data().w == generate_layer(c).data().w));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errorsim_minifloat)

BOOST_DATA_TEST_CASE(every_code_round_trips, bdata::make(kSmallFormats), sample) {
    const DType dtype = sample.dtype;
    const MinifloatFormat& f = fmt(dtype);
    for (std::uint32_t c = 0; c < (1u << f.bits()); ++c) {
        const double v = decode_minifloat(c, f);
        if (std::isnan(v) || std::isinf(v)) continue;
        BOOST_TEST_CONTEXT(dtype_name(dtype) << " code " << c << " value " << v) { BOOST_TEST(encode_minifloat(v, f) == c); }
    }
}

BOOST_DATA_TEST_CASE(rounding_matches_the_brute_force_oracle, bdata::make(kSmallFormats), sample) {
    const DType dtype = sample.dtype;
    // Every midpoint between neighbours (the ties), a point either side of each, and a sweep
    // through the range, out past the largest value (saturation) and into the subnormals.
    const MinifloatFormat& f = fmt(dtype);
    std::vector<double> xs;
    for (std::uint32_t c = 0; c < f.max_finite_code; ++c) {
        const double lo = decode_minifloat(c, f), hi = decode_minifloat(c + 1, f);
        const double mid = 0.5 * (lo + hi);
        xs.insert(xs.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e9), -mid});
    }
    for (double x = f.min_subnormal() / 4; x < 4 * f.max_finite; x *= 1.0137) xs.insert(xs.end(), {x, -x});
    xs.insert(xs.end(), {0.0, -0.0, f.max_finite * 1.03, f.max_finite * 1e6});
    for (double x : xs) {
        BOOST_TEST_CONTEXT(dtype_name(dtype) << " x=" << x) { BOOST_TEST(round_to_minifloat(x, f) == oracle_round(x, f)); }
    }
}

BOOST_AUTO_TEST_CASE(fp8_and_fp4_reference_values) {
    // OCP FP8 / MX specifications: maxima, smallest subnormals, NaN codes, the fp4 value set.
    BOOST_TEST(decode_minifloat(0x7E, fmt(DType::Fp8E4M3)) == 448.0);
    BOOST_TEST(std::isnan(decode_minifloat(0x7F, fmt(DType::Fp8E4M3))));
    BOOST_TEST(decode_minifloat(0x01, fmt(DType::Fp8E4M3)) == std::ldexp(1.0, -9));
    BOOST_TEST(decode_minifloat(0x08, fmt(DType::Fp8E4M3)) == std::ldexp(1.0, -6));
    BOOST_TEST(decode_minifloat(0x7B, fmt(DType::Fp8E5M2)) == 57344.0);
    BOOST_TEST(std::isinf(decode_minifloat(0x7C, fmt(DType::Fp8E5M2))));
    BOOST_TEST(decode_minifloat(0x01, fmt(DType::Fp8E5M2)) == std::ldexp(1.0, -16));
    const double fp4[] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    for (std::uint32_t c = 0; c < 8; ++c) {
        BOOST_TEST(decode_minifloat(c, fmt(DType::Fp4E2M1)) == fp4[c]);
        BOOST_TEST(decode_minifloat(c | 8u, fmt(DType::Fp4E2M1)) == -fp4[c]);
    }
    // Saturation (satfinite): 480 would be e4m3's NaN slot, 1e6 is past e5m2's range.
    BOOST_TEST(encode_minifloat(470.0, fmt(DType::Fp8E4M3)) == 0x7Eu);
    BOOST_TEST(encode_minifloat(-1e6, fmt(DType::Fp8E5M2)) == 0xFBu);
    BOOST_TEST(encode_minifloat(std::numeric_limits<double>::infinity(), fmt(DType::Fp4E2M1)) == 0x7u);
    BOOST_TEST(encode_minifloat(-std::numeric_limits<double>::infinity(), fmt(DType::Fp8E4M3)) == 0xFEu);
    BOOST_TEST(encode_minifloat(std::numeric_limits<double>::quiet_NaN(), fmt(DType::Fp8E4M3)) == 0x7Fu);
    // Ties to even: 0.3125 (e4m3 code 0x2A) and 0.34375 (0x2B); their midpoint goes to 0x2A.
    BOOST_TEST(encode_minifloat(0.328125, fmt(DType::Fp8E4M3)) == 0x2Au);
    BOOST_TEST(encode_minifloat(2.5, fmt(DType::Fp4E2M1)) == 0x4u);   // 2 (even) not 3
    BOOST_TEST(encode_minifloat(3.5, fmt(DType::Fp4E2M1)) == 0x6u);   // 4 (even) not 3
    BOOST_TEST(encode_minifloat(5.0, fmt(DType::Fp4E2M1)) == 0x6u);   // 4 (even) not 6
    BOOST_TEST(encode_minifloat(0.25, fmt(DType::Fp4E2M1)) == 0x0u);  // 0 (even) not 0.5
}

BOOST_AUTO_TEST_CASE(fp16_matches_the_compiler_conversion) {
    // _Float16 conversion is IEEE round to nearest even; a sweep through normals, subnormals and
    // ties (finite inputs below the overflow threshold, where IEEE and satfinite agree).
    const MinifloatFormat& f = fmt(DType::Fp16);
    int checked = 0;
    for (double x = 1e-8; x < 65504.0; x *= 1.000731, ++checked) {
        for (double v : {x, -x, static_cast<double>(static_cast<float>(x))}) {
            const double expected = static_cast<double>(static_cast<_Float16>(static_cast<float>(v)));
            BOOST_TEST_CONTEXT("x=" << v) { BOOST_TEST(round_to_minifloat(static_cast<float>(v), f) == expected); }
        }
    }
    BOOST_TEST(checked > 20000);
    BOOST_TEST(round_to_minifloat(1e9, f) == 65504.0);
}

BOOST_AUTO_TEST_CASE(bf16_matches_the_bit_rounding_reference) {
    // bf16 = the top 16 bits of fp32 after adding 0x7FFF + lsb (round to nearest even).
    const MinifloatFormat& f = fmt(DType::Bf16);
    Rng rng(3);
    for (int i = 0; i < 20000; ++i) {
        const float x = static_cast<float>(rng.normal() * std::ldexp(1.0, static_cast<int>(rng.below(60)) - 30));
        std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
        bits += 0x7FFFu + ((bits >> 16) & 1u);
        const float expected = std::bit_cast<float>(bits & 0xFFFF0000u);
        BOOST_TEST_CONTEXT("x=" << x) { BOOST_TEST(round_to_minifloat(x, f) == static_cast<double>(expected)); }
    }
}

BOOST_AUTO_TEST_CASE(ordinals_count_levels) {
    const MinifloatFormat& f = fmt(DType::Fp4E2M1);
    // -6 .. 6 spans all 15 distinct values of fp4 (the two zeros share ordinal 0).
    BOOST_TEST(minifloat_ordinal(encode_minifloat(6.0, f), f) - minifloat_ordinal(encode_minifloat(-6.0, f), f) + 1 == 15);
    BOOST_TEST(minifloat_ordinal(encode_minifloat(-0.0, f), f) == 0);
}

BOOST_AUTO_TEST_CASE(mx_scale_follows_the_ocp_rule) {
    // OCP MX v1.0: X = 2^(floor(log2 amax) - emax_elem); fp4's emax is 2.
    BOOST_TEST(minifloat_emax(fmt(DType::Fp4E2M1)) == 2);
    BOOST_TEST(minifloat_emax(fmt(DType::Fp8E4M3)) == 8);
    BOOST_TEST(minifloat_emax(fmt(DType::Fp8E5M2)) == 15);
    BOOST_TEST(decode_e8m0(mx_scale_code(6.0, 2)) == 1.0);    // floor(log2 6) = 2
    BOOST_TEST(decode_e8m0(mx_scale_code(7.99, 2)) == 1.0);
    BOOST_TEST(decode_e8m0(mx_scale_code(8.0, 2)) == 2.0);
    BOOST_TEST(decode_e8m0(mx_scale_code(0.1, 2)) == 0.015625);  // floor(log2 0.1) = -4 -> 2^-6
    BOOST_TEST(mx_scale_code(0.0, 2) == 0);
    BOOST_TEST(mx_scale_code(1e300, 2) == 254);  // clamped to 2^127
    BOOST_TEST(std::isnan(decode_e8m0(0xFF)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(errorsim_quantizers)

BOOST_AUTO_TEST_CASE(integer_grids_round_half_to_even_and_clip) {
    // int4 symmetric, amax 7 (fp32 scale 1): codes -7..7; 2.5 -> 2, 3.5 -> 4, 9 clips to 7.
    const Grid sym = make_grid(DType::Int4, true, DType::Fp32, "w");
    BOOST_TEST(sym.qmin == -7);
    BOOST_TEST(sym.qmax == 7);
    const GroupParams p = fit_group(sym, -3.0, 7.0, 1.0);
    BOOST_TEST(p.scale == 1.0);
    std::int32_t ord = 0;
    BOOST_TEST(quantize_value(sym, p, 2.5, &ord) == 2.0);
    BOOST_TEST(quantize_value(sym, p, 3.5, &ord) == 4.0);
    BOOST_TEST(quantize_value(sym, p, -2.5, &ord) == -2.0);
    BOOST_TEST(quantize_value(sym, p, 9.0, &ord) == 7.0);
    BOOST_TEST(ord == 7);
    // int4 asymmetric on [-1, 2]: scale 3/15 = 0.2, zero round(1/0.2) = 5; codes 0..15.
    const Grid asym = make_grid(DType::Int4, false, DType::Fp32, "w");
    const GroupParams q = fit_group(asym, -1.0, 2.0, 1.0);
    BOOST_TEST(q.scale == static_cast<double>(0.2f));
    BOOST_TEST(q.zero == 5.0);
    BOOST_TEST(quantize_value(asym, q, 0.0, &ord) == 0.0);  // zero is exact
    BOOST_TEST(ord == 5);
    BOOST_TEST(quantize_value(asym, q, 2.0, &ord) == (15 - 5) * q.scale);
    // A positive-only group still spans 0 (GPTQ's rule): [0.5, 1] behaves as [0, 1].
    const GroupParams r = fit_group(asym, 0.5, 1.0, 1.0);
    BOOST_TEST(r.zero == 0.0);
    BOOST_TEST(r.scale == static_cast<double>(static_cast<float>(1.0 / 15)));
}

BOOST_AUTO_TEST_CASE(scales_are_rounded_to_their_storage) {
    // fp16 scale of amax 1 over int8's 127: 1/127 rounded to fp16 (0x2008 = 0.0078735...).
    const Grid g = make_grid(DType::Int8, true, DType::Fp16, "w");
    BOOST_TEST(fit_group(g, -1.0, 1.0, 1.0).scale == round_to_minifloat(1.0 / 127.0, fmt(DType::Fp16)));
    // A zero group quantizes to zero without dividing by a zero scale.
    std::int32_t ord = 0;
    BOOST_TEST(quantize_value(g, fit_group(g, 0.0, 0.0, 1.0), 0.0, &ord) == 0.0);
}

BOOST_AUTO_TEST_CASE(nvfp4_block_follows_the_two_level_recipe) {
    // One tensor of 32 values = two blocks of 16. s2 = amax / (6 * 448); each block scale is
    // e4m3(amax_block / 6 / s2) * s2; elements are fp4(x / scale) * scale.
    MatrixF w(1, 32);
    for (int j = 0; j < 32; ++j) w(0, j) = static_cast<float>((j % 16) - 7.5) * (j < 16 ? 1.0f : 0.01f);
    const Grid g = make_grid(DType::Fp4E2M1, true, DType::Fp8E4M3, "w");
    const ScaleLayout l = make_layout(GroupShape::per_group(16), 1, 32, "g");
    const std::vector<GroupParams> p = fit_matrix(g, l, w);
    const double s2 = static_cast<double>(static_cast<float>(7.5 / (6.0 * 448.0)));
    BOOST_TEST(p[0].scale == round_to_minifloat(7.5 / 6.0 / s2, fmt(DType::Fp8E4M3)) * s2);
    BOOST_TEST(p[1].scale == round_to_minifloat(0.075 / 6.0 / s2, fmt(DType::Fp8E4M3)) * s2, boost::test_tools::tolerance(1e-12));
    MatrixF q;
    quantize_matrix(g, l, p, w, q, nullptr);
    for (int j = 0; j < 32; ++j) {
        const double expected = round_to_minifloat(w(0, j) / p[static_cast<std::size_t>(j / 16)].scale, fmt(DType::Fp4E2M1)) * p[static_cast<std::size_t>(j / 16)].scale;
        BOOST_TEST(q(0, j) == static_cast<float>(expected));
    }
    BOOST_TEST(effective_bits(g, l) == 4.0 + 8.0 / 16 + 32.0 / 32);
}

BOOST_AUTO_TEST_CASE(mxfp4_block_uses_a_power_of_two_scale) {
    MatrixF w(1, 32);
    for (int j = 0; j < 32; ++j) w(0, j) = static_cast<float>(0.37 * (j - 16));  // amax 5.92 -> 2^(2-2) = 1
    const Grid g = make_grid(DType::Fp4E2M1, true, DType::Fp8E8M0, "w");
    const ScaleLayout l = make_layout(GroupShape::per_group(32), 1, 32, "g");
    const std::vector<GroupParams> p = fit_matrix(g, l, w);
    BOOST_TEST(p[0].scale == 1.0);
    MatrixF q;
    quantize_matrix(g, l, p, w, q, nullptr);
    BOOST_TEST(q(0, 0) == -6.0f);   // -5.92 -> -6
    BOOST_TEST(q(0, 17) == 0.5f);   // 0.37 -> 0.5
    BOOST_TEST(effective_bits(g, l) == 4.25);
}

BOOST_AUTO_TEST_CASE(fp8_weights_scale_to_the_format_maximum) {
    MatrixF w(2, 4);
    w << 1, -2, 3, -4, 0.1f, 0.2f, -0.3f, 0.4f;
    const Grid g = make_grid(DType::Fp8E4M3, true, DType::Fp32, "w");
    const ScaleLayout l = make_layout(GroupShape::per_row(), 2, 4, "g");
    const std::vector<GroupParams> p = fit_matrix(g, l, w);
    BOOST_TEST(p[0].scale == static_cast<double>(static_cast<float>(4.0 / 448.0)));
    MatrixF q;
    quantize_matrix(g, l, p, w, q, nullptr);
    BOOST_TEST(q(0, 3) == -4.0f, boost::test_tools::tolerance(1e-6f));
}

struct LayoutCase {
    GroupShape group;
    std::int64_t rows, cols, expected_groups;
};
std::ostream& operator<<(std::ostream& os, const LayoutCase& c) {
    return os << c.group.rows << "x" << c.group.cols << " on " << c.rows << "x" << c.cols;
}
const LayoutCase kLayouts[] = {
    {GroupShape::per_tensor(), 32, 256, 1},   {GroupShape::per_row(), 32, 256, 32},      {GroupShape::per_group(128), 32, 256, 64},
    {GroupShape::per_group(32), 32, 256, 256}, {GroupShape::per_group(100), 3, 257, 9},  {GroupShape::per_group(1), 1, 1, 1},
    {GroupShape::block(128, 128), 300, 257, 9}, {GroupShape::per_group(512), 4, 256, 4},  {GroupShape::block(2, 3), 5, 7, 9},
};

BOOST_DATA_TEST_CASE(layouts_count_partial_groups, bdata::make(kLayouts), c) {
    const ScaleLayout l = make_layout(c.group, c.rows, c.cols, "g");
    BOOST_TEST(l.group_count() == c.expected_groups);
    BOOST_TEST(l.group_count() == c.group.group_count(c.rows, c.cols));
    // Quantizing works on every shape, and each element's group holds it.
    MatrixF w = MatrixF::Random(c.rows, c.cols);
    const Grid g = make_grid(DType::Int4, false, DType::Fp16, "w");
    MatrixF q;
    MatrixI ord;
    quantize_matrix(g, l, fit_matrix(g, l, w), w, q, &ord);
    BOOST_TEST(ord.minCoeff() >= 0);
    BOOST_TEST(ord.maxCoeff() <= 15);
    BOOST_TEST((q - w).cwiseAbs().maxCoeff() <= 2.0f / 15.0f);  // half a step of a range at most 2
}

BOOST_AUTO_TEST_CASE(effective_bits_match_seed_003) {
    // Seed 003: INT4 g128 with fp16 scales and 4-bit zeros is 4 + 16/128 + 4/128 = 4.156 bits,
    // g32 4.625.
    const Grid g = make_grid(DType::Int4, false, DType::Fp16, "w");
    BOOST_TEST(effective_bits(g, make_layout(GroupShape::per_group(128), 32, 256, "g")) == 4.15625);
    BOOST_TEST(effective_bits(g, make_layout(GroupShape::per_group(32), 32, 256, "g")) == 4.625);
    const Grid s = make_grid(DType::Int8, true, DType::Bf16, "w");
    BOOST_TEST(effective_bits(s, make_layout(GroupShape::per_row(), 32, 256, "g")) == 8.0 + 16.0 / 256);
}

BOOST_AUTO_TEST_CASE(activation_quantization_per_token_and_static) {
    MatrixF x(2, 3);
    x << 1, -2, 100, 0.5f, 0.25f, -1;
    const Grid g = make_grid(DType::Int8, true, DType::Fp32, "a");
    MatrixF q;
    std::vector<std::int64_t> levels;
    quantize_activations(g, x, true, std::nullopt, q, &levels);
    // Token 0's scale is set by its 100: the 1 lands on code round(127/100) = 1.
    BOOST_TEST(q(0, 0) == static_cast<float>(1 * static_cast<float>(100.0 / 127.0)));
    BOOST_TEST(q(1, 2) == -1.0f, boost::test_tools::tolerance(1e-6f));
    BOOST_TEST(levels.size() == 3u);
    // A static scale calibrated on small values clips a larger one.
    const GroupParams fixed = fit_group(g, -1.0, 1.0, 1.0);
    quantize_activations(g, x, false, fixed, q, nullptr);
    BOOST_TEST(q(0, 2) == 1.0f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(bad_grids_and_groups_are_refused_with_the_field) {
    auto field_of = [](auto f) {
        try {
            f();
        } catch (const Error& e) {
            return e.field();
        }
        return std::string("no error");
    };
    BOOST_TEST(field_of([] { make_grid(DType::Fp8E4M3, false, DType::Fp32, "weights.format"); }) == "weights.format");
    BOOST_TEST(field_of([] { make_grid(DType::Bf16, true, DType::Fp32, "weights.format"); }) == "weights.format");
    BOOST_TEST(field_of([] { make_grid(DType::Int32, true, DType::Fp32, "weights.format"); }) == "weights.format");
    BOOST_TEST(field_of([] { make_grid(DType::Int4, true, DType::Fp8E8M0, "weights.format"); }) == "weights.format");
    BOOST_TEST(field_of([] { make_layout(GroupShape::per_group(0), 4, 4, "weights.group"); }) == "weights.group");
    BOOST_TEST(field_of([] { make_layout(GroupShape{1, -5}, 4, 4, "weights.group"); }) == "weights.group");
}

BOOST_AUTO_TEST_SUITE_END()
