#pragma once
// A measured corpus point beside what the fitted engine profile predicts for it: the evidence a
// plan shows next to its figures (the nearest points of the corpus to the plan's configuration).
// A plain value, so that the roofline's results carry it without knowing the engine profiles.
#include <cstdint>
#include <string>

namespace quantplan {

// A corpus point as the fit file keeps it, so a plan can show the measurements nearest to it
// without reading the corpus: what was measured where, and what the fit predicts for it.
struct EvidencePoint {
    std::string id;            // the corpus record
    std::string metric;        // corpus metric name
    std::string engine;        // "vllm", "sglang"
    std::string engine_version;
    std::string family;        // scheme family
    std::string gpu;           // GPU id
    std::string arch;          // its compute capability ("sm_90")
    std::string model;         // bundled model name
    std::string model_type;    // config.json model_type ("qwen3", "llama")
    std::string scheme;        // quantplan scheme name
    std::int64_t batch = 1;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    double measured = 0;       // SI units (tokens/s, seconds, tokens)
    double fitted = 0;         // the fit's prediction for it
    double loo = 0;            // the same with the point left out
};

}  // namespace quantplan
