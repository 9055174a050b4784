// The CUDA kernels. Suite "launchers" (label kernels) runs anywhere: launchers must refuse bad
// arguments before touching a device. Suite "gpu" (label gpu) checks every kernel against its host
// reference on a real device and reports SKIPPED, never passed, where there is none
// (STYLE.md rule 18); each case runs the same check --validate runs (kernels/validation.h).
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "core/base/error.h"
#include "core/hardware/calibration.h"
#include "kernels/kv_cache.h"
#include "kernels/validation.h"
#include "kernels/w4a16_gemm.h"
#include "tests/kernels/test_printing.h"

using namespace quantplan::kernels;
namespace bdata = boost::unit_test::data;
namespace utf = boost::unit_test;

namespace {

boost::test_tools::assertion_result needs_device(utf::test_unit_id) {
    DeviceInfo d;
    std::string why;
    if (find_device(&d, &why)) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "no CUDA device (" << why << ")";
    return r;
}

boost::test_tools::assertion_result needs_sm89(utf::test_unit_id id) {
    boost::test_tools::assertion_result device = needs_device(id);
    if (!device) return device;
    DeviceInfo d;
    std::string why;
    find_device(&d, &why);
    if (d.compute_capability >= 89) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "FP8 needs sm_89, this device is sm_" << d.compute_capability;
    return r;
}

void expect(const ValidationCheck& c) {
    BOOST_TEST_MESSAGE(c.kernel << " [" << c.shape << "]: " << c.detail);
    BOOST_TEST(!c.skipped, c.kernel << " [" << c.shape << "] was skipped: " << c.detail);
    BOOST_TEST(c.passed, c.kernel << " [" << c.shape << "] (" << c.tolerance << "): " << c.detail);
}

template <typename F>
void expect_error(F&& call, const std::string& needle) {
    try {
        call();
        BOOST_FAIL("accepted arguments that should fail with '" << needle << "'");
    } catch (const quantplan::Error& e) {
        BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, "expected '" << needle << "' in: " << e.what());
    }
}

// Fake device addresses: the launchers must reject the arguments before dereferencing anything.
template <typename T>
T* fake(std::uintptr_t address) {
    return reinterpret_cast<T*>(address);
}

struct W4Case {
    std::int64_t m, n, k, group;
    Half16 scale_type;
    bool zeros;
    W4Path path;
};
std::ostream& operator<<(std::ostream& os, const W4Case& c) {
    return os << "M=" << c.m << " N=" << c.n << " K=" << c.k << " g" << c.group << (c.zeros ? " zeros" : "")
              << (c.path == W4Path::Gemv ? " gemv" : c.path == W4Path::TensorCore ? " tensor-core" : " auto");
}

const std::vector<W4Case> kW4Cases{
    {1, 72, 256, 128, Half16::Fp16, false, W4Path::Gemv},     {3, 72, 256, 32, Half16::Bf16, true, W4Path::Gemv},
    {4, 200, 512, 64, Half16::Fp16, true, W4Path::Gemv},      {5, 72, 256, 128, Half16::Fp16, false, W4Path::Gemv},
    {1, 72, 96, 32, Half16::Fp16, true, W4Path::Auto},        {1, 1032, 4096, 128, Half16::Fp16, false, W4Path::Auto},
    {16, 136, 512, 64, Half16::Bf16, false, W4Path::Auto},    {17, 136, 512, 128, Half16::Fp16, true, W4Path::Auto},
    {67, 200, 1024, 32, Half16::Bf16, true, W4Path::Auto},    {300, 64, 256, 128, Half16::Fp16, false, W4Path::Auto},
};

}  // namespace

BOOST_AUTO_TEST_SUITE(launchers)

BOOST_AUTO_TEST_CASE(w4a16_refuses_bad_arguments) {
    W4DeviceWeights w;
    w.qweight = fake<const std::uint32_t>(0x10000);
    w.scales = fake<const std::uint16_t>(0x20000);
    w.n = 64;
    w.k = 256;
    w.group_size = 48;
    std::uint16_t* y = fake<std::uint16_t>(0x30000);
    const std::uint16_t* x = fake<const std::uint16_t>(0x40000);
    expect_error([&] { w4a16_gemm(w, x, 1, Half16::Bf16, y, nullptr, 0, nullptr); }, "group_size");
    w.group_size = 128;
    w.k = 320;
    expect_error([&] { w4a16_gemm(w, x, 1, Half16::Bf16, y, nullptr, 0, nullptr); }, "w4a16_gemm: weight: k");
    w.k = 256;
    expect_error([&] { w4a16_gemm(w, x, 0, Half16::Bf16, y, nullptr, 0, nullptr); }, "w4a16_gemm: m");
    expect_error([&] { w4a16_gemm(w, fake<const std::uint16_t>(0x40002), 1, Half16::Bf16, y, nullptr, 0, nullptr); }, "w4a16_gemm: x");
    expect_error([&] { w4a16_gemm(w, x, 1, Half16::Bf16, nullptr, nullptr, 0, nullptr); }, "w4a16_gemm: y");
    w.qweight = fake<const std::uint32_t>(0x10004);
    expect_error([&] { w4a16_gemm(w, x, 1, Half16::Bf16, y, nullptr, 0, nullptr); }, "qweight");
    w.qweight = nullptr;
    expect_error([&] { w4a16_dequantize(w, Half16::Bf16, y, nullptr); }, "qweight");
}

