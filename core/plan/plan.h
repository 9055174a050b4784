#pragma once
// A planning run: one model, one GPU, one workload, several schemes, priced together.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/speculative.h"
#include "core/engine/step_model.h"
#include "core/hardware/gpu.h"
#include "core/model/model.h"
#include "core/roofline/decision.h"
#include "core/roofline/roofline.h"
#include "core/scheme/scheme.h"

namespace quantplan {

// Speculative decoding for a plan (--spec): what runs, at which acceptance, with which fitted terms.
struct SpecPlanRequest {
    engine::SpecRequest request;
    engine::Acceptance acceptance;          // at request.k
    engine::SpecTerms terms;
    std::optional<ModelConfig> draft_model; // draft:MODEL
    std::int64_t disable_above_batch = 0;   // the engine turns speculation off above this batch (0: never)
};

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
    // Speculative decoding: each scheme's admission holds the draft's weights and cache and the
    // lookahead slots, and PlanResult::speculation prices the speculative step beside the plain one.
    std::optional<SpecPlanRequest> spec;
};

// Where a plan finds speculative decoding's data.
struct SpecData {
    const engine::SpecCatalog* catalog = nullptr;  // version limits, the published acceptance defaults, the fitted terms
    std::filesystem::path models_dir;              // a draft model's config (draft:MODEL)
};

// The speculation of --spec `spec` (METHOD:K, draft:MODEL:K) for `request` (its model and engine
// set): the acceptance of `acceptance` (--spec-acceptance) or else the published default for the
// model family and method (Error("--spec-acceptance") when none is bundled), the fitted terms of
// the request's engine, and the engine version's limits checked (check_spec_request). Throws
// Error("--spec" or "--spec-acceptance") with one line.
SpecPlanRequest make_spec_plan_request(std::string_view spec, const std::optional<std::string>& acceptance, const PlanRequest& request,
                                       const SpecData& data);

// One batch of a scheme with and without speculation.
struct SpecPoint {
    std::int64_t batch = 0;
    double plain_tpot_s = 0;
    double tpot_s = 0;                 // per output token with speculation
    double plain_tokens_per_s = 0;     // output tokens/s of the batch
    double tokens_per_s = 0;
    double speedup = 1;                // plain_tpot_s / tpot_s
    double verify_s = 0, draft_s = 0, host_s = 0;
    bool disabled = false;             // the engine runs plain steps at this batch
};

// Speculative decoding priced for one scheme.
struct SchemeSpeculation {
    std::string scheme;
    engine::DraftCost draft;
    // The checkpoint with the draft: the scheme's checkpoint (an MTP module is in it already,
    // CheckpointBudget::speculative_bytes) plus an EAGLE head's or a draft model's bytes.
    std::uint64_t checkpoint_bytes = 0;
    double mean_acceptance_length = 1;
    std::vector<SpecPoint> points;     // batches 1, 2, 4, ... up to the admitted batch and the crossover, and the plan's batch
    SpecPoint at_batch;                // at the plan's (admitted) batch
    // The first batch at which speculation stops paying (speed-up below 1), searched up to
    // PlanRequest::crossover_max_batch; nullopt when it pays at every batch searched.
    std::optional<std::int64_t> stops_paying_batch;
    bool stops_paying_admitted = false;  // the KV cache admits that batch at the plan's context
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
    std::vector<SchemeSpeculation> speculation;  // one per scheme, in order (empty without --spec)
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

// The draft of the request's --spec for a scheme's costs at tensor-parallel `tp`, and a draft
// model's own costs (bf16, cached in the scheme's KV format).
struct SpecDraft {
    engine::DraftCost cost;
    std::optional<SchemeCosts> draft_costs;
};
SpecDraft spec_draft(const PlanRequest& request, const SchemeCosts& costs, std::int64_t tp);

// The workload a scheme's admission is priced at under --spec: the draft's weights and cache and K
// lookahead slots per sequence in EngineSettings (the plain workload without --spec).
Workload spec_workload(const PlanRequest& request, const SchemeCosts& costs);

// Speculative decoding of one priced scheme (request.spec set).
SchemeSpeculation speculate(const PlanRequest& request, const SchemeResult& scheme);

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
