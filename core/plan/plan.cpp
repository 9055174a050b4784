#include "core/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "core/base/error.h"
#include "core/base/json_guard.h"
#include "core/checkpoint/model_config_json.h"
#include "core/checkpoint/quant_config.h"
#include "core/quant_methods/registry.h"

namespace quantplan {

void validate_workload(const Workload& w) {
    constexpr std::int64_t kMaxBatch = 1 << 20;
    constexpr std::int64_t kMaxContext = 1 << 24;
    if (w.batch <= 0) throw Error("--batch", "must be a positive integer, got " + std::to_string(w.batch));
    if (w.batch > kMaxBatch) throw Error("--batch", std::to_string(w.batch) + " is more than " + std::to_string(kMaxBatch));
    if (w.context_tokens <= 0) throw Error("--context", "must be a positive integer, got " + std::to_string(w.context_tokens));
    if (w.context_tokens > kMaxContext) throw Error("--context", std::to_string(w.context_tokens) + " is more than " + std::to_string(kMaxContext));
    if (!(w.engine.gpu_memory_utilization > 0.0 && w.engine.gpu_memory_utilization <= 1.0))
        throw Error("--gpu-mem-util", "must be in (0, 1], got " + std::to_string(w.engine.gpu_memory_utilization));
    if (w.tensor_parallel < 1 || w.tensor_parallel > 8)
        throw Error("--tp", "tensor-parallel degree must be 1 to 8, got " + std::to_string(w.tensor_parallel));
    if (w.engine.max_num_batched_tokens <= 0) throw Error("--max-num-batched-tokens", "must be positive");
}

namespace {

// The compressed tensor inventory of `model` (compress_inventory: equal tensors priced once), built
// once per thread for the last model asked for: the window replans the same model at every control
// change, and an MoE inventory has tens of thousands of expert tensors. Nothing keeps a pointer
// into it past plan() (budgets are priced without the per-tensor list).
const std::vector<TensorInfo>& inventory_of(const ModelConfig& model) {
    thread_local std::optional<ModelConfig> cached_model;
    thread_local std::vector<TensorInfo> cached_inventory;
    if (!cached_model || !(*cached_model == model)) {
        cached_inventory = compress_inventory(tensor_inventory(model));
        cached_model = model;
    }
    return cached_inventory;
}

// Decode, prefill and admission of one scheme: the engine profile's model when it prices the plan,
// the roofline of the efficiency profile otherwise.
struct Pricer {
    const PlanRequest& r;
    bool engine() const { return r.engine && r.engine->price_steps; }
    // A scheme's costs as the request's engine serves the model (SGLang: Mistral's window as full
    // attention), for the roofline profiles too: the engine names what runs.
    SchemeCosts costs(const std::vector<TensorInfo>& inventory, const Scheme& s, const KvFormat& kv) const {
        SchemeCosts c = scheme_costs(r.model, inventory, s, kv, r.gpu);
        return r.engine ? engine::costs_as_served(std::move(c), r.model, r.engine->profile) : c;
    }
    DecodeStep decode(const SchemeCosts& c, std::int64_t batch, std::int64_t context) const { return priced_decode_step(r, c, batch, context); }
    PrefillResult prefill(const SchemeCosts& c, std::int64_t tokens) const {
        if (!engine()) return quantplan::prefill(c, r.gpu, r.efficiency, r.workload, tokens);
        return engine::engine_prefill(c, r.model, r.gpu, *r.engine, r.workload, tokens);
    }
    Admission admit(const SchemeCosts& c) const { return priced_admission(r, c, r.workload); }
    // The roofline's step times at batches 1..max_batch (the engine's are priced where the
    // crossover search asks: plan()).
    std::vector<double> roofline_curve(const SchemeCosts& c, std::int64_t max_batch) const {
        return step_times(c, r.gpu, r.efficiency, r.workload, max_batch);
    }
};

// A band [x / (1 + p90), x / (1 + p10)] for a predicted time or count (errors are predicted /
// measured - 1), widened to twice its width around the prediction when the corpus does not cover
// the configuration.
FigureBand band_for(double predicted, const engine::Band& b, bool widen) {
    double p10 = b.p10, p90 = b.p90;
    if (widen) {
        const double half = std::max(p90 - p10, 0.1);
        p10 -= half / 2, p90 += half / 2;
    }
    p10 = std::max(p10, -0.9);
    return {predicted / (1.0 + p90), predicted / (1.0 + p10)};
}

std::optional<SchemeBands> bands_of(const SchemeResult& r, const PlanRequest& q) {
    if (!q.engine || !q.engine->price_steps || q.engine->bands.empty()) return std::nullopt;
    const std::string family = engine::scheme_family(r.costs.scheme);
    const std::string& eng = q.engine->profile.engine;
    SchemeBands out;
    // The curve the step's linears take (an MoE's 4-bit experts: the measured fused-MoE one where there is one).
    const engine::LinearKernel kernel =
        engine::linear_kernel(r.costs, q.model, q.gpu, *q.engine, engine::linear_family(r.costs.scheme, matmul_peak_flop_per_s(q.gpu, r.costs.scheme.matmul_type()) > 0), 1);
    const engine::KernelFamily linear_family = kernel.family;
    const engine::CurveLookup linear = engine::find_linear_curve(q.engine->kernels, q.gpu, kernel);
    out.covered = linear.coverage == "gpu";
    if (!out.covered)
        out.coverage_note = std::string("no measured ") + engine::kernel_family_name(linear_family) + " kernel on " + q.gpu.id +
                            " in the corpus (priced from the " + std::string(linear.coverage) + " curve): band widened to twice its width";
    // Architectures and placements no corpus point measures a step of.
    std::string unmeasured;
    if (r.costs.mla) unmeasured = "MLA attention";
    if (q.workload.data_parallel > 1) unmeasured += std::string(unmeasured.empty() ? "" : ", ") + "data-parallel expert parallelism";
    if (q.workload.nodes > 1) unmeasured += std::string(unmeasured.empty() ? "" : ", ") + "multi-node placement";
    if (!unmeasured.empty()) {
        out.covered = false;
        out.coverage_note += std::string(out.coverage_note.empty() ? "" : "; ") + "no corpus step measures " + unmeasured + ": band widened to twice its width";
    }
    const auto get = [&](engine::FigureClass f) { return engine::find_band(q.engine->bands, eng, family, f); };
    if (const auto b = get(engine::FigureClass::Step)) {
        out.step_time_s = band_for(r.decode.time_s, *b, !out.covered);
        out.step_low_factor = band_for(1.0, *b, !out.covered).low;
        out.step_high_factor = band_for(1.0, *b, !out.covered).high;
        out.has_step = true;
        // Throughput is batch / step time: its band is the step's, inverted.
        const double batch = static_cast<double>(r.decode.batch * q.workload.data_parallel);
        out.throughput_tokens_per_s = r.throughput_tokens_per_s > 0 ? FigureBand{batch / out.step_time_s.high, batch / out.step_time_s.low} : FigureBand{};
        out.basis += "step: " + b->basis;
    }
    if (const auto b = get(engine::FigureClass::Ttft)) {
        out.ttft_s = band_for(r.prefill.time_s, *b, !out.covered);
        out.has_ttft = true;
        out.basis += (out.basis.empty() ? "" : "; ") + std::string("ttft: ") + b->basis;
    }
    if (const auto b = get(engine::FigureClass::KvTokens)) {
        const double tokens = static_cast<double>(r.admission.kv_cache_tokens);
        out.kv_cache_tokens = band_for(tokens, *b, false);
        out.has_kv = true;
        out.basis += (out.basis.empty() ? "" : "; ") + std::string("kv: ") + b->basis;
    }
    return out;
}

}  // namespace

SpecPlanRequest make_spec_plan_request(std::string_view spec, const std::optional<std::string>& acceptance, const PlanRequest& r,
                                       const SpecData& data) {
    SpecPlanRequest s;
    s.request = engine::parse_spec(spec);
    if (s.request.method == engine::SpecMethod::Draft) {
        try {
            s.draft_model = resolve_model(s.request.draft_model, data.models_dir);
        } catch (const Error& e) {
            throw Error("--spec", "draft model '" + clip_text(s.request.draft_model, 80) + "': " + e.what());
        }
    }
    const std::string engine_name = r.engine ? r.engine->profile.engine : std::string();
    const std::string version = r.engine ? r.engine->choice.version_asked : std::string();
    engine::check_spec_request(s.request, r.model, s.draft_model ? &*s.draft_model : nullptr, data.catalog, engine_name, version);
    std::optional<engine::Acceptance> published;
    if (data.catalog) published = engine::default_acceptance(*data.catalog, r.model, s.request.method, s.request.k);
    if (acceptance) s.acceptance = engine::parse_acceptance(*acceptance, s.request.k);
    else if (published) s.acceptance = std::move(*published);
    else
        throw Error("--spec-acceptance", "no published acceptance for " + r.model.name + " with " + std::string(engine::spec_method_name(s.request.method)) +
                                             " is bundled (assets/measurements/speculative/speculative-decoding.json): pass the rates or the mean acceptance length");
    if (data.catalog) s.terms = engine::spec_terms_for(*data.catalog, engine_name.empty() ? "vllm" : engine_name);
    if (data.catalog)
        if (const engine::SpecEngineRange* range = engine::spec_engine_range(*data.catalog, engine_name, version))
            s.disable_above_batch = range->disable_above_batch;
    return s;
}

SpecDraft spec_draft(const PlanRequest& q, const SchemeCosts& c, std::int64_t tp) {
    SpecDraft d;
    const SpecPlanRequest& s = *q.spec;
    const ModelConfig* draft = s.draft_model ? &*s.draft_model : nullptr;
    if (draft) {
        const std::vector<TensorInfo> inventory = compress_inventory(tensor_inventory(*draft));
        d.draft_costs = scheme_costs(*draft, inventory, parse_scheme("bf16"), c.kv, q.gpu);
    }
    d.cost = engine::draft_cost(s.request, q.model, c, draft, d.draft_costs ? &*d.draft_costs : nullptr, tp);
    return d;
}

Workload spec_workload(const PlanRequest& q, const SchemeCosts& c) {
    Workload w = q.workload;
    if (!q.spec) return w;
    const engine::DraftCost d = spec_draft(q, c, w.tensor_parallel).cost;
    w.engine.draft_weight_bytes_per_gpu = d.weight_bytes;
    w.engine.draft_kv_bytes_per_token_per_gpu = d.kv_bytes_per_token;
    const std::string engine_name = q.engine ? q.engine->profile.engine : std::string();
    w.engine.lookahead_tokens = q.spec->request.k + engine::spec_lookahead_slots(engine_name, q.spec->request.method, q.spec->request.k);
    return w;
}

SchemeSpeculation speculate(const PlanRequest& q, const SchemeResult& r) {
    const SpecPlanRequest& s = *q.spec;
    SchemeSpeculation out;
    out.scheme = scheme_name(r.costs.scheme);
    const SpecDraft dp = spec_draft(q, r.costs, q.workload.tensor_parallel);
    out.draft = dp.cost;
    const bool separate = s.request.method == engine::SpecMethod::Eagle3 || s.request.method == engine::SpecMethod::Eagle ||
                          s.request.method == engine::SpecMethod::Draft;
    out.checkpoint_bytes = r.costs.budget.checkpoint_bytes +
                           (separate ? dp.cost.weight_bytes * static_cast<std::uint64_t>(std::max<std::int64_t>(q.workload.tensor_parallel, 1)) : 0);
    out.mean_acceptance_length = s.acceptance.mean_length();
    const Workload& w = q.workload;
    const std::int64_t context = w.context_tokens;
    const bool engine = q.engine && q.engine->price_steps;
    std::optional<engine::StepLookups> lookups, draft_lookups;
    if (engine) {
        lookups = engine::resolve_step_lookups(r.costs, q.model, q.gpu, *q.engine, w);
        if (dp.draft_costs) draft_lookups = engine::resolve_step_lookups(*dp.draft_costs, *s.draft_model, q.gpu, *q.engine, w);
    }
    const auto at = [&](std::int64_t batch) {
        engine::SpecStep st;
        if (engine) {
            engine::DraftModelPricing dm;
            if (dp.draft_costs) dm = {&*dp.draft_costs, &*s.draft_model, *draft_lookups};
            st = engine::engine_spec_step(*lookups, r.costs, q.model, q.gpu, *q.engine, w, batch, context, s.request, s.acceptance, dp.cost,
                                          s.terms, dp.draft_costs ? &dm : nullptr, s.disable_above_batch);
        } else {
            st = engine::roofline_spec_step(r.costs, q.gpu, q.efficiency, w, batch, context, s.request, s.acceptance, dp.cost,
                                            dp.draft_costs ? &*dp.draft_costs : nullptr);
        }
        SpecPoint p;
        p.batch = batch;
        p.plain_tpot_s = st.plain_tpot_s;
        p.tpot_s = st.tpot_s;
        p.plain_tokens_per_s = static_cast<double>(batch * w.data_parallel) / st.plain_tpot_s;
        p.tokens_per_s = static_cast<double>(batch * w.data_parallel) / st.tpot_s;
        p.speedup = st.speedup;
        p.verify_s = st.verify_s;
        p.draft_s = st.draft_s;
        p.host_s = st.host_s;
        p.disabled = st.disabled;
        return p;
    };
    const std::int64_t admitted = r.admission.fits ? std::min(w.batch, r.admission.max_sequences) : w.batch;
    out.at_batch = at(std::max<std::int64_t>(admitted, 1));
    // The first batch whose speed-up is below 1: doubling until one is, then bisecting (the
    // speed-up falls with the batch once the verify step leaves the memory-bound region).
    const std::int64_t max_batch = std::max<std::int64_t>(q.crossover_max_batch, 1);
    std::vector<SpecPoint> grid;
    std::int64_t lo = 0, hi = 0;
    for (std::int64_t b = 1; b <= max_batch; b = b >= max_batch ? max_batch + 1 : std::min(b * 2, max_batch)) {
        grid.push_back(at(b));
        if (grid.back().speedup < 1.0 && !grid.back().disabled) {
            hi = b;
            break;
        }
        lo = b;
    }
    if (hi > 0) {
        if (hi == 1) {
            out.stops_paying_batch = 1;
        } else {
            while (hi - lo > 1) {
                const std::int64_t mid = lo + (hi - lo) / 2;
                const SpecPoint p = at(mid);
                (p.speedup < 1.0 && !p.disabled ? hi : lo) = mid;
            }
            out.stops_paying_batch = hi;
        }
        out.stops_paying_admitted = r.admission.fits && *out.stops_paying_batch <= r.admission.max_sequences;
    }
    for (const SpecPoint& p : grid)
        if (!r.admission.fits || p.batch <= std::max(r.admission.max_sequences, out.stops_paying_batch.value_or(0))) out.points.push_back(p);
    const auto has = [&](std::int64_t b) {
        return std::any_of(out.points.begin(), out.points.end(), [b](const SpecPoint& p) { return p.batch == b; });
    };
    if (!has(out.at_batch.batch)) out.points.push_back(out.at_batch);
    if (out.stops_paying_batch && !has(*out.stops_paying_batch)) out.points.push_back(at(*out.stops_paying_batch));
    std::sort(out.points.begin(), out.points.end(), [](const SpecPoint& a, const SpecPoint& b) { return a.batch < b.batch; });
    return out;
}

DecodeStep priced_decode_step(const PlanRequest& r, const SchemeCosts& c, std::int64_t batch, std::int64_t context) {
    if (!r.engine || !r.engine->price_steps) return decode_step(c, r.gpu, r.efficiency, r.workload, batch, context);
    const engine::EngineStep e = engine::engine_decode_step(c, r.model, r.gpu, *r.engine, r.workload, batch, context);
    DecodeStep s = e.roofline;
    s.memory_time_s = e.linear_s + e.lm_head_s + e.attention_s;  // the kernels, one after another
    s.compute_time_s = s.total_flop() / std::max(1.0, matmul_peak_flop_per_s(r.gpu, c.matmul));
    s.communication_time_s = e.communication_s;
    s.bound = s.compute_time_s > static_cast<double>(s.total_bytes()) / r.gpu.memory_bandwidth_bytes_per_s ? Bound::Compute : Bound::Memory;
    s.time_s = e.time_s;
    return s;
}

Admission priced_admission(const PlanRequest& r, const SchemeCosts& c, const Workload& w) {
    if (!r.engine || !r.engine->price_steps) return admission(c, r.model, r.gpu, w);
    return engine::engine_admission(c, r.model, r.gpu, *r.engine, w);
}

KvFormat scheme_kv_format(const ModelConfig& m, const Scheme& s, const Workload& w, const engine::EngineSetup* e, std::string* note) {
    if (note) note->clear();
    if (!w.kv_auto || !s.native || !e || !m.declared_quantization) return w.kv;
    const QuantizationConfig& q = *m.declared_quantization;
    if (q.method != QuantMethod::ModelOpt || !q.kv_cache || !q.kv_cache->format || q.kv_cache->dynamic) return w.kv;
    if (!engine::kv_auto_follows_modelopt(e->profile.defaults, e->choice.version_asked)) return w.kv;
    if (note)
        *note = "KV cache " + kv_format_name(*q.kv_cache->format) + " as the checkpoint declares it (" + q.source + "): " +
                e->profile.engine + " " + (e->choice.version_asked.empty() ? "" : e->choice.version_asked + " ") +
                "resolves --kv-cache-dtype auto to it (from " + e->profile.defaults.modelopt_kv_auto_from_version + "); --kv bf16 overrides";
    return *q.kv_cache->format;
}

PlanResult plan(PlanRequest request) {
    validate_workload(request.workload);
    validate_model(request.model);
    const Workload& w = request.workload;
    if (request.model.num_attention_heads % w.tensor_parallel != 0)
        throw Error("--tp", std::to_string(w.tensor_parallel) + " does not divide the " + std::to_string(request.model.num_attention_heads) + " attention heads");
    if (w.data_parallel < 1 || w.data_parallel > 64)
        throw Error("--dp", "data-parallel engines must be 1 to 64, got " + std::to_string(w.data_parallel));
    if (w.data_parallel > 1 && w.expert_parallel == 1)
        throw Error("--dp", "data-parallel attention shares expert-parallel experts (--ep = --dp x --tp); engines of a dense model are replicas (--serve sizes them)");
    if (w.expert_parallel != 1) {
        // Expert parallelism over every GPU of the data-parallel engines (vLLM: EP = DP x TP).
        if (!request.model.is_moe()) throw Error("--ep", request.model.name + " has no routed experts to place");
        const std::int64_t gpus = w.data_parallel * w.tensor_parallel;
        if (w.expert_parallel != gpus)
            throw Error("--ep", std::to_string(w.expert_parallel) + " must equal --dp x --tp = " + std::to_string(gpus) +
                                    ": experts are placed over every GPU of the data-parallel engines (vLLM FusedMoEParallelConfig)");
        if (request.model.num_experts % w.expert_parallel != 0)
            throw Error("--ep", std::to_string(w.expert_parallel) + " does not divide the " + std::to_string(request.model.num_experts) + " experts");
    }
    if (w.nodes < 1 || w.nodes > 64) throw Error("--nodes", "must be 1 to 64, got " + std::to_string(w.nodes));
    if (w.nodes > 1) {
        const std::int64_t gpus = w.data_parallel * w.tensor_parallel;
        if (gpus % w.nodes != 0)
            throw Error("--nodes", std::to_string(w.nodes) + " nodes cannot hold " + std::to_string(gpus) + " GPUs (--dp x --tp) evenly");
        if (gpus / w.nodes > 8) throw Error("--nodes", std::to_string(gpus / w.nodes) + " GPUs per node: at most 8");
        if (!(request.gpu.internode_bytes_per_s > 0))
            throw Error("--nodes", request.gpu.id + " has no sourced network figure between nodes (internode_bytes_per_s) in its profile");
    } else if (w.data_parallel * w.tensor_parallel > 8) {
        throw Error("--nodes", std::to_string(w.data_parallel * w.tensor_parallel) + " GPUs (--dp x --tp) need more than one node of 8: give --nodes");
    }
    if (request.schemes.empty()) {
        for (const std::string& n : default_serving_scheme_names()) request.schemes.push_back(parse_scheme(n));
        if (request.gpu.peak.fp4_flop_per_s > 0) request.schemes.push_back(parse_scheme("w4a4-nvfp4"));
        // The checkpoint as it ships, when its config.json declares a quantization.
        if (request.model.declared_quantization) request.schemes.push_back(parse_scheme("native"));
    }
    PlanResult out;
    const std::vector<TensorInfo>& inventory = inventory_of(request.model);
    out.parameters = count_parameters(request.model, inventory);

    // bf16 is the baseline of every speedup, priced even when not asked for.
    const Pricer price{request};
    const SchemeCosts bf16_costs = price.costs(inventory, parse_scheme("bf16"), w.kv);
    const Admission bf16_adm = price.admit(bf16_costs);
    const std::int64_t bf16_batch = bf16_adm.fits ? std::min(w.batch, bf16_adm.max_sequences) : w.batch;
    const DecodeStep bf16_step = price.decode(bf16_costs, bf16_batch, w.context_tokens);
    const double bf16_throughput = bf16_adm.fits ? static_cast<double>(bf16_batch * w.data_parallel) / bf16_step.time_s : 0.0;

    for (const Scheme& s : request.schemes) {
        SchemeResult r;
        std::string kv_note;
        const KvFormat kv = scheme_kv_format(request.model, s, w, request.engine ? &*request.engine : nullptr, &kv_note);
        r.costs = price.costs(inventory, s, kv);
        if (!kv_note.empty()) r.costs.note += std::string(r.costs.note.empty() ? "" : "; ") + kv_note;
        if (w.mxfp4_mxfp8 && r.costs.mxfp4_native_capable)
            r.costs.note += std::string(r.costs.note.empty() ? "" : "; ") + "MXFP4 experts with MXFP8 activations at the FP8 rate (--mxfp4-mxfp8)";
        else if (w.mxfp4_mxfp8 && r.costs.mxfp4_experts)
            r.costs.note += std::string(r.costs.note.empty() ? "" : "; ") + "--mxfp4-mxfp8: " + request.gpu.id +
                            " has no block-scaled FP4/FP8 tensor cores: the MXFP4 experts are priced W4A16";
        r.admission = request.spec ? priced_admission(request, r.costs, spec_workload(request, r.costs)) : price.admit(r.costs);
        r.requested_batch = w.batch;
        const std::int64_t batch = r.admission.fits ? std::min(w.batch, r.admission.max_sequences) : w.batch;
        r.decode = price.decode(r.costs, batch, w.context_tokens);
        r.prefill = price.prefill(r.costs, w.context_tokens);
        // Every data-parallel engine decodes its own batch in the same step.
        r.throughput_tokens_per_s = r.admission.fits ? static_cast<double>(batch * w.data_parallel) / r.decode.time_s : 0.0;
        // No baseline when bf16 itself does not fit: the speedup is undefined (NaN, written as null).
        r.speedup_vs_bf16 = bf16_throughput > 0 ? r.throughput_tokens_per_s / bf16_throughput : std::nan("");
        r.bands = bands_of(r, request);
        if (request.engine && request.engine->price_steps)  // evidence goes with the fitted figures
            r.evidence = engine::nearest_points(request.engine->points, request.model.name, request.model.model_type, request.gpu.id,
                                                request.gpu.compute_capability, engine::scheme_family(r.costs.scheme), request.engine->profile.engine);
        for (const std::int64_t tp : {1, 2, 4, 8}) {
            if (request.model.num_attention_heads % tp != 0) continue;
            Workload at = w;
            at.tensor_parallel = tp;
            if (w.expert_parallel > 1) at.expert_parallel = tp * w.data_parallel;
            if (tp == w.tensor_parallel ? r.admission.fits : priced_admission(request, r.costs, at).fits) {
                r.fits_from_tp = tp;
                break;
            }
        }
        out.schemes.push_back(std::move(r));
    }
    // A model that fits nowhere at this TP is still an answer: every scheme says from which TP it
    // fits (the capacity issue), and the decision has nothing to recommend.

    // The closed forms are the roofline's affine pieces: not the engine step model's.
    const bool dense = !request.model.is_moe() && !price.engine();
    // Bytes per stored weight of the payload alone: the textbook's b_w (0.5 for 4-bit).
    const auto payload_bytes = [](const SchemeCosts& c) { return dtype_bits(c.scheme.weights.storage) / 8.0; };
    // Each scheme's step-time curve, priced once for every pair's numeric crossovers. The roofline's
    // is cheap and priced whole; the engine step model's is priced where the search asks (memoized),
    // densely at small batches, on a 2% geometric grid above, bisected at a flip (sparse_numeric_crossovers).
    std::vector<std::vector<double>> curves;
    std::vector<std::string> names;
    const std::int64_t max_batch = std::max<std::int64_t>(request.crossover_max_batch, 0);
    for (const SchemeResult& r : out.schemes) {
        curves.push_back(price.engine() ? std::vector<double>(static_cast<std::size_t>(max_batch), -1.0) : price.roofline_curve(r.costs, max_batch));
        names.push_back(scheme_name(r.costs.scheme));
    }
    const auto times_of = [&](std::size_t k) {
        return std::function<double(std::int64_t)>([&, k](std::int64_t batch) {
            double& t = curves[k][static_cast<std::size_t>(batch - 1)];
            if (t < 0.0) t = price.decode(out.schemes[k].costs, batch, w.context_tokens).time_s;
            return t;
        });
    };
    for (std::size_t i = 0; i < out.schemes.size(); ++i) {
        const SchemeCosts& ci = out.schemes[i].costs;
        out.ridges.push_back({scheme_name(ci.scheme), ridge_batch(ci, request.gpu, request.efficiency, w),
                              ridge_point_flop_per_byte(request.gpu, request.efficiency, ci.matmul),
                              gemm_ridge_batch(request.gpu, request.efficiency, ci.matmul, payload_bytes(ci))});
        for (std::size_t j = i + 1; j < out.schemes.size(); ++j) {
            const SchemeCosts& cj = out.schemes[j].costs;
            for (double b : gemm_crossover_batches(request.gpu, request.efficiency, ci.matmul, payload_bytes(ci), cj.matmul, payload_bytes(cj)))
                out.gemm_crossovers.push_back({scheme_name(ci.scheme), scheme_name(cj.scheme), b});
            for (Crossover& c : price.engine() ? sparse_numeric_crossovers(names[i], times_of(i), names[j], times_of(j), max_batch)
                                               : numeric_crossovers(names[i], curves[i], names[j], curves[j]))
                out.crossovers.push_back(std::move(c));
            if (dense)
                for (Crossover& c : closed_form_crossovers(ci, cj, request.gpu, request.efficiency, w))
                    out.closed_form_crossovers.push_back(std::move(c));
        }
    }
    out.decision = decide(out.schemes, request.goal);
    if (request.spec)
        for (const SchemeResult& r : out.schemes) out.speculation.push_back(speculate(request, r));
    // What vLLM and SGLang would log or refuse for these schemes on this GPU (core/quant_methods/).
    std::vector<Scheme> resolved;  // `native` as the model declares it
    for (const SchemeResult& r : out.schemes) resolved.push_back(r.costs.scheme);
    for (std::string& warning : engine_plan_warnings(resolved, request.gpu, w.kernel, w.kv))
        out.decision.warnings.push_back(std::move(warning));
    // Tensor parallelism without peer-to-peer: every all-reduce through host memory (roofline.h
    // tp_allreduce_time_s), a cost the user can lift by saying the platform has it.
    if (tp_all_reduces_through_host(w, request.gpu) && !out.schemes.empty()) {
        const SchemeResult& first = out.schemes.front();
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.2f", first.decode.communication_time_s * 1e3);
        out.decision.warnings.push_back(
            "the " + std::to_string(w.tensor_parallel) + " GPUs have no peer-to-peer (" +
            (w.gpu_p2p ? std::string("--gpu-p2p off") : "the " + request.gpu.id + " profile's p2p: false") + "): each of a step's " +
            std::to_string(first.costs.allreduces_per_step) + " all-reduces goes through host memory, " + ms + " ms of a " +
            scheme_name(first.costs.scheme) + " decode step at batch " + std::to_string(first.decode.batch) +
            "; pass --gpu-p2p on if the platform has it (docs/capacity.md, \"Without peer-to-peer\")");
    }
    out.request = std::move(request);
    return out;
}

std::optional<std::string> no_scheme_fits(const PlanResult& result) {
    const SchemeResult* smallest = nullptr;
    for (const SchemeResult& r : result.schemes) {
        if (r.admission.fits) return std::nullopt;
        if (r.fits_from_tp && (!smallest || *r.fits_from_tp < *smallest->fits_from_tp)) smallest = &r;
    }
    const PlanRequest& q = result.request;
    std::string line = q.model.name + " does not fit on " + q.gpu.id + " at TP " + std::to_string(q.workload.tensor_parallel) + " with any scheme";
    if (smallest)
        line += "; fits from TP " + std::to_string(*smallest->fits_from_tp) + " (" + scheme_name(smallest->costs.scheme) + ")";
    else
        line += " up to TP 8";
    if (!result.schemes.empty()) line += ": " + scheme_name(result.schemes.front().costs.scheme) + " " + result.schemes.front().admission.reason;
    return line;
}

}  // namespace quantplan

