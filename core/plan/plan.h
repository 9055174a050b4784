#pragma once
// A planning run: one model, one GPU, one workload, several schemes, priced together.
#include <optional>
#include <string>
#include <vector>

#include "core/engine/step_model.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/roofline/decision.h"
#include "core/roofline/roofline.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// Everything a plan needs. Schemes empty: the default serving set (plus w4a4-nvfp4 on GPUs with
// FP4 tensor cores).
struct PlanRequest {
    ModelConfig model;
    GpuProfile gpu;
    EfficiencyProfile efficiency;
    Workload workload;
    std::vector<Scheme> schemes;
    std::int64_t crossover_max_batch = 4096;   // numeric crossover scan 1..this
    WorkloadGoal goal;                          // for the decision procedure
    // The engine profile (--engine). With price_steps, decode, prefill and the KV budget come from
    // its step model and memory rules, and every scheme gets bands; otherwise it only names the
    // engine in the JSON and the roofline of `efficiency` prices the plan.
    std::optional<engine::EngineSetup> engine;
};

// Ridge (memory -> compute) of one scheme at the plan's context.
struct RidgeInfo {
    std::string scheme;
    double batch = 0;                      // closed form, real-valued
    double flop_per_byte = 0;              // textbook ridge pi/beta of the scheme's matmul type
    double gemm_batch = 0;                 // textbook weight-GEMM ridge I* x b_w / 2 (payload bytes per weight)
};

// Textbook crossover of two schemes' weight-stationary GEMMs (payload bytes, scheme matmul rates).
struct GemmCrossover {
    std::string scheme_a;
    std::string scheme_b;
    double batch = 0;
};

// A priced plan.
struct PlanResult {
    PlanRequest request;
    ParameterCounts parameters;
    std::vector<SchemeResult> schemes;     // in request order
    std::vector<Crossover> crossovers;     // numeric, every pair, batch 1..crossover_max_batch
    std::vector<Crossover> closed_form_crossovers;  // dense models only
    std::vector<RidgeInfo> ridges;
    std::vector<GemmCrossover> gemm_crossovers;
    Decision decision;
};

// One decode step and one admission of `costs` as the plan prices them: the engine profile's step
// model and memory rules when request.engine prices steps, the roofline of request.efficiency
// otherwise. Sweeps and charts price their points with these, so they draw what the plan computed.
DecodeStep priced_decode_step(const PlanRequest& request, const SchemeCosts& costs, std::int64_t batch, std::int64_t context);
Admission priced_admission(const PlanRequest& request, const SchemeCosts& costs, const Workload& workload);

// The KV format `scheme` is cached in: workload.kv, except under --kv auto (workload.kv_auto) for
// the checkpoint as it ships (`native`) whose quantization config declares a KV format the engine
// resolves auto to (a ModelOpt FP8 KV cache: engine::kv_auto_follows_modelopt at the engine version
// asked). `note`, when given, receives the line that says so (empty otherwise).
KvFormat scheme_kv_format(const ModelConfig& model, const Scheme& scheme, const Workload& workload, const engine::EngineSetup* engine,
                          std::string* note = nullptr);

// Validates the request (batch, context, utilisation, TP) and prices every scheme. Throws Error
// naming the option for impossible inputs. A model that fits at no scheme is an answer: each
// scheme's admission says why and fits_from_tp from which TP it fits.
PlanResult plan(PlanRequest request);

// When no scheme fits at the plan's TP, one line saying so and the smallest TP that fits (and with
// which scheme); nullopt when some scheme fits.
std::optional<std::string> no_scheme_fits(const PlanResult& result);

// Validates workload numbers; throws Error("--batch" / "--context" / "--gpu-mem-util" / "--tp").
void validate_workload(const Workload& w);

}  // namespace quantplan
