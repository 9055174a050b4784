// The roofline engine against seed 003 ("Fewer bytes only buys time where bytes were the
// constraint") and seed 000 (§4.1.4, ideal profile), plus admission, TP, MoE and bad input.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"
#include "tests/core/test_support.h"

using namespace quantplan;
namespace tt = boost::test_tools;

namespace {

// Seed figures are printed with two or three significant decimals: a figure printed as 5.87
// is matched to +-0.006 of its unit, the check that ../shared/checks/seed_numbers.py applies.
constexpr double kSeedPrinted = 0.006;

PlanResult run(const char* model, const char* gpu, const char* profile, const char* schemes, std::int64_t batch,
               std::int64_t context, const char* kv = "bf16", const char* kernel = "fused", std::int64_t tp = 1) {
    PlanRequest r;
    r.model = test::bundled_model(model);
    r.gpu = test::bundled_gpu(gpu);
    r.efficiency = builtin_efficiency_profile(profile);
    r.workload.batch = batch;
    r.workload.context_tokens = context;
    r.workload.kv = parse_kv_format(kv);
    r.workload.kernel = parse_kernel_quality(kernel);
    r.workload.tensor_parallel = tp;
    r.schemes = parse_scheme_list(schemes);
    r.crossover_max_batch = 1024;
    return plan(r);
}

const SchemeResult& get(const PlanResult& p, const std::string& name) {
    for (const SchemeResult& r : p.schemes)
        if (scheme_name(r.costs.scheme) == name) return r;
    throw std::runtime_error("scheme not priced: " + name);
}

double gib(std::uint64_t b) { return static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0); }

}  // namespace

BOOST_AUTO_TEST_SUITE(roofline)

BOOST_AUTO_TEST_CASE(seed003_batch1_context4096_h100) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128,w8a8-fp8", 1, 4096);
    const DecodeStep& b16 = get(p, "bf16").decode;
    const DecodeStep& i4 = get(p, "w4a16-g128").decode;
    const DecodeStep& f8 = get(p, "w8a8-fp8").decode;
    BOOST_TEST(b16.time_s * 1e3 == 5.87, tt::tolerance(kSeedPrinted / 5.87));
    BOOST_TEST(static_cast<double>(b16.total_bytes()) / 1e9 == 15.74, tt::tolerance(kSeedPrinted / 15.74));
    BOOST_TEST(gib(b16.weight_bytes) == 14.1, tt::tolerance(0.06 / 14.1));           // "14.1 GiB of weights"
    BOOST_TEST(static_cast<double>(b16.kv_bytes) / (1 << 20) == 576.0);              // "576 MiB of cache"
    BOOST_TEST(i4.time_s * 1e3 == 2.04, tt::tolerance(kSeedPrinted / 2.04));
    BOOST_TEST(static_cast<double>(i4.total_bytes()) / 1e9 == 5.46, tt::tolerance(kSeedPrinted / 5.46));
    BOOST_TEST(gib(i4.weight_bytes) == 4.52, tt::tolerance(0.006 / 4.52));
    BOOST_TEST(b16.time_s / i4.time_s == 2.88, tt::tolerance(kSeedPrinted / 2.88));
    BOOST_TEST(b16.time_s / f8.time_s == 1.79, tt::tolerance(kSeedPrinted / 1.79));
    BOOST_TEST(b16.compute_time_s * 1e3 == 0.03, tt::tolerance(0.35));  // "about 0.03 ms", one part in two hundred
    BOOST_TEST(b16.compute_time_s / b16.time_s < 1.0 / 150);
    BOOST_TEST(std::string(bound_name(b16.bound)) == "memory");
}

BOOST_AUTO_TEST_CASE(seed003_batch1_context128) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128,w8a8-fp8", 1, 128);
    const double t16 = get(p, "bf16").decode.time_s;
    BOOST_TEST(t16 / get(p, "w4a16-g128").decode.time_s == 3.11, tt::tolerance(kSeedPrinted / 3.11));
    BOOST_TEST(t16 / get(p, "w8a8-fp8").decode.time_s == 1.85, tt::tolerance(kSeedPrinted / 1.85));
}

BOOST_AUTO_TEST_CASE(seed003_batch1024_context128_is_compute_bound) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128,w8a8-fp8", 1024, 128);
    const PlanResult g = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128", 1024, 128, "bf16", "generic");
    const DecodeStep& b16 = get(p, "bf16").decode;
    BOOST_TEST(b16.batch == 1024);
    BOOST_TEST(b16.time_s * 1e3 == 28.6, tt::tolerance(0.06 / 28.6));
    BOOST_TEST(std::string(bound_name(b16.bound)) == "compute");
    BOOST_TEST(get(p, "w4a16-g128").speedup_vs_bf16 == 0.95, tt::tolerance(kSeedPrinted / 0.95));
    BOOST_TEST(get(g, "w4a16-g128").speedup_vs_bf16 == 0.55, tt::tolerance(kSeedPrinted / 0.55));
    BOOST_TEST(get(p, "w8a8-fp8").speedup_vs_bf16 == 1.99, tt::tolerance(kSeedPrinted / 1.99));
    BOOST_TEST(get(p, "w4a16-g128").decode.time_s * 1e3 == 30.1, tt::tolerance(0.06 / 30.1));  // "30.1 ms"
}

BOOST_AUTO_TEST_CASE(seed003_kv_admission_at_4096) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128", 1024, 4096);
    const PlanResult f = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128", 1024, 4096, "fp8");
    BOOST_TEST(get(p, "bf16").admission.max_sequences == 97);
    BOOST_TEST(get(p, "w4a16-g128").admission.max_sequences == 114);
    BOOST_TEST(get(f, "bf16").admission.max_sequences == 194);
    const SchemeResult& i4 = get(p, "w4a16-g128");
    BOOST_TEST(gib(i4.decode.kv_bytes) == 64.1, tt::tolerance(0.06 / 64.1));
    // "64.1 GiB of the 68.6 GiB moved": weights and cache; the residual-stream activations add 0.03 GiB.
    BOOST_TEST(gib(i4.decode.weight_bytes + i4.decode.kv_bytes) == 68.6, tt::tolerance(0.05 / 68.6));
    BOOST_TEST(gib(i4.decode.activation_bytes) < 0.05);
    BOOST_TEST(i4.speedup_vs_bf16 == 1.18, tt::tolerance(kSeedPrinted / 1.18));
    BOOST_TEST(get(f, "bf16").speedup_vs_bf16 == 1.0);  // same KV format for both: bf16 is its own baseline
    const double base = get(p, "bf16").throughput_tokens_per_s;
    BOOST_TEST(get(f, "bf16").throughput_tokens_per_s / base == 2.00, tt::tolerance(kSeedPrinted / 2.0));
    BOOST_TEST(get(f, "w4a16-g128").throughput_tokens_per_s / base == 2.35, tt::tolerance(kSeedPrinted / 2.35));
    // vLLM's log lines: cache size in 16-token blocks and maximum concurrency.
    const Admission& a = get(p, "bf16").admission;
    BOOST_TEST(a.kv_cache_tokens % 16 == 0);
    BOOST_TEST(a.max_concurrency == static_cast<double>(a.kv_cache_tokens) / 4096.0);
    BOOST_TEST(a.budget_bytes == static_cast<std::int64_t>(a.engine_memory_bytes - a.weight_bytes - a.activation_workspace_bytes -
                                                           a.sampler_workspace_bytes - a.runtime_overhead_bytes));
}

