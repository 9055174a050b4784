#include "core/plan/measured_overlay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace quantplan {
namespace {

// The INT4 group size `quantplan --validate` times (app/validate_command.cpp).
constexpr std::int64_t kValidatedInt4Group = 128;

// The linear layers one dense decoder block runs, as engines fuse them (calibration's labels).
std::vector<LinearShape> block_linears(const ModelConfig& m) {
    return {{"qkv_proj", m.q_dim() + 2 * m.kv_dim(), m.hidden_size},
            {"o_proj", m.hidden_size, m.q_dim()},
            {"gate_up_proj", 2 * m.intermediate_size, m.hidden_size},
            {"down_proj", m.hidden_size, m.intermediate_size}};
}

}  // namespace

std::optional<std::string> calibration_kernel_for(const SchemeCosts& costs, KernelQuality quality, std::string* why) {
    auto none = [&](std::string reason) -> std::optional<std::string> {
        if (why) *why = std::move(reason);
        return std::nullopt;
    };
    const Scheme& s = costs.scheme;
    if (!s.weights.is_quantized()) {
        if (s.weights.storage == DType::Bf16 || s.weights.storage == DType::Fp16) return std::string("gemm_bf16");
        return none("no bundled kernel runs " + std::string(dtype_name(s.weights.storage)) + " weights");
    }
    if (costs.weight_only_path && s.is_weight_only() && s.weights.storage == DType::Int4)
        return std::string(quality == KernelQuality::Fused ? "w4a16_fused" : "w4a16_generic");
    if (!costs.weight_only_path && s.activations && s.activations->storage == s.weights.storage) {
        if (costs.matmul == MatmulType::Int8 && s.weights.storage == DType::Int8) return std::string("w8a8_int8");
        if (costs.matmul == MatmulType::Fp8 && s.weights.storage == DType::Fp8E4M3) return std::string("w8a8_fp8");
    }
    return none("no bundled kernel runs this scheme (kernels: bf16, INT4 weight-only, W8A8 INT8 and FP8 E4M3)");
}

MeasuredOverlay measured_step_points(const Calibration& calibration, const PlanResult& plan) {
    MeasuredOverlay out;
    const PlanRequest& rq = plan.request;
    const ModelConfig& model = rq.model;
    if (calibration.gpu_profile != rq.gpu.id) {
        out.notes.push_back("calibration measured on " + calibration.gpu_profile + " (" + calibration.device.name + "), plan is for " + rq.gpu.id +
                            ": no measured points");
        return out;
    }
    if (rq.workload.tensor_parallel != 1) {
        out.notes.push_back("the plan splits the model over " + std::to_string(rq.workload.tensor_parallel) +
                            " GPUs and the calibration timed whole shapes: no measured points");
        return out;
    }
    if (model.is_moe()) {
        out.notes.push_back(model.name + " is a mixture of experts: expert GEMMs run at a per-expert batch the calibration does not hold, so no measured points");
        return out;
    }

    // Measured GEMMs by (kernel, n, k, batch).
    std::map<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>, const KernelMeasurement*> gemms;
    for (const KernelMeasurement& m : calibration.measurements)
        if (m.measured_time_s > 0 && m.n > 0 && m.k > 0 && m.batch > 0) gemms.emplace(std::make_tuple(m.kernel, m.n, m.k, m.batch), &m);

    const std::vector<LinearShape> linears = block_linears(model);
    const double layers = static_cast<double>(model.num_layers);
    for (const SchemeResult& r : plan.schemes) {
        const std::string name = scheme_name(r.costs.scheme);
        std::string why;
        const std::optional<std::string> kernel = calibration_kernel_for(r.costs, rq.workload.kernel, &why);
        if (!kernel) {
            out.notes.push_back(name + ": " + why);
            continue;
        }
        std::set<std::int64_t> batches;
        for (const auto& [key, m] : gemms)
            if (std::get<0>(key) == *kernel) batches.insert(std::get<3>(key));
        std::size_t found = 0;
        for (const std::int64_t b : batches) {
            double measured = 0, predicted = 0;
            bool complete = true;
            for (const LinearShape& s : linears) {
                const auto it = gemms.find(std::make_tuple(*kernel, s.n, s.k, b));
                if (it == gemms.end()) {
                    complete = false;
                    break;
                }
                measured += it->second->measured_time_s;
                predicted += predict_kernel_time_s(*it->second, rq.gpu, rq.efficiency);
            }
            if (!complete) continue;
            const DecodeStep step = decode_step(r.costs, rq.gpu, rq.efficiency, rq.workload, b, rq.workload.context_tokens);
            MeasuredStepPoint p;
            p.scheme = name;
            p.kernel = *kernel;
            p.batch = b;
            p.context_tokens = rq.workload.context_tokens;
            p.predicted_step_s = step.time_s;
            p.linear_predicted_s = layers * predicted;
            p.linear_measured_s = layers * measured;
            p.measured_step_s = p.linear_measured_s + std::max(0.0, p.predicted_step_s - p.linear_predicted_s);
            p.admitted = r.admission.fits && b <= r.admission.max_sequences;
            out.points.push_back(p);
            ++found;
        }
        if (found == 0) {
            out.notes.push_back(name + ": the calibration holds no batch with " + *kernel + " timed at every linear shape of " + model.name);
        } else if (kernel->starts_with("w4a16")) {
            // --validate times INT4 at group 128; say so for any other scale layout. (Zero points,
            // AWQ's default, add 0.8% to the bytes at group 128 and one subtract per weight.)
            const TensorQuant& wq = r.costs.scheme.weights;
            const bool g128 = wq.scale && wq.scale->group.is_per_group() && wq.scale->group.cols == kValidatedInt4Group;
            if (!g128) out.notes.push_back(name + ": priced from " + *kernel + " timed at group 128 (this scheme's scale layout differs)");
        }
    }
    return out;
}

double median_abs_relative_error(const std::vector<MeasuredStepPoint>& points) {
    std::vector<double> e;
    e.reserve(points.size());
    for (const MeasuredStepPoint& p : points) e.push_back(std::fabs(p.relative_error()));
    if (e.empty()) return 0.0;
    std::sort(e.begin(), e.end());
    const std::size_t mid = e.size() / 2;
    return e.size() % 2 == 1 ? e[mid] : (e[mid - 1] + e[mid]) / 2.0;
}

}  // namespace quantplan
