#pragma once
// The planner window's controls as one value: what a scenario step, a saved setup and the
// remembered settings hold, and how it becomes core's PlanRequest. Field names follow the command
// line, and so do the JSON keys: an option's name without its dashes, '-' written '_'
// (--gpu-mem-util -> "gpu_mem_util"). docs/gui.md lists every key.
#include <cstdint>

#include <QtCore/QJsonObject>
#include <QtCore/QString>
#include <QtCore/QStringList>

#include "core/hardware/calibration.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/plan/plan.h"

namespace quantplan::ui {

// The batch control's range (sequences decoded together): the 1 to 4,096.
inline constexpr std::int64_t kMinBatch = 1;
inline constexpr std::int64_t kMaxBatch = 4096;
// The context control's range (tokens in each sequence's KV cache): the 128 to 131,072.
inline constexpr std::int64_t kMinContextTokens = 128;
inline constexpr std::int64_t kMaxContextTokens = 131072;
// The outlier-magnitude control's range (largest activation channel / typical channel): seed 003
// walks 20x and 100x; 1x means no outliers.
inline constexpr double kMinOutlierMagnitude = 1.0;
inline constexpr double kMaxOutlierMagnitude = 200.0;

// The error-lab controls (panel b): which weight formats run the granularity ladder, which
// methods are on, the activation format and the outlier magnitude of the synthetic layer.
struct ErrorLabSetup {
    QStringList weight_formats = {QStringLiteral("int4"), QStringLiteral("int8"), QStringLiteral("fp8")};
    QString activation = QStringLiteral("bf16");  // "bf16" (16-bit, unquantized), "int8" or "fp8"
    bool gptq = false;
    bool awq = false;
    bool smoothquant = false;
    double outlier_magnitude = 20.0;               // x the typical channel's magnitude
    std::int64_t seed = 1;                         // random seed of the synthetic layer (the lab's default)

    friend bool operator==(const ErrorLabSetup&, const ErrorLabSetup&) = default;
};

// Every control of the window. Strings are the command line's values (bundled names or paths).
struct PlannerSetup {
    QString model = QStringLiteral("qwen3-8b");   // bundled name, alias, or path to a config.json / folder
    QString gpu = QStringLiteral("h100-sxm");     // bundled profile id or path to a profile JSON
    QStringList schemes;                          // scheme names; default_setup() fills the six serving ones
    std::int64_t batch = 1;                       // sequences decoded together
    std::int64_t context_tokens = 4096;           // tokens in each sequence's KV cache
    QString kv = QStringLiteral("auto");          // KV-cache dtype: "auto" or one of kv_format_names()
    QString kernel = QStringLiteral("fused");     // weight-only kernel quality: fused | generic
    QString profile = QStringLiteral("engine");     // efficiency profile: engine (fitted, the default) | realistic | ideal | measured (needs `calibration`)
    QString engine = QStringLiteral("vllm");       // engine profile, as --engine: NAME[@VERSION]
    QString calibration;                          // a --validate calibration file; empty: none (its points overlay the crossover chart)
    double gpu_memory_utilization = 0.9;          // fraction of usable GPU memory the engine takes
    std::int64_t tensor_parallel = 1;             // GPUs the model is split over
    bool expert_parallel = false;                 // MoE: whole experts over the GPUs (--ep = --dp x --tp); ignored for dense models
    std::int64_t data_parallel = 1;               // MoE with expert_parallel: data-parallel attention engines (--dp)
    std::int64_t nodes = 1;                       // nodes the GPUs span (--nodes)
    QString gpu_p2p = QStringLiteral("auto");      // peer-to-peer between the TP GPUs: auto (the GPU profile's) | on | off (--gpu-p2p)
    QString goal = QStringLiteral("throughput");  // throughput | latency
    QString accuracy = QStringLiteral("moderate");  // strict | moderate | loose
    bool reasoning_heavy = false;                 // long chains of thought (tightens the accuracy veto)
    std::int64_t max_num_batched_tokens = 8192;   // engine: tokens in one forward pass
    std::int64_t max_num_seqs = 256;              // engine: sequences the sampler is sized for
    bool enforce_eager = false;                   // engine: CUDA graphs off (--enforce-eager)
    bool mxfp4_mxfp8 = false;                     // MXFP4 experts with MXFP8 activations (--mxfp4-mxfp8)
    QString spec;                                 // speculative decoding as --spec (eagle3:3, mtp:1, ...); empty: off
    QString spec_acceptance;                      // as --spec-acceptance; empty: the published default
    ErrorLabSetup error_lab;

    friend bool operator==(const PlannerSetup&, const PlannerSetup&) = default;
};

// The window's opening setup: the command line's defaults with the six default serving schemes.
PlannerSetup default_setup();

// The setup as a JSON object with every key (the format of a scenario step, docs/gui.md).
QJsonObject setup_to_json(const PlannerSetup& setup);

// Applies the keys present in `json` over `base` and validates the result (validate_setup).
// Unknown keys other than a step's "title", "note" and "panel" are refused so that a typo cannot pass silently.
// Throws Error whose field is "<where>: <key>" for a wrong type, an unknown key or a bad value.
PlannerSetup setup_from_json(const QJsonObject& json, const PlannerSetup& base, const QString& where);

// Checks every value that does not need the data folder: numeric ranges of the window's controls,
// scheme names, KV dtype, kernel, profile, goal, accuracy and the error-lab names. Model and GPU
// names are checked when they are resolved. Throws Error naming the key.
void validate_setup(const PlannerSetup& setup, const QString& where = {});

// Core's request for `setup`, with the model and GPU already resolved (the window caches them),
// and the calibration file loaded when the setup names one (the `measured` profile needs it).
// Throws Error naming the option for values core refuses.
// With `engines` (the bundled engine profiles and their fit) the request carries the engine profile
// of `setup.engine` (its nearest corpus points, and under profile "engine" its step model, defaults
// and bands); without, profile "engine" is refused.
// With `spec_data` (the bundled speculative-decoding data) a setup's `spec` is priced
// (make_spec_plan_request); a setup with `spec` and no data is refused.
PlanRequest plan_request(const PlannerSetup& setup, const ModelConfig& model, const GpuProfile& gpu,
                         const Calibration* calibration = nullptr, const engine::EngineCatalog* engines = nullptr,
                         const SpecData* spec_data = nullptr);

}  // namespace quantplan::ui
