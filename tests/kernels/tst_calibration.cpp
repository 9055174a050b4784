// Calibration files (core/hardware/calibration.h): the roofline prediction of a kernel measurement, the fit
// of the `measured` profile (recovering known factors from synthetic measurements), the JSON round
// trip and its refusals, and the matching of a CUDA device to a bundled GPU profile.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/hardware/calibration.h"
#include "core/hardware/gpu.h"

using namespace quantplan;

namespace {

// A round-numbered GPU: 3 TB/s, bf16 1 PFLOP/s, fp8 and int8 2 P.
GpuProfile test_gpu() {
    GpuProfile g;
    g.id = "test-gpu";
    g.name = "Test GPU";
    g.memory_bandwidth_bytes_per_s = 3e12;
    g.peak.bf16_fp32acc_flop_per_s = 1e15;
    g.peak.fp16_fp32acc_flop_per_s = 1e15;
    g.peak.fp8_fp32acc_flop_per_s = 2e15;
    g.peak.int8_op_per_s = 2e15;
    g.memory_usable_bytes = 80ull << 30;
    return g;
}

// A GEMM measurement with the roofline's byte count for the given bytes per weight.
KernelMeasurement gemm(const std::string& kernel, std::int64_t m, std::int64_t n, std::int64_t k, double weight_bytes_per_element,
                       double activation_bytes) {
    KernelMeasurement x;
    x.kernel = kernel;
    x.shape = std::to_string(n) + "x" + std::to_string(k);
    x.batch = m;
    x.n = n;
    x.k = k;
    x.bytes = static_cast<std::uint64_t>(weight_bytes_per_element * static_cast<double>(n * k) + activation_bytes * static_cast<double>(m * (n + k)));
    x.flop = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    return x;
}

// Synthetic measurements whose times follow the roofline under `truth` exactly.
std::vector<KernelMeasurement> synthetic(const GpuProfile& gpu, const EfficiencyProfile& truth) {
    std::vector<KernelMeasurement> out;
    for (std::int64_t m = 1; m <= 4096; m *= 2) {
        out.push_back(gemm("gemm_bf16", m, 8192, 8192, 2.0, 2.0));
        out.push_back(gemm("w4a16_fused", m, 8192, 8192, 0.53, 2.0));
        out.push_back(gemm("w4a16_generic", m, 8192, 8192, 4.56, 2.0));
        out.push_back(gemm("w8a8_fp8", m, 8192, 8192, 1.0, 3.0));
        out.push_back(gemm("w8a8_int8", m, 8192, 8192, 1.0, 3.0));
    }
    KernelMeasurement att;
    att.kernel = "attention_fp8";
    att.batch = 8;
    att.context_tokens = 8192;
    att.bytes = 8ull * 8192 * 8 * 128 * 2;
    att.flop = 4.0 * 8 * 8192 * 32 * 128;
    out.push_back(att);
    for (KernelMeasurement& x : out) x.measured_time_s = predict_kernel_time_s(x, gpu, truth);
    return out;
}

EfficiencyProfile truth_profile() {
    EfficiencyProfile t;
    t.name = "truth";
    t.bandwidth_efficiency = 0.83;
    t.compute_efficiency = 0.61;
    t.compute_efficiency_by_type[MatmulType::Bf16] = 0.61;
    t.compute_efficiency_by_type[MatmulType::Fp8] = 0.52;
    t.compute_efficiency_by_type[MatmulType::Int8] = 0.47;
    t.fused_kernel_efficiency = 0.9;
    t.generic_kernel_efficiency = 0.6;
    return t;
}

const std::string kMinimal = R"({"format": "quantplan-calibration", "format_version": 1,
  "profile": {"name": "measured", "bandwidth_efficiency": 0.8, "compute_efficiency": 0.6,
              "fused_kernel_efficiency": 0.9, "generic_kernel_efficiency": 0.5}})";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    BOOST_TEST_REQUIRE(at != std::string::npos, "fixture lacks '" << from << "'");
    return text.replace(at, from.size(), to);
}

