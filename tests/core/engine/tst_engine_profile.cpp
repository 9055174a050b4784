// Engine profiles: versions, resolution of --engine, the bundled profiles' rules (defaults by GPU,
// SGLang's mem_fraction_static against the worked values of the engine source), the step model
// and the KV budget each rule gives.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>

#include "core/base/error.h"
#include "core/checkpoint/model_config_json.h"
#include "core/engine/engine_profile.h"
#include "core/engine/step_model.h"
#include "core/fidelity/corpus.h"
#include "core/plan/plan.h"
#include "tests/core/checkpoint/tst_inspect_fixtures.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::engine;

namespace {

std::filesystem::path profiles_dir() { return test::source_dir() / "assets" / "engines" / "profiles"; }
std::filesystem::path fit_file() { return test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json"; }

const EngineCatalog& catalog() {
    static const EngineCatalog c = load_engine_catalog(profiles_dir(), fit_file());
    return c;
}

// A plan of bf16 and w4a16-g128 for a bundled model and GPU under the realistic profile (no engine).
// The value (SI) of record `id` in the measurement corpus file `file` (under assets/measurements/).
std::optional<double> corpus_value(const std::string& file, const std::string& id) {
    const std::filesystem::path path = test::source_dir() / "assets" / "measurements" / file;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    for (const fidelity::Record& r : fidelity::parse_corpus_file(text.str(), path.string()))
        if (r.id == id) return r.value;
    return std::nullopt;
}

PlanRequest bf16_and_w4_request(const std::string& model, const std::string& gpu) {
    PlanRequest r;
    r.model = test::bundled_model(model);
    r.gpu = test::bundled_gpu(gpu);
    r.efficiency = builtin_efficiency_profile("realistic");
    r.schemes = {parse_scheme("bf16"), parse_scheme("w4a16-g128")};
    return r;
}


}  // namespace

BOOST_AUTO_TEST_SUITE(engine_profiles)

BOOST_AUTO_TEST_CASE(versions_compare_part_by_part) {
    const auto v = [](const char* t) { return parse_engine_version(t, "v"); };
    BOOST_TEST(compare_versions(v("0.4.6.post1"), v("0.4.6")) > 0);
    BOOST_TEST(compare_versions(v("0.4.6.post1"), v("0.4.7")) < 0);
    BOOST_TEST(compare_versions(v("v0.10.1.1"), v("0.10.1")) > 0);
    BOOST_TEST(compare_versions(v("0.10.0"), v("0.9.2")) > 0);   // numbers, not text
    BOOST_TEST(compare_versions(v("0.11"), v("0.11.0")) == 0);
    BOOST_TEST(compare_versions(v("0.6.3+cu121"), v("0.6.3")) == 0);
    BOOST_TEST(test::throws_naming([&] { v("latest"); }, "is not a version"));
    BOOST_TEST(test::throws_naming([&] { v(""); }, "is not a version"));
}

BOOST_AUTO_TEST_CASE(engine_argument_picks_the_profile_covering_the_version) {
    const struct {
        const char* asked;
        const char* profile;
    } rows[] = {
        {"vllm@0.6.3", "vllm-v0"},       {"vllm@0.4.2", "vllm-v0"},  {"vllm@0.7.2", "vllm-v0"},   // V0 is the default engine before 0.8
        {"vllm@0.8.0", "vllm-v1"},       {"vllm@0.10.1", "vllm-v1"}, {"vllm@0.11.0", "vllm-v1"},  // graphs still outside the budget
        {"vllm@0.20.0", "vllm-v1-cudagraph"}, {"vllm", "vllm-v1-cudagraph"},                       // the newest
        {"VLLM@v0.9.1", "vllm-v1"},
        {"sglang@0.4.6", "sglang-0.4"},  {"sglang@0.4.6.post1", "sglang-0.4"}, {"sglang@0.4.9", "sglang-0.4.8"},
        {"sglang@0.5.3.post3", "sglang-0.5"}, {"sglang", "sglang-0.5"},
    };
    for (const auto& r : rows) BOOST_TEST(resolve_engine_profile(catalog(), r.asked).profile->id == r.profile, r.asked);
    BOOST_TEST(test::throws_naming([] { resolve_engine_profile(catalog(), "trtllm"); }, "--engine: unknown engine 'trtllm'"));
    BOOST_TEST(test::throws_naming([] { resolve_engine_profile(catalog(), "vllm@0.3.3"); }, "covered by no profile"));
    BOOST_TEST(test::throws_naming([] { resolve_engine_profile(catalog(), "vllm@main"); }, "is not a version"));
}

BOOST_AUTO_TEST_CASE(every_bundled_profile_cites_its_source_and_is_fitted) {
    BOOST_TEST(catalog().profiles.size() >= 4u);
    for (const EngineProfile& p : catalog().profiles) {
        BOOST_TEST(!p.sources.empty(), p.id);
        for (const SourceRef& s : p.sources) BOOST_TEST((!s.file.empty() && !s.function.empty() && !s.version.empty()), p.id);
        BOOST_TEST(p.fitted, p.id << " has no fitted values in engine-fit.json");
    }
    BOOST_TEST(!catalog().corpus_checksum.empty());
    BOOST_TEST(!catalog().bands.empty());
}

BOOST_AUTO_TEST_CASE(malformed_profiles_name_the_field) {
    const std::string good = R"({"format": "quantplan-engine-profile/1", "id": "x", "engine": "vllm", "title": "t",
        "versions": {"from": "0.1"}, "sources": [{"repository": "r", "file": "f", "function": "g", "version": "v", "what": "w"}],
        "defaults": {}, "memory": {"rule": "utilization_of_total"}})";
    BOOST_TEST(parse_engine_profile(good, "p.json").id == "x");
    const struct {
        std::string text;
        const char* fragment;
    } bad[] = {
        {R"({"format": "other"})", "p.json.format"},
        {std::string(good).replace(good.find("\"vllm\""), 6, "\"tgi\""), "p.json.engine"},
        {std::string(good).replace(good.find("utilization_of_total"), 20, "whatever"), "p.json.memory.rule"},
        {std::string(good).replace(good.find("\"sources\": ["), 12, "\"sources\": [], \"x\": ["), "p.json.sources"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("defaults": {"gpu_memory_utilization": 3})"),
         "gpu_memory_utilization"},
        {"{\"format\": ", "p.json"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("defaults": {"cuda_graph_max_batch_tiers": {}})"),
         "p.json.defaults.cuda_graph_max_batch_tiers"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("defaults": {"cuda_graph_max_batch_tiers": [{"below_memory_bytes": 1}]})"),
         "p.json.defaults.cuda_graph_max_batch_tiers[0]"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14,
                                   R"("defaults": {"max_num_batched_tokens_tiers": [{"below_memory_bytes": 1, "tokens": 8, "from_version": "x.y"}]})"),
         "max_num_batched_tokens_tiers[0].from_version"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("defaults": {"cuda_graph_size_steps": [[2, 8]]})"),
         "p.json.defaults.cuda_graph_size_steps"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("defaults": {"hybrid_allocator_from_version": "soon"})"),
         "hybrid_allocator_from_version"},
        {std::string(good).replace(good.find("\"defaults\": {}"), 14, R"("step_terms_from": "vllm-v1", "defaults": {})"), "p.json.step_terms_reason"},
    };
    for (const auto& b : bad) BOOST_TEST(test::throws_naming([&] { parse_engine_profile(b.text, "p.json"); }, b.fragment), b.fragment);
}

// vLLM 0.20's profile (split off for its CUDA-graph memory rule) has no step point of its own: its
// fixed and per-layer costs are fitted on the V1 profile's points, not pooled over V0's (whose
// 0.4-0.6 rows are most of vLLM's), and a profile that names no other profile of its engine is
// refused when the catalog loads.
BOOST_AUTO_TEST_CASE(a_profile_without_step_points_takes_the_costs_of_the_profile_it_steps_as) {
    const auto find = [](const std::string& id) -> const EngineProfile& {
        for (const EngineProfile& p : catalog().profiles)
            if (p.id == id) return p;
        throw std::runtime_error("no profile " + id);
    };
    const EngineProfile& v1 = find("vllm-v1");
    const EngineProfile& graphs = find("vllm-v1-cudagraph");
    const EngineProfile& v0 = find("vllm-v0");
    BOOST_TEST(graphs.step_terms_from == "vllm-v1");
    BOOST_TEST(graphs.step.per_layer_s == v1.step.per_layer_s);
    BOOST_TEST(graphs.step.fixed_step_s == v1.step.fixed_step_s);
    BOOST_TEST(graphs.step.per_layer_s != v0.step.per_layer_s);
    BOOST_TEST(graphs.step.basis.find("points of vllm-v1") != std::string::npos, graphs.step.basis);
    // The kernel scales stay the engine's, pooled over its profiles.
    BOOST_TEST(graphs.step.kernel_scale("bf16") == v0.step.kernel_scale("bf16"));

    const auto dir = std::filesystem::temp_directory_path() / ("quantplan-step-terms-from-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir);
    const std::string profile = R"({"format": "quantplan-engine-profile/1", "id": "x", "engine": "vllm", "title": "t",
        "versions": {"from": "0.1"}, "step_terms_from": "nope", "step_terms_reason": "r",
        "sources": [{"repository": "r", "file": "f", "function": "g", "version": "v", "what": "w"}],
        "defaults": {}, "memory": {"rule": "utilization_of_total"}})";
    {
        std::ofstream out(dir / "x.json");
        out << profile;
    }
    BOOST_TEST(test::throws_naming([&] { load_engine_catalog(dir, dir / "none.json"); }, "x.step_terms_from"));
    std::filesystem::remove_all(dir);
}

