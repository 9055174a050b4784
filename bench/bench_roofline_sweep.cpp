// Speed of the roofline: every bundled model x GPU x default scheme x batch 1..4096 (powers of
// two) x context 128..131072 (powers of two). Target (issue 3): the sweep well under 100 ms on one
// core, so the GUI can recompute on every slider move. Also times one whole plan() (what a slider
// move costs: admission, prefill, crossovers scanned over 1..4096).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "core/checkpoint/model_config_json.h"
#include "core/plan/plan.h"
#include "core/plan/sweep.h"

using namespace quantplan;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    const std::filesystem::path root = argc > 1 ? argv[1] : QUANTPLAN_SOURCE_DIR;
    const auto catalog = load_model_catalog(root / "models");
    const auto gpus = load_gpu_profiles(root / "assets" / "gpus");
    const auto batches = powers_of_two(1, 4096);
    const auto contexts = powers_of_two(128, 131072);
    std::vector<Scheme> schemes;
    for (const auto& n : default_serving_scheme_names()) schemes.push_back(parse_scheme(n));
    const EfficiencyProfile eff = builtin_efficiency_profile("realistic");

    // Costs depend on (model, scheme, KV format, GPU): prepared once, as the GUI does per model change.
    const auto t0 = Clock::now();
    std::vector<std::pair<const GpuProfile*, SchemeCosts>> costs;
    for (const auto& m : catalog) {
        if (!m.priced) continue;  // bundled for the corpus only: its architecture is not priced
        const ModelConfig model = load_model_config(root / "models" / m.name / "config.json");
        const auto inventory = tensor_inventory(model);
        for (const GpuProfile& g : gpus)
            for (const Scheme& s : schemes) costs.emplace_back(&g, scheme_costs(model, inventory, s, parse_kv_format("bf16"), g));
    }
    const auto t1 = Clock::now();
    Workload w;
    double checksum = 0;
    std::size_t configurations = 0;
    for (const auto& [gpu, c] : costs)
        for (std::int64_t l : contexts)
            for (std::int64_t b : batches) {
                checksum += decode_step(c, *gpu, eff, w, b, l).time_s;
                ++configurations;
            }
    const auto t2 = Clock::now();

    PlanRequest r;
    r.model = load_model_config(root / "models" / "qwen3-8b" / "config.json");
    r.gpu = gpus.front();
    r.efficiency = eff;
    const auto t3 = Clock::now();
    constexpr int kPlans = 20;
    for (int i = 0; i < kPlans; ++i) {
        r.workload.batch = 1 << (i % 12);
        checksum += plan(r).schemes.size();
    }
    const auto t4 = Clock::now();

    const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::printf("cost preparation: %zu (model, gpu, scheme) in %.1f ms\n", costs.size(), ms(t0, t1));
    std::printf("sweep: %zu configurations in %.2f ms = %.3g configurations/s (target: whole sweep < 100 ms)\n", configurations,
                ms(t1, t2), static_cast<double>(configurations) / (ms(t1, t2) / 1e3));
    std::printf("plan(): %.2f ms per call (six schemes, crossovers over 1..4096)\n", ms(t3, t4) / kPlans);
    std::printf("checksum %.6g\n", checksum);
    return 0;
}
