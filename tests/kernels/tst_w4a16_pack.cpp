// INT4 packing (kernels/w4a16_pack.h): the kernels' layout round-trips, the AutoAWQ and GPTQ
// checkpoint layouts decode to the same weights (known-answer words and round trips), act-order
// becomes a permutation, and malformed shapes are refused with the tensor named.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "kernels/reference.h"
#include "kernels/w4a16_pack.h"

using namespace quantplan::kernels;
namespace bdata = boost::unit_test::data;

namespace {

// A random weight of the given extents.
W4Logical random_weight(std::int64_t n, std::int64_t k, std::int64_t g, bool symmetric, Half16 scale_type, std::uint64_t seed) {
    Random rng(seed);
    W4Logical w;
    w.n = n;
    w.k = k;
    w.group_size = g;
    w.scale_type = scale_type;
    w.q.resize(static_cast<std::size_t>(n * k));
    for (auto& v : w.q) v = static_cast<std::uint8_t>(rng.below(16));
    w.scales.resize(static_cast<std::size_t>(n * (k / g)));
    for (auto& s : w.scales) s = float_to_half16(rng.uniform(0.001f, 0.05f), scale_type);
    if (!symmetric) {
        w.zeros.resize(w.scales.size());
        for (auto& z : w.zeros) z = static_cast<std::uint8_t>(1 + rng.below(15));  // 1..15: v1 GPTQ can store z - 1
    }
    return w;
}

bool same(const W4Logical& a, const W4Logical& b) {
    return a.n == b.n && a.k == b.k && a.group_size == b.group_size && a.scale_type == b.scale_type && a.q == b.q && a.scales == b.scales &&
           a.zeros == b.zeros;
}

struct Shape {
    std::int64_t n, k, g;
};
std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << "N=" << s.n << " K=" << s.k << " G=" << s.g; }

// Edge shapes: the smallest legal K per group size, N = 8 (one AWQ word), N not a multiple of 64.
const std::vector<Shape> kShapes{{8, 32, 32}, {16, 64, 32}, {24, 128, 64}, {8, 128, 128}, {40, 256, 128}, {72, 384, 64}};

}  // namespace

BOOST_AUTO_TEST_SUITE(w4a16_pack)

BOOST_DATA_TEST_CASE(kernel_layout_round_trips, bdata::make(kShapes) * bdata::make({false, true}), shape, symmetric) {
    for (const Half16 st : {Half16::Fp16, Half16::Bf16}) {
        const W4Logical w = random_weight(shape.n, shape.k, shape.g, symmetric, st, 1);
        const W4Packed p = pack_w4(w);
        BOOST_TEST(p.qweight.size() == static_cast<std::size_t>(shape.n * shape.k / 8));
        BOOST_TEST(same(unpack_w4(p), w));
        const std::uint64_t expected_bytes = static_cast<std::uint64_t>(shape.n * shape.k / 2 + 2 * shape.n * (shape.k / shape.g) +
                                                                        (symmetric ? 0 : shape.n * (shape.k / shape.g)));
        BOOST_TEST(w4_packed_bytes(p) == expected_bytes);
    }
}

