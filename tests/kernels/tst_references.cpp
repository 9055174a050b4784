// The host references (kernels/*_reference.h) against known answers and against independent
// computations, and the tolerance comparison that the GPU checks rely on.
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "kernels/kv_cache_reference.h"
#include "kernels/reference.h"
#include "kernels/w4a16_pack.h"
#include "kernels/w4a16_reference.h"
#include "kernels/w8a8_reference.h"
#include "tests/kernels/test_printing.h"

using namespace quantplan::kernels;
namespace bdata = boost::unit_test::data;

namespace {

std::vector<std::uint16_t> random_half16(std::size_t count, Half16 type, float lo, float hi, std::uint64_t seed) {
    Random rng(seed);
    std::vector<std::uint16_t> v(count);
    for (auto& x : v) x = float_to_half16(rng.uniform(lo, hi), type);
    return v;
}

W4Packed constant_weight(std::int64_t n, std::int64_t k, std::int64_t g, std::uint8_t q, std::uint8_t zero, float scale) {
    W4Logical w;
    w.n = n;
    w.k = k;
    w.group_size = g;
    w.scale_type = Half16::Fp16;
    w.q.assign(static_cast<std::size_t>(n * k), q);
    w.scales.assign(static_cast<std::size_t>(n * (k / g)), float_to_fp16(scale));
    w.zeros.assign(static_cast<std::size_t>(n * (k / g)), zero);
    return pack_w4(w);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(references)

BOOST_AUTO_TEST_CASE(matmul_known_answer) {
    // X = [[1, 2], [3, -4]], W = [[5, 6], [-7, 8]]: Y = X W^T.
    const DenseResult r = reference_matmul_nt({1, 2, 3, -4}, {5, 6, -7, 8}, 2, 2, 2);
    BOOST_TEST(r.value == (std::vector<double>{17, 9, -9, -53}));
    BOOST_TEST(r.magnitude == (std::vector<double>{17, 23, 39, 53}));
    BOOST_CHECK_THROW(reference_matmul_nt({1, 2, 3}, {5, 6}, 2, 1, 2), quantplan::Error);
}

BOOST_AUTO_TEST_CASE(comparison_accepts_the_band_and_rejects_outside) {
    Tolerance t;
    t.relative = 0.01;
    t.magnitude_relative = 0.001;
    t.absolute = 0;
    // bound = 0.01 * 100 + 0.001 * 1000 = 2
    const Comparison ok = compare_with_tolerance({101.9f}, {100.0}, {1000.0}, t);
    BOOST_TEST(ok.passed());
    BOOST_TEST(ok.worst_ratio < 1.0);
    const Comparison bad = compare_with_tolerance({102.5f}, {100.0}, {1000.0}, t);
    BOOST_TEST(!bad.passed());
    BOOST_TEST(bad.failures == 1);
    BOOST_TEST(bad.worst_expected == 100.0);
    BOOST_TEST(bad.describe().find("expected 100") != std::string::npos, bad.describe());
    BOOST_TEST(!compare_with_tolerance({NAN}, {0.0}, {}, t).passed());
    BOOST_TEST(!compare_with_tolerance({}, {}, {}, t).passed());  // nothing compared never passes
    BOOST_TEST(!compare_with_tolerance({1.0f}, {1.0, 2.0}, {}, t).passed());
    BOOST_TEST(compare_exact(std::vector<int>{1, 2, 3}, std::vector<int>{1, 2, 3}).passed());
    const Comparison diff = compare_exact(std::vector<int>{1, 5, 3}, std::vector<int>{1, 2, 3});
    BOOST_TEST(diff.failures == 1);
    BOOST_TEST(diff.worst_index == 1);
}

BOOST_AUTO_TEST_CASE(dot_product_tolerance_follows_higham) {
    const Tolerance t = dot_product_tolerance(4096, kUnitRoundoffBf16, kUnitRoundoffBf16, "x");
    BOOST_TEST(t.relative == 2 * kUnitRoundoffBf16);
    BOOST_TEST(t.magnitude_relative == 4096 * kUnitRoundoffFp32 + 2 * kUnitRoundoffBf16);
    BOOST_TEST(kUnitRoundoffFp32 == std::ldexp(1.0, -24));
    BOOST_TEST(kUnitRoundoffFp16 == std::ldexp(1.0, -11));
    BOOST_TEST(kUnitRoundoffBf16 == std::ldexp(1.0, -8));
}

BOOST_AUTO_TEST_CASE(w4a16_known_answer) {
    // q = 9, zero 8, scale 0.5: every weight is 0.5; x = 1: y = K / 2.
    const W4Packed w = constant_weight(3, 64, 32, 9, 8, 0.5f);
    const std::vector<std::uint16_t> x(2 * 64, float_to_bf16(1.0f));
    const DenseResult r = w4a16_gemm_reference(w, x, 2, Half16::Bf16);
    for (const double v : r.value) BOOST_TEST(v == 32.0);
    const std::vector<std::uint16_t> dq = w4a16_dequantize_reference(w, Half16::Bf16);
    for (const std::uint16_t b : dq) BOOST_TEST_REQUIRE(b == float_to_bf16(0.5f));
    // q = 0, zero 15: -15 * scale.
    const W4Packed low = constant_weight(1, 32, 32, 0, 15, 0.25f);
    BOOST_TEST(w4a16_dequantize_reference(low, Half16::Fp16)[0] == float_to_fp16(-3.75f));
}

BOOST_DATA_TEST_CASE(w4a16_reference_matches_an_independent_dense_product,
                     bdata::make({std::int64_t{1}, std::int64_t{3}, std::int64_t{17}}) * bdata::make({Half16::Fp16, Half16::Bf16}), m, act) {
    // Build the dense weight directly from (q - z) * s, independent of pack/unpack.
    const std::int64_t n = 24, k = 128, g = 64;
    Random rng(21);
    W4Logical w;
    w.n = n;
    w.k = k;
    w.group_size = g;
    w.scale_type = Half16::Bf16;
    w.q.resize(static_cast<std::size_t>(n * k));
    for (auto& v : w.q) v = static_cast<std::uint8_t>(rng.below(16));
    w.scales.resize(static_cast<std::size_t>(n * (k / g)));
    for (auto& s : w.scales) s = float_to_bf16(rng.uniform(0.01f, 0.1f));
    w.zeros.resize(w.scales.size());
    for (auto& z : w.zeros) z = static_cast<std::uint8_t>(rng.below(16));
    const std::vector<std::uint16_t> x = random_half16(static_cast<std::size_t>(m * k), act, -2.0f, 2.0f, 22);
    const DenseResult r = w4a16_gemm_reference(pack_w4(w), x, m, act);
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double expected = 0;
            for (std::int64_t t = 0; t < k; ++t) {
                const std::size_t gi = static_cast<std::size_t>(j * (k / g) + t / g);
                const double wv = (static_cast<double>(w.q[static_cast<std::size_t>(j * k + t)]) - w.zeros[gi]) * bf16_to_float(w.scales[gi]);
                expected += wv * half16_to_float(x[static_cast<std::size_t>(i * k + t)], act);
            }
            BOOST_TEST_REQUIRE(r.value[static_cast<std::size_t>(i * n + j)] == expected, boost::test_tools::tolerance(1e-12));
        }
}

BOOST_AUTO_TEST_CASE(w4a16_tolerance_catches_a_transposed_weight) {
    // A plausible kernel bug, rows and columns swapped, must fall outside the band.
    const std::int64_t n = 64, k = 64, m = 4;
    Random rng(23);
    W4Logical w;
    w.n = n;
    w.k = k;
    w.group_size = 32;
    w.q.resize(static_cast<std::size_t>(n * k));
    for (auto& v : w.q) v = static_cast<std::uint8_t>(rng.below(16));
    w.scales.assign(static_cast<std::size_t>(n * 2), float_to_fp16(0.03f));
    const W4Packed p = pack_w4(w);
    const std::vector<std::uint16_t> x = random_half16(static_cast<std::size_t>(m * k), Half16::Fp16, -1, 1, 24);
    const DenseResult r = w4a16_gemm_reference(p, x, m, Half16::Fp16);
    W4Logical t = w;
    for (std::int64_t a = 0; a < n; ++a)
        for (std::int64_t b = 0; b < k; ++b) t.q[static_cast<std::size_t>(a * k + b)] = w.q[static_cast<std::size_t>(b * k + a)];
    const DenseResult wrong = w4a16_gemm_reference(pack_w4(t), x, m, Half16::Fp16);
    std::vector<float> wrong_f(wrong.value.begin(), wrong.value.end());
    std::vector<float> right_f(r.value.begin(), r.value.end());
    const Tolerance tol = w4a16_tolerance(k, Half16::Fp16);
    BOOST_TEST(compare_with_tolerance(right_f, r.value, r.magnitude, tol).passed());
    BOOST_TEST(!compare_with_tolerance(wrong_f, r.value, r.magnitude, tol).passed());
}

BOOST_AUTO_TEST_CASE(w4a16_permutation) {
    const std::vector<std::uint16_t> x{10, 11, 12, 13, 20, 21, 22, 23};
    BOOST_TEST(w4a16_permute_reference(x, {3, 1, 0, 2}, 2, 4) == (std::vector<std::uint16_t>{13, 11, 10, 12, 23, 21, 20, 22}));
    BOOST_CHECK_THROW(w4a16_permute_reference(x, {3, 1, 0, 4}, 2, 4), quantplan::Error);
}

BOOST_AUTO_TEST_CASE(int8_rows_known_answer) {
    // Row max 2 -> scale 2/127; 1 -> rint(63.5) = 64 (tie to even), -2 -> -127.
    const std::vector<std::uint16_t> x{float_to_bf16(1.0f), float_to_bf16(-2.0f), 0, 0, 0, 0};
    const Int8Rows r = quantize_rows_int8_reference(x, Half16::Bf16, 2, 3);
    BOOST_TEST(r.scales[0] == 2.0f / 127.0f);
    BOOST_TEST(int{r.q[0]} == 64);
    BOOST_TEST(int{r.q[1]} == -127);
    BOOST_TEST(int{r.q[2]} == 0);
    BOOST_TEST(r.scales[1] == 1.0f);  // all-zero row
    const Fp8Rows f = quantize_rows_fp8_reference(x, Half16::Bf16, 2, 3);
    BOOST_TEST(f.scales[0] == 2.0f / 448.0f);
    BOOST_TEST(int{f.q[1]} == 0xFE);  // -448
    BOOST_TEST(fp8_e4m3_to_float(f.q[0]) == 224.0f);
}

BOOST_AUTO_TEST_CASE(int8_gemm_known_answer_and_accuracy) {
    // Exact integer part: qx = [1, 2], qw = [3, 4] -> 11, times 0.5 * 0.25.
    Int8Rows x{1, 2, {1, 2}, {0.5f}}, w{1, 2, {3, 4}, {0.25f}};
    BOOST_TEST(int8_gemm_reference(x, w)[0] == float_to_bf16(11 * 0.125f));
    // On random data the INT8 product is close to the bf16 product it approximates.
    const std::int64_t m = 5, n = 7, k = 256;
    const auto xb = random_half16(static_cast<std::size_t>(m * k), Half16::Bf16, -1, 1, 31);
    const auto wb = random_half16(static_cast<std::size_t>(n * k), Half16::Bf16, -1, 1, 32);
    const DenseResult exact = bf16_gemm_reference(xb, wb, m, n, k);
    const auto y = int8_gemm_reference(quantize_rows_int8_reference(xb, Half16::Bf16, m, k), quantize_rows_int8_reference(wb, Half16::Bf16, n, k));
    for (std::size_t i = 0; i < y.size(); ++i)
        BOOST_TEST_REQUIRE(std::fabs(bf16_to_float(y[i]) - exact.value[i]) <= 0.02 * exact.magnitude[i] + 0.01, "element " << i);
    Int8Rows bad = x;
    bad.cols = 3;
    BOOST_CHECK_THROW(int8_gemm_reference(bad, w), quantplan::Error);
}

BOOST_AUTO_TEST_CASE(fp8_gemm_reference_is_close_to_bf16) {
    const std::int64_t m = 4, n = 6, k = 512;
    const auto xb = random_half16(static_cast<std::size_t>(m * k), Half16::Bf16, -3, 3, 41);
    const auto wb = random_half16(static_cast<std::size_t>(n * k), Half16::Bf16, -0.1f, 0.1f, 42);
    const DenseResult exact = bf16_gemm_reference(xb, wb, m, n, k);
    const DenseResult f = fp8_gemm_reference(quantize_rows_fp8_reference(xb, Half16::Bf16, m, k), quantize_rows_fp8_reference(wb, Half16::Bf16, n, k));
    // E4M3 keeps 3 mantissa bits: each product is within about 2 x 2^-4 of its value.
    for (std::size_t i = 0; i < f.value.size(); ++i)
        BOOST_TEST_REQUIRE(std::fabs(f.value[i] - exact.value[i]) <= 0.125 * exact.magnitude[i], "element " << i);
    const Tolerance t = fp8_gemm_tolerance(k);
    BOOST_TEST(t.magnitude_relative > bf16_gemm_tolerance(k).magnitude_relative);
}

BOOST_DATA_TEST_CASE(kv_write_quantizes_as_specified, bdata::make({KvCacheType::Bf16, KvCacheType::Fp8E4M3, KvCacheType::Int8}), type) {
    const std::int64_t b = 2, l = 5, h = 2, d = 16;
    KvCacheHost c = make_kv_cache_host(type, b, l, h, d, 0.5f, 0.25f);
    const auto k_new = random_half16(static_cast<std::size_t>(b * h * d), Half16::Bf16, -4, 4, 51);
    const auto v_new = random_half16(static_cast<std::size_t>(b * h * d), Half16::Bf16, -4, 4, 52);
    kv_cache_write_reference(c, k_new, v_new, {3, 0});
    for (std::int64_t s = 0; s < b; ++s)
        for (std::int64_t hh = 0; hh < h; ++hh) {
            float amax = 0;
            for (std::int64_t dd = 0; dd < d; ++dd) amax = std::fmax(amax, std::fabs(bf16_to_float(k_new[static_cast<std::size_t>((s * h + hh) * d + dd)])));
            for (std::int64_t dd = 0; dd < d; ++dd) {
                const float x = bf16_to_float(k_new[static_cast<std::size_t>((s * h + hh) * d + dd)]);
                const float stored = kv_cache_value(c, false, s, s == 0 ? 3 : 0, hh, dd);
                switch (type) {
                    case KvCacheType::Bf16: BOOST_TEST_REQUIRE(stored == x); break;
                    case KvCacheType::Fp8E4M3: BOOST_TEST_REQUIRE(stored == fp8_e4m3_to_float(float_to_fp8_e4m3(x / 0.5f)) * 0.5f); break;
                    case KvCacheType::Int8: BOOST_TEST_REQUIRE(std::fabs(stored - x) <= 0.5 * amax / 127.0 * 1.001 + 1e-6); break;
                }
            }
        }
    // Untouched positions stay zero.
    BOOST_TEST(kv_cache_value(c, true, 0, 1, 0, 0) == 0.0f);
    BOOST_CHECK_THROW(kv_cache_write_reference(c, k_new, v_new, {5, 0}), quantplan::Error);
    BOOST_CHECK_THROW(kv_cache_write_reference(c, k_new, v_new, {0}), quantplan::Error);
}

BOOST_AUTO_TEST_CASE(decode_attention_known_answers) {
    const std::int64_t b = 1, l = 4, h = 2, d = 8, hq = 4;
    KvCacheHost c = make_kv_cache_host(KvCacheType::Bf16, b, l, h, d);
    // K all zero: uniform attention, output = mean of the attended V rows.
    for (std::int64_t t = 0; t < 3; ++t) {
        std::vector<std::uint16_t> k(static_cast<std::size_t>(h * d), 0), v(static_cast<std::size_t>(h * d));
        for (std::int64_t hh = 0; hh < h; ++hh)
            for (std::int64_t dd = 0; dd < d; ++dd) v[static_cast<std::size_t>(hh * d + dd)] = float_to_bf16(static_cast<float>(t + 10 * hh));
        kv_cache_write_reference(c, k, v, {static_cast<std::int32_t>(t)});
    }
    const auto q = random_half16(static_cast<std::size_t>(b * hq * d), Half16::Bf16, -1, 1, 61);
    const std::vector<double> o = decode_attention_reference(c, q, hq, {3}, 0.35f);
    // Query heads 0, 1 read KV head 0 (mean of 0, 1, 2 = 1); heads 2, 3 read KV head 1 (mean 11).
    for (std::int64_t qh = 0; qh < hq; ++qh)
        for (std::int64_t dd = 0; dd < d; ++dd)
            BOOST_TEST(o[static_cast<std::size_t>(qh * d + dd)] == (qh < 2 ? 1.0 : 11.0), boost::test_tools::tolerance(1e-12));
    // One token: the output is that V row.
    const std::vector<double> one = decode_attention_reference(c, q, hq, {1}, 0.35f);
    BOOST_TEST(one[0] == 0.0);
    BOOST_TEST(one[static_cast<std::size_t>(2 * d)] == 10.0);
    BOOST_TEST(kv_cache_max_abs_value(c, {3}) == 12.0);
    BOOST_CHECK_THROW(decode_attention_reference(c, q, 3, {3}, 0.35f), quantplan::Error);  // H_q not a multiple of H_kv
    BOOST_CHECK_THROW(decode_attention_reference(c, q, hq, {0}, 0.35f), quantplan::Error); // empty sequence
    BOOST_TEST(decode_attention_tolerance(12.0).absolute == 12.0 / 4096.0);
}

BOOST_AUTO_TEST_CASE(decode_attention_softmax_weights) {
    // Two tokens with keys e and 0 along one dim; q = e: scores 1 * scale and 0.
    KvCacheHost c = make_kv_cache_host(KvCacheType::Fp8E4M3, 1, 2, 1, 4, 1.0f, 1.0f);
    kv_cache_write_reference(c, {float_to_bf16(1), 0, 0, 0}, {float_to_bf16(2), 0, 0, 0}, {0});
    kv_cache_write_reference(c, {0, 0, 0, 0}, {float_to_bf16(4), 0, 0, 0}, {1});
    const std::vector<double> o = decode_attention_reference(c, {float_to_bf16(1), 0, 0, 0}, 1, {2}, 1.0f);
    const double p0 = std::exp(1.0) / (std::exp(1.0) + 1.0);
    BOOST_TEST(o[0] == 2 * p0 + 4 * (1 - p0), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_SUITE_END()
