// Number formats and the scheme grammar: traits, parse/print round trips, rejections, effective bits.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/dtype.h"
#include "core/base/error.h"
#include "core/scheme/bytes.h"
#include "core/scheme/scheme.h"

using namespace quantplan;
namespace bdata = boost::unit_test::data;

BOOST_AUTO_TEST_SUITE(dtype_and_scheme)

BOOST_AUTO_TEST_CASE(every_dtype_round_trips_through_its_name) {
    std::size_t n = 0;
    const DTypeTraits* all = all_dtypes(&n);
    BOOST_TEST(n == 15u);
    for (std::size_t i = 0; i < n; ++i) {
        const auto parsed = parse_dtype(all[i].name);
        BOOST_TEST_REQUIRE(parsed.has_value(), all[i].name);
        BOOST_TEST(static_cast<int>(*parsed) == static_cast<int>(all[i].dtype));
        BOOST_TEST(dtype_bits(all[i].dtype) == all[i].bits);
    }
    BOOST_TEST(dtype_bits(DType::Fp8E4M3) == 8);
    BOOST_TEST(dtype_bits(DType::Fp4E2M1) == 4);
    BOOST_TEST(dtype_bits(DType::Int3) == 3);
    BOOST_TEST(static_cast<int>(*parse_dtype("bfloat16")) == static_cast<int>(DType::Bf16));
    BOOST_TEST(!parse_dtype("int9").has_value());
}

// Every canonical and grammar name prints back to itself.
const char* kNames[] = {"bf16", "fp16", "fp32", "w8a16-int8", "w4a16-g128", "w4a16-g32", "w8a8-int8", "w8a8-fp8",
                        "w8a8-fp8-block128", "w4a4-nvfp4", "w4a16-mxfp4", "w4a16-g64", "w4a16-g128-sym", "w3a16-g128",
                        "w2a16-g64", "w4a16-ch", "w8a8-fp8-tensor-static", "w8a8-int8-static", "w8a16-fp8", "w8a8-fp8e5m2",
                        "w4a16-nvfp4", "w8a16-int8-g128", "w8a8-fp8-block128x64", "w4a16-tensor"};

BOOST_DATA_TEST_CASE(scheme_names_round_trip, bdata::make(kNames), name) {
    const Scheme s = parse_scheme(name);
    BOOST_TEST(scheme_name(s) == std::string(name));
    BOOST_TEST((parse_scheme(scheme_name(s)) == s));
}

BOOST_AUTO_TEST_CASE(canonical_names_all_parse) {
    for (const std::string& n : canonical_scheme_names()) BOOST_TEST(scheme_name(parse_scheme(n)) == n);
    BOOST_TEST(default_serving_scheme_names().size() == 6u);
}

BOOST_AUTO_TEST_CASE(axes_of_the_named_schemes) {
    const Scheme awq = parse_scheme("w4a16-g128");
    BOOST_TEST(awq.is_weight_only());
    BOOST_TEST(!awq.weights.symmetric);
    BOOST_TEST(static_cast<int>(awq.weights.scale->dtype) == static_cast<int>(DType::Fp16));
    BOOST_TEST((awq.weights.scale->group == GroupShape::per_group(128)));
    BOOST_TEST(static_cast<int>(awq.layout) == static_cast<int>(CheckpointLayout::AutoAwqGemm));
    const Scheme w8 = parse_scheme("w8a8-int8");
    BOOST_TEST(w8.weights.symmetric);
    BOOST_TEST(w8.weights.scale->group.is_per_row());
    BOOST_TEST(!w8.activations->scale->is_static);
    BOOST_TEST(w8.activations->scale->group.is_per_row());
    BOOST_TEST(static_cast<int>(w8.accumulation) == static_cast<int>(DType::Int32));
    BOOST_TEST(static_cast<int>(w8.matmul_type()) == static_cast<int>(MatmulType::Int8));
    const Scheme blk = parse_scheme("w8a8-fp8-block128");
    BOOST_TEST((blk.weights.scale->group == GroupShape::block(128, 128)));
    BOOST_TEST((blk.activations->scale->group == GroupShape::per_group(128)));
    const Scheme nv = parse_scheme("w4a4-nvfp4");
    BOOST_TEST(nv.weights.scale2.has_value());
    BOOST_TEST(static_cast<int>(nv.matmul_type()) == static_cast<int>(MatmulType::Fp4));
    const Scheme mx = parse_scheme("w4a16-mxfp4");
    BOOST_TEST(static_cast<int>(mx.weights.scale->dtype) == static_cast<int>(DType::Fp8E8M0));
}

struct Rejection {
    const char* name;
    const char* reason_fragment;
};
std::ostream& operator<<(std::ostream& os, const Rejection& r) { return os << r.name; }