// The fit file's host costs must be ascending versions with bounded values.
BOOST_AUTO_TEST_CASE(malformed_eager_host_costs_name_the_field) {
    const auto fit = [](const std::string& host) {
        return R"({"format": "quantplan-engine-fit/1", "corpus_checksum": "x", "profiles": {"vllm-v0": {"step": {"eager_blend_exponent": 3, "eager_host": )" +
               host + "}}}}";
    };
    const FittedParameters ok = parse_fitted_parameters(fit(R"([{"version": "0.4", "per_layer_s": 0.0003, "points": 4}, {"version": "0.6", "per_layer_s": 0.00004}])"), "f");
    BOOST_TEST(ok.step.at("vllm-v0").eager_host.size() == 2u);
    BOOST_TEST(ok.step.at("vllm-v0").eager_blend_exponent == 3.0);
    BOOST_TEST(test::throws_naming([&] { parse_fitted_parameters(fit(R"([{"version": "0.6", "per_layer_s": 0}, {"version": "0.4", "per_layer_s": 0}])"), "f"); },
                                   "f.profiles.vllm-v0.step.eager_host[1].version"));
    BOOST_TEST(test::throws_naming([&] { parse_fitted_parameters(fit(R"([{"version": "x", "per_layer_s": 0}])"), "f"); }, "eager_host[0].version"));
    BOOST_TEST(test::throws_naming([&] { parse_fitted_parameters(fit(R"([{"version": "0.4", "per_layer_s": 5}])"), "f"); }, "eager_host[0]"));
    BOOST_TEST(test::throws_naming([&] { parse_fitted_parameters(fit(R"({"version": "0.4"})"), "f"); }, "eager_host"));
}

BOOST_AUTO_TEST_CASE(v1_defaults_depend_on_the_gpu) {
    const EngineProfile& v1 = *resolve_engine_profile(catalog(), "vllm@0.10.1").profile;
    const GpuProfile h100 = test::bundled_gpu("h100-sxm"), a100 = test::bundled_gpu("a100-80gb"), l40s = test::bundled_gpu("l40s");
    BOOST_TEST(defaults_for_gpu(v1, h100.id, h100.memory_usable_bytes).max_num_seqs == 1024);
    BOOST_TEST(defaults_for_gpu(v1, h100.id, h100.memory_usable_bytes).max_num_batched_tokens == 8192);
    BOOST_TEST(defaults_for_gpu(v1, a100.id, a100.memory_usable_bytes).max_num_seqs == 256);  // A100 excluded from 0.9.0
    BOOST_TEST(defaults_for_gpu(v1, l40s.id, l40s.memory_usable_bytes).max_num_batched_tokens == 2048);
    const EngineProfile& v0 = *resolve_engine_profile(catalog(), "vllm@0.6.3").profile;
    BOOST_TEST(defaults_for_gpu(v0, h100.id, h100.memory_usable_bytes).max_num_seqs == 256);
    BOOST_TEST(!v0.defaults.chunked_prefill);
    BOOST_TEST(resolve_engine_profile(catalog(), "vllm@0.20.0").profile->defaults.gpu_memory_utilization == 0.92);
}

// The engine source's worked values (docs/fidelity.md, "Engine profiles"): H100 about 0.835 and
// H200 about 0.907 for SGLang 0.5.3 on; 0.88 / 0.87 by TP for 0.4.6 on an 80 GB part.
BOOST_AUTO_TEST_CASE(sglang_mem_fraction_static_rules) {
    constexpr double kTolerance = 0.002;  // the worked values use nvidia-smi MiB, the profiles CUDA's total
    const GpuProfile h100 = test::bundled_gpu("h100-sxm"), h200 = test::bundled_gpu("h200");
    const EngineProfile& s04 = *resolve_engine_profile(catalog(), "sglang@0.4.6").profile;
    BOOST_TEST(sglang_mem_fraction_static(s04, h100.memory_usable_bytes, 1) == 0.88);
    BOOST_TEST(sglang_mem_fraction_static(s04, h100.memory_usable_bytes, 2) == 0.87);
    BOOST_TEST(sglang_mem_fraction_static(s04, h100.memory_usable_bytes, 8) == 0.81);
    BOOST_TEST(std::abs(sglang_mem_fraction_static(s04, h200.memory_usable_bytes, 1) - 0.907) < 0.01);
    const EngineProfile& s05 = *resolve_engine_profile(catalog(), "sglang@0.5.4").profile;
    BOOST_TEST(std::abs(sglang_mem_fraction_static(s05, h100.memory_usable_bytes, 1) - 0.835) < kTolerance);
    BOOST_TEST(std::abs(sglang_mem_fraction_static(s05, h200.memory_usable_bytes, 1) - 0.907) < kTolerance + 0.003);
    EngineProfile explicit_fraction = s05;
    explicit_fraction.defaults.mem_fraction_static = 0.85;
    BOOST_TEST(sglang_mem_fraction_static(explicit_fraction, h200.memory_usable_bytes, 1) == 0.85);
}

BOOST_AUTO_TEST_CASE(efficiency_curves_interpolate_in_log_m_and_hold_flat_outside) {
    EfficiencyCurve c;
    c.m = {1, 16, 256};
    c.fraction = {0.4, 0.8, 0.6};
    BOOST_TEST(c.at(1) == 0.4);
    BOOST_TEST(c.at(0) == 0.4);
    BOOST_TEST(c.at(4096) == 0.6);
    BOOST_TEST(std::abs(c.at(4) - 0.6) < 1e-12);  // halfway between 1 and 16 in log M
    BOOST_TEST(std::abs(c.at(64) - 0.7) < 1e-12);
}