BOOST_AUTO_TEST_CASE(seed000_ideal_ridges_and_crossover) {
    // Seed 000: I*_bf16 = 295, I*_fp8 = 591 FLOP/byte on an H100 SXM; W4A16 leaves the memory-bound
    // region near B = 74; W4A16 and W8A8-FP8 cross near B = 148; W8A8's ridge stays at 295.
    const PlanResult p = run("qwen3-8b", "h100-sxm", "ideal", "bf16,w4a16-g128,w8a8-fp8", 1, 128);
    const GpuProfile& gpu = p.request.gpu;
    const EfficiencyProfile& eff = p.request.efficiency;
    BOOST_TEST(ridge_point_flop_per_byte(gpu, eff, MatmulType::Bf16) == 295.0, tt::tolerance(0.5 / 295));
    BOOST_TEST(ridge_point_flop_per_byte(gpu, eff, MatmulType::Fp8) == 591.0, tt::tolerance(0.5 / 591));
    BOOST_TEST(gemm_ridge_batch(gpu, eff, MatmulType::Bf16, 0.5) == 74.0, tt::tolerance(0.5 / 74));
    BOOST_TEST(gemm_ridge_batch(gpu, eff, MatmulType::Fp8, 1.0) == 295.0, tt::tolerance(0.5 / 295));
    BOOST_REQUIRE_EQUAL(p.gemm_crossovers.size(), 1u);  // only the W4A16 / W8A8 pair crosses
    BOOST_TEST(p.gemm_crossovers[0].batch == 148.0, tt::tolerance(0.5 / 148));
    // The whole-model step (lm_head in bf16, attention, KV) sits further out, but the same
    // crossing exists numerically and in closed form.
    bool found = false;
    for (const Crossover& c : p.closed_form_crossovers)
        if ((c.scheme_a == "w4a16-g128" && c.scheme_b == "w8a8-fp8")) {
            found = true;
            BOOST_TEST(c.faster_below == "w4a16-g128");
            BOOST_TEST(c.faster_above == "w8a8-fp8");
            // Later than the GEMM's 148: the W8A8 step also reads every sequence's KV cache (18.9 MB
            // per sequence at 128 tokens), which keeps it memory-bound longer.
            BOOST_TEST(c.batch > 148.0);
            BOOST_TEST(c.batch < 300.0);
        }
    BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(numeric_and_closed_form_crossovers_agree) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128,w8a8-fp8,w8a8-int8", 1, 128);
    BOOST_TEST(!p.crossovers.empty());
    for (const Crossover& n : p.crossovers) {
        bool matched = false;
        for (const Crossover& c : p.closed_form_crossovers)
            if (c.scheme_a == n.scheme_a && c.scheme_b == n.scheme_b && n.batch - 1 <= c.batch && c.batch <= n.batch) {
                matched = true;
                BOOST_TEST(c.faster_below == n.faster_below);
            }
        BOOST_TEST(matched, n.scheme_a << "/" << n.scheme_b << " at " << n.batch);
    }
}

BOOST_AUTO_TEST_CASE(bound_switches_at_the_whole_model_ridge) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128);
    const SchemeCosts& c = p.schemes[0].costs;
    const double ridge = ridge_batch(c, p.request.gpu, p.request.efficiency, p.request.workload);
    BOOST_TEST_REQUIRE(std::isfinite(ridge));
    const auto below = static_cast<std::int64_t>(std::floor(ridge)), above = below + 1;
    BOOST_TEST(std::string(bound_name(decode_step(c, p.request.gpu, p.request.efficiency, p.request.workload, below, 128).bound)) == "memory");
    BOOST_TEST(std::string(bound_name(decode_step(c, p.request.gpu, p.request.efficiency, p.request.workload, above, 128).bound)) == "compute");
}

BOOST_AUTO_TEST_CASE(tensor_parallel_splits_weights_and_cache_and_pays_allreduce) {
    const PlanResult one = run("llama-3.1-70b", "h100-sxm", "realistic", "w4a16-g128", 8, 4096, "bf16", "fused", 1);
    const PlanResult four = run("llama-3.1-70b", "h100-sxm", "realistic", "w4a16-g128", 8, 4096, "bf16", "fused", 4);
    const DecodeStep& a = one.schemes[0].decode;
    const DecodeStep& b = four.schemes[0].decode;
    BOOST_TEST(static_cast<double>(b.weight_bytes) == static_cast<double>(a.weight_bytes) / 4, tt::tolerance(1e-3));
    BOOST_TEST(static_cast<double>(b.kv_bytes) == static_cast<double>(a.kv_bytes) / 4, tt::tolerance(1e-3));
    BOOST_TEST(a.communication_time_s == 0.0);
    BOOST_TEST(b.communication_time_s > 0.0);
    BOOST_TEST(b.time_s < a.time_s);
    BOOST_TEST(four.schemes[0].admission.max_sequences > 4 * one.schemes[0].admission.max_sequences);
}

BOOST_AUTO_TEST_CASE(tensor_parallel_without_p2p_all_reduces_through_host_memory) {
    // The SHM constants are the measurement's (assets/collectives/): the 8-byte time and the
    // bus bandwidth from 128 MiB up over PCIe3 x16's 16 GB/s a direction.
    const nlohmann::json bench =
        nlohmann::json::parse(read_text_file(test::source_dir() / "assets/collectives/autodl-2080ti-x2-no-p2p.json", "nccl bench", 1 << 20));
    double small_us = 0, large_busbw = 0;
    for (const auto& row : bench["rows"]) {
        if (row["size_bytes"].get<double>() == 8) small_us = row["out_of_place_time_us"].get<double>();
        if (row["size_bytes"].get<double>() == 134217728) large_busbw = row["out_of_place_busbw_gb_per_s"].get<double>();
    }
    BOOST_TEST(ShmAllreduce::latency_s == small_us * 1e-6, tt::tolerance(1e-12));
    BOOST_TEST(ShmAllreduce::busbw_share_of_host_link == large_busbw / 16.0, tt::tolerance(1e-12));

    const SchemeCosts c = run("qwen2-7b-instruct", "a100-80gb", "realistic", "bf16", 1, 128, "bf16", "fused", 2).schemes[0].costs;
    BOOST_TEST(c.allreduces_per_step == 2 * 28);  // o_proj and down_proj of 28 layers
    const GpuProfile a100 = test::bundled_gpu("a100-80gb");
    BOOST_TEST(a100.p2p);
    BOOST_TEST(a100.host_link_bytes_per_s == 64e9);
    Workload w;
    w.tensor_parallel = 2;
    const double bytes = 75.0 * static_cast<double>(c.allreduce_bytes_per_token);
    // Peer-to-peer (the profile's default): the NVLink bandwidth price, no latency.
    BOOST_TEST(tp_allreduce_time_s(c, 75, w, a100) == allreduce_time_s(bytes, 2, a100), tt::tolerance(1e-12));
    BOOST_TEST(tp_allreduce_time_s(c, 0, w, a100) == 0.0);
    // The platform lacks P2P (two A100 in separate pods): 56 x 12.25 us and the bytes at a quarter
    // of PCIe4's 32 GB/s a direction, ring factor 2 (tp - 1) / tp = 1.
    w.gpu_p2p = false;
    const double shm = 56 * 12.25e-6 + bytes / (0.25 * 32e9);
    BOOST_TEST(tp_allreduce_time_s(c, 75, w, a100) == shm, tt::tolerance(1e-12));
    BOOST_TEST(tp_allreduce_time_s(c, 0, w, a100) == 56 * 12.25e-6, tt::tolerance(1e-12));
    BOOST_TEST(shm > 20 * allreduce_time_s(bytes, 2, a100));
    // GeForce cards have no P2P unless the user says so (--gpu-p2p on).
    const GpuProfile rtx = test::bundled_gpu("rtx-4090");
    BOOST_TEST(!rtx.p2p);
    Workload g;
    g.tensor_parallel = 2;
    BOOST_TEST(tp_allreduce_time_s(c, 75, g, rtx) == 56 * 12.25e-6 + bytes / (0.25 * 32e9), tt::tolerance(1e-12));
    g.gpu_p2p = true;
    BOOST_TEST(tp_allreduce_time_s(c, 75, g, rtx) == allreduce_time_s(bytes, 2, rtx), tt::tolerance(1e-12));
    // One GPU all-reduces nothing.
    g.tensor_parallel = 1;
    g.gpu_p2p = false;
    BOOST_TEST(tp_allreduce_time_s(c, 75, g, rtx) == 0.0);
    // The decode step pays it, and the crossovers do not move: both schemes pay the same all-reduces.
    const PlanResult with = run("qwen2-7b-instruct", "rtx-4090", "realistic", "bf16,w4a16-g128,w8a8-fp8", 32, 1024, "bf16", "fused", 2);
    PlanRequest r;
    r.model = test::bundled_model("qwen2-7b-instruct");
    r.gpu = rtx;
    r.gpu.p2p = true;
    r.efficiency = builtin_efficiency_profile("realistic");
    r.workload.batch = 32;
    r.workload.context_tokens = 1024;
    r.workload.tensor_parallel = 2;
    r.schemes = parse_scheme_list("bf16,w4a16-g128,w8a8-fp8");
    r.crossover_max_batch = 1024;
    const PlanResult without = plan(r);
    Workload w2;
    w2.tensor_parallel = 2;
    w2.batch = 32;
    BOOST_TEST(with.schemes[0].decode.communication_time_s == tp_allreduce_time_s(with.schemes[0].costs, 32, w2, rtx), tt::tolerance(1e-12));
    BOOST_TEST(with.schemes[0].decode.time_s > without.schemes[0].decode.time_s + 56 * 12.25e-6 * 0.99);
    BOOST_TEST(with.crossovers.size() == without.crossovers.size());
    for (std::size_t i = 0; i < std::min(with.crossovers.size(), without.crossovers.size()); ++i)
        BOOST_TEST(with.crossovers[i].batch == without.crossovers[i].batch, tt::tolerance(1e-6));
    BOOST_TEST(!with.crossovers.empty());
    // The closed form (the all-reduces' latency a constant of both schemes' lines) finds the same.
    BOOST_TEST(with.closed_form_crossovers.size() == without.closed_form_crossovers.size());
    for (std::size_t i = 0; i < std::min(with.closed_form_crossovers.size(), without.closed_form_crossovers.size()); ++i)
        BOOST_TEST(with.closed_form_crossovers[i].batch == without.closed_form_crossovers[i].batch, tt::tolerance(1e-6));
    BOOST_TEST(!with.closed_form_crossovers.empty());
}