BOOST_AUTO_TEST_CASE(kernel_layout_puts_k_in_nibble_order) {
    W4Logical w = random_weight(1, 32, 32, true, Half16::Fp16, 2);
    for (int k = 0; k < 32; ++k) w.q[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(k % 16);
    const W4Packed p = pack_w4(w);
    BOOST_TEST(p.qweight[0] == 0x76543210u);
    BOOST_TEST(p.qweight[1] == 0xFEDCBA98u);
    BOOST_TEST(p.qweight[2] == 0x76543210u);
}

BOOST_AUTO_TEST_CASE(awq_interleaves_columns) {
    // Columns 0..7 of input channel 0 hold q = column: AutoAWQ puts column kAwqOrder[i] in nibble i.
    W4Logical w = random_weight(8, 32, 32, false, Half16::Fp16, 3);
    for (int n = 0; n < 8; ++n) w.q[static_cast<std::size_t>(n * 32)] = static_cast<std::uint8_t>(n);
    for (int n = 0; n < 8; ++n) w.zeros[static_cast<std::size_t>(n)] = static_cast<std::uint8_t>(8 + n);
    const AwqTensors a = to_awq(w);
    BOOST_TEST(static_cast<std::uint32_t>(a.qweight[0]) == 0x75316420u);
    BOOST_TEST(static_cast<std::uint32_t>(a.qzeros[0]) == 0xFDB9ECA8u);
    for (int j = 0; j < 8; ++j) BOOST_TEST(kAwqOrder[static_cast<std::size_t>(kAwqReverseOrder[static_cast<std::size_t>(j)])] == j);
}

BOOST_DATA_TEST_CASE(awq_repacks_to_the_same_weight, bdata::make(kShapes), shape) {
    const W4Logical w = random_weight(shape.n, shape.k, shape.g, false, Half16::Fp16, 4);
    const AwqTensors a = to_awq(w);
    BOOST_TEST(a.qweight.size() == static_cast<std::size_t>(shape.k * shape.n / 8));
    const W4Packed p = repack_awq(a);
    BOOST_TEST(p.k_perm.empty());
    BOOST_TEST(same(unpack_w4(p), w));
    BOOST_TEST(dequantize_awq(a) == dequantize_w4(w));
}

BOOST_DATA_TEST_CASE(gptq_repacks_to_the_same_weight, bdata::make(kShapes) * bdata::make({false, true}) * bdata::make({false, true}), shape,
                     symmetric, minus_one) {
    const W4Logical w = random_weight(shape.n, shape.k, shape.g, symmetric, Half16::Fp16, 5);
    const GptqTensors t = to_gptq(w, minus_one);
    if (symmetric && minus_one) BOOST_TEST(static_cast<std::uint32_t>(t.qzeros[0]) == 0x77777777u);  // v1 stores 8 - 1
    if (symmetric && !minus_one) BOOST_TEST(static_cast<std::uint32_t>(t.qzeros[0]) == 0x88888888u);
    const W4Packed p = repack_gptq(t);
    BOOST_TEST(p.k_perm.empty());
    BOOST_TEST(p.symmetric() == symmetric);  // zeros of 8 everywhere are dropped
    BOOST_TEST(same(unpack_w4(p), w));
    BOOST_TEST(dequantize_gptq(t) == dequantize_w4(w));
}

BOOST_AUTO_TEST_CASE(gptq_packs_along_k) {
    W4Logical w = random_weight(8, 32, 32, true, Half16::Fp16, 6);
    for (int k = 0; k < 8; ++k) w.q[static_cast<std::size_t>(3 * 32 + k)] = static_cast<std::uint8_t>(k + 1);
    const GptqTensors t = to_gptq(w, true);
    BOOST_TEST(static_cast<std::uint32_t>(t.qweight[3]) == 0x87654321u);  // row 0 (k 0..7), column 3
}

BOOST_DATA_TEST_CASE(gptq_act_order_becomes_a_permutation, bdata::make({Shape{8, 128, 32}, Shape{16, 256, 64}, Shape{8, 256, 128}}), shape) {
    // A checkpoint whose channels were quantized in a shuffled order: g_idx is a shuffled
    // assignment with G channels per group.
    const W4Logical w = random_weight(shape.n, shape.k, shape.g, false, Half16::Fp16, 7);
    GptqTensors t = to_gptq(w, true);
    std::vector<std::int32_t> order(static_cast<std::size_t>(shape.k));
    std::iota(order.begin(), order.end(), 0);
    Random rng(8);
    for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<std::uint32_t>(i + 1))]);
    for (std::int64_t k = 0; k < shape.k; ++k) t.g_idx[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = static_cast<std::int32_t>(k / shape.g);

    const W4Packed p = repack_gptq(t);
    BOOST_TEST_REQUIRE(p.k_perm.size() == static_cast<std::size_t>(shape.k));
    std::vector<std::int32_t> sorted = p.k_perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::int64_t k = 0; k < shape.k; ++k) BOOST_TEST_REQUIRE(sorted[static_cast<std::size_t>(k)] == k);

    // Kernel channel j is checkpoint channel k_perm[j]: same dequantized weight.
    const std::vector<float> checkpoint = dequantize_gptq(t);
    const std::vector<float> kernel = dequantize_w4(unpack_w4(p));
    for (std::int64_t n = 0; n < shape.n; ++n)
        for (std::int64_t j = 0; j < shape.k; ++j)
            BOOST_TEST_REQUIRE(kernel[static_cast<std::size_t>(n * shape.k + j)] ==
                                   checkpoint[static_cast<std::size_t>(n * shape.k + p.k_perm[static_cast<std::size_t>(j)])],
                               "n=" << n << " j=" << j);
}

BOOST_AUTO_TEST_CASE(refuses_malformed_weights) {
    using quantplan::Error;
    BOOST_CHECK_THROW(check_w4_shape(8, 96, 48, "w"), Error);    // group size not supported
    BOOST_CHECK_THROW(check_w4_shape(8, 96, 64, "w"), Error);    // K not a multiple of G
    BOOST_CHECK_THROW(check_w4_shape(0, 128, 128, "w"), Error);  // no output channel
    BOOST_CHECK_NO_THROW(check_w4_shape(1, 128, 128, "w"));

    W4Logical w = random_weight(8, 64, 32, false, Half16::Fp16, 9);
    w.q[5] = 16;
    BOOST_CHECK_THROW(pack_w4(w), Error);

    const W4Logical good = random_weight(8, 64, 32, false, Half16::Fp16, 10);
    AwqTensors a = to_awq(good);
    a.qweight.pop_back();
    try {
        repack_awq(a);
        BOOST_FAIL("a short qweight was accepted");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("awq: qweight") != std::string::npos, e.what());
    }

    GptqTensors t = to_gptq(good, true);
    t.g_idx[0] = 1;  // group 0 now holds 31 channels, group 1 holds 33
    BOOST_CHECK_THROW(repack_gptq(t), Error);
    t = to_gptq(good, true);
    t.g_idx[0] = 9;  // group outside 0..1
    BOOST_CHECK_THROW(repack_gptq(t), Error);

    W4Logical odd = random_weight(12, 64, 32, false, Half16::Fp16, 11);
    BOOST_CHECK_THROW(to_awq(odd), Error);                  // N % 8
    BOOST_CHECK_NO_THROW(pack_w4(odd));                     // the kernels' layout takes any N
    BOOST_CHECK_THROW(to_awq(random_weight(8, 64, 32, true, Half16::Fp16, 12)), Error);  // AWQ needs zeros
}

BOOST_AUTO_TEST_SUITE_END()