// V0 profiles max_model_len tokens without chunked prefill, V1 max_num_batched_tokens: the same
// model and GPU admit far fewer tokens under V0 at a long max_model_len (the 9.4 GiB activation
// peak of the V0 log the issue quotes).
BOOST_AUTO_TEST_CASE(v0_profiles_max_model_len_v1_does_not) {
    const ModelConfig m = test::bundled_model("qwen2.5-7b-instruct");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const auto inventory = compress_inventory(tensor_inventory(m));
    const SchemeCosts c = scheme_costs(m, inventory, parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    Workload w;
    w.context_tokens = 32768;
    const EngineSetup v0 = make_engine_setup(catalog(), "vllm@0.6.3", true);
    const EngineSetup v1 = make_engine_setup(catalog(), "vllm@0.10.1", true);
    Workload w0 = w;
    w0.engine.max_num_batched_tokens = v0.profile.defaults.max_num_batched_tokens;
    const Admission a0 = engine_admission(c, m, gpu, v0, w0, 32768);
    const Admission a1 = engine_admission(c, m, gpu, v1, w, 32768);
    BOOST_TEST(a0.activation_workspace_bytes > 3 * a1.activation_workspace_bytes);
    BOOST_TEST(a0.kv_cache_tokens < a1.kv_cache_tokens);
    BOOST_TEST(a0.kv_cache_tokens % 16 == 0);
    // SGLang's budget has no activation term at all.
    const EngineSetup sg = make_engine_setup(catalog(), "sglang@0.4.6", true);
    BOOST_TEST(engine_admission(c, m, gpu, sg, w).activation_workspace_bytes == 0u);
}

// Mistral-7B-v0.1's model-wide window (zephyr-7b-beta): vLLM V1 gives every layer a
// SlidingWindowSpec, one group, the same pool; a request needs cdiv(min(window - 1 +
// max_num_batched_tokens, max_model_len), 16) + 1 blocks (769 at 8,192), so its concurrency at
// 32,768 tokens is blocks / 769, not tokens / 32,768. SGLang ignores the window: every token is
// cached and read, whatever the layer.
BOOST_AUTO_TEST_CASE(a_model_wide_window_is_served_by_vllm_and_ignored_by_sglang) {
    const ModelConfig m = test::bundled_model("zephyr-7b-beta");
    const GpuProfile gpu = test::bundled_gpu("h100-sxm");
    const auto inventory = compress_inventory(tensor_inventory(m));
    const SchemeCosts c = scheme_costs(m, inventory, parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    BOOST_TEST_REQUIRE(c.sliding_layers == 32);
    const EngineSetup v1 = make_engine_setup(catalog(), "vllm@0.11.0", true);
    const EngineSetup sg = make_engine_setup(catalog(), "sglang@0.5.5", true);
    // Each engine prices the costs as it serves the model; vLLM's keep the window.
    const SchemeCosts cv = costs_as_served(c, m, v1.profile);
    const SchemeCosts served = costs_as_served(c, m, sg.profile);
    BOOST_TEST(cv.sliding_layers == 32);
    BOOST_TEST(served.sliding_layers == 0);
    BOOST_TEST(served.full_layers == 32);
    BOOST_TEST(kv_read_bytes_per_sequence(served, 1, 32768) == 8.0 * kv_read_bytes_per_sequence(c, 1, 32768));
    Workload w;
    w.context_tokens = 32768;
    w.engine.max_num_batched_tokens = 8192;
    const Admission a1 = engine_admission(cv, m, gpu, v1, w, 32768);
    BOOST_TEST_REQUIRE(a1.kv_cache_blocks > 0);
    BOOST_TEST(a1.kv_cache_tokens == a1.kv_cache_blocks * 16);
    BOOST_TEST(a1.max_sequences == a1.kv_cache_blocks / 769);
    BOOST_TEST(a1.max_concurrency > 2.0 * static_cast<double>(a1.kv_cache_tokens) / 32768.0);
    // So an SGLang decode step at 32,768 tokens reads the whole cache and takes longer than at 4,096;
    // vLLM's reads the window either way.
    const double long_step = engine_decode_step(served, m, gpu, sg, w, 1, 32768).attention_s;
    const double window_step = engine_decode_step(served, m, gpu, sg, w, 1, 4096).attention_s;
    BOOST_TEST(long_step > 2.0 * window_step);
    BOOST_TEST(engine_decode_step(cv, m, gpu, v1, w, 1, 32768).attention_s == engine_decode_step(cv, m, gpu, v1, w, 1, 4096).attention_s);
}

// W4A16 MoE experts on Hopper under vLLM are priced from aiconfigurator's measured vLLM Marlin MoE
// calls (H100 and H200, every expert on the GPU), at the rows each expert sees, and MXFP4 experts
// (gpt-oss's) from its measured MXFP4 MoE calls likewise; dense W4A16, SGLang's MoE and GPUs
// without the curve keep the dense W4A16 curve at M = batch.
BOOST_AUTO_TEST_CASE(moe_w4a16_on_hopper_takes_the_measured_marlin_moe_curve_at_rows_per_expert) {
    const EngineCatalog& c = catalog();
    for (const char* gpu : {"h100-sxm", "h200"}) {
        const CurveLookup found = find_curve(c.kernels, gpu, "sm_90", KernelFamily::W4A16Moe);
        BOOST_TEST_REQUIRE(found.curve != nullptr, gpu);
        BOOST_TEST(found.coverage == "gpu");
        BOOST_TEST(found.curve->basis.find(gpu) != std::string::npos, found.curve->basis);
        BOOST_TEST(found.curve->m.front() == 1);
        BOOST_TEST(found.curve->m.back() == 341);  // 16,384 tokens x top-8 / 384 experts
    }
    BOOST_TEST(find_curve(c.kernels, "a100-80gb", "sm_80", KernelFamily::W4A16Moe).coverage == "other_gpus");
    // vLLM's MXFP4 MoE (gpt-oss's experts) likewise, from the same tables' w4a16_mxfp4 rows.
    for (const char* gpu : {"h100-sxm", "h200"}) {
        const CurveLookup found = find_curve(c.kernels, gpu, "sm_90", KernelFamily::Mxfp4Moe);
        BOOST_TEST_REQUIRE(found.curve != nullptr, gpu);
        BOOST_TEST(found.coverage == "gpu");
        BOOST_TEST(found.curve->basis.find("vllm") != std::string::npos, found.curve->basis);
    }
    {
        // The gpt-oss-120b shape's 8,192-token call on an H100 (hidden and intermediate 2,880, 128
        // experts, top 4): its fraction is its roofline (4.25-bit weights) over its measured time,
        // one of the points whose median is the curve's at 256 rows per expert.
        const std::optional<double> t = corpus_value("aiconfigurator/h100-sxm-vllm.json", "aic/h100-sxm/vllm/moe/w4a16_mxfp4/h2880-i2880-e128-top4-tp1-ep1/t8192");
        BOOST_TEST_REQUIRE(t.has_value());
        const GpuProfile h = test::bundled_gpu("h100-sxm");
        const double pairs = 8192.0 * 4, per_expert = 3.0 * 2880 * 2880;
        const double bytes = 128 * per_expert * 4.25 / 8 + 2.0 * pairs * (2.0 * 2880 + 3.0 * 2880);
        const double fraction = std::max(bytes / h.memory_bandwidth_bytes_per_s, 2.0 * pairs * per_expert / matmul_peak_flop_per_s(h, MatmulType::Bf16)) / *t;
        const engine::EfficiencyCurve& curve = *find_curve(c.kernels, "h100-sxm", "sm_90", KernelFamily::Mxfp4Moe).curve;
        const auto at = std::find(curve.m.begin(), curve.m.end(), 256);
        BOOST_TEST_REQUIRE((at != curve.m.end()));
        BOOST_TEST(fraction > 0.3);  // the kernel runs at a good share of the bf16 peak there
        BOOST_TEST(std::abs(curve.fraction[static_cast<std::size_t>(at - curve.m.begin())] - fraction) < 0.25);
        // 1,024 and 2,048 rows per expert come from one call each (gpt-oss-20b's shape, 32 experts,
        // at 8,192 and 16,384 tokens): there the curve is that call's roofline over its time.
        for (const int tokens : {8192, 16384}) {
            const std::optional<double> t20 = corpus_value(
                "aiconfigurator/h100-sxm-vllm.json", "aic/h100-sxm/vllm/moe/w4a16_mxfp4/h2880-i2880-e32-top4-tp1-ep1/t" + std::to_string(tokens));
            BOOST_TEST_REQUIRE(t20.has_value());
            const double p20 = tokens * 4.0;
            const double b20 = 32 * per_expert * 4.25 / 8 + 2.0 * p20 * (2.0 * 2880 + 3.0 * 2880);
            const double f20 = std::max(b20 / h.memory_bandwidth_bytes_per_s, 2.0 * p20 * per_expert / matmul_peak_flop_per_s(h, MatmulType::Bf16)) / *t20;
            const auto m20 = std::find(curve.m.begin(), curve.m.end(), tokens / 8);
            BOOST_TEST_REQUIRE((m20 != curve.m.end()), tokens);
            BOOST_TEST(curve.fraction[static_cast<std::size_t>(m20 - curve.m.begin())] == f20, boost::test_tools::tolerance(1e-12));
        }
        // One kernel, one curve: from 4 rows per expert on, gpt-oss's triton MoE on the H100 runs at 0.5 to 0.7
        // of the bf16 peak. A curve that also took the table's other w4a16_mxfp4 rows (a Marlin
        // kernel on a 896-expert shape, at 0.18 to 0.23 from 73 rows) would zig-zag below 0.4.
        for (std::size_t i = 0; i < curve.m.size(); ++i)
            if (curve.m[i] >= 4) BOOST_TEST(curve.fraction[i] >= 0.4, "M " << curve.m[i] << ": " << curve.fraction[i]);
    }
    // The curve's last point is its one record's roofline / measured time: 16,384 tokens through
    // Kimi-K2-shaped experts (hidden 7,168, intermediate 2,048, 384 experts, top 8) on an H100.
    const std::optional<double> measured_s =
        corpus_value("aiconfigurator/h100-sxm-vllm.json", "aic/h100-sxm/vllm/moe/int4_wo/h7168-i2048-e384-top8-tp1-ep1/t16384");
    BOOST_TEST_REQUIRE(measured_s.has_value());
    const GpuProfile h100 = test::bundled_gpu("h100-sxm");
    const double pairs = 16384.0 * 8, per_expert = 3.0 * 7168 * 2048;
    const double bytes = 384 * per_expert * 0.5 + 2.0 * pairs * (2.0 * 7168 + 3.0 * 2048);
    const double roofline = std::max(bytes / h100.memory_bandwidth_bytes_per_s, 2.0 * pairs * per_expert / matmul_peak_flop_per_s(h100, MatmulType::Bf16));
    BOOST_TEST(find_curve(c.kernels, "h100-sxm", "sm_90", KernelFamily::W4A16Moe).curve->fraction.back() == roofline / *measured_s,
               boost::test_tools::tolerance(1e-12));

    const ModelConfig moe = test::bundled_model("qwen3-30b-a3b"), dense = test::bundled_model("qwen3-8b"), fp4 = test::bundled_model("gpt-oss-20b");
    const Scheme w4 = parse_scheme("w4a16-g128");
    const EngineSetup v = make_engine_setup(c, "vllm@0.11.0", true), sg = make_engine_setup(c, "sglang@0.5.5", true);
    const auto costs = [&](const ModelConfig& m, const Scheme& s, const GpuProfile& g) { return scheme_costs(m, tensor_inventory(m), s, KvFormat{}, g); };
    const LinearKernel k = linear_kernel(costs(moe, w4, h100), moe, h100, v, KernelFamily::W4A16, 64);
    BOOST_TEST((k.family == KernelFamily::W4A16Moe));
    BOOST_TEST(k.rows == 4);  // 64 x 8 / 128
    BOOST_TEST(k.measured_moe);
    BOOST_TEST(!linear_kernel(costs(moe, w4, h100), moe, h100, sg, KernelFamily::W4A16, 64).measured_moe);
    BOOST_TEST(!linear_kernel(costs(dense, w4, h100), dense, h100, v, KernelFamily::W4A16, 64).measured_moe);
    // gpt-oss's MXFP4 experts take vLLM's own MXFP4 MoE curve (its triton_kernels MoE) on Hopper,
    // at the rows each expert sees; under SGLang and on an A100 (no such curve) the dense W4A16
    // curve over every GPU.
    const LinearKernel mx = linear_kernel(costs(fp4, parse_scheme("native"), h100), fp4, h100, v, KernelFamily::W4A16, 64);
    BOOST_TEST((mx.family == KernelFamily::Mxfp4Moe));
    BOOST_TEST(mx.rows == 8);  // 64 x 4 / 32
    BOOST_TEST(mx.measured_moe);
    BOOST_TEST(!linear_kernel(costs(fp4, parse_scheme("native"), h100), fp4, h100, sg, KernelFamily::W4A16, 64).measured_moe);
    BOOST_TEST(linear_kernel(costs(fp4, parse_scheme("native"), h100), fp4, h100, sg, KernelFamily::W4A16, 64).all_gpus);
    BOOST_TEST(!linear_kernel(costs(fp4, parse_scheme("native"), test::bundled_gpu("a100-80gb")), fp4, test::bundled_gpu("a100-80gb"), v,
                              KernelFamily::W4A16, 64)
                    .measured_moe);
    const GpuProfile a100 = test::bundled_gpu("a100-80gb");
    BOOST_TEST(!linear_kernel(costs(moe, w4, a100), moe, a100, v, KernelFamily::W4A16, 64).measured_moe);

    // The plan's band says so: covered for vLLM's MoE (its Marlin MoE curve) and for SGLang's dense
    // W4A16 on the H100 (Marlin, timed by the humming runs); widened for vLLM's dense W4A16 there
    // (Machete, untimed) and on a GPU with no W4A16 curve (the L40S).
    for (const auto& [model, gpu, eng, covered] :
         {std::tuple{"qwen3-30b-a3b", "h100-sxm", "vllm@0.11.0", true}, std::tuple{"qwen3-8b", "h100-sxm", "sglang@0.5.5", true},
          std::tuple{"qwen3-8b", "h100-sxm", "vllm@0.11.0", false}, std::tuple{"qwen3-8b", "l40s", "sglang@0.5.5", false}}) {
        PlanRequest r = bf16_and_w4_request(model, gpu);
        r.engine = make_engine_setup(c, eng, true);
        const PlanResult p = plan(r);
        BOOST_TEST_REQUIRE(p.schemes[1].bands.has_value());
        BOOST_TEST(p.schemes[1].bands->covered == covered, model << " on " << gpu << " with " << eng);
    }
}

// Dense W4A16 on Hopper under SGLang (whose mixed-precision kernels are Marlin's) is priced from
// vLLM's Marlin GEMM as the humming benchmark runs timed it
// (N = K = 8192, M = 1 to 8,192) on each of the H100, H200 and H20, not from the A100's curve: the
// H100's curve at M = 1 is the run's roofline / measured time (33.6 MB of int4 weights, channelwise
// scales and activations read in 26.97 us: 0.37 of the bandwidth).
BOOST_AUTO_TEST_CASE(dense_w4a16_on_hopper_takes_vllms_marlin_gemm_as_timed_on_each_gpu) {
    const EngineCatalog& c = catalog();
    for (const char* gpu : {"h100-sxm", "h200", "h20"}) {
        const CurveLookup found = find_curve(c.kernels, gpu, "sm_90", KernelFamily::W4A16);
        BOOST_TEST_REQUIRE(found.curve != nullptr, gpu);
        BOOST_TEST(found.coverage == "gpu", gpu);
        BOOST_TEST(found.curve->m.size() == 14u);
        BOOST_TEST(found.curve->m.back() == 8192);  // the aiconfigurator tables' range (the runs' 16,384 row left out)
    }
    const std::optional<double> measured_s = corpus_value("humming/marlin-w4a16-hopper.json", "humming/h100-sxm/marlin-w4a16/m1-n8192-k8192");
    BOOST_TEST_REQUIRE(measured_s.has_value());
    BOOST_TEST(*measured_s == 0.02696755557161172e-3, boost::test_tools::tolerance(1e-12));
    const GpuProfile h100 = test::bundled_gpu("h100-sxm");
    const double bytes = 8192.0 * 8192 * 0.5 + 2.0 * 1 * (8192 + 8192);
    const double fraction = bytes / h100.memory_bandwidth_bytes_per_s / *measured_s;
    BOOST_TEST(find_curve(c.kernels, "h100-sxm", "sm_90", KernelFamily::W4A16).curve->fraction.front() == fraction, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(fraction > 0.36);
    BOOST_TEST(fraction < 0.38);
    // The all-GPU curve stays within the range every source times; FP4 experts (gpt-oss's MXFP4)
    // take it under SGLang, not the H100's Marlin curve; under vLLM they take vLLM's own MXFP4 MoE
    // curve (its triton_kernels MoE, timed on this GPU).
    BOOST_TEST(c.kernels.any_gpu.at(KernelFamily::W4A16).m.back() == 8192);
    const ModelConfig fp4 = test::bundled_model("gpt-oss-20b");
    const EngineSetup v = make_engine_setup(c, "vllm@0.11.0", true);
    const EngineSetup sg = make_engine_setup(c, "sglang@0.5.5", true);
    const SchemeCosts costs = scheme_costs(fp4, tensor_inventory(fp4), parse_scheme("native"), KvFormat{}, h100);
    const LinearKernel k = linear_kernel(costs, fp4, h100, sg, KernelFamily::W4A16, 64);
    BOOST_TEST(k.all_gpus);
    BOOST_TEST(!k.measured_moe);
    Workload w;
    BOOST_TEST(engine_decode_step(costs, fp4, h100, sg, w, 64, 1024).linear_coverage == "other_gpus");
    BOOST_TEST(engine_decode_step(costs, fp4, h100, v, w, 64, 1024).linear_coverage == "gpu");
    // vLLM's dense W4A16 on Hopper runs Machete, untimed: the all-GPU curve; SGLang's the H100's.
    const ModelConfig dense = test::bundled_model("qwen3-8b");
    const SchemeCosts w4 = scheme_costs(dense, tensor_inventory(dense), parse_scheme("w4a16-g128"), KvFormat{}, h100);
    BOOST_TEST(engine_decode_step(w4, dense, h100, v, w, 64, 1024).linear_coverage == "other_gpus");
    BOOST_TEST(engine_decode_step(w4, dense, h100, make_engine_setup(c, "sglang@0.5.5", true), w, 64, 1024).linear_coverage == "gpu");
    const GpuProfile a100 = test::bundled_gpu("a100-80gb");
    const SchemeCosts w4_a100 = scheme_costs(dense, tensor_inventory(dense), parse_scheme("w4a16-g128"), KvFormat{}, a100);
    BOOST_TEST(engine_decode_step(w4_a100, dense, a100, v, w, 64, 1024).linear_coverage == "gpu");  // Ampere: no Machete
}

// FP8 with per-channel scales and FP8 with 128x128 weight blocks run different kernels, timed apart
// by the aiconfigurator tables (gemm_dtype "fp8" and "fp8_block"); each scheme takes its own
// kernel's curve, and a block kernel's median was never pooled into the per-channel one (on a B200
// the per-channel CUTLASS GEMM at M = 8, n = k = 8192 is 18.9 us, the block DeepGEMM 177 us).
BOOST_AUTO_TEST_CASE(fp8_per_channel_and_block_scaled_gemms_take_their_own_curves) {
    BOOST_TEST(static_cast<int>(linear_family(parse_scheme("w8a8-fp8"), true)) == static_cast<int>(KernelFamily::Fp8W8A8));
    BOOST_TEST(static_cast<int>(linear_family(parse_scheme("w8a8-fp8-block128"), true)) == static_cast<int>(KernelFamily::Fp8BlockW8A8));
    BOOST_TEST(static_cast<int>(linear_family(parse_scheme("w8a8-fp8-block128"), false)) == static_cast<int>(KernelFamily::W8A16));
    BOOST_TEST(static_cast<int>(parse_kernel_family("fp8_block_w8a8", "f")) == static_cast<int>(KernelFamily::Fp8BlockW8A8));
    BOOST_TEST(std::string(kernel_family_name(KernelFamily::Fp8BlockW8A8)) == "fp8_block_w8a8");
    const EngineCatalog& c = catalog();
    const std::optional<double> channel_s = corpus_value("aiconfigurator/b200-vllm.json", "aic/b200/vllm/gemm/fp8/m8-n8192-k8192");
    const std::optional<double> block_s = corpus_value("aiconfigurator/b200-vllm.json", "aic/b200/vllm/gemm/fp8_block/m8-n8192-k8192");
    BOOST_TEST_REQUIRE(channel_s.has_value());
    BOOST_TEST_REQUIRE(block_s.has_value());
    BOOST_TEST(*block_s > 5 * *channel_s);
    for (const char* gpu : {"h100-sxm", "h200", "b200"}) {
        const CurveLookup channel = find_curve(c.kernels, gpu, "", KernelFamily::Fp8W8A8);
        const CurveLookup block = find_curve(c.kernels, gpu, "", KernelFamily::Fp8BlockW8A8);
        BOOST_TEST_REQUIRE(channel.curve != nullptr, gpu);
        BOOST_TEST_REQUIRE(block.curve != nullptr, gpu);
        BOOST_TEST(channel.coverage == "gpu", gpu);
        BOOST_TEST(block.coverage == "gpu", gpu);
        BOOST_TEST(channel.curve->at(8) > 1.5 * block.curve->at(8), gpu);  // each its own kernel's
    }
    // The B200's per-channel curve is the CUTLASS kernel's: 0.37 of the bandwidth roofline at M = 8
    // (the pooled median was 0.29).
    BOOST_TEST(find_curve(c.kernels, "b200", "", KernelFamily::Fp8W8A8).curve->at(8) > 0.35);
}

// The engine-priced plan finds its crossovers on a sparse grid (densely to batch 64, then every
// 2%, bisected where the order flips): the same flips, at the same batches, as the full per-batch scan over every batch up to 4096,
// on dense and MoE models, Hopper, Ada and Ampere, vLLM and SGLang.
BOOST_AUTO_TEST_CASE(the_engine_plans_sparse_crossover_search_finds_every_flip_of_the_full_scan) {
    std::size_t flips = 0, flips_on_grid = 0;
    for (const auto& [model, gpu, eng] : {std::tuple{"qwen3-8b", "h100-sxm", "vllm@0.11.0"}, std::tuple{"llama-3.1-70b", "h100-sxm", "sglang@0.5.5"},
                                          std::tuple{"qwen3-8b", "rtx-4090", "vllm@0.10.1"}, std::tuple{"qwen3-30b-a3b", "a100-80gb", "vllm@0.11.0"},
                                          std::tuple{"llama-3.1-8b", "a100-80gb", "vllm@0.6.3"}}) {
        PlanRequest r = bf16_and_w4_request(model, gpu);
        r.schemes = {parse_scheme("bf16"), parse_scheme("w8a16-int8"), parse_scheme("w4a16-g128"), parse_scheme("w4a16-g32"), parse_scheme("w8a8-int8"),
                     parse_scheme("w8a8-fp8")};
        if (std::string(gpu) == "a100-80gb") r.schemes.pop_back();  // no FP8 tensor cores
        r.workload.tensor_parallel = std::string(model) == "llama-3.1-70b" ? 4 : 1;
        r.crossover_max_batch = 4096;
        r.engine = make_engine_setup(catalog(), eng, true);
        const PlanResult p = plan(r);
        std::vector<Crossover> full;
        for (std::size_t i = 0; i < p.schemes.size(); ++i)
            for (std::size_t j = i + 1; j < p.schemes.size(); ++j) {
                std::vector<double> a, b;
                for (std::int64_t batch = 1; batch <= r.crossover_max_batch; ++batch) {
                    a.push_back(priced_decode_step(r, p.schemes[i].costs, batch, r.workload.context_tokens).time_s);
                    b.push_back(priced_decode_step(r, p.schemes[j].costs, batch, r.workload.context_tokens).time_s);
                }
                for (const Crossover& c : numeric_crossovers(scheme_name(p.schemes[i].costs.scheme), a, scheme_name(p.schemes[j].costs.scheme), b))
                    full.push_back(c);
            }
        // A flip and its flip back inside one interval of the plan's grid (sparse_numeric_crossovers'
        // defaults: every batch to 64, then max(g + 1, ceil(1.02 g))) leave the order the same at
        // both grid points: the contract of that search (roofline.h), which cannot see them and does
        // not report them (bf16 and w8a16-int8 on the RTX 4090 swap at 321 and back at 322, both
        // between the grid's 319 and 326). Such pairs of the scan go before the comparison; any
        // other flip the grid missed still fails.
        std::vector<std::int64_t> grid;
        for (std::int64_t g = 64; g < r.crossover_max_batch;) {
            grid.push_back(g);
            g = std::max(g + 1, static_cast<std::int64_t>(std::ceil(static_cast<double>(g) * 1.02)));
        }
        grid.push_back(r.crossover_max_batch);
        const auto interval = [&](double batch) {  // index of the grid interval (g_k, g_k+1] holding it
            return static_cast<std::size_t>(std::lower_bound(grid.begin(), grid.end(), static_cast<std::int64_t>(batch)) - grid.begin());
        };
        for (std::size_t k = 0; k + 1 < full.size();) {
            const Crossover& x = full[k];
            const Crossover& y = full[k + 1];
            if (x.scheme_a == y.scheme_a && x.scheme_b == y.scheme_b && x.batch > 64 && interval(x.batch) == interval(y.batch)) {
                BOOST_TEST_MESSAGE(model << " on " << gpu << ": " << x.scheme_a << " / " << x.scheme_b << " flip and flip back at " << x.batch << " and " << y.batch);
                full.erase(full.begin() + static_cast<std::ptrdiff_t>(k), full.begin() + static_cast<std::ptrdiff_t>(k) + 2);
                continue;
            }
            ++k;
        }
        BOOST_TEST_REQUIRE(p.crossovers.size() == full.size(), model << " on " << gpu);
        for (std::size_t k = 0; k < full.size(); ++k) {
            BOOST_TEST(p.crossovers[k].scheme_a == full[k].scheme_a);
            BOOST_TEST(p.crossovers[k].scheme_b == full[k].scheme_b);
            BOOST_TEST(p.crossovers[k].batch == full[k].batch, model << " on " << gpu << ": " << full[k].scheme_a << " / " << full[k].scheme_b);
            BOOST_TEST(p.crossovers[k].faster_below == full[k].faster_below);
        }
        for (const Crossover& c : full) flips_on_grid += c.batch > 64 ? 1 : 0;
        flips += full.size();
    }
    BOOST_TEST(flips >= 20u);
    BOOST_TEST_MESSAGE(flips << " flips, " << flips_on_grid << " above batch 64");
    BOOST_TEST(flips_on_grid >= 15u);  // flips the grid must find (24 of the 43 when written, up to batch 3726)
}

// The plan prices every scheme, the bf16 baseline included, as the chosen engine serves the model,
// under the roofline profiles too: with SGLang, zephyr-7b-beta at 32,768 tokens caches and reads
// every token of every layer (no sliding_attention in its layout), and bf16's speedup is 1; with
// vLLM the window stays.
BOOST_AUTO_TEST_CASE(the_plan_prices_a_model_wide_window_as_the_engine_serves_it) {
    PlanRequest r = bf16_and_w4_request("zephyr-7b-beta", "h100-sxm");
    r.workload.context_tokens = 32768;
    for (const bool price_steps : {false, true}) {
        r.engine = make_engine_setup(catalog(), "sglang@0.5.5", price_steps);
        const PlanResult sg = plan(r);
        r.engine = make_engine_setup(catalog(), "vllm@0.11.0", price_steps);
        const PlanResult v = plan(r);
        for (std::size_t i = 0; i < sg.schemes.size(); ++i) {
            BOOST_TEST(sg.schemes[i].costs.sliding_layers == 0, price_steps);
            BOOST_TEST(sg.schemes[i].costs.full_layers == 32, price_steps);
            BOOST_TEST(v.schemes[i].costs.sliding_layers == 32, price_steps);
            // The window's reads: 4,096 of 32,768 tokens per layer under vLLM.
            BOOST_TEST(sg.schemes[i].decode.kv_bytes == 8 * v.schemes[i].decode.kv_bytes, price_steps);
        }
        BOOST_TEST(std::abs(sg.schemes[0].speedup_vs_bf16 - 1.0) < 1e-12, price_steps);
        BOOST_TEST(std::abs(v.schemes[0].speedup_vs_bf16 - 1.0) < 1e-12, price_steps);
    }
}

// vLLM V0 turns chunked prefill on by itself above a max_model_len of 32768, with chunks of 512
// tokens up to 0.6.4 and 2048 from 0.6.5; below it a prompt is prefilled in one forward.
BOOST_AUTO_TEST_CASE(v0_chunked_prefill_follows_max_model_len_and_version) {
    const EngineSetup v0 = make_engine_setup(catalog(), "vllm@0.6.3", true);
    const EngineDefaults& d = v0.profile.defaults;
    const EngineDefaults short_len = defaults_for_max_model_len(d, "0.6.3", 32768);
    BOOST_TEST(!short_len.chunked_prefill);
    BOOST_TEST(short_len.max_num_batched_tokens == 32768);
    BOOST_TEST(defaults_for_max_model_len(d, "0.6.3", 1024).max_num_batched_tokens == 2048);  // max(max_model_len, 2048)
    const EngineDefaults old_long = defaults_for_max_model_len(d, "0.6.3", 65536);
    BOOST_TEST(old_long.chunked_prefill);
    BOOST_TEST(old_long.max_num_batched_tokens == 512);
    BOOST_TEST(defaults_for_max_model_len(d, "0.6.5", 65536).max_num_batched_tokens == 2048);
    BOOST_TEST(defaults_for_max_model_len(d, "0.7.3", 65536).max_num_batched_tokens == 2048);
    BOOST_TEST(defaults_for_max_model_len(d, "", 65536).max_num_batched_tokens == 2048);  // the newest in range
    // V1 and SGLang keep their defaults whatever max_model_len is.
    for (const char* e : {"vllm@0.10.1", "sglang@0.4.6"}) {
        const EngineDefaults v = make_engine_setup(catalog(), e, true).profile.defaults;
        const EngineDefaults same = defaults_for_max_model_len(v, "", 131072);
        BOOST_TEST(same.chunked_prefill == v.chunked_prefill, e);
        BOOST_TEST(same.max_num_batched_tokens == v.max_num_batched_tokens, e);
    }
    // The prefill runs in as many chunks as the rule gives.
    const ModelConfig m = test::bundled_model("qwen2.5-7b-instruct");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    Workload w;
    w.engine.max_num_batched_tokens = short_len.max_num_batched_tokens;
    BOOST_TEST(engine_prefill(c, m, gpu, v0, w, 30720).chunks == 1);
    w.engine.max_num_batched_tokens = old_long.max_num_batched_tokens;
    BOOST_TEST(engine_prefill(c, m, gpu, v0, w, 30720).chunks == 60);
}

// vLLM runs AWQ checkpoints with Marlin from 0.5.3 (PR #6612); before, its own AWQ GEMM kernel,
// priced as the generic dequant family under its own kernel scale.
BOOST_AUTO_TEST_CASE(awq_before_marlin_is_priced_as_generic_dequant) {
    const EngineDefaults v0 = make_engine_setup(catalog(), "vllm@0.4.2", true).profile.defaults;
    BOOST_TEST(awq_without_marlin(v0, "0.4.2"));
    BOOST_TEST(awq_without_marlin(v0, "0.5.2"));
    BOOST_TEST(!awq_without_marlin(v0, "0.5.3"));
    BOOST_TEST(!awq_without_marlin(v0, ""));
    BOOST_TEST(!awq_without_marlin(make_engine_setup(catalog(), "vllm@0.10.1", true).profile.defaults, "0.10.1"));
    const Scheme w4 = parse_scheme("w4a16-g128");
    BOOST_TEST(kernel_scale_key(w4, false, true) == "4bit-generic");
    BOOST_TEST(kernel_scale_key(w4, true, true) == "4bit-generic-moe");
    // The fit found the 0.4.2 AWQ rows slower than Marlin's: their scale is its own.
    const EngineSetup s = make_engine_setup(catalog(), "vllm@0.4.2", true);
    BOOST_TEST(s.profile.step.kernel_scale_by_family.count("4bit-generic") == 1u);
    const ModelConfig m = test::bundled_model("qwen2-7b-instruct");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), w4, parse_kv_format("bf16"), gpu);
    Workload fused, generic;
    generic.kernel = KernelQuality::Generic;
    BOOST_TEST(engine_decode_step(c, m, gpu, s, generic, 1, 4096).time_s > engine_decode_step(c, m, gpu, s, fused, 1, 4096).time_s);
}

// An eager step blends the GPU's time and the host's launch time: (G^p + H^p)^(1/p), which is
// the larger of the two as p grows and never less than either.
BOOST_AUTO_TEST_CASE(eager_step_blends_gpu_and_host_time) {
    BOOST_TEST(std::abs(eager_step_s(3.0, 4.0, 2.0) - 5.0) < 1e-12);
    BOOST_TEST(std::abs(eager_step_s(1.0, 1.0, 3.0) - std::cbrt(2.0)) < 1e-12);
    BOOST_TEST(std::abs(eager_step_s(2.0, 1.0, 1.5) - std::pow(std::pow(2.0, 1.5) + 1.0, 1.0 / 1.5)) < 1e-12);
    BOOST_TEST(std::abs(eager_step_s(10.0, 3.0, 40.0) - 10.0) < 1e-9);
    BOOST_TEST(eager_step_s(2.0, 0.0, 3.0) == 2.0);  // no host term
    BOOST_TEST(eager_step_s(2.0, 5.0, 0.0) == 2.0);  // no exponent fitted
    for (const double p : {1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 7.5}) {
        const double t = eager_step_s(0.004, 0.003, p);
        BOOST_TEST(t >= 0.004);
        BOOST_TEST(t <= 0.007 + 1e-15);
    }
}

// A plan takes the host cost of the fitted version at or below the one asked; an older one the
// lowest fitted; the newest ("") the highest.
BOOST_AUTO_TEST_CASE(eager_host_cost_is_the_nearest_fitted_version_below) {
    StepTerms t;
    BOOST_TEST(t.eager_host_for("0.6.3") == nullptr);
    t.eager_host = {{"0.4", 3.6e-4, 43}, {"0.6", 4.4e-5, 50}, {"0.9", 4.9e-4, 2}};
    BOOST_TEST(t.eager_host_for("0.4.2")->version == "0.4");
    BOOST_TEST(t.eager_host_for("0.5.4")->version == "0.4");
    BOOST_TEST(t.eager_host_for("0.6.3.post1")->version == "0.6");
    BOOST_TEST(t.eager_host_for("0.8.5")->version == "0.6");
    BOOST_TEST(t.eager_host_for("0.19.1rc1.dev339")->version == "0.9");
    BOOST_TEST(t.eager_host_for("0.3.3")->version == "0.4");
    BOOST_TEST(t.eager_host_for("")->version == "0.9");
}

// With CUDA graphs off every decode step pays the fitted eager cost per layer on the GPU and waits
// for the host's launches of its version: time = eager_step_s(gpu time, layers x host per layer).
BOOST_AUTO_TEST_CASE(eager_decode_steps_pay_the_fitted_launch_cost) {
    const ModelConfig m = test::bundled_model("qwen3-8b");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    const EngineSetup graphs = make_engine_setup(catalog(), "vllm@0.9.1", true);
    EngineSetup eager = graphs;
    eager.profile.defaults.cuda_graphs = false;
    const StepTerms& t = graphs.profile.step;
    const EagerHostCost* host = t.eager_host_for("0.9.1");
    BOOST_TEST_REQUIRE(host != nullptr);
    BOOST_TEST(host->version == "0.9");  // vLLM #20469's --enforce-eager runs
    BOOST_TEST_REQUIRE(host->per_layer_s > 0.0);
    BOOST_TEST_REQUIRE(t.eager_blend_exponent > 0.0);
    const Workload w;
    const EngineStep g = engine_decode_step(c, m, gpu, graphs, w, 1, 4096), e = engine_decode_step(c, m, gpu, eager, w, 1, 4096);
    const double layers = static_cast<double>(m.num_layers);
    BOOST_TEST(g.host_s == 0.0);
    BOOST_TEST(g.time_s == g.gpu_s);
    BOOST_TEST(std::abs(e.gpu_s - g.gpu_s - layers * t.eager_per_layer_s) < 1e-12);
    BOOST_TEST(std::abs(e.host_s - layers * host->per_layer_s) < 1e-15);
    BOOST_TEST(std::abs(e.time_s - eager_step_s(e.gpu_s, e.host_s, t.eager_blend_exponent)) < 1e-15);
    BOOST_TEST(e.time_s > std::max(e.gpu_s, e.host_s));
}

// The fit finds vLLM 0.4's host launches far slower than 0.6's: Qwen2's 0.4.2 rows past 8,192
// tokens decode at about the same step time whatever the scheme (Qwen2-1.5B: 83.7 to 98.6 tokens/s
// against 164 to 174 below); Qwen2.5's 0.6.3 rows barely slow down.
BOOST_AUTO_TEST_CASE(eager_host_cost_is_fitted_per_minor_version) {
    const EngineSetup v0 = make_engine_setup(catalog(), "vllm@0.6.3", true);
    const EagerHostCost* v04 = v0.profile.step.eager_host_for("0.4.2");
    const EagerHostCost* v06 = v0.profile.step.eager_host_for("0.6.3");
    BOOST_TEST_REQUIRE((v04 && v06));
    BOOST_TEST(v04->version == "0.4");
    BOOST_TEST(v06->version == "0.6");
    BOOST_TEST(v04->per_layer_s > 4.0 * v06->per_layer_s);
    BOOST_TEST(v04->points > 20);
    // Qwen2-1.5B GPTQ-Int4 at 14,336 tokens on an A100 (vLLM 0.4.2): 97.7 tokens/s measured; the
    // eager step is the host's, so the prediction lands near it (within 15%), far from the
    // CUDA-graph speed of 174 tokens/s below 8,192.
    const ModelConfig m = test::bundled_model("qwen2-1.5b-instruct");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("w4a16-g128-sym"), parse_kv_format("bf16"), gpu);
    const EngineSetup v042 = make_engine_setup(catalog(), "vllm@0.4.2", true);
    const Workload w;
    const EngineStep long_step = engine_decode_step(c, m, gpu, v042, w, 1, 14336 + 1024);
    BOOST_TEST(long_step.host_s > long_step.gpu_s);
    BOOST_TEST(std::abs(1.0 / long_step.time_s / 97.7 - 1.0) < 0.15, 1.0 / long_step.time_s);
}