BOOST_AUTO_TEST_CASE(moe_reads_only_the_experts_a_batch_touches) {
    BOOST_TEST(expected_distinct_experts(128, 8, 1) == 8.0, tt::tolerance(1e-12));
    BOOST_TEST(expected_distinct_experts(128, 8, 4096) == 128.0, tt::tolerance(1e-9));
    const PlanResult p1 = run("qwen3-30b-a3b", "h100-sxm", "realistic", "bf16", 1, 128);
    const PlanResult pb = run("qwen3-30b-a3b", "h100-sxm", "realistic", "bf16", 256, 128);
    const SchemeResult& r1 = p1.schemes[0];
    BOOST_TEST(r1.decode.weight_bytes < r1.costs.resident_weight_bytes / 5);  // 8 of 128 experts
    BOOST_TEST(static_cast<double>(pb.schemes[0].decode.weight_bytes) > 0.9 * static_cast<double>(r1.costs.resident_weight_bytes - 2 * 151936ull * 2048 * 2));
}

BOOST_AUTO_TEST_CASE(fp8_on_a100_falls_back_to_weight_only) {
    const PlanResult p = run("qwen3-8b", "a100-80gb", "realistic", "bf16,w8a8-fp8", 1024, 128);
    const SchemeResult& f = get(p, "w8a8-fp8");
    BOOST_TEST(f.costs.weight_only_path);
    BOOST_TEST(!f.costs.note.empty());
    BOOST_TEST(f.speedup_vs_bf16 < 1.0);
}

BOOST_AUTO_TEST_CASE(prefill_is_compute_bound_and_chunked) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w8a8-fp8", 1, 32768);
    const PrefillResult& pf = get(p, "bf16").prefill;
    BOOST_TEST(pf.chunks == 4);
    BOOST_TEST(pf.chunk_tokens == 8192);
    BOOST_TEST(std::string(bound_name(pf.bound)) == "compute");
    BOOST_TEST(get(p, "w8a8-fp8").prefill.time_s < pf.time_s);
    // Causal attention over 32k tokens: the last chunk costs more than the first.
    BOOST_TEST(pf.time_s > 4 * (2.0 * 8192 * 7.568e9) / (989.4e12 * 0.55));
}

BOOST_AUTO_TEST_CASE(bad_workloads_name_the_option) {
    const auto expect = [](auto fn, const std::string& option) {
        try {
            fn();
            BOOST_FAIL("accepted bad input for " << option);
        } catch (const Error& e) {
            BOOST_TEST(std::string(e.what()).find(option) != std::string::npos, e.what());
        }
    };
    expect([] { run("qwen3-8b", "h100-sxm", "realistic", "bf16", 0, 128); }, "--batch");
    expect([] { run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, -5); }, "--context");
    expect([] { run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128, "bf16", "fused", 9); }, "--tp");
    expect([] { run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128, "bf16", "fused", 3); }, "--tp");
    expect([] { run("qwen3-8b", "h9000", "realistic", "bf16", 1, 128); }, "--gpu");
    expect([] { run("qwen3-8b", "h100-sxm", "optimistic", "bf16", 1, 128); }, "--profile");
    expect([] { run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128, "bf16", "turbo"); }, "--kernel");
    // Weights that do not fit are an answer (the capacity issue): both numbers, never a negative
    // count, and the TP the scheme fits from (70B bf16 on 24 GB cards: 131.42 GiB / 8 per GPU).
    {
        const PlanResult p = run("llama-3.1-70b", "rtx-4090", "realistic", "bf16", 1, 128);
        const SchemeResult& r = p.schemes.front();
        BOOST_TEST(!r.admission.fits);
        BOOST_TEST(r.fits_from_tp.value_or(0) == 8);
        const std::string what = *no_scheme_fits(p);
        BOOST_TEST(what.find("131.42 GiB") != std::string::npos, what);
        BOOST_TEST(what.find("fits from TP 8") != std::string::npos, what);
        for (std::size_t i = 0; i + 2 < what.size(); ++i)  // never a negative count
            BOOST_TEST(!(what[i] == ' ' && what[i + 1] == '-' && std::isdigit(static_cast<unsigned char>(what[i + 2]))), what);
        BOOST_TEST(std::isnan(r.speedup_vs_bf16));  // no baseline to compare with
        BOOST_TEST(p.decision.recommendation.empty());
        // Where it fits at the plan's TP, fits_from_tp is the smallest that fits.
        BOOST_TEST(run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128).schemes.front().fits_from_tp.value_or(0) == 1);
        BOOST_TEST(!no_scheme_fits(run("qwen3-8b", "h100-sxm", "realistic", "bf16", 1, 128)).has_value());
    }
    PlanRequest r;
    r.model = test::bundled_model("qwen3-8b");
    r.gpu = test::bundled_gpu("h100-sxm");
    r.efficiency = builtin_efficiency_profile("realistic");
    r.workload.engine.gpu_memory_utilization = 1.5;
    expect([&] { plan(r); }, "--gpu-mem-util");
    r.workload.engine.gpu_memory_utilization = 0.0;
    expect([&] { plan(r); }, "--gpu-mem-util");
}

BOOST_AUTO_TEST_CASE(partial_fit_reports_zero_sequences_with_the_reason) {
    const PlanResult p = run("llama-3.1-70b", "h100-sxm", "realistic", "bf16,w4a16-g128", 1, 4096);
    const SchemeResult& b = get(p, "bf16");
    BOOST_TEST(!b.admission.fits);
    BOOST_TEST(b.admission.max_sequences == 0);
    BOOST_TEST(b.admission.reason.find("GiB") != std::string::npos);
    BOOST_TEST(get(p, "w4a16-g128").admission.fits);
    BOOST_TEST(std::isnan(get(p, "w4a16-g128").speedup_vs_bf16));  // no baseline
}

