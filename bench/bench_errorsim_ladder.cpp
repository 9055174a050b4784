// Speed of the error lab at seed size (issue 8): the 32 x 256 layer of seed 003, five granularity
// rungs. Target: the whole ladder well under 20 ms, so the GUI can recompute on every slider move
// (with the layer cached by LayerCache; generating it is timed separately). Also times the ladder
// with each method on, activation quantization and the KV-cache lab.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/errorsim/error_lab.h"

using namespace quantplan;
using namespace quantplan::errorsim;
using Clock = std::chrono::steady_clock;

namespace {

// The target of issue 8 for one seed-sized ladder, milliseconds.
constexpr double kTargetMs = 20.0;

// Median milliseconds of `reps` calls.
double median_ms(const std::function<void()>& f, int reps) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        const auto a = Clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::string load_average() {
    std::ifstream f("/proc/loadavg");
    std::string one;
    return (f >> one) ? one : "unknown";
}

}  // namespace

int main() {
    std::printf("error lab ladder bench (32 x 256, 512 + 512 tokens), load average %s\n", load_average().c_str());
    const ErrorLabConfig base;
    LayerCache cache;
    const double gen = median_ms([&] { generate_layer(base.layer); }, 20);
    const Layer layer = cache.get(base.layer);
    const double cached = median_ms([&] { granularity_ladder(base, cache.get(base.layer)); }, 50);
    const double fresh = median_ms([&] { granularity_ladder(base); }, 20);
    std::printf("layer generation: %.2f ms\n", gen);
    std::printf("INT4 ladder, cached layer: %.2f ms (target < %.0f ms: %s)\n", cached, kTargetMs, cached < kTargetMs ? "met" : "MISSED");
    std::printf("INT4 ladder, layer generated each call: %.2f ms\n", fresh);

    struct Variant {
        const char* name;
        std::function<void(ErrorLabConfig&)> set;
    };
    const Variant variants[] = {
        {"INT8 weights", [](ErrorLabConfig& c) { c.weights.format = DType::Int8; c.weights.symmetric = true; }},
        {"FP8 weights", [](ErrorLabConfig& c) { c.weights.format = DType::Fp8E4M3; c.weights.symmetric = true; }},
        {"GPTQ", [](ErrorLabConfig& c) { c.methods.gptq = true; }},
        {"GPTQ act-order", [](ErrorLabConfig& c) { c.methods.gptq = c.methods.act_order = true; }},
        {"AWQ", [](ErrorLabConfig& c) { c.methods.awq = true; }},
        {"AWQ + clip search", [](ErrorLabConfig& c) { c.methods.awq = c.methods.awq_clip_search = true; }},
        {"AWQ + GPTQ", [](ErrorLabConfig& c) { c.methods.awq = c.methods.gptq = true; }},
        {"SmoothQuant, INT8 per-token activations", [](ErrorLabConfig& c) { c.methods.smoothquant = true; c.activations.format = DType::Int8; }},
        {"FP8 per-token activations", [](ErrorLabConfig& c) { c.activations.format = DType::Fp8E4M3; }},
    };
    for (const Variant& v : variants) {
        ErrorLabConfig c = base;
        v.set(c);
        std::printf("ladder, %s: %.2f ms\n", v.name, median_ms([&] { granularity_ladder(c, layer); }, 10));
    }
    KvLabConfig kv;
    std::printf("KV-cache lab (512 tokens x 8 heads x 128): %.2f ms\n", median_ms([&] { run_kv_lab(kv); }, 10));
    return 0;
}