void expect_error(const std::string& text, const std::string& needle) {
    try {
        parse_calibration(text, "cal.json");
        BOOST_FAIL("accepted a file that should fail with '" << needle << "'");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, "expected '" << needle << "' in: " << e.what());
    }
}

CalibrationDevice device(const std::string& name, const std::string& cc, std::int64_t sms, double memory_gib) {
    CalibrationDevice d;
    d.name = name;
    d.compute_capability = cc;
    d.sm_count = sms;
    d.memory_bytes = static_cast<std::uint64_t>(memory_gib * 1073741824.0);
    return d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(calibration)

BOOST_AUTO_TEST_CASE(kernel_table_is_complete_and_unique) {
    const auto& table = calibration_kernels();
    BOOST_TEST(table.size() >= 10u);
    for (std::size_t i = 0; i < table.size(); ++i)
        for (std::size_t j = i + 1; j < table.size(); ++j) BOOST_TEST(table[i].name != table[j].name);
    BOOST_TEST((calibration_kernel_traits("w8a8_fp8").matmul == MatmulType::Fp8));
    BOOST_TEST(calibration_kernel_traits("w4a16_generic").weight_only);
    BOOST_TEST((calibration_kernel_traits("w4a16_generic").quality == KernelQuality::Generic));
    BOOST_CHECK_THROW(calibration_kernel_traits("w3a16"), Error);
}

BOOST_AUTO_TEST_CASE(prediction_is_the_roofline_of_the_kernel) {
    const GpuProfile gpu = test_gpu();
    EfficiencyProfile eff = builtin_efficiency_profile("ideal");
    eff.bandwidth_efficiency = 0.5;
    eff.compute_efficiency = 0.25;
    eff.fused_kernel_efficiency = 0.5;
    // M=1: 2 MB of weights at 1.5 TB/s; compute 2 MFLOP at 0.25 PFLOP/s = 8 ns.
    KernelMeasurement small = gemm("gemm_bf16", 1, 1000, 1000, 2.0, 0.0);
    BOOST_TEST(predict_kernel_time_s(small, gpu, eff) == 2e6 / 1.5e12, boost::test_tools::tolerance(1e-12));
    // M=4096 fused W4: 8.2 GFLOP at 0.25 x 0.5 PFLOP/s; memory is small.
    KernelMeasurement big = gemm("w4a16_fused", 4096, 1000, 1000, 0.5, 0.0);
    BOOST_TEST(predict_kernel_time_s(big, gpu, eff) == big.flop / (1e15 * 0.25 * 0.5), boost::test_tools::tolerance(1e-12));
    // A stream is bytes only.
    KernelMeasurement probe;
    probe.kernel = "probe_read";
    probe.bytes = 1000000000;
    probe.flop = 123;
    BOOST_TEST(predict_kernel_time_s(probe, gpu, eff) == 1e9 / 1.5e12, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(fit_recovers_known_factors) {
    const GpuProfile gpu = test_gpu();
    const EfficiencyProfile truth = truth_profile();
    const EfficiencyProfile fit = fit_measured_profile(synthetic(gpu, truth), gpu);
    BOOST_TEST(fit.name == "measured");
    BOOST_TEST(fit.bandwidth_efficiency == truth.bandwidth_efficiency, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(fit.compute_efficiency == 0.61, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(fit.compute_efficiency_for(MatmulType::Fp8) == 0.52, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(fit.compute_efficiency_for(MatmulType::Int8) == 0.47, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(fit.fused_kernel_efficiency == 0.9, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(fit.generic_kernel_efficiency == 0.6, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(generic_path_traffic_does_not_lower_the_bandwidth_factor) {
    // At decode sizes the generic path also writes and re-reads its dequantized weight (about
    // 2.25x the bytes of bf16): slower than its INT4 byte count says, which must not leak into the
    // bandwidth factor every scheme uses.
    const GpuProfile gpu = test_gpu();
    std::vector<KernelMeasurement> ms{gemm("gemm_bf16", 1, 8192, 8192, 2.0, 2.0)};
    for (std::int64_t m = 1; m <= 8; m *= 2) ms.push_back(gemm("w4a16_generic", m, 8192, 8192, 0.53, 2.0));
    for (KernelMeasurement& m : ms) m.measured_time_s = predict_kernel_time_s(m, gpu, truth_profile()) * (m.kernel == "gemm_bf16" ? 1.0 : 8.0);
    BOOST_TEST(fit_measured_profile(ms, gpu).bandwidth_efficiency == 0.83, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(fit_without_evidence_keeps_realistic_and_needs_bandwidth) {
    const GpuProfile gpu = test_gpu();
    KernelMeasurement probe;
    probe.kernel = "probe_read";
    probe.bytes = 1000000000;
    probe.measured_time_s = 0.4167e-3;  // 2.4 TB/s
    const EfficiencyProfile fit = fit_measured_profile({probe}, gpu, 2.4e12);
    const EfficiencyProfile realistic = builtin_efficiency_profile("realistic");
    BOOST_TEST(fit.bandwidth_efficiency == 0.8, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(fit.compute_efficiency == realistic.compute_efficiency);
    BOOST_TEST(fit.fused_kernel_efficiency == realistic.fused_kernel_efficiency);
    BOOST_CHECK_THROW(fit_measured_profile({probe}, gpu, 0.0), Error);
}

BOOST_AUTO_TEST_CASE(finish_fills_predictions_and_errors) {
    const GpuProfile gpu = test_gpu();
    Calibration c;
    c.measurements = synthetic(gpu, truth_profile());
    finish_calibration(c, gpu);
    BOOST_TEST(c.median_abs_relative_error_measured < 1e-9);
    BOOST_TEST(c.median_abs_relative_error_realistic > 0.01);  // realistic differs from the truth
    for (const KernelMeasurement& m : c.measurements) {
        BOOST_TEST(m.predicted_time_s > 0);
        BOOST_TEST(m.fitted_time_s == m.measured_time_s, boost::test_tools::tolerance(1e-9));
    }
    BOOST_TEST_REQUIRE(!c.kernel_fits.empty());
    BOOST_TEST(c.kernel_fits.front().kernel == "gemm_bf16");
    BOOST_TEST(c.kernel_fits.front().bandwidth_efficiency == 0.83, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(c.kernel_fits.front().compute_efficiency == 0.61, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(json_round_trip) {
    const GpuProfile gpu = test_gpu();
    Calibration c;
    c.created_by = "quantplan 0.1.0";
    c.model = "qwen3-8b";
    c.gpu_profile = "h200";
    c.device = device("NVIDIA H200", "sm_90", 132, 140.0);
    c.device.driver_version = "13.0";
    c.probe_read_bytes_per_s = 4.3e12;
    c.probe_buffer_bytes = 1ull << 30;
    c.checks.push_back({"w4a16_fused", "M=3 N=72 K=256 g128", true, false, 0.25, 1e-3, "fp32 accumulation", "all within"});
    c.checks.push_back({"w8a8_fp8", "M=1 N=144 K=512", false, true, 0.0, 0.0, "", "skipped: needs sm_89"});
    c.measurements = synthetic(gpu, truth_profile());
    finish_calibration(c, gpu);
    const Calibration back = parse_calibration(calibration_to_json(c), "cal.json");
    BOOST_TEST(back.model == "qwen3-8b");
    BOOST_TEST(back.gpu_profile == "h200");
    BOOST_TEST(back.device.name == "NVIDIA H200");
    BOOST_TEST(back.device.sm_count == 132);
    BOOST_TEST(back.probe_read_bytes_per_s == 4.3e12);
    BOOST_TEST_REQUIRE(back.checks.size() == 2u);
    BOOST_TEST(back.checks[0].passed);
    BOOST_TEST(!back.checks[0].skipped);
    BOOST_TEST(!back.checks[1].passed);
    BOOST_TEST(back.checks[1].skipped);
    BOOST_TEST_REQUIRE(back.measurements.size() == c.measurements.size());
    for (std::size_t i = 0; i < c.measurements.size(); ++i) {
        BOOST_TEST(back.measurements[i].kernel == c.measurements[i].kernel);
        BOOST_TEST(back.measurements[i].bytes == c.measurements[i].bytes);
        BOOST_TEST(back.measurements[i].measured_time_s == c.measurements[i].measured_time_s);
        BOOST_TEST(back.measurements[i].predicted_time_s == c.measurements[i].predicted_time_s);
    }
    BOOST_TEST(back.profile.name == "measured");
    BOOST_TEST(back.profile.bandwidth_efficiency == c.profile.bandwidth_efficiency);
    BOOST_TEST(back.profile.compute_efficiency_for(MatmulType::Fp8) == c.profile.compute_efficiency_for(MatmulType::Fp8));
    BOOST_TEST(back.kernel_fits.size() == c.kernel_fits.size());
    BOOST_TEST(calibration_to_json(back) == calibration_to_json(c));
}

BOOST_AUTO_TEST_CASE(minimal_file_and_refusals) {
    const Calibration c = parse_calibration(kMinimal, "cal.json");
    BOOST_TEST(c.profile.bandwidth_efficiency == 0.8);
    BOOST_TEST(c.measurements.empty());
    expect_error("{", "cal.json: not valid JSON");
    expect_error("[]", "must be a JSON object");
    expect_error(replaced(kMinimal, "quantplan-calibration", "other"), "cal.json: format");
    expect_error(replaced(kMinimal, "\"format_version\": 1", "\"format_version\": 2"), "format_version");
    expect_error(replaced(kMinimal, "\"bandwidth_efficiency\": 0.8", "\"bandwidth_efficiency\": 3.0"), "cal.json: profile.bandwidth_efficiency");
    expect_error(replaced(kMinimal, "\"bandwidth_efficiency\": 0.8", "\"bandwidth_efficiency\": 0"), "profile.bandwidth_efficiency");
    expect_error(replaced(kMinimal, "\"compute_efficiency\": 0.6,", ""), "profile.compute_efficiency: missing");
    expect_error(replaced(kMinimal, "\"fused_kernel_efficiency\": 0.9", "\"fused_kernel_efficiency\": \"high\""), "must be a number");
    expect_error(replaced(kMinimal, "\"format_version\": 1,", "\"format_version\": 1, \"measurements\": [{\"kernel\": \"w3\", \"bytes\": 1, \"measured_time_s\": 1}],"),
                 "measurements[0].kernel");
    expect_error(replaced(kMinimal, "\"format_version\": 1,", "\"format_version\": 1, \"measurements\": [{\"kernel\": \"gemm_bf16\", \"bytes\": -1, \"measured_time_s\": 1}],"),
                 "measurements[0].bytes");
    expect_error(replaced(kMinimal, "\"generic_kernel_efficiency\": 0.5", "\"generic_kernel_efficiency\": 0.5, \"compute_efficiency_by_type\": {\"fp7\": 0.5}"),
                 "compute_efficiency_by_type.fp7");
    expect_error(replaced(kMinimal, "\"profile\"", "\"profil\""), "cal.json: profile: missing");
}

BOOST_AUTO_TEST_CASE(load_from_disk) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("quantplan_cal_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::filesystem::path file = dir / "calibration.json";
    write_file_atomically(file, kMinimal);
    BOOST_TEST(load_calibration(file).profile.generic_kernel_efficiency == 0.5);
    try {
        load_calibration(dir / "missing.json");
        BOOST_FAIL("a missing file was accepted");
    } catch (const Error& e) {
        BOOST_TEST(e.field() == "--calibration");
    }
    BOOST_CHECK_THROW(load_calibration(dir), Error);  // a folder
    write_file_atomically(dir / "broken.json", "{\"format\": ");
    try {
        load_calibration(dir / "broken.json");
        BOOST_FAIL("a broken file was accepted");
    } catch (const Error& e) {
        BOOST_TEST(std::string(e.what()).find("calibration file " + (dir / "broken.json").string() + ": not valid JSON") == 0u, e.what());
    }
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(devices_match_bundled_profiles) {
    const std::vector<GpuProfile> gpus = load_gpu_profiles(std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "assets" / "gpus");
    const auto match = [&](const CalibrationDevice& d) { return match_gpu_profile(d, gpus).value_or("none"); };
    BOOST_TEST(match(device("NVIDIA H100 80GB HBM3", "sm_90", 132, 79.1)) == "h100-sxm");
    BOOST_TEST(match(device("NVIDIA H100 PCIe", "sm_90", 114, 79.6)) == "h100-pcie");
    BOOST_TEST(match(device("NVIDIA H200", "sm_90", 132, 140.4)) == "h200");
    BOOST_TEST(match(device("NVIDIA A100-SXM4-40GB", "sm_80", 108, 39.4)) == "a100-40gb");
    BOOST_TEST(match(device("NVIDIA A100-SXM4-80GB", "sm_80", 108, 79.2)) == "a100-80gb");
    BOOST_TEST(match(device("NVIDIA L40S", "sm_89", 142, 44.4)) == "l40s");
    BOOST_TEST(match(device("NVIDIA RTX 6000 Ada Generation", "sm_89", 142, 47.5)) == "rtx-6000-ada");
    BOOST_TEST(match(device("NVIDIA GeForce RTX 4090", "sm_89", 128, 23.6)) == "rtx-4090");
    BOOST_TEST(match(device("NVIDIA L4", "sm_89", 58, 22.0)) == "l4");
    BOOST_TEST(match(device("Tesla T4", "sm_75", 40, 14.75)) == "t4");
    BOOST_TEST(match(device("NVIDIA GeForce RTX 3090", "sm_86", 82, 23.7)) == "rtx-3090");
    BOOST_TEST(match(device("NVIDIA RTX A6000", "sm_86", 84, 47.5)) == "a6000");
    BOOST_TEST(match(device("NVIDIA Tesla V100-SXM2-16GB", "sm_70", 80, 15.8)) == "none");
}

BOOST_AUTO_TEST_CASE(model_shapes_are_the_engine_projections) {
    ModelConfig m;
    m.name = "dense";
    m.hidden_size = 4096;
    m.intermediate_size = 12288;
    m.num_layers = 36;
    m.num_attention_heads = 32;
    m.num_kv_heads = 8;
    m.head_dim = 128;
    const std::vector<LinearShape> s = model_linear_shapes(m);
    BOOST_TEST_REQUIRE(s.size() == 4u);
    BOOST_TEST(s[0].label == "qkv_proj");
    BOOST_TEST(s[0].n == 6144);
    BOOST_TEST(s[0].k == 4096);
    BOOST_TEST(s[1].label == "o_proj");  // 4096 x 4096
    BOOST_TEST(s[2].n == 24576);
    BOOST_TEST(s[3].k == 12288);
    // An MoE model without dense layers: experts instead of the dense MLP; duplicates dropped.
    ModelConfig moe = m;
    moe.num_experts = 128;
    moe.experts_per_token = 8;
    moe.moe_intermediate_size = 768;
    const std::vector<LinearShape> e = model_linear_shapes(moe);
    BOOST_TEST_REQUIRE(e.size() == 4u);
    BOOST_TEST(e[2].label == "expert_gate_up_proj");
    BOOST_TEST(e[2].n == 1536);
    BOOST_TEST(e[3].k == 768);
}

BOOST_AUTO_TEST_SUITE_END()