BOOST_AUTO_TEST_CASE(every_gpu_profile_loads_with_sources) {
    for (const GpuProfile& g : load_gpu_profiles(test::gpus_dir())) {
        BOOST_TEST(g.memory_bandwidth_bytes_per_s > 0, g.id);
        BOOST_TEST(g.peak.bf16_fp32acc_flop_per_s > 0, g.id);
        BOOST_TEST(g.sources.count("memory_bandwidth_bytes_per_s") == 1u, g.id);
        BOOST_TEST(g.sources.count("peak") == 1u, g.id);
    }
    // 12 from gpus.md, the H20 of the Qwen3 speed benchmark, the GH200 of an SGLang benchmark, and
    // the A6000, RTX 3090 and T4 of the corpus's logs (secondary sources, docs/gpu-profiles.md).
    BOOST_TEST(load_gpu_profiles(test::gpus_dir()).size() == 17u);
    for (const char* id : {"a6000", "rtx-3090", "t4"}) BOOST_TEST(test::bundled_gpu(id).sources.count("provenance") == 1u, id);
    // GeForce Ampere at half rate with fp32 accumulate; the T4 has no bf16: its models run in fp16 at the fp16 rate.
    const GpuProfile ampere = test::bundled_gpu("rtx-3090");
    BOOST_TEST(matmul_peak_flop_per_s(ampere, MatmulType::Fp16, Accumulate::Fp16) == 2 * matmul_peak_flop_per_s(ampere, MatmulType::Fp16, Accumulate::Fp32),
               tt::tolerance(1e-9));
    BOOST_TEST(test::bundled_gpu("t4").peak.bf16_fp32acc_flop_per_s == test::bundled_gpu("t4").peak.fp16_fp32acc_flop_per_s);
    // GeForce: fp16/fp8 with fp32 accumulate at half the fp16-accumulate rate (gpus.md table B).
    const GpuProfile g = test::bundled_gpu("rtx-4090");
    BOOST_TEST(matmul_peak_flop_per_s(g, MatmulType::Fp16, Accumulate::Fp16) == 2 * matmul_peak_flop_per_s(g, MatmulType::Fp16, Accumulate::Fp32),
               tt::tolerance(1e-3));  // the whitepaper prints 330.3 and 165.2
    BOOST_TEST(matmul_peak_flop_per_s(g, MatmulType::Fp8) == 330.3e12);
    BOOST_CHECK_THROW(parse_gpu_profile(R"({"id":"x","memory_spec_bytes":1,"memory_bandwidth_bytes_per_s":-1,"peak":{}})", "x.json"), Error);
    BOOST_CHECK_THROW(parse_gpu_profile("{", "x.json"), Error);
}

BOOST_AUTO_TEST_CASE(default_scheme_set_adds_nvfp4_on_fp4_gpus) {
    PlanRequest r;
    r.model = test::bundled_model("qwen3-8b");
    r.gpu = test::bundled_gpu("b200");
    r.efficiency = builtin_efficiency_profile("realistic");
    BOOST_TEST(plan(r).schemes.size() == 7u);
    r.gpu = test::bundled_gpu("h100-sxm");
    BOOST_TEST(plan(r).schemes.size() == 6u);
}

BOOST_AUTO_TEST_CASE(sweeps_match_decode_steps) {
    const PlanResult p = run("qwen3-8b", "h100-sxm", "realistic", "bf16,w4a16-g128", 1, 128);
    const auto pts = batch_sweep(p, powers_of_two(1, 4096));
    BOOST_TEST(pts.size() == 2u * 13);
    for (const SweepPoint& s : pts) {
        const SchemeResult& r = get(p, s.scheme);
        BOOST_TEST(s.time_s == decode_step(r.costs, p.request.gpu, p.request.efficiency, p.request.workload, s.batch, 128).time_s);
    }
    const std::string csv = sweep_csv(full_sweep(p, {1, 2}, {128, 256}));
    BOOST_TEST(std::count(csv.begin(), csv.end(), '\n') == 1 + 2 * 2 * 2);
}

// plan() reuses the last model's tensor inventory: switching models back and forth (as the window
// does) must price each model from its own inventory.
BOOST_AUTO_TEST_CASE(plans_of_alternating_models_use_their_own_inventory) {
    for (const char* model : {"qwen3-8b", "qwen3-30b-a3b", "qwen3-8b", "mixtral-8x7b", "qwen3-30b-a3b"}) {
        const PlanResult p = run(model, "h100-sxm", "realistic", "bf16,w4a16-g128", 1, 4096);
        const ParameterCounts expected = count_parameters(test::bundled_model(model));
        BOOST_TEST_INFO(model);
        BOOST_TEST(p.parameters.total == expected.total);
        BOOST_TEST(get(p, "bf16").costs.budget.checkpoint_bytes ==
                   checkpoint_budget(tensor_inventory(test::bundled_model(model)), parse_scheme("bf16")).checkpoint_bytes);
    }
}

// Expert parallelism (--ep): the busiest GPU's expected load against a simulation of uniform
// routing (k distinct experts a token), and the decode step it prices.
BOOST_AUTO_TEST_CASE(expert_parallel_busiest_gpu_load_matches_routing) {
    // The binomial approximation (experts and assignments independent) against routing simulated
    // exactly: within 5% on these shapes (its error is largest for few experts per GPU).
    constexpr double kApproximation = 0.05;
    // ep = 1: the means.
    const BusiestGpuLoad one = busiest_gpu_load(128, 8, 16, 1);
    BOOST_TEST(std::abs(one.distinct_experts - expected_distinct_experts(128, 8, 16)) < 1e-9);
    BOOST_TEST(std::abs(one.assignments - 16.0 * 8.0) < 1e-9);
    // Two GPUs with one expert each, one token routed to one of them: each runs it with probability
    // 1/2, so the busier one runs 1 - 1/4 of the time.
    const BusiestGpuLoad tiny = busiest_gpu_load(2, 1, 1, 2);
    BOOST_TEST(std::abs(tiny.distinct_experts - 0.75) < 1e-12);
    BOOST_TEST(std::abs(tiny.assignments - 0.75) < 1e-12);
    struct Shape {
        std::int64_t experts, k, tokens, ep;
    };
    for (const Shape& sh : {Shape{128, 8, 1, 8}, Shape{128, 8, 16, 8}, Shape{128, 8, 64, 4}, Shape{8, 2, 4, 2}}) {
        std::mt19937_64 rng(7);
        std::vector<std::int64_t> ids(static_cast<std::size_t>(sh.experts));
        for (std::int64_t e = 0; e < sh.experts; ++e) ids[static_cast<std::size_t>(e)] = e;
        const std::int64_t per_gpu = sh.experts / sh.ep;
        double distinct = 0, assignments = 0;
        constexpr int kTrials = 4000;
        for (int trial = 0; trial < kTrials; ++trial) {
            std::set<std::int64_t> touched;
            std::vector<std::int64_t> load(static_cast<std::size_t>(sh.ep), 0), count(static_cast<std::size_t>(sh.ep), 0);
            for (std::int64_t t = 0; t < sh.tokens; ++t) {
                std::shuffle(ids.begin(), ids.end(), rng);
                for (std::int64_t j = 0; j < sh.k; ++j) {
                    touched.insert(ids[static_cast<std::size_t>(j)]);
                    ++load[static_cast<std::size_t>(ids[static_cast<std::size_t>(j)] / per_gpu)];
                }
            }
            for (const std::int64_t e : touched) ++count[static_cast<std::size_t>(e / per_gpu)];
            distinct += static_cast<double>(*std::max_element(count.begin(), count.end()));
            assignments += static_cast<double>(*std::max_element(load.begin(), load.end()));
        }
        distinct /= kTrials;
        assignments /= kTrials;
        const BusiestGpuLoad l = busiest_gpu_load(sh.experts, sh.k, sh.tokens, sh.ep);
        BOOST_TEST(std::abs(l.distinct_experts / distinct - 1) < kApproximation, sh.tokens << ": " << l.distinct_experts << " vs " << distinct);
        BOOST_TEST(std::abs(l.assignments / assignments - 1) < kApproximation, sh.tokens << ": " << l.assignments << " vs " << assignments);
    }
}

BOOST_AUTO_TEST_CASE(expert_parallel_decode_waits_for_the_busiest_gpu) {
    PlanRequest q;
    q.model = test::bundled_model("qwen3-30b-a3b");
    q.gpu = test::bundled_gpu("h100-sxm");
    q.schemes = {parse_scheme("bf16")};
    q.workload.tensor_parallel = 8;
    q.workload.context_tokens = 512;
    const auto step = [&](std::int64_t ep, std::int64_t batch) {
        PlanRequest r = q;
        r.workload.expert_parallel = ep;
        r.workload.batch = batch;
        return plan(r).schemes[0].decode;
    };
    // One token: TP reads a 1/8 slice of its 8 experts (one expert's worth); under EP the busiest
    // GPU runs about 2.5 whole experts, so the step reads more and takes longer.
    BOOST_TEST(step(8, 1).weight_bytes > 1.5 * step(1, 1).weight_bytes);
    BOOST_TEST(step(8, 1).time_s > step(1, 1).time_s);
    // A large batch touches every expert on every GPU: the same bytes; the busiest GPU computes a
    // little more than the mean (load imbalance), never less.
    BOOST_TEST(step(8, 1024).weight_bytes == step(1, 1024).weight_bytes);
    BOOST_TEST(step(8, 1024).linear_flop > step(1, 1024).linear_flop);
    BOOST_TEST(step(8, 1024).linear_flop < 1.05 * step(1, 1024).linear_flop);
    // EP over the TP group only, for MoE models, dividing the experts.
    PlanRequest bad = q;
    bad.workload.expert_parallel = 4;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "--ep"));
    bad.model = test::bundled_model("qwen3-8b");
    bad.workload.expert_parallel = 8;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "no routed experts"));
}

