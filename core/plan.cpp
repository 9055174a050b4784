#include "core/plan.h"

#include <cmath>
#include <optional>

#include "core/engines/engine_registry.h"
#include "core/error.h"

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

}  // namespace

PlanResult plan(PlanRequest request) {
    validate_workload(request.workload);
    validate_model(request.model);
    const Workload& w = request.workload;
    if (request.model.num_attention_heads % w.tensor_parallel != 0)
        throw Error("--tp", std::to_string(w.tensor_parallel) + " does not divide the " + std::to_string(request.model.num_attention_heads) + " attention heads");
    if (request.schemes.empty()) {
        for (const std::string& n : default_serving_scheme_names()) request.schemes.push_back(parse_scheme(n));
        if (request.gpu.peak.fp4_flop_per_s > 0) request.schemes.push_back(parse_scheme("w4a4-nvfp4"));
    }
    PlanResult out;
    const std::vector<TensorInfo>& inventory = inventory_of(request.model);
    out.parameters = count_parameters(request.model, inventory);

    // bf16 is the baseline of every speedup, priced even when not asked for.
    const SchemeCosts bf16_costs = scheme_costs(request.model, inventory, parse_scheme("bf16"), w.kv, request.gpu);
    const Admission bf16_adm = admission(bf16_costs, request.model, request.gpu, w);
    const std::int64_t bf16_batch = bf16_adm.fits ? std::min(w.batch, bf16_adm.max_sequences) : w.batch;
    const DecodeStep bf16_step = decode_step(bf16_costs, request.gpu, request.efficiency, w, bf16_batch, w.context_tokens);
    const double bf16_throughput = bf16_adm.fits ? static_cast<double>(bf16_batch) / bf16_step.time_s : 0.0;

    bool any_fits = false;
    for (const Scheme& s : request.schemes) {
        SchemeResult r;
        r.costs = scheme_costs(request.model, inventory, s, w.kv, request.gpu);
        r.admission = admission(r.costs, request.model, request.gpu, w);
        r.requested_batch = w.batch;
        const std::int64_t batch = r.admission.fits ? std::min(w.batch, r.admission.max_sequences) : w.batch;
        r.decode = decode_step(r.costs, request.gpu, request.efficiency, w, batch, w.context_tokens);
        r.prefill = prefill(r.costs, request.gpu, request.efficiency, w, w.context_tokens);
        r.throughput_tokens_per_s = r.admission.fits ? static_cast<double>(batch) / r.decode.time_s : 0.0;
        // No baseline when bf16 itself does not fit: the speedup is undefined (NaN, written as null).
        r.speedup_vs_bf16 = bf16_throughput > 0 ? r.throughput_tokens_per_s / bf16_throughput : std::nan("");
        any_fits = any_fits || r.admission.fits;
        out.schemes.push_back(std::move(r));
    }
    if (!any_fits) {
        const SchemeResult& first = out.schemes.front();
        throw Error("--model", request.model.name + " does not fit on " + request.gpu.id + " with any scheme: " +
                                   scheme_name(first.costs.scheme) + " " + first.admission.reason +
                                   " (try --tp, a larger --gpu or a smaller scheme)");
    }

    const bool dense = !request.model.is_moe();
    // Bytes per stored weight of the payload alone: the textbook's b_w (0.5 for 4-bit).
    const auto payload_bytes = [](const SchemeCosts& c) { return dtype_bits(c.scheme.weights.storage) / 8.0; };
    // Each scheme's step-time curve, priced once for every pair's numeric crossovers.
    std::vector<std::vector<double>> curves;
    std::vector<std::string> names;
    for (const SchemeResult& r : out.schemes) {
        curves.push_back(step_times(r.costs, request.gpu, request.efficiency, w, request.crossover_max_batch));
        names.push_back(scheme_name(r.costs.scheme));
    }
    for (std::size_t i = 0; i < out.schemes.size(); ++i) {
        const SchemeCosts& ci = out.schemes[i].costs;
        out.ridges.push_back({scheme_name(ci.scheme), ridge_batch(ci, request.gpu, request.efficiency, w),
                              ridge_point_flop_per_byte(request.gpu, request.efficiency, ci.matmul),
                              gemm_ridge_batch(request.gpu, request.efficiency, ci.matmul, payload_bytes(ci))});
        for (std::size_t j = i + 1; j < out.schemes.size(); ++j) {
            const SchemeCosts& cj = out.schemes[j].costs;
            for (double b : gemm_crossover_batches(request.gpu, request.efficiency, ci.matmul, payload_bytes(ci), cj.matmul, payload_bytes(cj)))
                out.gemm_crossovers.push_back({scheme_name(ci.scheme), scheme_name(cj.scheme), b});
            for (Crossover& c : numeric_crossovers(names[i], curves[i], names[j], curves[j]))
                out.crossovers.push_back(std::move(c));
            if (dense)
                for (Crossover& c : closed_form_crossovers(ci, cj, request.gpu, request.efficiency, w))
                    out.closed_form_crossovers.push_back(std::move(c));
        }
    }
    out.decision = decide(out.schemes, request.goal);
    // What vLLM and SGLang would log or refuse for these schemes on this GPU (core/engines/).
    for (std::string& warning : engine_plan_warnings(request.schemes, request.gpu, w.kernel, w.kv))
        out.decision.warnings.push_back(std::move(warning));
    out.request = std::move(request);
    return out;
}

}  // namespace quantplan
