// Speed of capacity planning (docs/capacity.md): 10,000 requests through the simulator with the
// engine profile's step model and the load issue's terms (the serving fit's host costs and
// frontend latency; target under 0.2 s on one core), and the highest-rate search for the six
// default schemes on one GPU (target under 2 s). Qwen3-8B on an
// H100 SXM, vLLM's newest profile, prompts of 2,000 and answers of 500 tokens, TTFT p99 <= 2 s and
// TPOT p99 <= 50 ms.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/checkpoint/model_config_json.h"
#include "core/engine/step_model.h"
#include "core/plan/plan.h"
#include "core/serve/capacity.h"

using namespace quantplan;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const std::filesystem::path root = argc > 1 ? argv[1] : QUANTPLAN_SOURCE_DIR;
    const ModelConfig model = load_model_config(root / "models" / "qwen3-8b" / "config.json");
    const GpuProfile gpu = resolve_gpu("h100-sxm", root / "assets" / "gpus");
    const engine::EngineCatalog catalog =
        engine::load_engine_catalog(root / "assets" / "engines" / "profiles", root / "assets" / "engines" / "fit" / "engine-fit.json");
    engine::EngineCatalog with_terms = catalog;
    if (const auto fit = root / "assets" / "engines" / "fit" / "serving-fit.json"; std::filesystem::exists(fit)) {
        std::ifstream in(fit);
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        engine::apply_serving_fit(with_terms, engine::parse_serving_fit(text, fit.string()));
    }
    engine::EngineSetup setup = engine::make_engine_setup(with_terms, "vllm", true);
    setup.profile.defaults = engine::defaults_for_gpu(setup.profile, gpu.id, gpu.memory_usable_bytes);
    Workload w;
    w.context_tokens = 2500;
    w.engine.gpu_memory_utilization = setup.profile.defaults.gpu_memory_utilization;
    w.engine.max_num_seqs = setup.profile.defaults.max_num_seqs;
    w.engine.max_num_batched_tokens = setup.profile.defaults.max_num_batched_tokens;
    w.engine.kv_block_tokens = setup.profile.defaults.block_size_tokens;
    const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(model));
    serve::Traffic traffic;
    traffic.requests = 10'000;
    traffic.rate_per_s = 4;
    serve::Slo slo;
    slo.ttft = serve::SloTarget{2.0, 0.99};
    slo.tpot = serve::SloTarget{0.05, 0.99};

    const SchemeCosts bf16 = scheme_costs(model, inventory, parse_scheme("bf16"), w.kv, gpu);
    const serve::EnginePricing pricing = serve::engine_pricing(bf16, model, gpu, setup, w, engine::engine_admission(bf16, model, gpu, setup, w));
    const auto t0 = Clock::now();
    const serve::ServeStats run = serve::run_traffic(traffic, pricing, slo);
    const auto t1 = Clock::now();
    std::printf("10,000 requests at 4/s (bf16): %.3f s (target < 0.2 s); TTFT p99 %.1f ms, TPOT p99 %.2f ms, %.0f output tokens/s\n",
                std::chrono::duration<double>(t1 - t0).count(), run.ttft_s.p99 * 1e3, run.tpot_s.p99 * 1e3, run.output_tokens_per_s);

    traffic.requests = 1000;  // as --serve runs by default
    const auto t2 = Clock::now();
    for (const std::string& name : default_serving_scheme_names()) {
        const SchemeCosts c = scheme_costs(model, inventory, parse_scheme(name), w.kv, gpu);
        const serve::EnginePricing p = serve::engine_pricing(c, model, gpu, setup, w, engine::engine_admission(c, model, gpu, setup, w));
        const std::optional<double> rate = serve::max_sustained_rate(traffic, p, slo);
        std::printf("  %-14s highest rate %s requests/s\n", name.c_str(), rate ? std::to_string(*rate).c_str() : "none");
    }
    const auto t3 = Clock::now();
    std::printf("highest-rate search, six schemes, 1,000 requests a run: %.3f s (target < 2 s)\n", std::chrono::duration<double>(t3 - t2).count());
    double load = 0;
    if (std::ifstream f("/proc/loadavg"); f) f >> load;
    std::printf("load average %.2f\n", load);
    return 0;
}