// MLA (DeepSeek-V3): the cache is one latent of kv_lora_rank + qk_rope_head_dim values per token and
// layer, not a K/V pair per head (vLLM MLAAttentionSpec; get_num_kv_heads returns 1 for MLA, so
// every tensor-parallel rank holds all of it); decode attention runs in the absorbed form over it.
BOOST_AUTO_TEST_CASE(mla_caches_one_latent_that_every_rank_holds) {
    PlanRequest q;
    q.model = test::bundled_model("deepseek-v3");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("w8a8-fp8-block128")};
    q.workload.batch = 16;
    q.workload.context_tokens = 4096;
    const auto priced = [&](std::int64_t tp, const char* kv) {
        PlanRequest r = q;
        r.workload.tensor_parallel = tp;
        r.workload.kv = parse_kv_format(kv);
        return plan(r).schemes[0];
    };
    const SchemeResult one = priced(1, "bf16");
    BOOST_TEST(one.costs.kv_bytes_per_token == 61u * 576u * 2u);  // 70,272 bytes: 1,152 per layer
    BOOST_TEST(priced(1, "fp8").costs.kv_bytes_per_token == 61u * 576u);
    const SchemeResult eight = priced(8, "bf16");
    BOOST_TEST(eight.admission.kv_bytes_per_token == one.costs.kv_bytes_per_token);  // not split over ranks
    BOOST_TEST(eight.decode.kv_bytes == 16ull * 4096 * 61 * 1152);
    // Weights split eight ways; the MTP module is in the checkpoint, not on the GPUs.
    BOOST_TEST(eight.costs.budget.speculative_bytes > 10'000'000'000ull);
    BOOST_TEST(eight.costs.resident_weight_bytes == eight.costs.budget.checkpoint_bytes - eight.costs.budget.speculative_bytes);
    BOOST_TEST(eight.admission.weight_bytes == eight.costs.resident_weight_bytes / 8);
    BOOST_TEST(eight.admission.fits);
    // vLLM pages an MLA cache in blocks of 64 tokens (FlashMLA).
    BOOST_TEST(eight.admission.kv_cache_tokens % 64 == 0);
    BOOST_TEST(eight.admission.kv_cache_tokens == eight.admission.budget_bytes / (64 * 70'272) * 64);
    // Absorbed decode: 2 x heads x (2 x 512 + 64) FLOPs per cached token and layer; prefill in the
    // expanded form: 2 x heads x (192 + 128).
    BOOST_TEST(one.costs.attention_flop_per_token_per_context == 2.0 * 128 * (2 * 512 + 64) * 61, tt::tolerance(1e-12));
    BOOST_TEST(one.costs.prefill_attention_flop_per_token_per_context == 2.0 * 128 * (192 + 128) * 61, tt::tolerance(1e-12));
    BOOST_TEST(eight.decode.attention_flop == one.decode.attention_flop / 8, tt::tolerance(1e-12));  // heads split
    // bf16 weights (1.37 TB) do not fit eight H200s; int8 or int4 latents are no MLA format.
    PlanRequest bf16 = q;
    bf16.schemes = {parse_scheme("bf16")};
    bf16.workload.tensor_parallel = 8;
    BOOST_TEST(!plan(bf16).schemes[0].admission.fits);
    BOOST_TEST(test::throws_naming([&] { priced(8, "int8"); }, "not an MLA cache format"));
}

// Sliding-window layers (gpt-oss: 18 of 36 with a 128-token window) read at most their window at
// decode, and vLLM's hybrid allocator divides the cache into groups. A published vLLM 0.10.1.1 log
// of gpt-oss-120b at TP 4 on A100s (dennislee22/vLLM-benchmarking
// log/vllm-120B-4gpuA10080GB-0.8GRAM-diff-nodes.log at b474d1e; assets/measurements/
// vllm-startup-logs-repos.json) prints "Available KV cache memory: 45.32 GiB", num_gpu_blocks
// 330018, "GPU KV cache size: 2,640,144 tokens" and "Maximum concurrency for 16,384 tokens per
// request: 284.25x" with max_num_batched_tokens 2048: reproduced from the budget it states.
BOOST_AUTO_TEST_CASE(sliding_window_layers_and_the_hybrid_allocator) {
    PlanRequest q;
    q.model = test::bundled_model("gpt-oss-120b");
    q.gpu = test::bundled_gpu("a100-80gb");
    q.schemes = {parse_scheme("native")};
    q.workload.tensor_parallel = 4;
    q.workload.batch = 8;
    q.workload.context_tokens = 16384;
    const SchemeResult r = plan(q).schemes[0];
    const SchemeCosts& c = r.costs;
    BOOST_TEST(c.sliding_layers == 18);
    BOOST_TEST(c.full_layers == 18);
    BOOST_TEST(c.kv_bytes_per_token == 36u * 2u * 8u * 64u * 2u);
    BOOST_TEST(c.sliding_kv_bytes_per_token == c.kv_bytes_per_token / 2);
    // Decode at 16,384 tokens: full layers read them all, sliding layers 128.
    const double per_gpu_token = static_cast<double>(c.kv_bytes_per_token) / 4;
    BOOST_TEST(static_cast<double>(r.decode.kv_bytes) == 8 * per_gpu_token * (0.5 * 16384 + 0.5 * 128), tt::tolerance(1e-6));
    BOOST_TEST(kv_read_bytes_per_sequence(c, 4, 100) == per_gpu_token * 100, tt::tolerance(1e-12));  // inside the window
    BOOST_TEST(prefill_attention_flop(c, 0, 1) == attention_flop_per_token(c, 1), tt::tolerance(1e-12));
    // The log's budget through vLLM's hybrid division.
    Admission a;
    a.budget_bytes = static_cast<std::int64_t>(45.32 * 1024 * 1024 * 1024);
    a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(c, 4);
    BOOST_TEST(a.kv_bytes_per_token == 36u * 2u * 2u * 64u * 2u);  // 2 of 8 KV heads per rank
    const HybridKvGroups g = hybrid_kv_groups(c);
    BOOST_TEST(g.group_size == 18);
    BOOST_TEST(g.groups() == 2);
    divide_kv_budget(a, c, 16, 16384, 2048, true);
    // 45.32 GiB is the log's rounding: +-0.005 GiB is +-36 blocks of 16 tokens x 18 layers x 512 bytes.
    const std::int64_t slack = static_cast<std::int64_t>(0.005 * 1024 * 1024 * 1024 / (16 * 18 * 512)) + 1;
    BOOST_TEST(std::abs(a.kv_cache_blocks - 330018) <= slack);
    BOOST_TEST(std::abs(a.kv_cache_tokens - 2640144) <= slack / 2 * 16 + 16);
    BOOST_TEST(a.kv_cache_tokens == a.kv_cache_blocks / 2 * 16);
    BOOST_TEST(a.max_concurrency == 284.25, tt::tolerance(0.0005));
    // Without the hybrid allocator every layer holds every token: the same logged size, less concurrency.
    Admission full = a;
    divide_kv_budget(full, c, 16, 16384, 2048, false);
    BOOST_TEST(full.max_concurrency < a.max_concurrency);
    // vLLM pads MXFP4 experts on an A100 (Marlin: width per rank 720 -> 768, hidden 2880 -> 3072):
    // the log's "Model loading took 17.2217 GiB" per GPU, within 1%.
    BOOST_TEST(std::abs(static_cast<double>(r.admission.weight_bytes) / (17.2217 * 1024 * 1024 * 1024) - 1) < 0.01,
               r.admission.weight_bytes);
    BOOST_TEST(resident_weight_bytes_per_gpu(c, q.workload) > c.resident_weight_bytes / 4);
    // The cache by layer type, per GPU.
    const std::vector<CacheLayerType> types = cache_by_layer_type(c, kv_bytes_per_token_per_gpu(c, 4));
    BOOST_TEST_REQUIRE(types.size() == 2u);
    BOOST_TEST(types[1].type == "sliding_attention");
    BOOST_TEST(types[1].window == 128);
    BOOST_TEST(types[0].bytes_per_token + types[1].bytes_per_token == kv_bytes_per_token_per_gpu(c, 4));
    BOOST_TEST(cache_layout_text(types) == "18 full_attention + 18 sliding_attention (window 128)");
}

// gpt-oss's MXFP4 experts with MXFP8 activations (--mxfp4-mxfp8): on a B200 (block-scaled FP4/FP8
// tensor cores) the experts' matmuls run at the FP8 rate and the rest as before; on an H100 the
// option changes nothing (W4A16, as vLLM runs MXFP4 there); without it nothing changes anywhere.
BOOST_AUTO_TEST_CASE(mxfp4_experts_with_mxfp8_activations_on_blackwell) {
    for (const char* gpu : {"b200", "h100-sxm"}) {
        PlanRequest q;
        q.model = test::bundled_model("gpt-oss-120b");
        q.gpu = test::bundled_gpu(gpu);
        q.schemes = {parse_scheme("native")};
        q.workload.batch = 64;
        q.workload.context_tokens = 8192;
        const SchemeResult plain = plan(q).schemes[0];
        q.workload.mxfp4_mxfp8 = true;
        const SchemeResult mx = plan(q).schemes[0];
        const bool blackwell = std::string(gpu) == "b200";
        BOOST_TEST(mx.costs.mxfp4_native_capable == blackwell, gpu);
        BOOST_TEST(mx.decode.linear_flop == plain.decode.linear_flop);  // the same work
        if (!blackwell) {
            BOOST_TEST(mx.decode.compute_time_s == plain.decode.compute_time_s);
            BOOST_TEST(mx.prefill.time_s == plain.prefill.time_s);
            BOOST_TEST(mx.costs.note.find("no block-scaled") != std::string::npos, mx.costs.note);
            continue;
        }
        BOOST_TEST(mx.prefill.time_s < 0.8 * plain.prefill.time_s);
        // Decode: the experts' FLOPs (64 tokens x 4 experts) at the FP8 rate, the rest at the scheme's.
        const EfficiencyProfile& eff = q.efficiency;
        const double expert = 64.0 * 4.0 * mx.costs.expert_flop_per_assignment;
        const double fp8 = matmul_peak_flop_per_s(q.gpu, MatmulType::Fp8) * eff.compute_efficiency_for(MatmulType::Fp8);
        const double rest = matmul_peak_flop_per_s(q.gpu, mx.costs.matmul) * eff.compute_efficiency_for(mx.costs.matmul) * eff.fused_kernel_efficiency;
        const double attention = mx.decode.attention_flop / (matmul_peak_flop_per_s(q.gpu, MatmulType::Bf16) * eff.compute_efficiency_for(MatmulType::Bf16));
        BOOST_TEST(mx.decode.compute_time_s == (mx.decode.linear_flop - expert) / rest + expert / fp8 + attention, tt::tolerance(1e-9));
        BOOST_TEST(mx.decode.compute_time_s < plain.decode.compute_time_s);
        BOOST_TEST(mx.costs.note.find("MXFP8 activations") != std::string::npos, mx.costs.note);
    }
}

// NVIDIA's ModelOpt NVFP4 export of Qwen3.5-122B-A10B (models/qwen3.5-122b-a10b-nvfp4, the
// aiconfigurator wheel's copy): config.json's flat form names its exclusions `ignore` and its KV cache as a float
// 8-bit kv_cache_scheme. Priced as `native`, the checkpoint is 83,474,884,576 bytes against the
// published 83,474,870,752 (Hugging Face's dtype totals BF16 9,122,380,016, F8_E4M3 7,247,757,312
// and U8 57,982,058,496, as stored texts of the code index quote them: ids 66477710092,
// 66550113221): routers stay bf16, and the 13,824 bytes over are A_log and the DeltaNet norm,
// float32 in Qwen's checkpoint and bf16 in this export. Under --kv auto vLLM caches it in fp8.
BOOST_AUTO_TEST_CASE(a_published_modelopt_nvfp4_export_of_qwen3_5) {
    PlanRequest q;
    q.model = test::bundled_model("qwen3.5-122b-a10b-nvfp4");
    q.gpu = test::bundled_gpu("b200");
    q.efficiency = builtin_efficiency_profile("realistic");
    q.schemes = {parse_scheme("native")};
    q.workload.kv_auto = true;
    const engine::EngineCatalog catalog = engine::load_engine_catalog(test::source_dir() / "assets" / "engines" / "profiles",
                                                                      test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    q.engine = engine::make_engine_setup(catalog, "vllm", false);
    const SchemeResult r = plan(q).schemes[0];
    BOOST_TEST(r.costs.budget.checkpoint_bytes == 83'474'884'576u);
    BOOST_TEST(static_cast<double>(r.costs.budget.checkpoint_bytes) / 83'474'870'752.0 - 1.0 < 1e-6);
    BOOST_TEST(kv_format_name(r.costs.kv) == "fp8");
    BOOST_TEST(r.admission.fits);
}

// Gemma 3 27B: 52 sliding layers (window 1,024) and 10 full; vLLM's hybrid allocator groups them
// by the smaller count (10: one full group, six sliding ones, the last padded). The SigLIP tower is
// held in memory but a text decode step does not read it.
BOOST_AUTO_TEST_CASE(gemma3_sliding_groups_and_the_unread_vision_tower) {
    PlanRequest q;
    q.model = test::bundled_model("gemma-3-27b-it");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("bf16"), parse_scheme("w4a16-g128")};
    q.workload.batch = 4;
    q.workload.context_tokens = 32768;
    const PlanResult p = plan(q);
    const SchemeCosts& c = p.schemes[0].costs;
    BOOST_TEST(c.sliding_layers == 52);
    BOOST_TEST(c.full_layers == 10);
    BOOST_TEST(c.kv_bytes_per_token == 62u * 2u * 16u * 128u * 2u);
    const HybridKvGroups g = hybrid_kv_groups(c);
    BOOST_TEST(g.group_size == 10);
    BOOST_TEST(g.full_groups == 1);
    BOOST_TEST(g.sliding_groups == 6);
    const std::uint64_t vision_bf16 = 2u * 423'060'336u;
    BOOST_TEST(c.resident_weight_bytes == 54'864'813'280u);
    BOOST_TEST(c.streamed_weight_bytes == c.resident_weight_bytes - vision_bf16);  // the tied table is read whole as the head
    // 4-bit weights leave the tower in bf16: it is in the checkpoint, not in the step.
    const SchemeCosts& w4 = p.schemes[1].costs;
    BOOST_TEST(w4.resident_weight_bytes - w4.streamed_weight_bytes == vision_bf16);
    // Decode at 32,768 tokens: ten layers read them all, 52 read 1,024.
    const double per_layer_token = 2.0 * 16 * 128 * 2;
    BOOST_TEST(static_cast<double>(p.schemes[0].decode.kv_bytes) == 4 * per_layer_token * (10 * 32768.0 + 52 * 1024.0), tt::tolerance(1e-9));
    // A published vLLM 0.11.0rc2.dev98 startup log of google/gemma-3-27b-it (ROCm, GPU not named;
    // max_model_len 4096, max_num_batched_tokens 8192, TP 1, bf16 cache; the code index's stored
    // text id 9297248278, repository not named) prints "Available KV cache memory: 109.86 GiB",
    // "Add 8 padding layers", "GPU KV cache size: 205,696 tokens", "Maximum concurrency for 4,096
    // tokens per request: 50.05x" and num_gpu_blocks 89994: reproduced from the budget it states.
    Admission a;
    a.budget_bytes = static_cast<std::int64_t>(109.86 * 1024 * 1024 * 1024);
    a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(c, 1);
    divide_kv_budget(a, c, 16, 4096, 8192, true);
    // 109.86 GiB is the log's rounding: +-0.005 GiB is +-4 blocks of 16 tokens x 10 layers x 8,192 bytes.
    BOOST_TEST(std::abs(a.kv_cache_blocks - 89994) <= 5, a.kv_cache_blocks);
    BOOST_TEST(a.kv_cache_tokens == a.kv_cache_blocks / 7 * 16);
    BOOST_TEST(std::abs(a.kv_cache_tokens - 205696) <= 16, a.kv_cache_tokens);
    BOOST_TEST(a.max_concurrency == 50.05, tt::tolerance(0.0005));
    BOOST_TEST(a.max_concurrency == 89994.0 / (256 + 6 * 257), tt::tolerance(0.0002));  // one full group, six windows of 4,096 (+1 block)
}

// Llama 4 Scout: 36 of 48 layers attend within 8,192-token chunks. A decode step at 10,000 tokens
// reads 10,000 cached tokens in the 12 global layers and 1,808 in the chunked ones (its chunk so
// far); the cache still holds every token (vLLM 0.11.0 keeps the hybrid allocator off for chunked
// attention by default).
BOOST_AUTO_TEST_CASE(chunked_attention_reads_its_chunk_and_caches_every_token) {
    PlanRequest q;
    q.model = test::bundled_model("llama-4-scout");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("w4a16-g128")};
    q.workload.batch = 4;
    q.workload.context_tokens = 10000;
    q.workload.tensor_parallel = 2;
    const SchemeResult r = plan(q).schemes[0];
    const SchemeCosts& c = r.costs;
    BOOST_TEST(c.chunked_layers == 36);
    BOOST_TEST(c.full_layers == 48);
    BOOST_TEST(chunk_tokens(10000, 8192) == 1808);
    BOOST_TEST(chunk_tokens(8192, 8192) == 8192);
    BOOST_TEST(chunk_tokens(8193, 8192) == 1);
    const double per_layer_token = 2.0 * 4 * 128 * 2;  // 4 of 8 KV heads per rank
    BOOST_TEST(static_cast<double>(r.decode.kv_bytes) == 4 * per_layer_token * (12 * 10000.0 + 36 * 1808.0), tt::tolerance(1e-9));
    BOOST_TEST(attention_flop_per_token(c, 10000) == 4.0 * 5120 * (12 * 10000.0 + 36 * 1808.0), tt::tolerance(1e-12));
    // Prefill of 10,000 tokens from the start: a chunked layer's token attends to its chunk so far.
    const double chunked_pairs = 8192.0 * 8193.0 / 2 + 1808.0 * 1809.0 / 2;
    BOOST_TEST(prefill_attention_flop(c, 0, 10000) == 4.0 * 5120 * (12 * 10000.0 * 10001.0 / 2 + 36 * chunked_pairs), tt::tolerance(1e-12));
    BOOST_TEST(prefill_attention_flop(c, 0, 6000) + prefill_attention_flop(c, 6000, 4000) == prefill_attention_flop(c, 0, 10000), tt::tolerance(1e-12));
    // Admission: every layer holds every token, in blocks of 16.
    BOOST_TEST(r.admission.kv_bytes_per_token == 48u * 2u * 4u * 128u * 2u);
    BOOST_TEST(r.admission.kv_cache_tokens == r.admission.kv_cache_blocks * 16);
    const std::vector<CacheLayerType> types = cache_by_layer_type(c, r.admission.kv_bytes_per_token);
    BOOST_TEST(cache_layout_text(types) == "12 full_attention + 36 chunked_attention (chunk 8192, cached whole)");
}

// Nemotron-H 56B: 54 Mamba2 layers hold a constant state per sequence (vLLM 0.11.0 MambaSpec:
// (conv_kernel - 1) x conv_dim conv values and heads x head_dim x state SSM values, in the model
// dtype), 10 attention layers a cache per token. vLLM raises the attention block so that one
// attention layer's block holds a Mamba layer's state (HybridAttentionMambaModelConfig: 16 x
// ceil(state / (16 x 4,096 bytes)) = 2,080 tokens), pads the state to that page, and groups the
// layers by the smaller count (10: one attention group, six Mamba groups).
BOOST_AUTO_TEST_CASE(mamba_layers_hold_a_constant_state_per_sequence) {
    PlanRequest q;
    q.model = test::bundled_model("nemotron-h-56b-base-8k");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("w8a8-fp8")};
    q.workload.batch = 8;
    q.workload.context_tokens = 8192;
    const SchemeResult r = plan(q).schemes[0];
    const SchemeCosts& c = r.costs;
    BOOST_TEST(c.state_layers == 54);
    BOOST_TEST(c.full_layers == 10);
    BOOST_TEST(c.kv_bytes_per_token == 10u * 2u * 8u * 128u * 2u);
    const std::uint64_t state_layer = 3u * 20480u * 2u + 256u * 64u * 256u * 2u;
    BOOST_TEST(c.mamba.bytes_per_layer(1) == state_layer);
    BOOST_TEST(state_bytes_per_sequence_per_gpu(c, 1) == 54 * state_layer);
    BOOST_TEST(c.mamba.bytes_per_layer(2) == state_layer / 2);  // heads and conv channels split over TP
    // n_groups 8 does not divide over TP 16: vLLM widens it to 16 groups per shard set.
    BOOST_TEST(c.mamba.bytes_per_layer(16) == 3u * ((16384u + 2u * 16u * 256u) / 16u) * 2u + 16u * 64u * 256u * 2u);
    BOOST_TEST(mamba_aligned_block_tokens(c, 16, 1) == 2080);
    BOOST_TEST(mamba_aligned_block_tokens(c, 4096, 1) == 4096);  // a larger configured block stays
    const HybridKvGroups g = hybrid_kv_groups(c);
    BOOST_TEST(g.group_size == 10);
    BOOST_TEST(g.full_groups == 1);
    BOOST_TEST(g.state_groups == 6);
    // A decode step reads every sequence's 8,192 tokens of cache and reads and writes its state.
    BOOST_TEST(static_cast<double>(r.decode.kv_bytes) == 8.0 * (8192.0 * static_cast<double>(c.kv_bytes_per_token) + 2.0 * 54.0 * static_cast<double>(state_layer)), tt::tolerance(1e-9));
    BOOST_TEST(r.decode.attention_flop > 8.0 * attention_flop_per_token(c, 0) * 0.999);
    BOOST_TEST(attention_flop_per_token(c, 0) == c.state_flop_per_token);
    // Admission: a request takes ceil(8192 / 2080) = 4 attention blocks and one block in each Mamba group.
    BOOST_TEST(r.admission.kv_block_tokens == 2080);
    BOOST_TEST(r.admission.state_bytes_per_sequence == 54 * state_layer);
    BOOST_TEST(r.admission.max_concurrency == static_cast<double>(r.admission.kv_cache_blocks) / 10.0, tt::tolerance(1e-12));
    BOOST_TEST(r.admission.kv_cache_tokens == r.admission.kv_cache_blocks / 7 * 2080);
    const std::uint64_t page = 2080u * 4096u;  // the state (8,511,488 bytes) padded to it
    BOOST_TEST(r.admission.kv_cache_blocks == static_cast<std::int64_t>(static_cast<std::uint64_t>(r.admission.budget_bytes) / (page * 10u)));
    // The cache split names the state per sequence.
    const std::vector<CacheLayerType> types = cache_by_layer_type(c, r.admission.kv_bytes_per_token, r.admission.state_bytes_per_sequence);
    BOOST_TEST_REQUIRE(types.size() == 2u);
    BOOST_TEST(types[1].type == "mamba_state");
    BOOST_TEST(types[1].bytes_per_sequence == 54 * state_layer);
    BOOST_TEST(cache_layout_text(types) == "10 full_attention + 54 mamba_state (438.3 MiB per sequence)");
    // An fp8 attention cache halves the per-token bytes, not the state: the block doubles.
    PlanRequest f = q;
    f.workload.kv = parse_kv_format("fp8");
    const SchemeResult rf = plan(f).schemes[0];
    BOOST_TEST(rf.admission.kv_block_tokens == 4160);
    BOOST_TEST(rf.admission.state_bytes_per_sequence == r.admission.state_bytes_per_sequence);
}

// Qwen3-Next 80B-A3B at TP 2: a gated DeltaNet layer's state per rank is 3 x 4,096 conv values
// and 16 x 128 x 128 recurrent ones in bf16 (548,864 bytes); vLLM raises the attention block to 544
// tokens (1,072 with an fp8 cache: no padding) and groups 12 attention and 36 linear layers as one
// attention group and three state groups. Two published vLLM startup logs of
// Qwen3-Next-80B-A3B-Instruct at TP 2 (the code index's stored texts, repositories not named) are
// reproduced from the budgets they state:
// - id 7292846353, vLLM 0.10.2 on H200s, bf16, max_model_len 262,144: "Setting attention block size
//   to 544 tokens", "Padding mamba page size by 1.49%", "Available KV cache memory: 44.59 GiB",
//   "GPU KV cache size: 973,760 tokens", "Maximum concurrency for 262,144 tokens per request: 14.77x";
// - id 33676930891, vLLM 0.13.0 on L40S, kv_cache_dtype fp8, max_model_len 32,768: "Setting attention
//   block size to 1072 tokens", "Available KV cache memory: 17.58 GiB", "GPU KV cache size: 767,552
//   tokens", "Maximum concurrency for 32,768 tokens per request: 84.29x".
BOOST_AUTO_TEST_CASE(gated_deltanet_state_reproduces_published_vllm_logs) {
    PlanRequest q;
    q.model = test::bundled_model("qwen3-next-80b-a3b");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("bf16")};
    q.workload.tensor_parallel = 2;
    q.workload.context_tokens = 262144;
    const SchemeResult r = plan(q).schemes[0];
    const SchemeCosts& c = r.costs;
    BOOST_TEST(c.gdn.layers == 36);
    BOOST_TEST(c.full_layers == 12);
    BOOST_TEST(c.gdn.bytes_per_layer(2) == 548'864u);
    BOOST_TEST(c.gdn.bytes_per_layer(1) == 2u * 548'864u);
    BOOST_TEST(mamba_aligned_block_tokens(c, 16, 2) == 544);
    const double padding = (544.0 * 1024.0 - 548864.0) / 548864.0 * 100.0;
    BOOST_TEST(std::round(padding * 100) / 100 == 1.49);
    const HybridKvGroups g = hybrid_kv_groups(c);
    BOOST_TEST(g.group_size == 12);
    BOOST_TEST(g.full_groups == 1);
    BOOST_TEST(g.state_groups == 3);
    struct Log {
        double budget_gib;
        const char* kv;
        std::int64_t max_model_len, block, tokens;
        double concurrency;
    };
    for (const Log& log : {Log{44.59, "bf16", 262144, 544, 973760, 14.77}, Log{17.58, "fp8", 32768, 1072, 767552, 84.29}}) {
        const SchemeCosts costs = scheme_costs(q.model, tensor_inventory(q.model), parse_scheme("bf16"), parse_kv_format(log.kv), q.gpu);
        Admission a;
        a.budget_bytes = static_cast<std::int64_t>(log.budget_gib * 1024 * 1024 * 1024);
        a.kv_bytes_per_token = kv_bytes_per_token_per_gpu(costs, 2);
        divide_kv_budget(a, costs, 16, log.max_model_len, 8192, true, 2);
        BOOST_TEST(a.kv_block_tokens == log.block);
        // The budget's rounding (+-0.005 GiB) is about one block of 12 layers: the logged size
        // exactly, the concurrency within one block of a request's ceil(L / block) + 3.
        BOOST_TEST(a.kv_cache_tokens == log.tokens, log.kv);
        const double per_request = static_cast<double>((log.max_model_len + log.block - 1) / log.block + 3);
        BOOST_TEST(std::abs(a.max_concurrency - log.concurrency) <= 1.0 / per_request + 0.005, log.kv << " " << a.max_concurrency);
    }
    // Decode reads and writes every sequence's state: 36 layers x 548,864 bytes per rank, twice.
    BOOST_TEST(static_cast<double>(r.decode.kv_bytes) ==
                   static_cast<double>(r.decode.batch) * (262144.0 * static_cast<double>(kv_bytes_per_token_per_gpu(c, 2)) + 2.0 * 36.0 * 548864.0),
               tt::tolerance(1e-9));
    const std::vector<CacheLayerType> types = cache_by_layer_type(c, r.admission.kv_bytes_per_token, r.admission.state_bytes_per_sequence);
    BOOST_TEST(cache_layout_text(types) == "12 full_attention + 36 linear_attention_state (18.8 MiB per sequence)");
}

// Data-parallel attention with expert parallelism over two nodes (vLLM --data-parallel-size 2
// --tensor-parallel-size 8 --enable-expert-parallel: EP 16): DeepSeek-V3 in bf16 fits where eight
// H200s cannot hold it; each MoE layer's all-to-all crosses the network.
BOOST_AUTO_TEST_CASE(data_parallel_attention_shares_experts_over_nodes) {
    PlanRequest q;
    q.model = test::bundled_model("deepseek-v3");
    q.gpu = test::bundled_gpu("h200");
    q.schemes = {parse_scheme("bf16")};
    q.workload.batch = 32;
    q.workload.context_tokens = 4096;
    q.workload.tensor_parallel = 8;
    q.workload.expert_parallel = 16;
    q.workload.data_parallel = 2;
    q.workload.nodes = 2;
    const SchemeResult r = plan(q).schemes[0];
    BOOST_TEST(r.admission.fits, r.admission.reason);
    const SchemeCosts& c = r.costs;
    BOOST_TEST(r.admission.weight_bytes == (c.resident_weight_bytes - c.routed_expert_bytes) / 8 + c.routed_expert_bytes / 16);
    // Each GPU sends its 32 / 8 tokens to the other GPUs of their 8 experts, 58 MoE layers,
    // bf16 both ways (a bf16 scheme dispatches in bf16); half of the other GPUs are on the other node.
    const double remote = 15.0 * (1.0 - std::pow(15.0 / 16.0, 8));
    const double bytes = 4.0 * remote * (2.0 * 7168 + 2.0 * 7168) * 58;
    BOOST_TEST(r.decode.all_to_all_bytes == bytes, tt::tolerance(1e-9));
    const AllToAll a2a = moe_all_to_all(c, q.gpu, q.workload, 32);
    BOOST_TEST(a2a.network_bytes == bytes * 8.0 / 15.0, tt::tolerance(1e-9));
    BOOST_TEST(a2a.time_s == a2a.network_bytes / 50e9, tt::tolerance(1e-9));  // the network is the slower share
    BOOST_TEST(r.decode.communication_time_s > a2a.time_s);
    // Two engines decode a batch each in one step.
    BOOST_TEST(r.throughput_tokens_per_s == 2.0 * 32 / r.decode.time_s, tt::tolerance(1e-9));
    // FP8 block weights dispatch in fp8 with 128-wide fp32 scales.
    PlanRequest fp8 = q;
    fp8.schemes = {parse_scheme("native")};
    BOOST_TEST(plan(fp8).schemes[0].decode.all_to_all_bytes == 4.0 * remote * (7168 + 56 * 4 + 2.0 * 7168) * 58, tt::tolerance(1e-9));
    // One node of eight cannot hold it; a tensor-parallel ring across nodes runs at the network's rate.
    PlanRequest one = q;
    one.workload.data_parallel = 1;
    one.workload.expert_parallel = 8;
    one.workload.nodes = 1;
    BOOST_TEST(!plan(one).schemes[0].admission.fits);
    Workload across = q.workload;
    across.data_parallel = 1;
    across.expert_parallel = 1;
    across.tensor_parallel = 8;
    across.nodes = 2;
    BOOST_TEST(allreduce_time_s(1e6, across, q.gpu) == 1e6 * 2.0 * 7.0 / 8.0 / 50e9, tt::tolerance(1e-12));
    BOOST_TEST(allreduce_time_s(1e6, across, q.gpu) > allreduce_time_s(1e6, 8, q.gpu));
    // Refused with one line naming the option.
    PlanRequest bad = q;
    bad.workload.expert_parallel = 8;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "--ep"));
    bad = q;
    bad.workload.nodes = 1;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "give --nodes"));
    bad = q;
    bad.gpu = test::bundled_gpu("a100-80gb");
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "internode_bytes_per_s"));
    bad = q;
    bad.workload.expert_parallel = 1;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "--dp"));
    bad = q;
    bad.workload.nodes = 3;
    BOOST_TEST(test::throws_naming([&] { plan(bad); }, "--nodes"));
}

BOOST_AUTO_TEST_SUITE_END()