BOOST_AUTO_TEST_CASE(kv_kernels_refuse_bad_arguments) {
    KvCacheView c;
    c.type = KvCacheType::Fp8E4M3;
    c.k = fake<void>(0x10000);
    c.v = fake<void>(0x20000);
    c.batch = 2;
    c.max_tokens = 16;
    c.kv_heads = 2;
    c.head_dim = 96;
    const std::uint16_t* q = fake<const std::uint16_t>(0x30000);
    const std::int32_t* lens = fake<const std::int32_t>(0x40000);
    std::uint16_t* out = fake<std::uint16_t>(0x50000);
    expect_error([&] { decode_attention(c, q, 4, lens, 16, 0.1f, nullptr, 0, out, nullptr); }, "head_dim");
    c.head_dim = 128;
    expect_error([&] { decode_attention(c, q, 3, lens, 16, 0.1f, nullptr, 0, out, nullptr); }, "q_heads");
    expect_error([&] { decode_attention(c, q, 2 * (kMaxQueryGroup + 1), lens, 16, 0.1f, nullptr, 0, out, nullptr); }, "q_heads");
    expect_error([&] { decode_attention(c, q, 4, lens, 17, 0.1f, nullptr, 0, out, nullptr); }, "max_seq_len");
    c.k_scale = 0.0f;
    expect_error([&] { decode_attention(c, q, 4, lens, 16, 0.1f, nullptr, 0, out, nullptr); }, "k_scale");
    c.k_scale = 1.0f;
    c.type = KvCacheType::Int8;
    expect_error([&] { kv_cache_write(c, q, q, lens, nullptr); }, "k_scales");
}