// Qwen3.5-27B keeps its DeltaNet state in float32 (mamba_ssm_dtype): 48 layers of 3,145,728
// state bytes and 61,440 conv bytes per sequence, and vLLM pads the attention block to that page,
// 784 tokens. vLLM issue #40691 (0.19.0 on an H20, max_model_len 32768) logs "GPU KV cache size:
// 290,864 tokens", 371 blocks of 784; with a bf16 state the block would be 400.
BOOST_AUTO_TEST_CASE(qwen3_5_state_in_float32_sets_vllm_s_block) {
    PlanRequest r;
    r.model = test::bundled_model("qwen3.5-27b");
    r.gpu = test::bundled_gpu("h20");
    r.efficiency = builtin_efficiency_profile("realistic");
    r.schemes = {parse_scheme("bf16")};
    r.engine = make_engine_setup(catalog(), "vllm@0.19.0", true);
    r.workload.context_tokens = 32768;
    r.workload.engine.max_num_seqs = 16;
    r.workload.engine.max_num_batched_tokens = 16384;
    const Admission a = plan(r).schemes[0].admission;
    BOOST_TEST(a.state_bytes_per_sequence == 48u * (3'145'728u + 61'440u));
    BOOST_TEST(a.kv_block_tokens == 784);
    BOOST_TEST(290'864 % a.kv_block_tokens == 0);
    r.model.linear_state_value_bytes = 2;
    BOOST_TEST(plan(r).schemes[0].admission.kv_block_tokens == 400);
}

// The per-layer cost is fitted on decoder layers that hold a token mixer and an MLP; Nemotron-H's
// 118 layers hold one each (54 Mamba2, 10 attention, 54 MLP), so it pays for 59, and its
// attention-like kernels are called 64 times a step (its mixers), not 118.
BOOST_AUTO_TEST_CASE(a_hybrid_stack_pays_the_per_layer_cost_per_pair_of_layers) {
    const ModelConfig m = test::bundled_model("nemotron-h-56b-base-8k");
    BOOST_TEST(m.per_layer_cost_layers() == 59);
    BOOST_TEST(m.token_mixer_layers() == 64);
    const ModelConfig dense = test::bundled_model("qwen3-8b");
    BOOST_TEST(dense.per_layer_cost_layers() == dense.num_layers);
    const GpuProfile gpu = test::bundled_gpu("h200");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    const EngineSetup s = make_engine_setup(catalog(), "vllm", true);
    BOOST_TEST_REQUIRE(s.profile.step.per_layer_s > 0.0);
    const Workload w;
    BOOST_TEST(std::abs(engine_decode_step(c, m, gpu, s, w, 1, 4096).layers_s - 59.0 * s.profile.step.per_layer_s) < 1e-12);
}

// vLLM V0 replays a captured graph only while the sequence is at most max_seq_len_to_capture
// (8192): a longer decode step pays the eager cost (vllm/worker/model_runner.py, v0.4.2 and v0.6.3).
// V1 captures by batch size only.
BOOST_AUTO_TEST_CASE(vllm_v0_decodes_past_8192_tokens_eager) {
    const ModelConfig m = test::bundled_model("qwen3-8b");
    const GpuProfile gpu = test::bundled_gpu("a100-80gb");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    const EngineSetup v0 = make_engine_setup(catalog(), "vllm@0.6.3", true);
    BOOST_TEST(v0.profile.defaults.cuda_graph_max_seq_len == 8192);
    BOOST_TEST(decode_uses_cuda_graphs(v0.profile.defaults, 8192));
    BOOST_TEST(!decode_uses_cuda_graphs(v0.profile.defaults, 8193));
    const EngineSetup v1 = make_engine_setup(catalog(), "vllm", true);
    BOOST_TEST(decode_uses_cuda_graphs(v1.profile.defaults, 1 << 20));
    BOOST_TEST(eager_decode_steps(v0.profile.defaults, 8000, 2047) == 8000 + 2047 - 1 - 8192);
    BOOST_TEST(eager_decode_steps(v0.profile.defaults, 9000, 100) == 100);
    BOOST_TEST(eager_decode_steps(v0.profile.defaults, 100, 100) == 0);
    BOOST_TEST(eager_decode_steps(v1.profile.defaults, 9000, 100) == 0);
    BOOST_TEST_REQUIRE(v0.profile.step.eager_per_layer_s > 0.0);
    const Workload w;
    const EngineStep below = engine_decode_step(c, m, gpu, v0, w, 1, 8192), above = engine_decode_step(c, m, gpu, v0, w, 1, 8193);
    BOOST_TEST(std::abs(above.layers_s - below.layers_s - static_cast<double>(m.num_layers) * v0.profile.step.eager_per_layer_s) < 1e-12);
    BOOST_TEST(below.host_s == 0.0);
    BOOST_TEST(std::abs(above.host_s - static_cast<double>(m.num_layers) * v0.profile.step.eager_host_for("0.6.3")->per_layer_s) < 1e-15);
    BOOST_TEST(above.time_s > above.gpu_s);
    BOOST_TEST(engine_decode_step(c, m, gpu, v1, w, 1, 8193).layers_s == engine_decode_step(c, m, gpu, v1, w, 1, 8192).layers_s);
}

// The largest captured decode batch, per engine version, GPU memory and TP, as each version's source
// sets it (docs/engine-sources.md, docs/engine-sources-load.md), and the padding to the captured sizes.
BOOST_AUTO_TEST_CASE(decode_batches_pad_to_the_captured_sizes_and_run_eager_above_the_largest) {
    const auto max_batch = [](const char* engine, const char* gpu_id, std::int64_t tp, std::int64_t tokens = 8192) {
        const EngineSetup s = make_engine_setup(catalog(), engine, true);
        const GpuProfile g = test::bundled_gpu(gpu_id);
        return cuda_graph_max_batch_for(s.profile.defaults, g.memory_usable_bytes, tp, s.choice.version_asked, tokens);
    };
    BOOST_TEST(max_batch("vllm@0.11.0", "h100-sxm", 1) == 512);
    BOOST_TEST(max_batch("vllm@0.11.0", "h100-sxm", 1, 256) == 256);  // V1 drops sizes above max_num_batched_tokens
    BOOST_TEST(max_batch("vllm@0.6.3", "h100-sxm", 1, 256) == 256);
    BOOST_TEST(max_batch("sglang@0.3.0", "rtx-4090", 1) == 160);
    BOOST_TEST(max_batch("sglang@0.4.0", "rtx-4090", 4) == 8);
    BOOST_TEST(max_batch("sglang@0.4.6", "rtx-4090", 1) == 8);
    BOOST_TEST(max_batch("sglang@0.4.6", "rtx-4090", 4) == 80);
    BOOST_TEST(max_batch("sglang@0.4.6", "h100-sxm", 1) == 160);
    BOOST_TEST(max_batch("sglang@0.4.6", "h200", 1) == 256);
    BOOST_TEST(max_batch("sglang@0.4.9", "h100-sxm", 1) == 160);
    BOOST_TEST(max_batch("sglang@0.4.9", "h200", 1) == 256);
    BOOST_TEST(max_batch("sglang@0.4.9", "mi300x", 1) == 512);
    BOOST_TEST(max_batch("sglang@0.5.4", "rtx-4090", 1) == 16);
    BOOST_TEST(max_batch("sglang@0.5.18", "rtx-4090", 1) == 24);  // what the v0.5.18 RTX 4090 log shows
    BOOST_TEST(max_batch("sglang@0.5.23", "rtx-4090", 1) == 48);
    BOOST_TEST(max_batch("sglang@0.5.4", "rtx-4090", 4) == 80);
    BOOST_TEST(max_batch("sglang@0.5.4", "a100-40gb", 1) == 32);
    BOOST_TEST(max_batch("sglang@0.5.4", "h100-sxm", 1) == 256);
    BOOST_TEST(max_batch("sglang@0.5.4", "h100-sxm", 4) == 512);

    const EngineDefaults v1 = make_engine_setup(catalog(), "vllm@0.11.0", true).profile.defaults;
    BOOST_TEST(cuda_graph_padded_batch(v1, 1, 512) == 1);
    BOOST_TEST(cuda_graph_padded_batch(v1, 3, 512) == 4);
    BOOST_TEST(cuda_graph_padded_batch(v1, 5, 512) == 8);
    BOOST_TEST(cuda_graph_padded_batch(v1, 9, 512) == 16);
    BOOST_TEST(cuda_graph_padded_batch(v1, 512, 512) == 512);
    BOOST_TEST(cuda_graph_padded_batch(v1, 513, 512) == 513);  // eager: not padded
    BOOST_TEST(cuda_graph_padded_batch(v1, 200, 100) == 200);
    const EngineDefaults sg = make_engine_setup(catalog(), "sglang@0.5.4", true).profile.defaults;
    BOOST_TEST(cuda_graph_padded_batch(sg, 9, 256) == 12);
    BOOST_TEST(cuda_graph_padded_batch(sg, 13, 256) == 16);
    BOOST_TEST(cuda_graph_padded_batch(sg, 17, 24) == 24);
    BOOST_TEST(cuda_graph_padded_batch(sg, 257, 512) == 272);
    BOOST_TEST(cuda_graph_padded_batch(sg, 513, 1024) == 544);
    BOOST_TEST(cuda_graph_padded_batch(sg, 33, 32) == 33);

    // The decode step: a padded batch prices the captured size's linears; above the largest, the
    // eager launch cost per layer and the version's host cost.
    const ModelConfig m = test::bundled_model("qwen3-8b");
    const GpuProfile gpu = test::bundled_gpu("h100-sxm");
    const SchemeCosts c = scheme_costs(m, compress_inventory(tensor_inventory(m)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    const EngineSetup s = make_engine_setup(catalog(), "vllm@0.11.0", true);
    BOOST_TEST_REQUIRE(s.profile.step.eager_per_layer_s > 0.0);
    const Workload w;
    const EngineStep nine = engine_decode_step(c, m, gpu, s, w, 9, 1024), sixteen = engine_decode_step(c, m, gpu, s, w, 16, 1024);
    BOOST_TEST(nine.graph_batch == 16);
    BOOST_TEST(std::abs(nine.linear_s - sixteen.linear_s) < 1e-4 * sixteen.linear_s);
    BOOST_TEST(nine.attention_s < sixteen.attention_s);  // the padding rows attend to nothing
    const EngineStep at = engine_decode_step(c, m, gpu, s, w, 512, 1024), past = engine_decode_step(c, m, gpu, s, w, 513, 1024);
    BOOST_TEST(!at.eager);
    BOOST_TEST(past.eager);
    BOOST_TEST(std::abs(past.layers_s - at.layers_s - static_cast<double>(m.num_layers) * s.profile.step.eager_per_layer_s) < 1e-12);
    BOOST_TEST(at.host_s == 0.0);
    BOOST_TEST_REQUIRE(s.profile.step.eager_host_for("0.11.0") != nullptr);  // the fitted 0.9 host cost
    BOOST_TEST(past.host_s > 0.0);
    BOOST_TEST(past.time_s > at.time_s);
}

// vLLM V1's hybrid allocator came with 0.9.1 (PR #17996). Before it, V1 unified a model's mixed
// sliding-window and full layers into full attention: a vLLM 0.8.4 log of Gemma 3 (PLG_AI,
// tests/data/logs) logs a concurrency of 0.53x at 131,072 tokens, its 69,920 tokens over that
// length. A model-wide window (one kind of layer) keeps its window; V0 and SGLang never group.
BOOST_AUTO_TEST_CASE(vllm_groups_mixed_sliding_layers_from_0_9_1) {
    const GpuProfile gpu = test::bundled_gpu("rtx-4090");
    const ModelConfig gemma = test::bundled_model("gemma-3-12b-it");
    const SchemeCosts c = scheme_costs(gemma, compress_inventory(tensor_inventory(gemma)), parse_scheme("w4a16-g128"), parse_kv_format("bf16"), gpu);
    BOOST_TEST_REQUIRE(c.sliding_layers > 0);
    BOOST_TEST_REQUIRE(c.full_layers > 0);
    const EngineSetup old_v1 = make_engine_setup(catalog(), "vllm@0.8.4", true), new_v1 = make_engine_setup(catalog(), "vllm@0.9.1", true);
    BOOST_TEST(!kv_groups_priced(c, old_v1.profile, "0.8.4"));
    BOOST_TEST(!kv_groups_priced(c, old_v1.profile, "0.9.0"));
    BOOST_TEST(kv_groups_priced(c, new_v1.profile, "0.9.1"));
    BOOST_TEST(kv_groups_priced(c, new_v1.profile, ""));  // the profile's newest
    BOOST_TEST(!kv_groups_priced(c, make_engine_setup(catalog(), "vllm@0.6.3", true).profile, "0.6.3"));
    BOOST_TEST(!kv_groups_priced(c, make_engine_setup(catalog(), "sglang@0.5.4", true).profile, "0.5.4"));
    // The admission at 131,072 tokens: before 0.9.1 the concurrency is the cache's tokens over the
    // length, from 0.9.1 the windows leave room for more.
    Workload w;
    w.tensor_parallel = 2;
    w.context_tokens = 131072;
    w.engine.max_num_batched_tokens = 2048;
    const Admission before = engine_admission(c, gemma, gpu, old_v1, w, 131072), after = engine_admission(c, gemma, gpu, new_v1, w, 131072);
    BOOST_TEST(std::abs(before.max_concurrency - static_cast<double>(before.kv_cache_tokens) / 131072.0) < 1e-9);
    BOOST_TEST(after.max_concurrency > 2 * before.max_concurrency);
    // Mistral-7B-v0.1's model-wide window (zephyr-7b-beta) is one kind of layer: windowed either way.
    const ModelConfig zephyr = test::bundled_model("zephyr-7b-beta");
    const SchemeCosts z = scheme_costs(zephyr, compress_inventory(tensor_inventory(zephyr)), parse_scheme("bf16"), parse_kv_format("bf16"), gpu);
    BOOST_TEST_REQUIRE(z.full_layers == 0);
    BOOST_TEST(kv_groups_priced(z, old_v1.profile, "0.8.4"));
}

// SGLang's chunked_prefill_size (its prefill batch's tokens) by GPU memory and release
// (server_args.py; docs/engine-sources.md): defaults_for_run applies it.
BOOST_AUTO_TEST_CASE(sglang_chunked_prefill_size_follows_gpu_memory_and_release) {
    const auto tokens = [](const char* engine, const char* gpu_id) {
        const EngineSetup s = make_engine_setup(catalog(), engine, true);
        const GpuProfile g = test::bundled_gpu(gpu_id);
        return defaults_for_run(s.profile, g.id, g.memory_usable_bytes, s.choice.version_asked, 4096).max_num_batched_tokens;
    };
    BOOST_TEST(tokens("sglang@0.3.0", "rtx-4090") == 8192);
    BOOST_TEST(tokens("sglang@0.4.0", "rtx-4090") == 2048);
    BOOST_TEST(tokens("sglang@0.4.6", "h100-sxm") == 8192);
    BOOST_TEST(tokens("sglang@0.4.7", "b200") == 16384);
    BOOST_TEST(tokens("sglang@0.4.6", "b200") == 8192);
    BOOST_TEST(tokens("sglang@0.4.9", "rtx-5090") == 2048);
    BOOST_TEST(tokens("sglang@0.4.9", "h200") == 8192);
    BOOST_TEST(tokens("sglang@0.5.4", "t4") == 2048);
    BOOST_TEST(tokens("sglang@0.5.4", "rtx-4090") == 2048);
    BOOST_TEST(tokens("sglang@0.5.23", "rtx-4090") == 4096);
    BOOST_TEST(tokens("sglang@0.5.4", "a100-40gb") == 4096);
    BOOST_TEST(tokens("sglang@0.5.4", "l40s") == 4096);
    BOOST_TEST(tokens("sglang@0.5.4", "h100-sxm") == 8192);
    BOOST_TEST(tokens("sglang@0.5.4", "mi300x") == 16384);
    BOOST_TEST(tokens("vllm@0.11.0", "rtx-4090") == 2048);  // vLLM's own rule, untouched
}

BOOST_AUTO_TEST_CASE(step_model_adds_its_terms_and_grows_with_batch_and_context) {
    const ModelConfig m = test::bundled_model("qwen3-8b");
    const GpuProfile gpu = test::bundled_gpu("h100-sxm");
    const auto inventory = compress_inventory(tensor_inventory(m));
    const SchemeCosts c = scheme_costs(m, inventory, parse_scheme("w4a16-g128"), parse_kv_format("bf16"), gpu);
    const EngineSetup s = make_engine_setup(catalog(), "vllm", true);
    const Workload w;
    const EngineStep a = engine_decode_step(c, m, gpu, s, w, 1, 4096);
    BOOST_TEST(std::abs(a.time_s - (a.fixed_s + a.layers_s + a.linear_s + a.lm_head_s + a.attention_s + a.communication_s)) < 1e-15);
    BOOST_TEST(std::string(kernel_family_name(a.family)) == "w4a16");
    BOOST_TEST(engine_decode_step(c, m, gpu, s, w, 64, 4096).time_s > a.time_s);
    BOOST_TEST(engine_decode_step(c, m, gpu, s, w, 1, 32768).time_s > a.time_s);
    // A step can never beat the bytes it reads at the GPU's peak bandwidth.
    BOOST_TEST(a.time_s > static_cast<double>(a.roofline.total_bytes()) / gpu.memory_bandwidth_bytes_per_s);
    EngineSetup no_terms = s;
    no_terms.profile.step = {};
    BOOST_TEST(engine_decode_step(c, m, gpu, no_terms, w, 1, 4096).time_s < a.time_s + 1e-15);
}

BOOST_AUTO_TEST_CASE(plan_under_an_engine_profile_has_bands_around_its_figures) {
    PlanRequest r = bf16_and_w4_request("qwen3-8b", "h100-sxm");
    r.engine = make_engine_setup(catalog(), "vllm", true);
    const PlanResult p = plan(r);
    for (const SchemeResult& s : p.schemes) {
        BOOST_TEST_REQUIRE(s.bands.has_value());
        const SchemeBands& b = *s.bands;
        BOOST_TEST(b.step_time_s.low <= b.step_time_s.high);
        BOOST_TEST(b.throughput_tokens_per_s.low <= b.throughput_tokens_per_s.high);
        BOOST_TEST(std::abs(b.throughput_tokens_per_s.low - static_cast<double>(s.decode.batch) / b.step_time_s.high) < 1e-9);
        BOOST_TEST(b.kv_cache_tokens.low <= b.kv_cache_tokens.high);
        BOOST_TEST(!b.basis.empty());
        BOOST_TEST(s.decode.time_s > 0);
    }
    // Without an engine profile pricing the plan, no bands (the roofline profiles are not fitted).
    r.engine->price_steps = false;
    for (const SchemeResult& s : plan(r).schemes) BOOST_TEST(!s.bands.has_value());
}

// No corpus step measures MLA attention or data-parallel expert parallelism over nodes: such a
// plan's bands say so and are widened; the throughput band counts every engine's batch.
BOOST_AUTO_TEST_CASE(unmeasured_architectures_widen_the_bands) {
    PlanRequest r;
    r.model = test::bundled_model("deepseek-v3");
    r.gpu = test::bundled_gpu("h200");
    r.efficiency = builtin_efficiency_profile("realistic");
    r.schemes = {parse_scheme("native")};
    r.engine = make_engine_setup(catalog(), "vllm", true);
    r.workload.tensor_parallel = 8;
    r.workload.expert_parallel = 16;
    r.workload.data_parallel = 2;
    r.workload.nodes = 2;
    r.workload.batch = 8;
    const SchemeResult s = plan(r).schemes[0];
    BOOST_TEST_REQUIRE(s.bands.has_value());
    BOOST_TEST(!s.bands->covered);
    for (const char* what : {"MLA attention", "data-parallel expert parallelism", "multi-node placement"})
        BOOST_TEST(s.bands->coverage_note.find(what) != std::string::npos, s.bands->coverage_note);
    BOOST_TEST(std::abs(s.bands->throughput_tokens_per_s.low - 16.0 / s.bands->step_time_s.high) < 1e-9);
}

BOOST_AUTO_TEST_CASE(fitted_parameter_file_round_trips) {
    std::ifstream in(fit_file());
    std::stringstream text;
    text << in.rdbuf();
    const FittedParameters f = parse_fitted_parameters(text.str(), "engine-fit.json");
    BOOST_TEST(fitted_parameters_json(f) == text.str());
    BOOST_TEST(test::throws_naming([] { parse_fitted_parameters(R"({"format": "quantplan-engine-fit/1", "corpus_checksum": "x", "profiles": 3})", "f"); },
                             "f.profiles"));
}

BOOST_AUTO_TEST_CASE(bands_fall_back_from_group_to_engine_to_class) {
    std::vector<Band> bands = {
        {"vllm", "4bit", FigureClass::Step, -0.2, 0.1, 3, "small"},
        {"vllm", "*", FigureClass::Step, -0.3, 0.2, 12, "engine"},
        {"*", "*", FigureClass::Step, -0.4, 0.3, 40, "class"},
        {"vllm", "bf16", FigureClass::Step, -0.05, 0.05, 9, "own"},
    };
    BOOST_TEST(find_band(bands, "vllm", "bf16", FigureClass::Step)->basis == "own");
    BOOST_TEST(find_band(bands, "vllm", "4bit", FigureClass::Step)->basis == "engine");  // 3 points: too few
    BOOST_TEST(find_band(bands, "sglang", "4bit", FigureClass::Step)->basis == "class");
    BOOST_TEST(!find_band(bands, "vllm", "bf16", FigureClass::Ttft).has_value());
}

// A ModelOpt export that declares an FP8 KV cache: under --kv auto, `native` is cached in FP8 on the
// engine versions that resolve auto to it (vLLM 0.14.0 torch_utils.resolve_kv_cache_dtype_string,
// SGLang 0.5.3 ModelRunner.init_memory_pool), in the model dtype before them, and always when --kv
// names a format. Compressed-tensors' kv_cache_scheme is not followed by vLLM's auto.
BOOST_AUTO_TEST_CASE(kv_auto_follows_a_modelopt_checkpoints_declared_kv_format) {
    std::ifstream in(test::models_dir() / "qwen3-8b" / "config.json");
    std::stringstream text;
    text << in.rdbuf();
    const auto with_quantization = [&](const nlohmann::json& q) {
        nlohmann::json j = nlohmann::json::parse(text.str());
        j["quantization_config"] = q;
        return parse_model_config(j.dump(), "qwen3-8b-modelopt");
    };
    PlanRequest r;
    r.model = with_quantization({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"kv_cache_quant_algo", "FP8"}});
    r.gpu = test::bundled_gpu("h100-sxm");
    r.efficiency = builtin_efficiency_profile("realistic");
    r.schemes = {parse_scheme("bf16"), parse_scheme("native")};
    r.workload.kv_auto = true;
    const auto priced = [&](const std::string& engine) {
        PlanRequest q = r;
        q.engine = make_engine_setup(catalog(), engine, true);
        return plan(q);
    };
    const PlanResult newest = priced("vllm");
    const SchemeResult& bf16 = newest.schemes[0];
    const SchemeResult& native = newest.schemes[1];
    BOOST_TEST(kv_format_name(bf16.costs.kv) == "bf16");
    BOOST_TEST(kv_format_name(native.costs.kv) == "fp8");
    BOOST_TEST(native.costs.note.find("as the checkpoint declares it") != std::string::npos, native.costs.note);
    // One byte per cached value instead of two: half the bytes per token, about twice the tokens.
    BOOST_TEST(2 * native.costs.kv_bytes_per_token == bf16.costs.kv_bytes_per_token);
    BOOST_TEST(native.admission.kv_cache_tokens > bf16.admission.kv_cache_tokens * 19 / 10);
    BOOST_TEST(2.0 * static_cast<double>(native.decode.kv_bytes) == static_cast<double>(bf16.decode.kv_bytes), boost::test_tools::tolerance(0.01));
    for (const auto& [engine, fp8] : std::vector<std::pair<std::string, bool>>{
             {"vllm@0.13.0", false}, {"vllm@0.14.0", true}, {"vllm@0.6.3", false}, {"sglang@0.5.2", false}, {"sglang@0.5.3", true}, {"sglang", true}})
        BOOST_TEST(kv_format_name(priced(engine).schemes[1].costs.kv) == (fp8 ? "fp8" : "bf16"), engine);
    // A format named on the command line wins.
    r.workload.kv_auto = false;
    BOOST_TEST(kv_format_name(priced("vllm").schemes[1].costs.kv) == "bf16");
    r.workload.kv_auto = true;
    // No engine profile: the workload's format.
    BOOST_TEST(kv_format_name(plan(r).schemes[1].costs.kv) == "bf16");
    // ModelOpt's config.json form may state a kv_cache_scheme instead; vLLM wants it static.
    r.model = with_quantization({{"quant_method", "modelopt"}, {"quant_algo", "FP8"},
                                 {"kv_cache_scheme", {{"type", "float"}, {"num_bits", 8}, {"dynamic", false}}}});
    BOOST_TEST(kv_format_name(priced("vllm").schemes[1].costs.kv) == "fp8");
    // llm-compressor's kv_cache_scheme: vLLM's auto keeps the model dtype.
    r.model = with_quantization({{"quant_method", "compressed-tensors"}, {"format", "float-quantized"},
                                 {"config_groups", {{"group_0", {{"targets", {"Linear"}}, {"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", "channel"}, {"symmetric", true}, {"dynamic", false}}}}}}},
                                 {"kv_cache_scheme", {{"type", "float"}, {"num_bits", 8}, {"strategy", "tensor"}, {"dynamic", false}, {"symmetric", true}}}});
    BOOST_TEST(kv_format_name(priced("vllm").schemes[1].costs.kv) == "bf16");
    // ModelOpt 0.29's hf_quant_config.json beside config.json (vLLM gives it quant_method modelopt_fp4).
    test::TempDir dir;
    std::ofstream(dir.path() / "config.json") << text.str();
    std::ofstream(dir.path() / "hf_quant_config.json")
        << R"({"producer": {"name": "modelopt", "version": "0.29.0"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "group_size": 16, "exclude_modules": ["lm_head"]}})";
    r.model = load_model_config(dir.path());
    r.gpu = test::bundled_gpu("b200");
    BOOST_TEST(kv_format_name(priced("vllm").schemes[1].costs.kv) == "fp8");
}

BOOST_AUTO_TEST_SUITE_END()