const Rejection kRejections[] = {
    {"w8a8-fp8-block128-static", "static activation scales"},
    {"w4a16-g0", "group size"},
    {"w4a16-g-5", "group size"},
    {"w4a16-gx", "group size"},
    {"w4a16-block0", "block size"},
    {"w4a16-foo", "unknown part"},
    {"int4", "not a scheme name"},
    {"w9a16", "weight bits"},
    {"w4a12", "activation bits"},
    {"w8a8-fp8-asym", "zero point"},
    {"w8a8-int8-asym", "symmetric"},
    {"w4a8-int", "w8a8"},
    {"w4a16-nvfp4-g32", "per 16"},
    {"w4a16-mxfp4-g16", "per 32"},
    {"w4a16-fp8", "8 bits"},
    {"w4a16-g128-static", "a16"},
    {"", "not a scheme name"},
};

BOOST_DATA_TEST_CASE(impossible_schemes_are_rejected_with_the_reason, bdata::make(kRejections), r) {
    try {
        parse_scheme(r.name);
        BOOST_FAIL("accepted " << r.name);
    } catch (const Error& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find(r.reason_fragment) != std::string::npos, "message '" << what << "' lacks '" << r.reason_fragment << "'");
    }
}

BOOST_AUTO_TEST_CASE(scheme_lists) {
    BOOST_TEST(parse_scheme_list("bf16,w4a16-g128").size() == 2u);
    BOOST_CHECK_THROW(parse_scheme_list("bf16,,w4a16-g128"), Error);
}

// Effective bits: payload + scale + zero-point bits per weight on the real shape.
struct BitsCase {
    const char* scheme;
    std::int64_t rows;
    std::int64_t cols;
    double expected_bits;
};
std::ostream& operator<<(std::ostream& os, const BitsCase& c) { return os << c.scheme << " " << c.rows << "x" << c.cols; }

const BitsCase kBits[] = {
    {"bf16", 4096, 4096, 16.0},
    {"w4a16-g128", 4096, 4096, 4.15625},  // seed 003: 4 + 16/128 + 4/128
    {"w4a16-g32", 4096, 4096, 4.625},     // seed 003
    {"w4a16-g128-sym", 4096, 4096, 4.125 + 16.0 * 8 / (4096.0 * 4096)},  // + weight_shape I64[2]
    {"w8a8-int8", 4096, 4096, 8.0 + 16.0 / 4096},        // bf16 scale per output channel
    {"w8a8-fp8-block128", 4096, 4096, 8.0 + 16.0 / 16384},  // bf16 scale per 128x128 block
    {"w8a8-fp8-block128", 100, 300, 8.0 + 3 * 16.0 / 30000},  // 1 x 3 partial blocks at the edges
    {"w8a8-fp8-tensor-static", 64, 64, 8.0 + 64.0 / 4096},  // fp32 weight scale + fp32 input scale
    {"w4a4-nvfp4", 4096, 4096, 4.5 + 64.0 / (4096.0 * 4096)},  // e4m3 per 16, fp32 weight and input global scales
    {"w4a16-mxfp4", 4096, 4096, 4.25},    // e8m0 per 32
    // K not a multiple of G: AWQ GEMM packs 8 nibbles along N per int32; two groups along K.
    {"w4a16-g128", 8, 129, (4.0 * 129 * 8 + 2 * 8 * 16 + 2 * 4 * 8) / (8.0 * 129)},
    {"w3a16-g128", 1, 128, (48 * 8 + 16 + 8) / 128.0},  // dense 3-bit packing, one fp16 scale, a 3-bit zero in 1 byte
};

BOOST_DATA_TEST_CASE(effective_bits_on_real_shapes, bdata::make(kBits), c) {
    constexpr double kExact = 1e-12;  // pure integer arithmetic divided once
    const double bits = effective_bits(parse_scheme(c.scheme), c.rows, c.cols);
    BOOST_TEST(bits == c.expected_bits, boost::test_tools::tolerance(kExact));
}

BOOST_AUTO_TEST_CASE(kv_cache_bytes_per_token) {
    // Qwen3-8B: 8 KV heads of 128 per layer.
    BOOST_TEST(kv_bytes_per_token_per_layer(parse_kv_format("bf16"), 8, 128) == 4096u);
    BOOST_TEST(kv_bytes_per_token_per_layer(parse_kv_format("fp8"), 8, 128) == 2048u);
    BOOST_TEST(kv_fixed_bytes_per_layer(parse_kv_format("fp8")) == 8u);  // fp32 k_scale and v_scale
    BOOST_TEST(kv_bytes_per_token_per_layer(parse_kv_format("int8"), 8, 128) == 2u * 8 * (128 + 2));
    BOOST_TEST(kv_bytes_per_token_per_layer(parse_kv_format("int4"), 8, 128) == 2u * 8 * (64 + 2 + 2));
    for (const std::string& n : kv_format_names()) BOOST_TEST(kv_format_name(parse_kv_format(n)) == n);
    BOOST_CHECK_THROW(parse_kv_format("fp7"), Error);
}

BOOST_AUTO_TEST_SUITE_END()