BOOST_AUTO_TEST_CASE(path_choice) {
    BOOST_TEST((w4a16_choose_path(1, Half16::Bf16, 90) == W4Path::Gemv));
    BOOST_TEST((w4a16_choose_path(4, Half16::Bf16, 90) == W4Path::Gemv));
    BOOST_TEST((w4a16_choose_path(5, Half16::Bf16, 90) == W4Path::TensorCore));
    BOOST_TEST((w4a16_choose_path(64, Half16::Bf16, 75) == W4Path::Gemv));  // no bf16 WMMA on Turing
    BOOST_TEST((w4a16_choose_path(64, Half16::Fp16, 75) == W4Path::TensorCore));
    BOOST_TEST(w4a16_workspace_bytes(16, 4096) == 16u * 4096u * 4u);
    BOOST_TEST(w4a16_workspace_bytes(257, 4096) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gpu, *utf::label("gpu") * utf::precondition(needs_device))

BOOST_AUTO_TEST_CASE(helpers_match_the_hardware_conversions) { expect(check_numeric_helpers()); }

BOOST_AUTO_TEST_CASE(probe_moves_the_right_values) { expect(check_probe()); }

BOOST_DATA_TEST_CASE(w4a16_fused_bf16, bdata::make(kW4Cases), c) {
    expect(check_w4a16(c.m, c.n, c.k, c.group, Half16::Bf16, c.scale_type, c.zeros, c.path, 100 + static_cast<std::uint64_t>(c.m)));
}

BOOST_DATA_TEST_CASE(w4a16_fused_fp16, bdata::make(kW4Cases), c) {
    expect(check_w4a16(c.m, c.n, c.k, c.group, Half16::Fp16, c.scale_type, c.zeros, c.path, 200 + static_cast<std::uint64_t>(c.m)));
}

BOOST_AUTO_TEST_CASE(w4a16_both_paths_at_decode_sizes) {
    // The same problem through the GEMV and the tensor-core kernel (fp16 has tensor cores from sm_75).
    for (const std::int64_t m : {1, 2, 4, 5, 8}) {
        expect(check_w4a16(m, 136, 512, 128, Half16::Fp16, Half16::Fp16, true, W4Path::Gemv, 300));
        expect(check_w4a16(m, 136, 512, 128, Half16::Fp16, Half16::Fp16, true, W4Path::TensorCore, 300));
    }
}

BOOST_AUTO_TEST_CASE(checkpoints_repack_at_load) {
    expect(check_w4a16_checkpoint(true, false, 3, 136, 512, 128, Half16::Bf16));
    expect(check_w4a16_checkpoint(false, false, 9, 136, 512, 64, Half16::Fp16));
    expect(check_w4a16_checkpoint(false, true, 1, 136, 512, 128, Half16::Bf16));
    expect(check_w4a16_checkpoint(false, true, 20, 72, 256, 32, Half16::Bf16));
}

BOOST_AUTO_TEST_CASE(generic_path) {
    expect(check_w4a16_dequantize(72, 256, 64, true, Half16::Bf16));
    expect(check_w4a16_dequantize(40, 96, 32, false, Half16::Fp16));
    expect(check_w4a16_generic(5, 136, 512, 128, Half16::Bf16));
    expect(check_w4a16_generic(64, 72, 256, 32, Half16::Fp16));
}

BOOST_AUTO_TEST_CASE(cublaslt_bf16_baseline) {
    expect(check_gemm_bf16(1, 136, 512));
    expect(check_gemm_bf16(33, 72, 1024));
    expect(check_gemm_bf16(128, 264, 256));
}

BOOST_AUTO_TEST_CASE(row_quantizers_are_bit_exact) {
    expect(check_quantize_rows(false, 5, 1000, Half16::Bf16));
    expect(check_quantize_rows(false, 3, 4096, Half16::Fp16));
    expect(check_quantize_rows(true, 5, 1000, Half16::Bf16));
    expect(check_quantize_rows(true, 2, 4097, Half16::Fp16));
}

BOOST_AUTO_TEST_CASE(w8a8_int8_is_bit_exact) {
    expect(check_w8a8_int8(1, 136, 512));
    expect(check_w8a8_int8(37, 72, 1024));
}

BOOST_AUTO_TEST_CASE(w8a8_fp8, *utf::precondition(needs_sm89)) {
    expect(check_w8a8_fp8(1, 144, 512));
    expect(check_w8a8_fp8(37, 80, 1024));
}

BOOST_DATA_TEST_CASE(kv_cache_write_is_bit_exact, bdata::make({KvCacheType::Bf16, KvCacheType::Fp8E4M3, KvCacheType::Int8}), type) {
    expect(check_kv_write(type, 3, 2, 128));
    expect(check_kv_write(type, 2, 4, 64));
}

BOOST_DATA_TEST_CASE(decode_attention_matches_reference, bdata::make({KvCacheType::Bf16, KvCacheType::Fp8E4M3, KvCacheType::Int8}), type) {
    expect(check_decode_attention(type, 8, 2, 128, {1, 33, 300}, 11));
    expect(check_decode_attention(type, 4, 4, 64, {129, 2}, 12));
    expect(check_decode_attention(type, 8, 1, 128, {5000}, 13));  // split over the context
}

BOOST_AUTO_TEST_CASE(timings_feed_the_calibration_fit) {
    // A small run of the --validate timing loop: every kernel timed, positive, and the fit in core
    // accepts the result.
    DeviceInfo device;
    std::string why;
    BOOST_TEST_REQUIRE(find_device(&device, &why), why);
    ValidationConfig c;
    c.shapes = {{"small", 512, 1024}};
    c.batches = {1, 5, 64};
    c.q_heads = 8;
    c.kv_heads = 2;
    c.head_dim = 128;
    c.attention_batches = {2};
    c.contexts = {1024};
    c.warmup = 1;
    c.repeats = 3;
    std::ostringstream log;
    std::vector<std::string> notes;
    const std::vector<ValidationTiming> t = run_timings(c, device, log, &notes);
    for (const std::string& n : notes) BOOST_TEST_MESSAGE("note: " << n);
    const std::size_t gemm_kernels = device.compute_capability >= 89 ? 5 : 4;
    BOOST_TEST(t.size() == 3 * gemm_kernels + 1 + 3);  // + dequantize + three attention caches
    quantplan::Calibration cal;
    for (const ValidationTiming& v : t) {
        BOOST_TEST(v.time_s > 0.0, v.kernel << " " << v.shape << " M=" << v.batch);
        quantplan::KernelMeasurement m;
        m.kernel = v.kernel;
        m.batch = v.batch;
        m.n = v.n;
        m.k = v.k;
        m.context_tokens = v.context_tokens;
        m.bytes = v.bytes;
        m.flop = v.flop;
        m.measured_time_s = v.time_s;
        cal.measurements.push_back(m);
    }
    quantplan::GpuProfile gpu;
    gpu.id = "test";
    gpu.memory_bandwidth_bytes_per_s = 1e12;
    gpu.peak.bf16_fp32acc_flop_per_s = 1e14;
    gpu.peak.fp8_fp32acc_flop_per_s = 2e14;
    gpu.peak.int8_op_per_s = 2e14;
    quantplan::finish_calibration(cal, gpu);
    BOOST_TEST(std::isfinite(cal.profile.bandwidth_efficiency));
    BOOST_TEST(cal.profile.bandwidth_efficiency > 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
